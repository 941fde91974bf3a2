//! The integer lane trait: the few vector operations the integer kernel bodies (`body.rs`)
//! are written in, one implementation per level — as the f32 kernels' `Lanes`
//! (`cpu/lanes.rs`).
//!
//! A register is `BYTES` bytes read as whatever the operation needs: 16-bit lanes for the
//! accumulator, bytes for activations and weights, 32-bit lanes for the affine sums. The
//! scalar level's register is 4 bytes (two i16, four u8, one i32), so one body serves every
//! level down to the scalar one. Every method is `#[inline(always)]`: inlined into a level's
//! `#[target_feature]` entry point (`int/mod.rs`), each compiles to its instructions there.
//!
//! Every level computes the same integers (`int/mod.rs`): wrapping 16- and 32-bit lanes, and
//! saturating packs that agree with the clamps they implement.

/// An integer register of `BYTES` bytes.
///
/// # Safety
/// The AVX2 and AVX-512 implementations execute instructions of those extensions (and VNNI
/// for [`Avx512Vnni`]): callers must run them only on a CPU that has them (the dispatch in
/// `int/mod.rs` guarantees it). `load` and `store` read or write `BYTES` bytes at the
/// pointer, unaligned.
pub(super) trait IntLanes {
    /// One register.
    type V: Copy;
    /// Bytes per register: 4 (scalar), 32 (AVX2), 64 (AVX-512).
    const BYTES: usize;
    /// Independent partial sums per output register in the affine layer: AVX-512 keeps four
    /// (`vpdpbusd` accumulates in place, so one register per output block would be one chain
    /// of dependent instructions), the others one (AVX2 has 16 registers for 4 blocks).
    const PARTIALS: usize;
    /// The next narrower level: what a body runs on the elements left after its last full
    /// register, before single lanes (every AVX-512 CPU has AVX2).
    type Half: IntLanes;

    unsafe fn zero() -> Self::V;
    unsafe fn load(p: *const u8) -> Self::V;
    unsafe fn store(p: *mut u8, v: Self::V);
    /// 16-bit lanes, wrapping.
    unsafe fn add_i16(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn sub_i16(a: Self::V, b: Self::V) -> Self::V;
    /// 32-bit lanes, wrapping.
    unsafe fn add_i32(a: Self::V, b: Self::V) -> Self::V;
    /// `x` in every 32-bit lane (four input bytes broadcast).
    unsafe fn splat_i32(x: i32) -> Self::V;
    /// `acc + Σ` of the four adjacent u8 × i8 products of each 32-bit lane (`x` unsigned
    /// bytes, `w` signed), exact for `x` <= 127 (`int/mod.rs`, the affine contract).
    unsafe fn dpbusd(acc: Self::V, x: Self::V, w: Self::V) -> Self::V;
    /// The wrapping sum of the 32-bit lanes.
    unsafe fn hsum_i32(v: Self::V) -> i32;
    /// `clamp(·, 0, 127)` of the 16-bit lanes of `a` then `b`, as bytes in that order.
    unsafe fn clip_i16(a: Self::V, b: Self::V) -> Self::V;
    /// `clamp(y >> CRELU_SHIFT, 0, 127)` of the 32-bit lanes of `y[0]`, …, `y[3]`, as
    /// bytes in that order.
    unsafe fn crelu_i32(y: [Self::V; 4]) -> Self::V;
}

/// Four bytes in a plain array: the level every CPU runs.
pub(super) struct Scalar;

/// The 16-bit lanes of a scalar register.
#[inline(always)]
fn i16s(v: [u8; 4]) -> [i16; 2] {
    [
        i16::from_ne_bytes([v[0], v[1]]),
        i16::from_ne_bytes([v[2], v[3]]),
    ]
}

#[inline(always)]
fn from_i16s(h: [i16; 2]) -> [u8; 4] {
    let (a, b) = (h[0].to_ne_bytes(), h[1].to_ne_bytes());
    [a[0], a[1], b[0], b[1]]
}

impl IntLanes for Scalar {
    type V = [u8; 4];
    const BYTES: usize = 4;
    const PARTIALS: usize = 1;
    type Half = Scalar;

