//! CPU kernels and their dispatch.
//!
//! The level is chosen once (at engine construction) by CPU detection, or forced with the
//! environment variable `MANAKA_SIMD=scalar|avx2|avx512` for tests and benchmarks.

mod bf16;
mod body;
mod lanes;
mod weight;
// Integer kernels for NNUE inference (YaneuraOu's arithmetic).
pub mod int;

pub use bf16::{Bf16Matrix, CHUNK as BF16_CHUNK, GROUP as BF16_GROUP, bf16_copy_bytes};
use std::fmt;
pub use weight::{Bf16, quantize_i8};

/// An instruction-set level the running CPU supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Simd(Level);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Level {
    Scalar,
    Avx2,
    Avx512,
}

/// A requested SIMD level that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimdError {
    /// `MANAKA_SIMD` (or a caller) named a level that does not exist.
    Unknown(String),
    /// The level exists but this CPU lacks it.
    Unsupported(&'static str),
}

impl fmt::Display for SimdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimdError::Unknown(s) => write!(
                f,
                "unknown SIMD level '{s}' (expected scalar, avx2 or avx512)"
            ),
            SimdError::Unsupported(s) => write!(f, "this CPU does not support {s}"),
        }
    }
}

impl std::error::Error for SimdError {}

impl Simd {
    /// Plain Rust, every CPU.
    pub const SCALAR: Simd = Simd(Level::Scalar);

    /// The best level this CPU supports, unless `MANAKA_SIMD` forces one (an unusable
    /// override is reported by [`Simd::from_env`]; here it falls back to detection).
    pub fn detect() -> Simd {
        match Simd::from_env() {
            Some(Ok(s)) => s,
            _ => *Simd::available()
                .last()
                .expect("scalar is always available"),
        }
    }

    /// The level forced by `MANAKA_SIMD`, if the variable is set.
    pub fn from_env() -> Option<Result<Simd, SimdError>> {
        let v = std::env::var("MANAKA_SIMD").ok()?;
        Some(Simd::by_name(v.trim()))
    }

    /// The level called `name` (`scalar`, `avx2`, `avx512`), if this CPU supports it.
    pub fn by_name(name: &str) -> Result<Simd, SimdError> {
        let level = match name.to_ascii_lowercase().as_str() {
            "scalar" => Level::Scalar,
            "avx2" => Level::Avx2,
            "avx512" | "avx-512" => Level::Avx512,
            _ => return Err(SimdError::Unknown(name.to_string())),
        };
        Simd::available()
            .into_iter()
            .find(|s| s.0 == level)
            .ok_or(SimdError::Unsupported(match level {
                Level::Avx2 => "AVX2+FMA",
                _ => "AVX-512 (F, BW)",
            }))
    }

    /// Every level this CPU can run, slowest first.
    pub fn available() -> Vec<Simd> {
        let mut v = vec![Simd(Level::Scalar)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                v.push(Simd(Level::Avx2));
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
            {
                v.push(Simd(Level::Avx512));
            }
        }
        v
    }

