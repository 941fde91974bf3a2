//! An f32 affine map computed in integers (issue 17 item 3; docs/evaluator.md, "Precision"):
//! the weights as int8 rows with one f32 scale each ([`quantize_i8`]), and each input row
//! quantised when it arrives, per position, into two planes of 7-bit steps — so the u8 × i8
//! [`affine`] kernel (VNNI `vpdpbusd`, AVX2 `vpmaddubsw`) does the multiply-adds exactly, in
//! 32 bits, and only the outputs are scaled back to f32.
//!
//! A float head's input is not bounded (RMS-normalised features are signed and have no fixed
//! range), so the step is chosen per position: inputs of both signs map to `u = x/step + 64`
//! with `step = max|x| / 63`; all-non-negative inputs (after a ReLU) to `u = x/step` with
//! `step = max|x| / 127`. Either way `u` is in 0..=127, the range the integer kernels take.
//! One such plane is too coarse for trained heads (a policy logit off by up to 0.69 on the
//! default network, against 0.11 for int8 weights alone), so the rounding residual — within
//! half a step — is quantised again, as a second plane of `fine = step / 126` (offset 64):
//! together about 13 bits per input, and the error is the weights' again. The offsets are
//! removed with each row's precomputed sum of steps:
//!
//! `y_r = b_r + scale_r · (step · (Σ_i q_ri·u_i − zero·Σ_i q_ri) + fine · (Σ_i q_ri·v_i − 64·Σ_i q_ri))`.
//!
//! Error: `|Δy_r| ≤ scale_r/2 · Σ|x| + fine/2 · scale_r · Σ_i |q_ri|` plus f32 rounding of
//! the final products (tested in `tests.rs`).

use super::{AffineI8, IntSimd, affine, quantize};
use crate::cpu::weight::quantize_i8;

/// The zero point of inputs of both signs (`u = x/step + 64` spans −64..=63 steps), and of
/// the residual plane.
const SIGNED_ZERO: i32 = 64;

/// The residual plane's steps per coarse step: the residual is within ±1/2 step, so within
/// ±63 fine steps.
const FINE: f32 = 126.0;

/// How an input row was quantised: `x[i] ≈ step · (u[i] − zero) + step/126 · (v[i] − 64)`,
/// `u` the coarse plane and `v` the residual plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputSteps {
    /// The coarse step (0 for a row of zeros, NaN for a row with a non-finite value).
    pub step: f32,
    /// The coarse plane's zero point: 0 for inputs that are all ≥ 0, else 64.
    pub zero: i32,
}

impl InputSteps {
    /// The residual plane's step.
    pub fn fine(self) -> f32 {
        self.step / FINE
    }
}

/// Quantises `x` into the coarse plane `u` and the residual plane `v` (each value in
/// 0..=127, to the nearest step), returning the step and the zero point.
#[inline(always)]
pub fn quantize_input<const N: usize>(
    x: &[f32; N],
    u: &mut [u8; N],
    v: &mut [u8; N],
) -> InputSteps {
    // Plain loops over independent lanes: the entry point that inlines this enables the
    // level's vector features, and per-lane extremes (not one running value, whose order
    // the compiler must keep) let it vectorise them.
    const LANES: usize = 16;
    let (mut hi, mut lo, mut bad) = ([0.0f32; LANES], [0.0f32; LANES], [0.0f32; LANES]);
    let mut note = |j: usize, x: f32| {
        hi[j] = if x > hi[j] { x } else { hi[j] };
        lo[j] = if x < lo[j] { x } else { lo[j] };
        bad[j] = if x.is_finite() { bad[j] } else { 1.0 };
    };
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (j, &x) in c.iter().enumerate() {
            note(j, x);
        }
    }
    for (j, &x) in rest.iter().enumerate() {
        note(j, x);
    }
    let max = hi.iter().fold(0.0f32, |m, &x| m.max(x));
    let min = lo.iter().fold(0.0f32, |m, &x| m.min(x));
    let finite = bad.iter().all(|&b| b == 0.0);
    let (zero, levels) = if min < 0.0 {
        (SIGNED_ZERO, 63.0)
    } else {
        (0, 127.0)
    };
    let largest = max.max(-min);
    if !finite || largest == 0.0 {
        u.fill(zero as u8);
        v.fill(SIGNED_ZERO as u8);
        let step = if finite { 0.0 } else { f32::NAN };
        return InputSteps { step, zero };
    }
    let step = largest / levels;
    let (inv, inv_fine) = (levels / largest, levels * FINE / largest);
    let z = zero as f32;
    for ((u, v), &x) in u.iter_mut().zip(v.iter_mut()).zip(x) {
        // Ties to even: one vector instruction (`vroundps`), unlike `round`.
        let q = (x * inv).round_ties_even().clamp(-z, 127.0 - z);
        let r = ((x - step * q) * inv_fine)
            .round_ties_even()
            .clamp(-64.0, 63.0);
        // SAFETY: both are finite (every input is) and in 0..=127 once offset.
        unsafe {
            *u = (q + z).to_int_unchecked::<i32>() as u8;
            *v = (r + 64.0).to_int_unchecked::<i32>() as u8;
        }
    }
    InputSteps { step, zero }
}

