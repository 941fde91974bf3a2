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
        unsafe {
            _mm512_storeu_ps(
                a.add(i),
                _mm512_add_ps(_mm512_loadu_ps(a.add(i)), _mm512_loadu_ps(r.add(i))),
            )
        };
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
        unsafe {
            _mm512_storeu_ps(
                a.add(i),
                _mm512_sub_ps(_mm512_loadu_ps(a.add(i)), _mm512_loadu_ps(r.add(i))),
            )
        };
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
    // Four independent accumulators: enough chains in flight to cover the FMA latency.
    let n = a.len().min(b.len());
    let body = n / (4 * W) * (4 * W);
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut s = [_mm512_setzero_ps(); 4];
    let mut i = 0;
    while i < body {
        for (k, acc) in s.iter_mut().enumerate() {
            // SAFETY: i + 4W <= n.
            unsafe {
                *acc = _mm512_fmadd_ps(
                    _mm512_loadu_ps(pa.add(i + k * W)),
                    _mm512_loadu_ps(pb.add(i + k * W)),
                    *acc,
                )
            };
        }
        i += 4 * W;
    }
    while i + W <= n {
        // SAFETY: i + W <= n.
        unsafe {
            s[0] = _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(i)), _mm512_loadu_ps(pb.add(i)), s[0])
        };
        i += W;
    }
    // SAFETY: the target features of this function are enabled.
    let mut sum = unsafe {
        hsum(_mm512_add_ps(
            _mm512_add_ps(s[0], s[1]),
            _mm512_add_ps(s[2], s[3]),
        ))
    };
    for j in i..n {
        sum += a[j] * b[j];
    }
    sum
}

/// Rows of W outer, inputs inner, in register blocks: 4 rows × 4 inputs share each loaded
/// vector (4+4 loads per 16 FMAs), so the loop is bound by FMAs rather than loads, and
/// the 16 accumulators are independent chains, which hides the FMA latency. A block of 4
/// W rows stays in L1 while every input tile reads it, so W is streamed from memory once
/// per call. A batch of one uses 8 rows × 1 input (8 independent chains).
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn affine_batch(
    w: &[f32],
    b: &[f32],
    xs: &[f32],
    out: &mut [f32],
    n_in: usize,
    n_out: usize,
    batch: usize,
) {
    assert!(
        w.len() >= n_in * n_out
            && b.len() >= n_out
            && xs.len() >= n_in * batch
            && out.len() >= n_out * batch
    );
    let body = n_in / W * W;
    // Finishes one output: the block's vector sum, the scalar tail past `body`, the bias.
    let finish = |out: &mut [f32], r: usize, j: usize, s: f32| {
        let (row, x) = (&w[r * n_in..(r + 1) * n_in], &xs[j * n_in..(j + 1) * n_in]);
        let tail: f32 = (body..n_in).map(|k| row[k] * x[k]).sum();
        out[j * n_out + r] = b[r] + s + tail;
    };
    let mut r = 0;
    if batch == 1 {
        while r + 8 <= n_out {
            // SAFETY: rows r..r+8 and input 0 are in bounds (asserted above).
            let sums = unsafe { block::<8, 1>(w.as_ptr().add(r * n_in), xs.as_ptr(), n_in, body) };
            for (k, s) in sums.iter().enumerate() {
                finish(out, r + k, 0, s[0]);
            }
            r += 8;
        }
    } else {
        let mut sums = [[0.0f32; 4]; 4];
        // The first T columns of a block's sums into the tile's sums.
        fn copy<const T: usize>(dst: &mut [[f32; 4]; 4], src: [[f32; T]; 4]) {
            for (d, s) in dst.iter_mut().zip(src) {
                d[..T].copy_from_slice(&s);
            }
        }
        while r + 4 <= n_out {
            let wp = w[r * n_in..].as_ptr();
            let mut j = 0;
            while j < batch {
                let g = (batch - j).min(4);
                let xp = xs[j * n_in..].as_ptr();
                // SAFETY: rows r..r+4 and inputs j..j+g are in bounds (asserted above).
                match g {
                    1 => copy(&mut sums, unsafe { block::<4, 1>(wp, xp, n_in, body) }),
                    2 => copy(&mut sums, unsafe { block::<4, 2>(wp, xp, n_in, body) }),
                    3 => copy(&mut sums, unsafe { block::<4, 3>(wp, xp, n_in, body) }),
                    _ => copy(&mut sums, unsafe { block::<4, 4>(wp, xp, n_in, body) }),
                }
                for (k, row) in sums.iter().enumerate() {
                    for (t, &s) in row.iter().enumerate().take(g) {
                        finish(out, r + k, j + t, s);
                    }
                }
                j += g;
            }
            r += 4;
        }
    }
    // Rows left over: one at a time, each against every input.
    while r < n_out {
        for j in 0..batch {
            // SAFETY: row r and input j are in bounds (asserted above).
            let sums = unsafe {
                block::<1, 1>(
                    w.as_ptr().add(r * n_in),
                    xs.as_ptr().add(j * n_in),
                    n_in,
                    body,
                )
            };
            finish(out, r, j, sums[0][0]);
        }
        r += 1;
    }
}

/// `Σ_{i < body} w[k·n_in + i] · x[t·n_in + i]` for each of a block of `R` rows and `T`
/// inputs, as `[k][t]`.
///
/// # Safety
/// `R` rows of `n_in` floats at `w` and `T` rows at `x` must be readable; `body` is a multiple
/// of the vector width and at most `n_in`.
// Index loops over the two small register-block dimensions read more plainly than iterators.
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn block<const R: usize, const T: usize>(
    w: *const f32,
    x: *const f32,
    n_in: usize,
    body: usize,
) -> [[f32; T]; R] {
    let mut sums = [[0.0f32; T]; R];
    let mut acc = [[_mm512_setzero_ps(); T]; R];
    let mut i = 0;
    while i < body {
        // SAFETY: i + W <= body <= n_in for every row read (caller's contract).
        unsafe {
            let mut wv = [_mm512_setzero_ps(); R];
            for (k, v) in wv.iter_mut().enumerate() {
                *v = _mm512_loadu_ps(w.add(k * n_in + i));
            }
            for t in 0..T {
                let xv = _mm512_loadu_ps(x.add(t * n_in + i));
                for k in 0..R {
                    acc[k][t] = _mm512_fmadd_ps(wv[k], xv, acc[k][t]);
                }
            }
        }
        i += W;
    }
    for k in 0..R {
        for t in 0..T {
            // SAFETY: the target features of this function are enabled.
            sums[k][t] = unsafe { hsum(acc[k][t]) };
        }
    }
    sums
}
