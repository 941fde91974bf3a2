//! Manaka network shapes: the shape-name grammar (SPEC §2) and the tensor table (SPEC §7).
//!
//! A shape name such as `pair16_d128_o3_h512` is the user's whole description of a network.
//! This crate parses it into a [`Shape`] and derives everything that depends only on the shape:
//! the normalised blocks of the head input ([`Shape::blocks`]), the weight-file tensors
//! ([`Shape::tensors`]), parameter count, bytes, input width and a FLOP estimate.
//!
//! It has no dependencies, because it runs in two places that must agree exactly: inside the
//! `manaka_net!` proc macro at compile time, and inside the runtime when a weight file is read.
//! It is the one tensor table of the project: the MNW1 writer and reader, the reference
//! evaluator, the macro, the CUDA templates and the trainer all read [`Shape::tensors`], and
//! nobody keeps a second copy of it.
//!
//! - [`Shape`]: a parsed shape — its fields, [`Shape::parse`] / `FromStr`, `Display` (the
//!   canonical name), sizes ([`Shape::param_count`], [`Shape::bytes`],
//!   [`Shape::input_width`]) and its head-input [`Block`]s.
//! - [`ShapeError`]: why a name is refused, one variant per rule, with
//!   [`ShapeError::suggestion`] (the spelling probably meant).
//! - [`TensorSpec`]: one tensor of the table (name, dimensions), in file order.
//! - [`Dims`] ([`Shape::dims`]): every size an engine is built from, computed once for the
//!   macro, the float and integer engines and the CUDA generator.
//! - [`formula`]: SPEC §4–5's small formulas (pair index, move feature, RMS epsilon) that
//!   every evaluator shares.
//!
//! The grammar and the size formulas are in docs/shapes.md (SPEC §2, §7).
//!
//! ```
//! use manaka_shapes::Shape;
//!
//! let shape: Shape = "pair16_d128_o3_h512".parse()?;
//! assert_eq!(shape.param_count(), 45_770_072);
//! assert_eq!(shape.to_string(), "pair16_d128_o3_h512");
//!
//! let err = Shape::parse("d128_pair16_o3_h512").unwrap_err();
//! assert_eq!(err.suggestion(), Some("pair16_d128_o3_h512"));
//! # Ok::<(), manaka_shapes::ShapeError>(())
//! ```

mod dims;
mod error;
pub mod formula;
mod params;
mod shape;

pub use dims::Dims;
pub use error::ShapeError;
pub use params::{
    Block, BlockKind, MOVE_CLASSES, ORIGINS, PIECE_KINDS, POLICY_LABELS, PowerGroup, SQUARES,
    TYPICAL_ACTIVE_TOKENS, TYPICAL_LEGAL_MOVES, TensorSpec,
};
pub use shape::{FeatureSpace, MAX_WEIGHT_BYTES, Shape, TokenKind};