/// The bytes of an `inputs → outputs` map's int8 copy: one byte per weight, and each row's
/// f32 scale and i32 sum of steps.
pub const fn int8_copy_bytes(inputs: usize, outputs: usize) -> u64 {
    (inputs * outputs + 8 * outputs) as u64
}

/// An `IN → OUT` affine map's weights prepared for integer evaluation: int8 rows in the
/// kernels' packed layout, each row's scale and its sum of steps.
#[derive(Clone, Debug)]
pub struct QuantizedAffine<const IN: usize, const OUT: usize> {
    layer: AffineI8<IN, OUT>,
    scales: Box<[f32; OUT]>,
    row_sums: Box<[i32; OUT]>,
}

/// What [`QuantizedAffine::forward`] works in: the two input planes and their integer sums
/// (the caller keeps it, so an evaluation allocates nothing).
pub struct QuantizedScratch<const IN: usize, const OUT: usize> {
    u: [u8; IN],
    v: [u8; IN],
    coarse: [i32; OUT],
    fine: [i32; OUT],
}

impl<const IN: usize, const OUT: usize> Default for QuantizedScratch<IN, OUT> {
    fn default() -> Self {
        QuantizedScratch {
            u: [0; IN],
            v: [0; IN],
            coarse: [0; OUT],
            fine: [0; OUT],
        }
    }
}

impl<const IN: usize, const OUT: usize> QuantizedAffine<IN, OUT> {
    /// The int8 copy of row-major f32 weights `w` (`OUT` rows of `IN`).
    pub fn new(w: &[[f32; IN]; OUT]) -> Self {
        let mut steps = Vec::with_capacity(IN * OUT);
        let mut scales = Box::new([0.0f32; OUT]);
        let mut row_sums = Box::new([0i32; OUT]);
        for (r, row) in w.iter().enumerate() {
            let (q, s) = quantize_i8(row);
            scales[r] = s;
            row_sums[r] = q.iter().map(|&v| i32::from(v)).sum();
            steps.extend_from_slice(&q);
        }
        QuantizedAffine {
            layer: AffineI8::new(IN, OUT, &steps, &[0; OUT]),
            scales,
            row_sums,
        }
    }

    /// The bytes of this copy ([`int8_copy_bytes`]).
    pub const BYTES: u64 = int8_copy_bytes(IN, OUT);

    /// The weight from input `i` to output `r` as the kernels see it: its step and its row's
    /// scale.
    pub fn weight(&self, r: usize, i: usize) -> (i8, f32) {
        (self.layer.weight(r, i), self.scales[r])
    }

    /// `out = b + W x`, with `x` quantised and the products summed in 32-bit integers at
    /// level `s`.
    #[inline]
    pub fn forward(
        &self,
        s: IntSimd,
        b: &[f32; OUT],
        x: &[f32; IN],
        scratch: &mut QuantizedScratch<IN, OUT>,
        out: &mut [f32; OUT],
    ) {
        let QuantizedScratch { u, v, coarse, fine } = scratch;
        let steps = quantize(s, x, u, v);
        affine(s, &self.layer, u, coarse);
        affine(s, &self.layer, v, fine);
        let (step, fine_step) = (steps.step, steps.fine());
        for r in 0..OUT {
            let sum = self.row_sums[r];
            let c = coarse[r].wrapping_sub(steps.zero.wrapping_mul(sum)) as f32;
            let f = fine[r].wrapping_sub(SIGNED_ZERO.wrapping_mul(sum)) as f32;
            out[r] = b[r] + self.scales[r] * (step * c + fine_step * f);
        }
    }
}
