//! The trainer: learns MNW1 weights for any valid shape from HCPE, HCPE3 and PackedSfenValue
//! data, on the CPU (`manaka train`; docs/training.md).
//!
//! - [`model`]: the network's tensors (the shape's table, SPEC §7) as trainable vectors.
//! - [`forward`](mod@forward): SPEC §4–6 exactly as the reference evaluator computes them, keeping what
//!   the backward pass needs; [`backward`]: the hand-derived gradients of every block.
//! - [`loss`]: value cross-entropy against a teacher/result blend, policy cross-entropy over
//!   the legal moves; [`Example`], one position with its targets.
//! - [`optim`]: Adam, lazy on the token tables, log-space on the lse channels.
//! - [`data`]: the data files as compact samples; [`checkpoint`]: the state file beside the
//!   weights that lets a run resume; [`trainer`]: the model's optimiser steps and the run's
//!   settings, and its `train`, the loop of one invocation.
//! - [`real`]: the float type — `f32` to train, `f64` for the gradient tests.
//!
//! ```no_run
//! use manaka_runtime::train::{Dataset, TrainConfig, train};
//! use manaka_shapes::Shape;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut data = Dataset::new();
//! data.load("teacher.hcpe".as_ref(), None, None)?;
//! let mut config = TrainConfig::new(Shape::parse("pair4_d16_o2_h32")?, "net.mnw".into());
//! config.epochs = 2;
//! let summary = train(&config, &data, None, &mut |event| eprintln!("{event:?}"))?;
//! println!("{} steps", summary.steps);
//! # Ok(()) }
//! ```

pub mod backward;
pub mod checkpoint;
pub mod data;
mod error;
pub mod forward;
pub mod grads;
pub mod loss;
pub mod model;
pub mod optim;
pub mod real;
mod session;
pub mod trainer;

pub use data::{DataFormat, Dataset};
pub use error::TrainError;
pub use forward::{Forward, forward};
pub use grads::Grads;
pub use loss::{Example, LossSums, Target};
pub use model::Model;
pub use optim::{Adam, AdamConfig};
pub use real::Real;
pub use trainer::{Event, Report, Stop, Summary, TrainConfig, Trainer, Validation, train};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod trainer_tests;
