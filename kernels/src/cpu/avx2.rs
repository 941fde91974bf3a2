//! AVX2 + FMA kernels (8 × f32). Every function is `unsafe` because it needs those CPU
//! features; the safe dispatch in `cpu/mod.rs` calls them only after checking. Tails shorter
//! than a vector go through the scalar twin.

use super::scalar;
use std::arch::x86_64::*;

const W: usize = 8;

#[target_feature(enable = "avx2,fma")]
pub unsafe fn add_assign(acc: &mut [f32], row: &[f32]) {
    let n = acc.len().min(row.len());
    let body = n / W * W;
    let (a, r) = (acc.as_mut_ptr(), row.as_ptr());
    let mut i = 0;
    while i < body {
        // SAFETY: i + 8 <= n for both slices.
        unsafe { _mm256_storeu_ps(a.add(i), _mm256_add_ps(_mm256_loadu_ps(a.add(i)), _mm256_loadu_ps(r.add(i)))) };
        i += W;
    }
    scalar::add_assign(&mut acc[body..n], &row[body..n]);
}

#[target_feature(enable = "avx2,fma")]
pub unsafe fn sub_assign(acc: &mut [f32], row: &[f32]) {
    let n = acc.len().min(row.len());
    let body = n / W * W;
    let (a, r) = (acc.as_mut_ptr(), row.as_ptr());
    let mut i = 0;
    while i < body {
        // SAFETY: i + 8 <= n for both slices.
        unsafe { _mm256_storeu_ps(a.add(i), _mm256_sub_ps(_mm256_loadu_ps(a.add(i)), _mm256_loadu_ps(r.add(i)))) };
        i += W;
    }
    scalar::sub_assign(&mut acc[body..n], &row[body..n]);
}

#[target_feature(enable = "avx2,fma")]
pub unsafe fn power_update(p: &mut [f32], e: &[f32], d: usize, sign: f32) {
    let order = p.len() / d;
    let body = d / W * W;
    let pp = p.as_mut_ptr();
    let mut c = 0;
    while c < body {
        // SAFETY: c + 8 <= d, and row k of p spans k·d .. (k+1)·d within p.
        unsafe {
            let ev = _mm256_loadu_ps(e.as_ptr().add(c));
            let mut x = _mm256_mul_ps(_mm256_set1_ps(sign), ev);
            for k in 0..order {
                let q = pp.add(k * d + c);
                _mm256_storeu_ps(q, _mm256_add_ps(_mm256_loadu_ps(q), x));
                x = _mm256_mul_ps(x, ev);
            }
        }
        c += W;
    }
    for c in body..d {
        let mut x = sign * e[c];
        for k in 0..order {
            p[k * d + c] += x;
            x *= e[c];
        }
    }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn hsum(v: __m256) -> f32 {
    let lo = _mm256_castps256_ps128(v);
    let hi = _mm256_extractf128_ps::<1>(v);
    let s = _mm_add_ps(lo, hi);
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
    _mm_cvtss_f32(s)
}

#[target_feature(enable = "avx2,fma")]
pub unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let body = n / (2 * W) * (2 * W);
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut s0 = _mm256_setzero_ps();
    let mut s1 = _mm256_setzero_ps();
    let mut i = 0;
    while i < body {
        // SAFETY: i + 16 <= n.
        unsafe {
            s0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), s0);
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + W)), _mm256_loadu_ps(pb.add(i + W)), s1);
        }
        i += 2 * W;
    }
    // SAFETY: AVX2 is enabled for this function.
    let mut s = unsafe { hsum(_mm256_add_ps(s0, s1)) };
    for j in body..n {
        s += a[j] * b[j];
    }
    s
}

/// Rows of W outer, inputs inner in groups of four: each W row is loaded from memory once
/// and stays in L1 while every input reads it.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn affine_batch(w: &[f32], b: &[f32], xs: &[f32], out: &mut [f32], n_in: usize, n_out: usize, batch: usize) {
    let body = n_in / W * W;
    for r in 0..n_out {
        let row = &w[r * n_in..(r + 1) * n_in];
        let mut j = 0;
        while j < batch {
            let g = (batch - j).min(4);
            let mut acc = [_mm256_setzero_ps(); 4];
            let mut i = 0;
            while i < body {
                // SAFETY: i + 8 <= n_in; input rows j..j+g exist (j + g <= batch).
                unsafe {
                    let wv = _mm256_loadu_ps(row.as_ptr().add(i));
                    for (t, a) in acc.iter_mut().enumerate().take(g) {
                        *a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xs.as_ptr().add((j + t) * n_in + i)), *a);
                    }
                }
                i += W;
            }
            for (t, a) in acc.iter().enumerate().take(g) {
                let x = &xs[(j + t) * n_in..(j + t + 1) * n_in];
                // SAFETY: AVX2 is enabled for this function.
                let mut s = unsafe { hsum(*a) };
                for k in body..n_in {
                    s += row[k] * x[k];
                }
                out[(j + t) * n_out + r] = b[r] + s;
            }
            j += g;
        }
    }
}
