//! AVX-512 kernels (16 × f32). Every function is `unsafe` because it needs those CPU
//! features; the safe dispatch in `cpu/mod.rs` calls them only after checking. Tails shorter
//! than a vector go through the scalar twin.

use super::scalar;
use std::arch::x86_64::*;

const W: usize = 16;

#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn add_assign(acc: &mut [f32], row: &[f32]) {
    let n = acc.len().min(row.len());
    let body = n / W * W;
    let (a, r) = (acc.as_mut_ptr(), row.as_ptr());
    let mut i = 0;
    while i < body {
        // SAFETY: i + 16 <= n for both slices.
        unsafe { _mm512_storeu_ps(a.add(i), _mm512_add_ps(_mm512_loadu_ps(a.add(i)), _mm512_loadu_ps(r.add(i)))) };
        i += W;
    }
    scalar::add_assign(&mut acc[body..n], &row[body..n]);
}

#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn sub_assign(acc: &mut [f32], row: &[f32]) {
    let n = acc.len().min(row.len());
    let body = n / W * W;
    let (a, r) = (acc.as_mut_ptr(), row.as_ptr());
    let mut i = 0;
    while i < body {
        // SAFETY: i + 16 <= n for both slices.
        unsafe { _mm512_storeu_ps(a.add(i), _mm512_sub_ps(_mm512_loadu_ps(a.add(i)), _mm512_loadu_ps(r.add(i)))) };
        i += W;
    }
    scalar::sub_assign(&mut acc[body..n], &row[body..n]);
}

#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn power_update(p: &mut [f32], e: &[f32], d: usize, sign: f32) {
    let order = p.len() / d;
    let body = d / W * W;
    let pp = p.as_mut_ptr();
    let mut c = 0;
    while c < body {
        // SAFETY: c + 16 <= d, and row k of p spans k·d .. (k+1)·d within p.
        unsafe {
            let ev = _mm512_loadu_ps(e.as_ptr().add(c));
            let mut x = _mm512_mul_ps(_mm512_set1_ps(sign), ev);
            for k in 0..order {
                let q = pp.add(k * d + c);
                _mm512_storeu_ps(q, _mm512_add_ps(_mm512_loadu_ps(q), x));
                x = _mm512_mul_ps(x, ev);
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

#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn hsum(v: __m512) -> f32 {
    _mm512_reduce_add_ps(v)
}

#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let body = n / (2 * W) * (2 * W);
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut s0 = _mm512_setzero_ps();
    let mut s1 = _mm512_setzero_ps();
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= n.
        unsafe {
            s0 = _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(i)), _mm512_loadu_ps(pb.add(i)), s0);
            s1 = _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(i + W)), _mm512_loadu_ps(pb.add(i + W)), s1);
        }
        i += 2 * W;
    }
    // SAFETY: AVX-512 is enabled for this function.
    let mut s = unsafe { hsum(_mm512_add_ps(s0, s1)) };
    for j in body..n {
        s += a[j] * b[j];
    }
    s
}

/// Rows of W outer, inputs inner in groups of four: each W row is loaded from memory once
/// and stays in L1 while every input reads it.
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn affine_batch(w: &[f32], b: &[f32], xs: &[f32], out: &mut [f32], n_in: usize, n_out: usize, batch: usize) {
    let body = n_in / W * W;
    for r in 0..n_out {
        let row = &w[r * n_in..(r + 1) * n_in];
        let mut j = 0;
        while j < batch {
            let g = (batch - j).min(4);
            let mut acc = [_mm512_setzero_ps(); 4];
            let mut i = 0;
            while i < body {
                // SAFETY: i + 16 <= n_in; input rows j..j+g exist (j + g <= batch).
                unsafe {
                    let wv = _mm512_loadu_ps(row.as_ptr().add(i));
                    for (t, a) in acc.iter_mut().enumerate().take(g) {
                        *a = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xs.as_ptr().add((j + t) * n_in + i)), *a);
                    }
                }
                i += W;
            }
            for (t, a) in acc.iter().enumerate().take(g) {
                let x = &xs[(j + t) * n_in..(j + t + 1) * n_in];
                // SAFETY: AVX-512 is enabled for this function.
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
