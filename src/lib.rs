//! Manaka: a shogi engine framework built around shape-typed, CPU-first neural evaluators.
//!
//! This facade re-exports the pieces a user needs: the shape grammar ([`shapes`]) and the
//! runtime ([`runtime`]: rules, weights, search, USI).

pub use manaka_runtime as runtime;
pub use manaka_shapes as shapes;
