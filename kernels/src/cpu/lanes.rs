//! The lane trait: the few vector operations the f32 kernel bodies (`body.rs`) are written
//! in, with one implementation per [`Simd`](super::Simd) level.
//!
//! A body is written once against [`Lanes`] and instantiated three times; what differs between
//! levels is only the register type and the intrinsic behind each operation. Every method is
//! `#[inline(always)]` so that, once a body is inlined into its level's `#[target_feature]`
//! entry point (`mod.rs`), the intrinsics inline into that entry point too and compile to
//! single instructions (docs/evaluator.md, "The kernels' code").

/// `W` f32 lanes in a register of type `V`.
///
/// # Safety
/// The methods of the AVX2 and AVX-512 implementations execute instructions of those
/// extensions: callers must run them only on a CPU that has them (the dispatch in `mod.rs`
/// guarantees it). `load`, `store` and `load_bf16` read or write `W` values at the
/// pointer, unaligned.
pub(super) trait Lanes: Sized {
    /// One register of `W` lanes.
    type V: Copy;
    /// Lanes per register.
    const W: usize;
    /// How many inputs one register block of the batched affine map shares each loaded row
    /// vector with: as many as leave enough registers for 4 rows and their accumulators.
    const TILE: usize;

    unsafe fn zero() -> Self::V;
    unsafe fn splat(x: f32) -> Self::V;
    unsafe fn load(p: *const f32) -> Self::V;
    unsafe fn store(p: *mut f32, v: Self::V);
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn sub(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
    /// `a · b + c` (fused where the level has FMA).
    unsafe fn fma(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// The sum of the lanes.
    unsafe fn hsum(v: Self::V) -> f32;
    /// `W` bfloat16 values (the high halves of f32s) at `p`, widened exactly to f32.
    unsafe fn load_bf16(p: *const u16) -> Self::V;
    /// [`body::block`] with this level's lanes, compiled as a function of its own with the
    /// level's features. Inlined into the affine map with its other register blocks, LLVM
    /// kept one of the 4 × 4 block's 16 accumulators on the stack (a load and a store per
    /// iteration, 1.45× slower at batch 16); on its own it keeps all of them in registers.
    unsafe fn block<const IN: usize, const R: usize, const T: usize>(
        w: &[[f32; IN]],
        x: &[[f32; IN]],
    ) -> [[f32; T]; R];
    /// [`bf16::block`] with this level's lanes, a function of its own for the same reason.
    unsafe fn bf16_block<const IN: usize, const OUT: usize, const R: usize, const T: usize>(
        m: &Bf16Matrix<IN, OUT>,
        g: usize,
        k0: usize,
        x: &[[f32; IN]],
    ) -> [[f32; T]; R];
}

use super::bf16::Bf16Matrix;
use super::{bf16, body};

/// One lane of plain f32: the level every CPU runs, and what LLVM may auto-vectorise.
pub(super) struct Scalar;

impl Lanes for Scalar {
    type V = f32;
    const W: usize = 1;
    const TILE: usize = 2;

    #[inline(always)]
    unsafe fn zero() -> f32 {
        0.0
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> f32 {
        // SAFETY: the caller's contract (one readable f32 at p).
        unsafe { p.read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: f32) {
        // SAFETY: the caller's contract (one writable f32 at p).
        unsafe { p.write_unaligned(v) }
    }
    #[inline(always)]
    unsafe fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    unsafe fn sub(a: f32, b: f32) -> f32 {
        a - b
    }
    #[inline(always)]
    unsafe fn mul(a: f32, b: f32) -> f32 {
        a * b
    }
    // Not `mul_add`: without the FMA feature that is a call into libm, many times slower.
    #[inline(always)]
    unsafe fn fma(a: f32, b: f32, c: f32) -> f32 {
        a * b + c
    }
    #[inline(always)]
    unsafe fn hsum(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    unsafe fn load_bf16(p: *const u16) -> f32 {
        // SAFETY: the caller's contract (one readable u16 at p).
        f32::from_bits(u32::from(unsafe { p.read_unaligned() }) << 16)
    }
    #[inline(never)]
    unsafe fn block<const IN: usize, const R: usize, const T: usize>(
        w: &[[f32; IN]],
        x: &[[f32; IN]],
    ) -> [[f32; T]; R] {
        // SAFETY: the scalar level needs no feature.
        unsafe { body::block::<Self, IN, R, T>(w, x) }
    }
    #[inline(never)]
    unsafe fn bf16_block<const IN: usize, const OUT: usize, const R: usize, const T: usize>(
        m: &Bf16Matrix<IN, OUT>,
        g: usize,
        k0: usize,
        x: &[[f32; IN]],
    ) -> [[f32; T]; R] {
        // SAFETY: the scalar level needs no feature.
        unsafe { bf16::block::<Self, IN, OUT, R, T>(m, g, k0, x) }
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) use x86::{Avx2, Avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Bf16Matrix, Lanes, bf16, body};
    use std::arch::x86_64::*;

    /// AVX2 + FMA: 8 lanes.
    pub struct Avx2;

    // SAFETY (every method): the trait's contract — the CPU has AVX2 and FMA, and `load` /
    // `store` have 8 f32s at the pointer.
    impl Lanes for Avx2 {
        type V = __m256;
        const W: usize = 8;
        // 4 rows × 2 inputs: 4 + 2 loads per 8 FMAs, 8 accumulators (of 16 registers).
        const TILE: usize = 2;

        #[inline(always)]
        unsafe fn zero() -> __m256 {
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m256 {
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m256 {
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m256) {
            unsafe { _mm256_storeu_ps(p, v) }
        }
        #[inline(always)]
        unsafe fn add(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn sub(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn mul(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn fma(a: __m256, b: __m256, c: __m256) -> __m256 {
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn hsum(v: __m256) -> f32 {
            unsafe {
                let lo = _mm256_castps256_ps128(v);
                let hi = _mm256_extractf128_ps::<1>(v);
                let s = _mm_add_ps(lo, hi);
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
                _mm_cvtss_f32(s)
            }
        }
        #[inline(always)]
        unsafe fn load_bf16(p: *const u16) -> __m256 {
            // 8 × u16 (16 bytes) zero-extended to 32 bits, shifted into the high half.
            unsafe {
                let h = _mm256_cvtepu16_epi32(_mm_loadu_si128(p.cast()));
                _mm256_castsi256_ps(_mm256_slli_epi32::<16>(h))
            }
        }
        #[target_feature(enable = "avx2,fma")]
        #[inline(never)]
        unsafe fn block<const IN: usize, const R: usize, const T: usize>(
            w: &[[f32; IN]],
            x: &[[f32; IN]],
        ) -> [[f32; T]; R] {
            unsafe { body::block::<Self, IN, R, T>(w, x) }
        }
        #[target_feature(enable = "avx2,fma")]
        #[inline(never)]
        unsafe fn bf16_block<const IN: usize, const OUT: usize, const R: usize, const T: usize>(
            m: &Bf16Matrix<IN, OUT>,
            g: usize,
            k0: usize,
            x: &[[f32; IN]],
        ) -> [[f32; T]; R] {
            unsafe { bf16::block::<Self, IN, OUT, R, T>(m, g, k0, x) }
        }
    }

    /// AVX-512 F: 16 lanes.
    pub struct Avx512;

    // SAFETY (every method): the trait's contract — the CPU has AVX-512 F, and `load` /
    // `store` have 16 f32s at the pointer.
    impl Lanes for Avx512 {
        type V = __m512;
        const W: usize = 16;
        // 4 rows × 4 inputs: 4 + 4 loads per 16 FMAs, 16 accumulators (of 32 registers).
        const TILE: usize = 4;

        #[inline(always)]
        unsafe fn zero() -> __m512 {
            unsafe { _mm512_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m512 {
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m512 {
            unsafe { _mm512_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m512) {
            unsafe { _mm512_storeu_ps(p, v) }
        }
        #[inline(always)]
        unsafe fn add(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn sub(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_sub_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn mul(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_mul_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn fma(a: __m512, b: __m512, c: __m512) -> __m512 {
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn hsum(v: __m512) -> f32 {
            unsafe { _mm512_reduce_add_ps(v) }
        }
        #[inline(always)]
        unsafe fn load_bf16(p: *const u16) -> __m512 {
            // 16 × u16 (32 bytes) zero-extended to 32 bits, shifted into the high half.
            unsafe {
                let h = _mm512_cvtepu16_epi32(_mm256_loadu_si256(p.cast()));
                _mm512_castsi512_ps(_mm512_slli_epi32::<16>(h))
            }
        }
        #[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
        #[inline(never)]
        unsafe fn block<const IN: usize, const R: usize, const T: usize>(
            w: &[[f32; IN]],
            x: &[[f32; IN]],
        ) -> [[f32; T]; R] {
            unsafe { body::block::<Self, IN, R, T>(w, x) }
        }
        #[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
        #[inline(never)]
        unsafe fn bf16_block<const IN: usize, const OUT: usize, const R: usize, const T: usize>(
            m: &Bf16Matrix<IN, OUT>,
            g: usize,
            k0: usize,
            x: &[[f32; IN]],
        ) -> [[f32; T]; R] {
            unsafe { bf16::block::<Self, IN, OUT, R, T>(m, g, k0, x) }
        }
    }
}