    #[inline(always)]
    unsafe fn zero() -> [u8; 4] {
        [0; 4]
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> [u8; 4] {
        // SAFETY: the caller's contract (four readable bytes at p).
        unsafe { p.cast::<[u8; 4]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: [u8; 4]) {
        // SAFETY: the caller's contract (four writable bytes at p).
        unsafe { p.cast::<[u8; 4]>().write_unaligned(v) }
    }
    #[inline(always)]
    unsafe fn add_i16(a: [u8; 4], b: [u8; 4]) -> [u8; 4] {
        let (a, b) = (i16s(a), i16s(b));
        from_i16s([a[0].wrapping_add(b[0]), a[1].wrapping_add(b[1])])
    }
    #[inline(always)]
    unsafe fn sub_i16(a: [u8; 4], b: [u8; 4]) -> [u8; 4] {
        let (a, b) = (i16s(a), i16s(b));
        from_i16s([a[0].wrapping_sub(b[0]), a[1].wrapping_sub(b[1])])
    }
    #[inline(always)]
    unsafe fn add_i32(a: [u8; 4], b: [u8; 4]) -> [u8; 4] {
        i32::from_ne_bytes(a)
            .wrapping_add(i32::from_ne_bytes(b))
            .to_ne_bytes()
    }
    #[inline(always)]
    unsafe fn splat_i32(x: i32) -> [u8; 4] {
        x.to_ne_bytes()
    }
    #[inline(always)]
    unsafe fn dpbusd(acc: [u8; 4], x: [u8; 4], w: [u8; 4]) -> [u8; 4] {
        let mut s = i32::from_ne_bytes(acc);
        for (&x, &w) in x.iter().zip(&w) {
            s = s.wrapping_add(i32::from(x) * i32::from(w as i8));
        }
        s.to_ne_bytes()
    }
    #[inline(always)]
    unsafe fn hsum_i32(v: [u8; 4]) -> i32 {
        i32::from_ne_bytes(v)
    }
    #[inline(always)]
    unsafe fn clip_i16(a: [u8; 4], b: [u8; 4]) -> [u8; 4] {
        let (a, b) = (i16s(a), i16s(b));
        [a[0], a[1], b[0], b[1]].map(|v| v.clamp(0, 127) as u8)
    }
    #[inline(always)]
    unsafe fn crelu_i32(y: [[u8; 4]; 4]) -> [u8; 4] {
        y.map(|v| (i32::from_ne_bytes(v) >> super::CRELU_SHIFT).clamp(0, 127) as u8)
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) use x86::{Avx2, Avx512, Avx512Vnni};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{IntLanes, Scalar};
    use std::arch::x86_64::*;

    /// AVX2: 16 × i16, 32 × u8/i8, 8 × i32 per register.
    pub struct Avx2;

    // SAFETY (every method): the trait's contract — the CPU has AVX2, and `load` / `store`
    // have 32 bytes at the pointer.
    impl IntLanes for Avx2 {
        type V = __m256i;
        const BYTES: usize = 32;
        const PARTIALS: usize = 1;
        type Half = Scalar;

        #[inline(always)]
        unsafe fn zero() -> __m256i {
            unsafe { _mm256_setzero_si256() }
        }
        #[inline(always)]
        unsafe fn load(p: *const u8) -> __m256i {
            unsafe { _mm256_loadu_si256(p.cast()) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut u8, v: __m256i) {
            unsafe { _mm256_storeu_si256(p.cast(), v) }
        }
        #[inline(always)]
        unsafe fn add_i16(a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_add_epi16(a, b) }
        }
        #[inline(always)]
        unsafe fn sub_i16(a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_sub_epi16(a, b) }
        }
        #[inline(always)]
        unsafe fn add_i32(a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_add_epi32(a, b) }
        }
        #[inline(always)]
        unsafe fn splat_i32(x: i32) -> __m256i {
            unsafe { _mm256_set1_epi32(x) }
        }
        /// `vpmaddubsw` (pairs into i16, saturating) then `vpmaddwd` against ones (pairs
        /// into i32): with `x` <= 127 a pair is at most 2·127·128 = 32,512 in magnitude, so
        /// the saturation never acts and the sum is exact, as in YaneuraOu's
        /// `m256_add_dpbusd_epi32` (`layers/simd.h`).
        #[inline(always)]
        unsafe fn dpbusd(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
            unsafe {
                let pairs = _mm256_maddubs_epi16(x, w);
                _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
            }
        }
        #[inline(always)]
        unsafe fn hsum_i32(v: __m256i) -> i32 {
            unsafe {
                let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
                let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
                let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
                _mm_cvtsi128_si32(s)
            }
        }
        /// `packs` saturates i16 to i8 (values above 127 become 127), `max` with zero floors
        /// at 0: together `clamp(·, 0, 127)`. `packs` interleaves the two sources per 128-bit
        /// lane; the 64-bit permute restores the element order.
        #[inline(always)]
        unsafe fn clip_i16(a: __m256i, b: __m256i) -> __m256i {
            unsafe {
                let p = _mm256_max_epi8(_mm256_packs_epi16(a, b), _mm256_setzero_si256());
                _mm256_permute4x64_epi64::<0b11_01_10_00>(p)
            }
        }
        /// Shift in 32 bits, two saturating packs (i32 → i16 → i8) and a floor at 0 (a value
        /// saturated by a pack is beyond 127 or below 0 either way). The packs interleave per
        /// 128-bit lane; a 32-bit permute restores the order.
        #[inline(always)]
        unsafe fn crelu_i32(y: [__m256i; 4]) -> __m256i {
            unsafe {
                const S: i32 = super::super::CRELU_SHIFT;
                let s0 = _mm256_srai_epi32::<S>(y[0]);
                let s1 = _mm256_srai_epi32::<S>(y[1]);
                let s2 = _mm256_srai_epi32::<S>(y[2]);
                let s3 = _mm256_srai_epi32::<S>(y[3]);
                let w = _mm256_packs_epi16(_mm256_packs_epi32(s0, s1), _mm256_packs_epi32(s2, s3));
                let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
                _mm256_permutevar8x32_epi32(_mm256_max_epi8(w, _mm256_setzero_si256()), order)
            }
        }
    }

