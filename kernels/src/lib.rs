//! Const-size building blocks for generated Manaka engines.
//!
//! Every SIMD intrinsic of the project lives here, behind safe functions that take a
//! [`Simd`] level: scalar, AVX2+FMA or AVX-512. A `Simd` value can only be obtained from
//! [`Simd::detect`] / [`Simd::available`], which check the CPU, so the safe wrappers never
//! run an instruction the CPU lacks. Each f32 kernel has one body, generic over a lane trait
//! (`cpu/lanes.rs`, `cpu/body.rs`) and instantiated per level; the tests compare every level
//! with plain definitions on random inputs (AVX-512 under Miri on CPUs without it; see
//! `scripts/miri-avx512`). The affine map also takes bfloat16 ([`Bf16`]) and int8
//! ([`quantize_i8`]) weights, for the engines' low-precision heads.
//!
//! `cuda/` holds the CUDA C templates; [`cuda::source`] specialises them for a shape (the
//! macro embeds the result as each engine's `CUDA_SOURCE`, the runtime's CUDA evaluator
//! compiles it with NVRTC).

pub mod cpu;
pub mod cuda;

pub use cpu::{
    Bf16, Bf16Matrix, Simd, SimdError, add_assign, affine_batch, affine_batch_bf16, at_level,
    bf16_dot, dot, power_update, prefetch, quantize_i8, sub_assign,
};
