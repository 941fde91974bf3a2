//! AVX2 integer kernels (16 × i16, 32 × u8/i8, 8 × i32 per vector). Every function is
//! `unsafe` because it needs AVX2; the safe dispatch in `int/mod.rs` calls them only after
//! checking. Tails shorter than a vector go through the scalar twin.
//!
//! The u8 × i8 products use `vpmaddubsw` (pairs summed into i16 with saturation) then
//! `vpmaddwd` against ones (pairs into i32). With inputs in 0..=127 — the contract of
//! [`super::affine`] and [`super::dot_u8i8`], which every clipped activation meets — a pair
//! is at most 2·127·128 = 32,512 in magnitude, so the saturation never acts and the sum is
//! exact, as in YaneuraOu's `m256_add_dpbusd_epi32` (`layers/simd.h`).

use super::{AffineI8, scalar};
use std::arch::x86_64::*;

/// i16 lanes per vector.
const L16: usize = 16;
/// Vectors kept in registers during one pass over the rows of an accumulator update.
const BLOCK: usize = 8;

/// One pass of `BLOCK` vectors (or one vector) starting at element `start`.
#[target_feature(enable = "avx2")]
unsafe fn accumulate_block<const V: usize>(
    acc: *mut i16,
    src: *const i16,
    sub: &[*const i16],
    add: &[*const i16],
    start: usize,
) {
    let mut r = [_mm256_setzero_si256(); V];
    // SAFETY (all loads and stores below): the caller guarantees start + V·16 <= N for the
    // accumulator, the source and every row, each N long.
    unsafe {
        for (k, v) in r.iter_mut().enumerate() {
            *v = _mm256_loadu_si256(src.add(start + k * L16).cast());
        }
        for &p in sub {
            for (k, v) in r.iter_mut().enumerate() {
                *v = _mm256_sub_epi16(*v, _mm256_loadu_si256(p.add(start + k * L16).cast()));
            }
        }
        for &p in add {
            for (k, v) in r.iter_mut().enumerate() {
                *v = _mm256_add_epi16(*v, _mm256_loadu_si256(p.add(start + k * L16).cast()));
            }
        }
        for (k, v) in r.iter().enumerate() {
            _mm256_storeu_si256(acc.add(start + k * L16).cast(), *v);
        }
    }
}

/// Row pointers of a short list of rows, on the stack (at most `MAX_ROWS`; longer lists are
/// applied in several passes by the caller).
pub(super) const MAX_ROWS: usize = 64;

pub(super) fn pointers<const N: usize>(
    rows: &[&[i16; N]],
    out: &mut [*const i16; MAX_ROWS],
) -> usize {
    for (o, r) in out.iter_mut().zip(rows) {
        *o = r.as_ptr();
    }
    rows.len().min(MAX_ROWS)
}

#[target_feature(enable = "avx2")]
pub unsafe fn accumulate<const N: usize>(
    acc: &mut [i16; N],
    base: Option<&[i16; N]>,
    sub: &[&[i16; N]],
    add: &[&[i16; N]],
) {
    if sub.len() > MAX_ROWS || add.len() > MAX_ROWS {
        return scalar::accumulate(acc, base, sub, add);
    }
    let (mut ps, mut pa) = ([std::ptr::null(); MAX_ROWS], [std::ptr::null(); MAX_ROWS]);
    let ns = pointers(sub, &mut ps);
    let na = pointers(add, &mut pa);
    let body = N / L16 * L16;
    // Both pointers from one mutable borrow: a shared pointer taken before `as_mut_ptr`
    // would be invalidated by it (Miri's Stacked Borrows).
    let dst = acc.as_mut_ptr();
    let src = base.map_or(dst.cast_const(), |b| b.as_ptr());
    let mut start = 0;
    // SAFETY: every pass stays below `body` <= N.
    unsafe {
        while start + BLOCK * L16 <= body {
            accumulate_block::<BLOCK>(dst, src, &ps[..ns], &pa[..na], start);
            start += BLOCK * L16;
        }
        while start < body {
            accumulate_block::<1>(dst, src, &ps[..ns], &pa[..na], start);
            start += L16;
        }
    }
    tail(acc, base, sub, add, body);
}

/// Elements `from..N` of an accumulation, lane by lane (wrapping, as the vectors do).
pub(super) fn tail<const N: usize>(
    acc: &mut [i16; N],
    base: Option<&[i16; N]>,
    sub: &[&[i16; N]],
    add: &[&[i16; N]],
    from: usize,
) {
    for i in from..N {
        let mut v = base.map_or(acc[i], |b| b[i]);
        for r in sub {
            v = v.wrapping_sub(r[i]);
        }
        for r in add {
            v = v.wrapping_add(r[i]);
        }
        acc[i] = v;
    }
}

/// `packs` saturates i16 to i8 (so values above 127 become 127), `max` with zero floors at 0:
/// together `clamp(·, 0, 127)`. `packs` interleaves the two sources per 128-bit lane; the
/// 64-bit permute restores element order.
#[target_feature(enable = "avx2")]
pub unsafe fn clip_i16(acc: &[i16], out: &mut [u8]) {
    let n = acc.len().min(out.len());
    let body = n / 32 * 32;
    let zero = _mm256_setzero_si256();
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= n for both slices.
        unsafe {
            let a = _mm256_loadu_si256(acc.as_ptr().add(i).cast());
            let b = _mm256_loadu_si256(acc.as_ptr().add(i + 16).cast());
            let p = _mm256_max_epi8(_mm256_packs_epi16(a, b), zero);
            _mm256_storeu_si256(
                out.as_mut_ptr().add(i).cast(),
                _mm256_permute4x64_epi64::<0b11_01_10_00>(p),
            );
        }
        i += 32;
    }
    scalar::clip_i16(&acc[body..n], &mut out[body..n]);
}

