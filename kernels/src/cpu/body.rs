//! The f32 kernel bodies, each written once over [`Lanes`] and instantiated per level by the
//! entry points in `mod.rs`.
//!
//! Every size is a const parameter and every operand a fixed-size array, so each loop's trip
//! count is a constant of the instantiation (`N / W` vectors, then `N % W` single lanes) and
//! no length is compared at run time. Bodies are `#[inline(always)]`: they only exist inlined
//! into an entry point that enables their level's target features.
//!
//! # Safety
//! Every body is `unsafe` for one reason: it calls `L`'s methods, which need `L`'s CPU
//! features (see [`Lanes`]). Memory accesses are in bounds by the array types: a vector load
//! at element `i` happens only while `i + W <= N`.

use super::lanes::Lanes;

/// `acc += row`.
#[inline(always)]
pub(super) unsafe fn add_assign<L: Lanes, const N: usize>(acc: &mut [f32; N], row: &[f32; N]) {
    let (a, r) = (acc.as_mut_ptr(), row.as_ptr());
    let mut i = 0;
    while i + L::W <= N {
        // SAFETY: i + W <= N for both arrays; L's features (module doc).
        unsafe { L::store(a.add(i), L::add(L::load(a.add(i)), L::load(r.add(i)))) };
        i += L::W;
    }
    while i < N {
        acc[i] += row[i];
        i += 1;
    }
}

/// `acc -= row`.
#[inline(always)]
pub(super) unsafe fn sub_assign<L: Lanes, const N: usize>(acc: &mut [f32; N], row: &[f32; N]) {
    let (a, r) = (acc.as_mut_ptr(), row.as_ptr());
    let mut i = 0;
    while i + L::W <= N {
        // SAFETY: i + W <= N for both arrays; L's features (module doc).
        unsafe { L::store(a.add(i), L::sub(L::load(a.add(i)), L::load(r.add(i)))) };
        i += L::W;
    }
    while i < N {
        acc[i] -= row[i];
        i += 1;
    }
}

/// `p[k][c] += sign · e[c]^(k+1)` for k = 0..O. The powers are formed by repeated
/// multiplication (never fused), so every level computes the same bits.
#[inline(always)]
pub(super) unsafe fn power_update<L: Lanes, const D: usize, const O: usize>(
    p: &mut [[f32; D]; O],
    e: &[f32; D],
    sign: f32,
) {
    let mut c = 0;
    while c + L::W <= D {
        // SAFETY: c + W <= D for e and for every row of p; L's features (module doc).
        unsafe {
            let ev = L::load(e.as_ptr().add(c));
            let mut x = L::mul(L::splat(sign), ev);
            for row in p.iter_mut() {
                let q = row.as_mut_ptr().add(c);
                L::store(q, L::add(L::load(q), x));
                x = L::mul(x, ev);
            }
        }
        c += L::W;
    }
    while c < D {
        let mut x = sign * e[c];
        for row in p.iter_mut() {
            row[c] += x;
            x *= e[c];
        }
        c += 1;
    }
}

/// `Σ a[i] · b[i]`, in four independent accumulator chains (enough in flight to cover the
/// FMA latency), then one chain for the vectors left, then the single lanes left.
#[inline(always)]
pub(super) unsafe fn dot<L: Lanes, const N: usize>(a: &[f32; N], b: &[f32; N]) -> f32 {
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    // SAFETY (every block below): vector loads at i while i + W <= N; L's features.
    let mut s = unsafe { [L::zero(); 4] };
    let mut i = 0;
    while i + 4 * L::W <= N {
        for (k, acc) in s.iter_mut().enumerate() {
            let j = i + k * L::W;
            *acc = unsafe { L::fma(L::load(pa.add(j)), L::load(pb.add(j)), *acc) };
        }
        i += 4 * L::W;
    }
    while i + L::W <= N {
        s[0] = unsafe { L::fma(L::load(pa.add(i)), L::load(pb.add(i)), s[0]) };
        i += L::W;
    }
    let mut sum = unsafe { L::hsum(L::add(L::add(s[0], s[1]), L::add(s[2], s[3]))) };
    while i < N {
        sum += a[i] * b[i];
        i += 1;
    }
    sum
}

