//! The two bounds that relate an `nnue` shape's evaluations (test-only), shared by the tests
//! of export and import (`nnue/tests.rs`) and of training (`train/trainer_tests.rs`):
//!
//! - [`quantisation_bound`]: float weights within half a step of each other (an original and
//!   its dequantised form, nothing saturated) give value logits at most this far apart;
//! - [`integer_rounding_bound`]: the integer engine is at most this far from the float net of
//!   the dequantised weights (the same numbers; only the integer activations' floors differ).
//!
//! So the integer engine on a net is within their sum of the float net (triangle inequality).

use super::quant::{
    FT_SCALE, HIDDEN_BIAS_SCALE, HIDDEN_WEIGHT_SCALE, OUTPUT_BIAS_SCALE, OUTPUT_WEIGHT_SCALE,
};
use crate::shogi::{Color, Position};
use crate::tokens;
use crate::weights::TensorSource;

/// Half a quantisation step of each tensor.
pub(crate) fn half_step(name: &str) -> f64 {
    0.5 / match name {
        "embed" | "embed.bias" => FT_SCALE,
        "w1" | "w2" => HIDDEN_WEIGHT_SCALE,
        "b1" | "b2" => HIDDEN_BIAS_SCALE,
        "value.w" => OUTPUT_WEIGHT_SCALE,
        "value.b" => OUTPUT_BIAS_SCALE,
        _ => unreachable!(),
    }
}

/// SPEC §6 in f64, keeping every activation: `acts[0]` the clipped accumulators (side to
/// move first), then each hidden layer's output; and the value logit.
pub(crate) fn float_forward(src: &dyn TensorSource, pos: &Position) -> (Vec<Vec<f64>>, f64) {
    let shape = *src.shape();
    let t = |n: &str| src.tensor(n).unwrap();
    let d = shape.d as usize;
    let stm = pos.side_to_move();
    let mut x = Vec::new();
    for c in [stm, stm.flip()] {
        let mut acc: Vec<f64> = t("embed.bias").iter().map(|&v| f64::from(v)).collect();
        for &z in tokens::active_tokens(shape.features, pos, c).as_slice() {
            for (a, &e) in acc
                .iter_mut()
                .zip(&t("embed")[z as usize * d..(z as usize + 1) * d])
            {
                *a += f64::from(e);
            }
        }
        x.extend(acc.iter().map(|a| a.clamp(0.0, 1.0)));
    }
    let mut acts = vec![x];
    for (w, b) in [("w1", "b1"), ("w2", "b2")]
        .into_iter()
        .take(if shape.h2.is_some() { 2 } else { 1 })
    {
        let x = acts.last().unwrap();
        let h: Vec<f64> = t(b)
            .iter()
            .enumerate()
            .map(|(o, &bo)| {
                let row = &t(w)[o * x.len()..(o + 1) * x.len()];
                (f64::from(bo)
                    + row
                        .iter()
                        .zip(x)
                        .map(|(&wi, xi)| f64::from(wi) * xi)
                        .sum::<f64>())
                .clamp(0.0, 1.0)
            })
            .collect();
        acts.push(h);
    }
    let h = acts.last().unwrap();
    let l = f64::from(t("value.b")[0])
        + t("value.w")
            .iter()
            .zip(h)
            .map(|(&w, x)| f64::from(w) * x)
            .sum::<f64>();
    (acts, l)
}

/// The bound on |ℓ − ℓ̂| that weights within half a step of each other imply at `pos`: the
/// accumulators differ by at most (tokens + 1) half steps; through a layer,
/// `|z − ẑ| ≤ Σ|W|·δx + Σ(half step)·x̂ + (half step of b)`; clipping never widens a gap.
pub(crate) fn quantisation_bound(
    orig: &dyn TensorSource,
    imported_acts: &[Vec<f64>],
    pos: &Position,
) -> f64 {
    let shape = *orig.shape();
    let n = tokens::active_tokens(shape.features, pos, Color::Black)
        .len()
        .max(tokens::active_tokens(shape.features, pos, Color::White).len());
    let mut delta = vec![((n + 1) as f64 * half_step("embed")).min(1.0); 2 * shape.d as usize];
    let layers: &[(&str, &str)] = if shape.h2.is_some() {
        &[("w1", "b1"), ("w2", "b2")]
    } else {
        &[("w1", "b1")]
    };
    for (k, (w, b)) in layers.iter().enumerate() {
        let x_hat = &imported_acts[k];
        let wt = orig.tensor(w).unwrap();
        let inputs = x_hat.len();
        delta = (0..orig.tensor(b).unwrap().len())
            .map(|o| {
                let row = &wt[o * inputs..(o + 1) * inputs];
                let dz = row
                    .iter()
                    .zip(&delta)
                    .map(|(&wi, di)| f64::from(wi).abs() * di)
                    .sum::<f64>()
                    + half_step(w) * x_hat.iter().sum::<f64>()
                    + half_step(b);
                dz.min(1.0)
            })
            .collect();
    }
    let h_hat = imported_acts.last().unwrap();
    orig.tensor("value.w")
        .unwrap()
        .iter()
        .zip(&delta)
        .map(|(&w, d)| f64::from(w).abs() * d)
        .sum::<f64>()
        + half_step("value.w") * h_hat.iter().sum::<f64>()
        + half_step("value.b")
}

/// The bound on |integer value − ℓ̂| (both as value logits) for the float net `deq` whose
/// weights are exactly integers over their scales (dequantised; the accumulators must not
/// wrap their 16 bits). The accumulator bytes are exactly `127·x̂`: every product and sum is
/// the float one times its scale. Each clipped ReLU floors `z / 64`, losing less than one step
/// (1/127) beyond what its inputs lost: `δ' = Σ|W|·δ + 1/127`, capped at 1 (both clip to
/// [0, 1]). The output is truncated to whole centipawns: 1/600 more.
pub(crate) fn integer_rounding_bound(deq: &dyn TensorSource) -> f64 {
    let shape = *deq.shape();
    let step = 1.0 / 127.0;
    let h = shape.h as usize;
    // The first hidden layer's inputs are exact: only its own floor.
    let mut delta = vec![step; h];
    if let Some(h2) = shape.h2 {
        let w2 = deq.tensor("w2").expect("nnue shapes with h2 have w2");
        delta = (0..h2 as usize)
            .map(|o| {
                (w2[o * h..(o + 1) * h]
                    .iter()
                    .zip(&delta)
                    .map(|(&w, d)| f64::from(w).abs() * d)
                    .sum::<f64>()
                    + step)
                    .min(1.0)
            })
            .collect();
    }
    deq.tensor("value.w")
        .expect("nnue shapes have value.w")
        .iter()
        .zip(&delta)
        .map(|(&w, d)| f64::from(w).abs() * d)
        .sum::<f64>()
        + 1.0 / 600.0
}