/// Shift in 32 bits, then two saturating packs (i32 → i16 → i8) and a floor at 0:
/// `clamp(y >> CRELU_SHIFT, 0, 127)` (a value saturated by a pack is beyond 127 or below 0 either
/// way). The packs interleave per 128-bit lane; a 32-bit permute restores the order.
#[target_feature(enable = "avx2")]
pub unsafe fn crelu_i32(y: &[i32], out: &mut [u8]) {
    let n = y.len().min(out.len());
    let body = n / 32 * 32;
    let zero = _mm256_setzero_si256();
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= n for both slices.
        unsafe {
            let p = y.as_ptr().add(i);
            let s0 = _mm256_srai_epi32::<{ super::CRELU_SHIFT }>(_mm256_loadu_si256(p.cast()));
            let s1 =
                _mm256_srai_epi32::<{ super::CRELU_SHIFT }>(_mm256_loadu_si256(p.add(8).cast()));
            let s2 =
                _mm256_srai_epi32::<{ super::CRELU_SHIFT }>(_mm256_loadu_si256(p.add(16).cast()));
            let s3 =
                _mm256_srai_epi32::<{ super::CRELU_SHIFT }>(_mm256_loadu_si256(p.add(24).cast()));
            let w = _mm256_packs_epi16(_mm256_packs_epi32(s0, s1), _mm256_packs_epi32(s2, s3));
            let b = _mm256_permutevar8x32_epi32(_mm256_max_epi8(w, zero), order);
            _mm256_storeu_si256(out.as_mut_ptr().add(i).cast(), b);
        }
        i += 32;
    }
    scalar::crelu_i32(&y[body..n], &mut out[body..n]);
}

/// `acc + Σ` of four adjacent u8 × i8 products per 32-bit lane (exact for inputs <= 127).
#[target_feature(enable = "avx2")]
fn dp(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
    let pairs = _mm256_maddubs_epi16(x, w);
    _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
}

/// Outputs `o..o + 8·R` of an affine layer: `R` registers of eight sums, each input group
/// of four bytes broadcast once and multiplied with the packed columns of those outputs.
#[target_feature(enable = "avx2")]
unsafe fn affine_block<const R: usize>(layer: &AffineI8, x: &[u8], out: &mut [i32], o: usize) {
    let n_out = layer.outputs;
    let mut acc = [_mm256_setzero_si256(); R];
    // SAFETY: o + 8·R <= outputs (the caller's loop bound); group g's columns for these
    // outputs are 32·R bytes at (g·outputs + o)·4 in `packed` (outputs × 4 bytes per group);
    // x holds at least 4·groups bytes (checked by the dispatcher).
    unsafe {
        for (k, a) in acc.iter_mut().enumerate() {
            *a = _mm256_loadu_si256(layer.biases.as_ptr().add(o + 8 * k).cast());
        }
        for g in 0..layer.groups {
            let xv = _mm256_set1_epi32(x.as_ptr().add(4 * g).cast::<i32>().read_unaligned());
            let col = layer.packed.as_ptr().add((g * n_out + o) * 4);
            for (k, a) in acc.iter_mut().enumerate() {
                *a = dp(*a, xv, _mm256_loadu_si256(col.add(32 * k).cast()));
            }
        }
        for (k, a) in acc.iter().enumerate() {
            _mm256_storeu_si256(out.as_mut_ptr().add(o + 8 * k).cast(), *a);
        }
    }
    layer.add_tail(x, out, o, o + 8 * R);
}

#[target_feature(enable = "avx2")]
pub unsafe fn affine(layer: &AffineI8, x: &[u8], out: &mut [i32], from: usize, to: usize) {
    let mut o = from;
    // SAFETY: each block ends at or before `to` <= outputs.
    unsafe {
        while o + 32 <= to {
            affine_block::<4>(layer, x, out, o);
            o += 32;
        }
        while o + 8 <= to {
            affine_block::<1>(layer, x, out, o);
            o += 8;
        }
    }
    scalar::affine(layer, x, out, o, to);
}

/// Horizontal wrapping sum of eight i32 lanes.
#[target_feature(enable = "avx2")]
pub(super) fn hsum_i32(v: __m256i) -> i32 {
    let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
    _mm_cvtsi128_si32(s)
}

#[target_feature(enable = "avx2")]
pub unsafe fn dot_u8i8(x: &[u8], w: &[i8]) -> i32 {
    let n = x.len().min(w.len());
    let body = n / 32 * 32;
    let mut acc = _mm256_setzero_si256();
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= n for both slices.
        unsafe {
            acc = dp(
                acc,
                _mm256_loadu_si256(x.as_ptr().add(i).cast()),
                _mm256_loadu_si256(w.as_ptr().add(i).cast()),
            );
        }
        i += 32;
    }
    hsum_i32(acc).wrapping_add(scalar::dot_u8i8(&x[body..n], &w[body..n]))
}