    pub fn name(self) -> &'static str {
        match self.0 {
            Level::Scalar => "scalar",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for Simd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// The entry points: per level, one thin function per kernel that enables the level's target
// features and runs the shared body (`body.rs`) with that level's lanes (`lanes.rs`). The body
// and the lane methods are `#[inline(always)]`, so each entry point compiles to one function
// with the intrinsics inlined and every size a constant.
macro_rules! entry_points {
    ($level:ident, $lanes:ty $(, $features:literal)?) => {
        mod $level {
            use super::{Bf16Matrix, bf16, body};
            #[allow(unused_imports)]
            use super::lanes::*;

            $(#[target_feature(enable = $features)])?
            pub unsafe fn at_level<R, F: FnOnce() -> R>(f: F) -> R {
                f()
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn add_assign<const N: usize>(acc: &mut [f32; N], row: &[f32; N]) {
                // SAFETY: the caller runs this level only on a CPU with its features.
                unsafe { body::add_assign::<$lanes, N>(acc, row) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn sub_assign<const N: usize>(acc: &mut [f32; N], row: &[f32; N]) {
                // SAFETY: as above.
                unsafe { body::sub_assign::<$lanes, N>(acc, row) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn power_update<const D: usize, const O: usize>(
                p: &mut [[f32; D]; O],
                e: &[f32; D],
                sign: f32,
            ) {
                // SAFETY: as above.
                unsafe { body::power_update::<$lanes, D, O>(p, e, sign) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn dot<const N: usize>(a: &[f32; N], b: &[f32; N]) -> f32 {
                // SAFETY: as above.
                unsafe { body::dot::<$lanes, N>(a, b) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn affine_batch<const IN: usize, const OUT: usize>(
                w: &[[f32; IN]; OUT],
                b: &[f32; OUT],
                xs: &[[f32; IN]],
                out: &mut [[f32; OUT]],
            ) {
                // SAFETY: as above.
                unsafe { body::affine_batch::<$lanes, IN, OUT>(w, b, xs, out) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn affine_bf16<const IN: usize, const OUT: usize>(
                m: &Bf16Matrix<IN, OUT>,
                b: &[f32; OUT],
                xs: &[[f32; IN]],
                out: &mut [[f32; OUT]],
            ) {
                // SAFETY: as above.
                unsafe { bf16::affine::<$lanes, IN, OUT>(m, b, xs, out) }
            }
        }
    };
}

entry_points!(scalar, Scalar);
#[cfg(target_arch = "x86_64")]
entry_points!(avx2, Avx2, "avx2,fma");
#[cfg(target_arch = "x86_64")]
entry_points!(avx512, Avx512, "avx512f,avx512bw,avx2,fma");

/// The bf16 affine map with AVX-512 BF16's dot products (`bf16.rs`).
#[cfg(target_arch = "x86_64")]
mod avx512_bf16 {
    use super::{Bf16Matrix, bf16};

    #[target_feature(enable = "avx512f,avx512bw,avx512bf16,avx2,fma")]
    pub unsafe fn affine_bf16<const IN: usize, const OUT: usize>(
        m: &Bf16Matrix<IN, OUT>,
        b: &[f32; OUT],
        xs: &[[f32; IN]],
        out: &mut [[f32; OUT]],
    ) {
        // SAFETY: the caller runs this only on a CPU with AVX-512 F, BW and BF16.
        unsafe { bf16::affine::<bf16::Avx512Bf16, IN, OUT>(m, b, xs, out) }
    }
}

/// Whether [`affine_batch_bf16`] at `simd` multiplies with AVX-512 BF16's `vdpbf16ps`: at
/// the AVX-512 level of a CPU that has it (never under Miri, which does not model it).
pub fn bf16_dot(simd: Simd) -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        simd.0 == Level::Avx512 && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        let _ = simd;
        false
    }
}

// Dispatch. Each arm after `Scalar` is only reachable with a `Simd` built by `available()`,
// which checked the CPU features the `unsafe` target-feature function needs.
macro_rules! dispatch {
    ($simd:expr, $f:ident ( $($arg:expr),* )) => {
        match $simd.0 {
            // SAFETY: the scalar level needs no CPU feature.
            Level::Scalar => unsafe { scalar::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports AVX2 and FMA (checked when this `Simd` was made).
            Level::Avx2 => unsafe { avx2::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports AVX-512 F and BW (checked when this `Simd` was made).
            Level::Avx512 => unsafe { avx512::$f($($arg),*) },
            #[cfg(not(target_arch = "x86_64"))]
            // SAFETY: as the scalar arm.
            _ => unsafe { scalar::$f($($arg),*) },
        }
    };
}

/// Runs `f` inside a function compiled for `simd`'s target features, so the plain loops `f`
/// inlines (`#[inline(always)]` code, and the closure itself) are vectorised at that width:
/// how code outside the kernels — the engines' head-input normalisation — gets AVX2/AVX-512
/// without its own entry points (the crate's baseline is x86-64-v2, `.cargo/config.toml`).
#[inline]
pub fn at_level<R>(simd: Simd, f: impl FnOnce() -> R) -> R {
    dispatch!(simd, at_level(f))
}

/// `acc += row`.
#[inline]
pub fn add_assign<const N: usize>(simd: Simd, acc: &mut [f32; N], row: &[f32; N]) {
    dispatch!(simd, add_assign(acc, row))
}

/// `acc -= row`.
#[inline]
pub fn sub_assign<const N: usize>(simd: Simd, acc: &mut [f32; N], row: &[f32; N]) {
    dispatch!(simd, sub_assign(acc, row))
}

/// Power sums: `p[k][c] += sign · e[c]^(k+1)` for k = 0..O (SPEC §4). `sign` is ±1.
#[inline]
pub fn power_update<const D: usize, const O: usize>(
    simd: Simd,
    p: &mut [[f32; D]; O],
    e: &[f32; D],
    sign: f32,
) {
    dispatch!(simd, power_update(p, e, sign))
}

/// `Σ a[i] · b[i]`.
#[inline]
pub fn dot<const N: usize>(simd: Simd, a: &[f32; N], b: &[f32; N]) -> f32 {
    dispatch!(simd, dot(a, b))
}

/// Batched affine map: for every input `x_j` (rows of `xs`, `IN` wide), `out_j = W x_j + b`
/// with `W` row-major `OUT × IN`. Each row of `W` is read once per call however many inputs
/// there are — the small GEMM that lets a batch of leaves share one pass over W1.
///
/// # Panics
/// If `xs` and `out` differ in length (one output row per input; never truncated).
#[inline]
pub fn affine_batch<const IN: usize, const OUT: usize>(
    simd: Simd,
    w: &[[f32; IN]; OUT],
    b: &[f32; OUT],
    xs: &[[f32; IN]],
    out: &mut [[f32; OUT]],
) {
    assert_eq!(xs.len(), out.len(), "one output row per input");
    dispatch!(simd, affine_batch(w, b, xs, out))
}

/// [`affine_batch`] with bfloat16 weights (half the bytes of f32, in the tiles of a
/// [`Bf16Matrix`]): `out_j = W' x_j + b` for `W'` the bf16 values, summed in f32. With
/// AVX-512 BF16 ([`bf16_dot`]) the products are `vdpbf16ps` pairs, each input rounded to
/// bf16 for it (every product then exact); elsewhere the weights are widened as they are
/// loaded and multiplied with the inputs as they are, with FMAs (`bf16.rs`).
///
/// # Panics
/// If `xs` and `out` differ in length.
#[inline]
pub fn affine_batch_bf16<const IN: usize, const OUT: usize>(
    simd: Simd,
    m: &Bf16Matrix<IN, OUT>,
    b: &[f32; OUT],
    xs: &[[f32; IN]],
    out: &mut [[f32; OUT]],
) {
    assert_eq!(xs.len(), out.len(), "one output row per input");
    #[cfg(target_arch = "x86_64")]
    if bf16_dot(simd) {
        // SAFETY: bf16_dot checked AVX-512 BF16, and this level's F and BW.
        return unsafe { avx512_bf16::affine_bf16(m, b, xs, out) };
    }
    affine_batch_widened(simd, m, b, xs, out)
}

/// [`affine_batch_bf16`] without AVX-512 BF16 at any level: the weights widened, FMAs (what
/// CPUs without BF16 run; the tests check both paths).
fn affine_batch_widened<const IN: usize, const OUT: usize>(
    simd: Simd,
    m: &Bf16Matrix<IN, OUT>,
    b: &[f32; OUT],
    xs: &[[f32; IN]],
    out: &mut [[f32; OUT]],
) {
    // The body checks `xs.len() == out.len()` (`bf16::affine`).
    dispatch!(simd, affine_bf16(m, b, xs, out))
}

/// Asks the CPU to start loading the cache line holding `p` (a pair-table row about to be
/// summed). A hint only: no effect on results.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch never faults and does not dereference in the memory model.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests;
