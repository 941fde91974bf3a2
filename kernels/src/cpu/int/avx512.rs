//! AVX-512 integer kernels (32 × i16, 64 × u8/i8, 16 × i32 per vector), with and without
//! VNNI. Every function is `unsafe` because it needs those CPU features; the safe dispatch
//! in `int/mod.rs` calls them only after checking. Remainders too short for a 512-bit vector
//! go through the AVX2 kernels (every AVX-512 CPU has AVX2), then the scalar twin.
//!
//! Without VNNI a u8 × i8 dot step is `vpmaddubsw` + `vpmaddwd` (exact for inputs <= 127,
//! see `avx2.rs`); with VNNI it is one `vpdpbusd`, which sums the four products of each lane
//! into 32 bits without intermediate saturation — the same integers either way, as in
//! YaneuraOu's `m512_add_dpbusd_epi32` (`layers/simd.h`).

use super::{AffineI8, avx2};
use std::arch::x86_64::*;

const L16: usize = 32;
/// The clipped ReLU's shift as the 512-bit shift intrinsic takes it.
const SHIFT: u32 = super::CRELU_SHIFT as u32;
const BLOCK: usize = 8;

#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn accumulate_block<const V: usize>(
    acc: *mut i16,
    src: *const i16,
    sub: &[*const i16],
    add: &[*const i16],
    start: usize,
) {
    let mut r = [_mm512_setzero_si512(); V];
    // SAFETY (all loads and stores below): the caller guarantees start + V·32 <= N for the
    // accumulator, the source and every row, each N long.
    unsafe {
        for (k, v) in r.iter_mut().enumerate() {
            *v = _mm512_loadu_si512(src.add(start + k * L16).cast());
        }
        for &p in sub {
            for (k, v) in r.iter_mut().enumerate() {
                *v = _mm512_sub_epi16(*v, _mm512_loadu_si512(p.add(start + k * L16).cast()));
            }
        }
        for &p in add {
            for (k, v) in r.iter_mut().enumerate() {
                *v = _mm512_add_epi16(*v, _mm512_loadu_si512(p.add(start + k * L16).cast()));
            }
        }
        for (k, v) in r.iter().enumerate() {
            _mm512_storeu_si512(acc.add(start + k * L16).cast(), *v);
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub unsafe fn accumulate<const N: usize>(
    acc: &mut [i16; N],
    base: Option<&[i16; N]>,
    sub: &[&[i16; N]],
    add: &[&[i16; N]],
) {
    if sub.len() > avx2::MAX_ROWS || add.len() > avx2::MAX_ROWS {
        return super::scalar::accumulate(acc, base, sub, add);
    }
    let (mut ps, mut pa) = (
        [std::ptr::null(); avx2::MAX_ROWS],
        [std::ptr::null(); avx2::MAX_ROWS],
    );
    let ns = avx2::pointers(sub, &mut ps);
    let na = avx2::pointers(add, &mut pa);
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
    avx2::tail(acc, base, sub, add, body);
}

/// As the AVX2 version: saturating pack to i8, floor at 0; `packs` interleaves per 128-bit
/// lane, so a 64-bit permute (0, 2, 4, 6, 1, 3, 5, 7) restores the element order.
#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub unsafe fn clip_i16(acc: &[i16], out: &mut [u8]) {
    let n = acc.len().min(out.len());
    let body = n / 64 * 64;
    let zero = _mm512_setzero_si512();
    let order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    let mut i = 0;
    while i < body {
        // SAFETY: i + 64 <= n for both slices.
        unsafe {
            let a = _mm512_loadu_si512(acc.as_ptr().add(i).cast());
            let b = _mm512_loadu_si512(acc.as_ptr().add(i + 32).cast());
            let p = _mm512_max_epi8(_mm512_packs_epi16(a, b), zero);
            _mm512_storeu_si512(
                out.as_mut_ptr().add(i).cast(),
                _mm512_permutexvar_epi64(order, p),
            );
        }
        i += 64;
    }
    // SAFETY: AVX2 is enabled here.
    unsafe { avx2::clip_i16(&acc[body..n], &mut out[body..n]) };
}

/// As the AVX2 version, 64 values at a time; after the two packs 32-bit unit `4j + k` holds
/// input vector `k`'s lane `j`, so the permute gathers `4k + j` from `4j + k`.
#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub unsafe fn crelu_i32(y: &[i32], out: &mut [u8]) {
    let n = y.len().min(out.len());
    let body = n / 64 * 64;
    let zero = _mm512_setzero_si512();
    let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    let mut i = 0;
    while i < body {
        // SAFETY: i + 64 <= n for both slices.
        unsafe {
            let p = y.as_ptr().add(i);
            let s0 = _mm512_srai_epi32::<SHIFT>(_mm512_loadu_si512(p.cast()));
            let s1 = _mm512_srai_epi32::<SHIFT>(_mm512_loadu_si512(p.add(16).cast()));
            let s2 = _mm512_srai_epi32::<SHIFT>(_mm512_loadu_si512(p.add(32).cast()));
            let s3 = _mm512_srai_epi32::<SHIFT>(_mm512_loadu_si512(p.add(48).cast()));
            let w = _mm512_packs_epi16(_mm512_packs_epi32(s0, s1), _mm512_packs_epi32(s2, s3));
            let b = _mm512_permutexvar_epi32(order, _mm512_max_epi8(w, zero));
            _mm512_storeu_si512(out.as_mut_ptr().add(i).cast(), b);
        }
        i += 64;
    }
    // SAFETY: AVX2 is enabled here.
    unsafe { avx2::crelu_i32(&y[body..n], &mut out[body..n]) };
}

#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn dp(acc: __m512i, x: __m512i, w: __m512i) -> __m512i {
    let pairs = _mm512_maddubs_epi16(x, w);
    _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)))
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
fn dp_vnni(acc: __m512i, x: __m512i, w: __m512i) -> __m512i {
    _mm512_dpbusd_epi32(acc, x, w)
}

