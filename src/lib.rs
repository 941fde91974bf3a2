//! Manaka: a shogi engine framework built around shape-typed, CPU-first neural evaluators.
//!
//! This facade re-exports the pieces a user needs: the shape grammar ([`shapes`]) and the
//! runtime ([`runtime`]: rules, weights, search, USI), the SIMD
//! building blocks ([`kernels`]) and the [`manaka_net!`] macro that turns a shape into a
//! fixed-size engine.

pub use manaka_kernels as kernels;
pub use manaka_macros::manaka_net;
pub use manaka_runtime as runtime;
pub use manaka_shapes as shapes;