    /// AVX-512 F/BW: 32 × i16, 64 × u8/i8, 16 × i32 per register; the dot step with
    /// `vpmaddubsw` + `vpmaddwd`, as AVX2.
    pub struct Avx512;

    /// The clipped ReLU's shift as the 512-bit shift intrinsic takes it.
    const SHIFT: u32 = super::super::CRELU_SHIFT as u32;

    // SAFETY (every method): the trait's contract — the CPU has AVX-512 F and BW (and AVX2,
    // for `Half`), and `load` / `store` have 64 bytes at the pointer.
    impl IntLanes for Avx512 {
        type V = __m512i;
        const BYTES: usize = 64;
        const PARTIALS: usize = 4;
        type Half = Avx2;

        #[inline(always)]
        unsafe fn zero() -> __m512i {
            unsafe { _mm512_setzero_si512() }
        }
        #[inline(always)]
        unsafe fn load(p: *const u8) -> __m512i {
            unsafe { _mm512_loadu_si512(p.cast()) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut u8, v: __m512i) {
            unsafe { _mm512_storeu_si512(p.cast(), v) }
        }
        #[inline(always)]
        unsafe fn add_i16(a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_add_epi16(a, b) }
        }
        #[inline(always)]
        unsafe fn sub_i16(a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_sub_epi16(a, b) }
        }
        #[inline(always)]
        unsafe fn add_i32(a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_add_epi32(a, b) }
        }
        #[inline(always)]
        unsafe fn splat_i32(x: i32) -> __m512i {
            unsafe { _mm512_set1_epi32(x) }
        }
        #[inline(always)]
        unsafe fn dpbusd(acc: __m512i, x: __m512i, w: __m512i) -> __m512i {
            unsafe {
                let pairs = _mm512_maddubs_epi16(x, w);
                _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)))
            }
        }
        #[inline(always)]
        unsafe fn hsum_i32(v: __m512i) -> i32 {
            unsafe { _mm512_reduce_add_epi32(v) }
        }
        /// As AVX2's; `packs` interleaves per 128-bit lane, so a 64-bit permute
        /// (0, 2, 4, 6, 1, 3, 5, 7) restores the element order.
        #[inline(always)]
        unsafe fn clip_i16(a: __m512i, b: __m512i) -> __m512i {
            unsafe {
                let p = _mm512_max_epi8(_mm512_packs_epi16(a, b), _mm512_setzero_si512());
                _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), p)
            }
        }
        /// As AVX2's; after the two packs 32-bit unit `4j + k` holds input register `k`'s
        /// lane `j`, so the permute gathers `4k + j` from `4j + k`.
        #[inline(always)]
        unsafe fn crelu_i32(y: [__m512i; 4]) -> __m512i {
            unsafe {
                let s0 = _mm512_srai_epi32::<SHIFT>(y[0]);
                let s1 = _mm512_srai_epi32::<SHIFT>(y[1]);
                let s2 = _mm512_srai_epi32::<SHIFT>(y[2]);
                let s3 = _mm512_srai_epi32::<SHIFT>(y[3]);
                let w = _mm512_packs_epi16(_mm512_packs_epi32(s0, s1), _mm512_packs_epi32(s2, s3));
                let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
                _mm512_permutexvar_epi32(order, _mm512_max_epi8(w, _mm512_setzero_si512()))
            }
        }
    }

    /// AVX-512 with VNNI: as [`Avx512`], the dot step one `vpdpbusd`, which sums the four
    /// products of each lane into 32 bits without intermediate saturation — the same
    /// integers, as in YaneuraOu's `m512_add_dpbusd_epi32` (`layers/simd.h`).
    pub struct Avx512Vnni;

    // SAFETY (every method): as Avx512's, and the CPU has AVX-512 VNNI.
    impl IntLanes for Avx512Vnni {
        type V = __m512i;
        const BYTES: usize = 64;
        const PARTIALS: usize = 4;
        type Half = Avx2;

        #[inline(always)]
        unsafe fn zero() -> __m512i {
            unsafe { Avx512::zero() }
        }
        #[inline(always)]
        unsafe fn load(p: *const u8) -> __m512i {
            unsafe { Avx512::load(p) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut u8, v: __m512i) {
            unsafe { Avx512::store(p, v) }
        }
        #[inline(always)]
        unsafe fn add_i16(a: __m512i, b: __m512i) -> __m512i {
            unsafe { Avx512::add_i16(a, b) }
        }
        #[inline(always)]
        unsafe fn sub_i16(a: __m512i, b: __m512i) -> __m512i {
            unsafe { Avx512::sub_i16(a, b) }
        }
        #[inline(always)]
        unsafe fn add_i32(a: __m512i, b: __m512i) -> __m512i {
            unsafe { Avx512::add_i32(a, b) }
        }
        #[inline(always)]
        unsafe fn splat_i32(x: i32) -> __m512i {
            unsafe { Avx512::splat_i32(x) }
        }
        #[inline(always)]
        unsafe fn dpbusd(acc: __m512i, x: __m512i, w: __m512i) -> __m512i {
            unsafe { _mm512_dpbusd_epi32(acc, x, w) }
        }
        #[inline(always)]
        unsafe fn hsum_i32(v: __m512i) -> i32 {
            unsafe { Avx512::hsum_i32(v) }
        }
        #[inline(always)]
        unsafe fn clip_i16(a: __m512i, b: __m512i) -> __m512i {
            unsafe { Avx512::clip_i16(a, b) }
        }
        #[inline(always)]
        unsafe fn crelu_i32(y: [__m512i; 4]) -> __m512i {
            unsafe { Avx512::crelu_i32(y) }
        }
    }
}