/// The affine layer and the dot product, generated twice: with the two-instruction dot
/// step and with VNNI's `vpdpbusd`.
macro_rules! affine_and_dot {
    ($features:literal, $dp:ident, $block:ident, $affine:ident, $dot:ident) => {
        /// Outputs `o..o + 16·R`: `R` registers of sixteen sums (see `avx2::affine_block`),
        /// each kept as `U` partial sums over interleaved input groups: `vpdpbusd`
        /// accumulates in place, so one register per output block would be a chain of
        /// dependent instructions. The partial sums are added at the end (wrapping addition
        /// is associative: the same integers).
        #[target_feature(enable = $features)]
        unsafe fn $block<const R: usize>(layer: &AffineI8, x: &[u8], out: &mut [i32], o: usize) {
            const U: usize = 4;
            let n_out = layer.outputs;
            let mut acc = [[_mm512_setzero_si512(); R]; U];
            // SAFETY: o + 16·R <= outputs; group g's columns for these outputs are 64·R bytes
            // at (g·outputs + o)·4 in `packed`; x holds at least 4·groups bytes.
            unsafe {
                for (k, a) in acc[0].iter_mut().enumerate() {
                    *a = _mm512_loadu_si512(layer.biases.as_ptr().add(o + 16 * k).cast());
                }
                let step = |acc: &mut [__m512i; R], g: usize| {
                    let xv =
                        _mm512_set1_epi32(x.as_ptr().add(4 * g).cast::<i32>().read_unaligned());
                    let col = layer.packed.as_ptr().add((g * n_out + o) * 4);
                    for (k, a) in acc.iter_mut().enumerate() {
                        *a = $dp(*a, xv, _mm512_loadu_si512(col.add(64 * k).cast()));
                    }
                };
                let body = layer.groups / U * U;
                let mut g = 0;
                while g < body {
                    for (u, partial) in acc.iter_mut().enumerate() {
                        step(partial, g + u);
                    }
                    g += U;
                }
                while g < layer.groups {
                    step(&mut acc[0], g);
                    g += 1;
                }
                for k in 0..R {
                    let sum = _mm512_add_epi32(
                        _mm512_add_epi32(acc[0][k], acc[1][k]),
                        _mm512_add_epi32(acc[2][k], acc[3][k]),
                    );
                    _mm512_storeu_si512(out.as_mut_ptr().add(o + 16 * k).cast(), sum);
                }
            }
            layer.add_tail(x, out, o, o + 16 * R);
        }

        #[target_feature(enable = $features)]
        pub unsafe fn $affine(layer: &AffineI8, x: &[u8], out: &mut [i32], from: usize, to: usize) {
            let mut o = from;
            // SAFETY: each block ends at or before `to` <= outputs; AVX2 is enabled here.
            unsafe {
                while o + 64 <= to {
                    $block::<4>(layer, x, out, o);
                    o += 64;
                }
                while o + 32 <= to {
                    $block::<2>(layer, x, out, o);
                    o += 32;
                }
                while o + 16 <= to {
                    $block::<1>(layer, x, out, o);
                    o += 16;
                }
                avx2::affine(layer, x, out, o, to);
            }
        }

        #[target_feature(enable = $features)]
        pub unsafe fn $dot(x: &[u8], w: &[i8]) -> i32 {
            let n = x.len().min(w.len());
            let body = n / 64 * 64;
            let mut acc = _mm512_setzero_si512();
            let mut i = 0;
            while i < body {
                // SAFETY: i + 64 <= n for both slices.
                unsafe {
                    acc = $dp(
                        acc,
                        _mm512_loadu_si512(x.as_ptr().add(i).cast()),
                        _mm512_loadu_si512(w.as_ptr().add(i).cast()),
                    );
                }
                i += 64;
            }
            // SAFETY: AVX2 is enabled here.
            let rest = unsafe { avx2::dot_u8i8(&x[body..n], &w[body..n]) };
            _mm512_reduce_add_epi32(acc).wrapping_add(rest)
        }
    };
}

affine_and_dot!("avx512f,avx512bw,avx2", dp, affine_block, affine, dot_u8i8);
affine_and_dot!(
    "avx512f,avx512bw,avx512vnni,avx2",
    dp_vnni,
    affine_block_vnni,
    affine_vnni,
    dot_u8i8_vnni
);