/// Batched affine map `out[j] = W · xs[j] + b` (W row-major, `OUT` rows of `IN`); the safe
/// wrapper has checked `xs.len() == out.len()`. (bf16 weights have a layout and a body of
/// their own: `bf16.rs`.)
///
/// Rows of W outer, inputs inner, in register blocks: 4 rows × `L::TILE` inputs share each
/// loaded vector, so the loop is bound by FMAs rather than loads, and the accumulators are
/// independent chains, which hides the FMA latency. A block of 4 W rows stays in L1 while
/// every input tile reads it, so W is streamed from memory once per call. A batch of one uses
/// 8 rows × 1 input (8 independent chains).
///
/// Each output is summed the same way whatever block it falls in — one vector chain over
/// `IN / W` vectors, its lanes summed, then the `IN % W` lanes left, then the bias — so a
/// leaf's outputs are the same bits alone or in any batch (docs/evaluator.md, the state
/// cache).
#[inline(always)]
pub(super) unsafe fn affine_batch<L: Lanes, const IN: usize, const OUT: usize>(
    w: &[[f32; IN]; OUT],
    b: &[f32; OUT],
    xs: &[[f32; IN]],
    out: &mut [[f32; OUT]],
) {
    assert_eq!(xs.len(), out.len(), "one output row per input");
    let batch = xs.len();
    // Finishes one output: the block's vector sum, the lanes past the last vector, the bias
    // (in this order, which the batch-invariance above relies on).
    let finish = |out: &mut [[f32; OUT]], r: usize, j: usize, s: f32| {
        let (row, x) = (&w[r], &xs[j]);
        let mut tail = 0.0f32;
        for k in IN / L::W * L::W..IN {
            tail += row[k] * x[k];
        }
        out[j][r] = b[r] + s + tail;
    };
    let mut r = 0;
    if batch == 1 {
        while r + 8 <= OUT {
            // SAFETY: rows r..r+8 < OUT and input 0 exist; L's features.
            let sums = unsafe { L::block::<IN, 8, 1>(&w[r..r + 8], &xs[..1]) };
            for (k, s) in sums.iter().enumerate() {
                finish(out, r + k, 0, s[0]);
            }
            r += 8;
        }
    } else {
        while r + 4 <= OUT {
            let rows = &w[r..r + 4];
            let mut j = 0;
            while j < batch {
                let g = (batch - j).min(L::TILE);
                let x = &xs[j..j + g];
                // The first g columns of a block's sums.
                let mut sums = [[0.0f32; 4]; 4];
                fn take<const T: usize>(dst: &mut [[f32; 4]; 4], src: [[f32; T]; 4]) {
                    for (d, s) in dst.iter_mut().zip(src) {
                        d[..T].copy_from_slice(&s);
                    }
                }
                // SAFETY: rows r..r+4 and inputs j..j+g exist; L's features.
                unsafe {
                    match g {
                        1 => take(&mut sums, L::block::<IN, 4, 1>(rows, x)),
                        2 => take(&mut sums, L::block::<IN, 4, 2>(rows, x)),
                        3 => take(&mut sums, L::block::<IN, 4, 3>(rows, x)),
                        _ => take(&mut sums, L::block::<IN, 4, 4>(rows, x)),
                    }
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
    while r < OUT {
        for j in 0..batch {
            // SAFETY: row r and input j exist; L's features.
            let sums = unsafe { L::block::<IN, 1, 1>(&w[r..r + 1], &xs[j..j + 1]) };
            finish(out, r, j, sums[0][0]);
        }
        r += 1;
    }
}

/// `Σ_{i < IN/W·W} w[k][i] · x[t][i]` for each of a block of `R` rows and `T` inputs, as
/// `[k][t]`: one vector chain per pair, its lanes summed.
// Index loops over the two small register-block dimensions read more plainly than iterators.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub(super) unsafe fn block<L: Lanes, const IN: usize, const R: usize, const T: usize>(
    w: &[[f32; IN]],
    x: &[[f32; IN]],
) -> [[f32; T]; R] {
    assert!(
        w.len() == R && x.len() == T,
        "a block is R rows by T inputs"
    );
    let wp: [*const f32; R] = std::array::from_fn(|k| w[k].as_ptr());
    let xp: [*const f32; T] = std::array::from_fn(|t| x[t].as_ptr());
    // SAFETY (every block below): vector loads at i while i + W <= IN, from rows of IN; L's
    // features.
    let mut acc = unsafe { [[L::zero(); T]; R] };
    let mut i = 0;
    while i + L::W <= IN {
        unsafe {
            let mut wv = [L::zero(); R];
            for k in 0..R {
                wv[k] = L::load(wp[k].add(i));
            }
            for t in 0..T {
                let xv = L::load(xp[t].add(i));
                for k in 0..R {
                    acc[k][t] = L::fma(wv[k], xv, acc[k][t]);
                }
            }
        }
        i += L::W;
    }
    let mut sums = [[0.0f32; T]; R];
    for k in 0..R {
        for t in 0..T {
            sums[k][t] = unsafe { L::hsum(acc[k][t]) };
        }
    }
    sums
}
