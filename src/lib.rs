//! Manaka: a shogi engine framework built around shape-typed, CPU-first neural evaluators.
//!
//! A network *shape* such as `pair16_d128_o3_h512` names an architecture, and
//! [`manaka_net!`] turns it at compile time into a fixed-size engine of its own (every
//! dimension a constant, SIMD loops without run-time bounds). The runtime drives any such
//! engine: shogi rules, MNW1 weight files, Gumbel AlphaZero search, the USI protocol,
//! self-play and training.
//!
//! ```
//! use manaka::prelude::*;
//!
//! manaka_net!(Net = "pair0_d8_o1_h8"); // module `Net`, engine type `Net::Engine`
//! # fn main() -> Result<(), manaka::app::Error> {
//! let engine: Net::Engine = Net::app().random_weights(1).network()?;
//! let pos = Position::startpos();
//! let state = engine.new_state(&pos);
//! let moves = pos.legal_moves();
//! let out = engine.evaluate(&state, Leaf { position: &pos, moves: &moves });
//! println!("{engine:?}: value {:.3}, {} policy logits", out.value(), out.policy_logits.len());
//! # Ok(()) }
//! ```
//!
//! `Net::app().run_usi()` is the whole `main` of a USI engine; docs/library.md is the
//! tutorial, from `cargo new` to an engine, a search, self-play and a trained file.
//!
//! # Crates
//!
//! This facade re-exports the workspace (ARCHITECTURE.md):
//! - [`shapes`] (`manaka-shapes`): the shape grammar and the tensor table, shared by the macro
//!   and the runtime.
//! - [`manaka_net!`] (`manaka-macros`): a shape string becomes a module holding its engine.
//! - [`kernels`] (`manaka-kernels`): const-size SIMD building blocks (scalar, AVX2,
//!   AVX-512) and the CUDA templates.
//! - [`runtime`] (`manaka-runtime`): rules, token spaces, weights, the [`prelude::Network`]
//!   trait and the reference evaluator, search, USI, self-play, training; [`app`](mod@app) runs a
//!   compiled engine as a program.
//! - [`prelude`]: what a user's crate needs, in one `use`.

pub mod prelude;

pub use manaka_kernels as kernels;
pub use manaka_macros::manaka_net;
pub use manaka_runtime as runtime;
pub use manaka_runtime::app::{self, App, CompiledNetwork, app};
pub use manaka_shapes as shapes;

// The Markdown guides whose Rust snippets are compiled (and run) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/evaluator.md")]
pub struct EvaluatorGuide;

#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryGuide;
