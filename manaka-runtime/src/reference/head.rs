//! The head (SPEC §5, and §6 for `nnue`): from the two perspectives' accumulators to a value
//! logit and policy logits.

use super::accumulator::Accumulator;
use super::params::Params;
use crate::labels::{move_class, move_feature, move_label};
use crate::shogi::{Color, Move, Position};
use manaka_shapes::formula::LSE_FLOOR;
use manaka_shapes::{BlockKind, PowerGroup, Shape};

/// RMS-normalisation epsilon (SPEC §5), from the spec's small formulas (issue 17).
pub use manaka_shapes::formula::RMS_EPS;

/// Elementary symmetric polynomials e_1..e_o of one channel from its power sums p_1..p_o,
/// by Newton's identities: e_0 = 1, k·e_k = Σ_{i=1..k} (−1)^(i−1) e_(k−i) p_i (SPEC §4).
pub fn newton(p: &[f64]) -> Vec<f64> {
    let mut e = vec![1.0; p.len() + 1];
    for k in 1..=p.len() {
        let mut s = 0.0;
        for i in 1..=k {
            let sign = if i % 2 == 1 { 1.0 } else { -1.0 };
            s += sign * e[k - i] * p[i - 1];
        }
        e[k] = s / k as f64;
    }
    e.remove(0);
    e
}

/// One perspective's raw (not yet normalised) blocks, in `Shape::blocks()` order.
pub fn raw_blocks(shape: &Shape, acc: &Accumulator) -> Vec<Vec<f64>> {
    let d = shape.d as usize;
    let o = shape.order as usize;
    // e[g][k-1][c]
    let elementary: Vec<Vec<Vec<f64>>> = acc
        .power
        .iter()
        .map(|pk| {
            let mut e = vec![vec![0.0; d]; o];
            for c in 0..d {
                let p: Vec<f64> = (0..o).map(|k| pk[k][c]).collect();
                for (k, v) in newton(&p).into_iter().enumerate() {
                    e[k][c] = v;
                }
            }
            e
        })
        .collect();
    let lse = shape.lse.unwrap_or(0) as usize;
    let linear = shape.pair as usize - lse;
    shape
        .blocks()
        .iter()
        .map(|b| match b.kind {
            BlockKind::Power { group, k } => {
                let g = if group == PowerGroup::Opp { 1 } else { 0 };
                elementary[g][k as usize - 1].clone()
            }
            BlockKind::PairLinear => acc.pair[..linear].to_vec(),
            // The table stores exp(x); the readout is ln of the sum, kept finite when the
            // sum is not positive (no active pair) by flooring at the smallest normal f32.
            BlockKind::PairLse => acc.pair[linear..]
                .iter()
                .map(|&s| s.max(LSE_FLOOR as f64).ln())
                .collect(),
            BlockKind::Moment => {
                let m = shape.moments.unwrap_or(0) as usize;
                let mut v = Vec::with_capacity(m * (m + 1) / 2);
                for i in 0..m {
                    for j in i..m {
                        v.push(acc.moments[i * m + j]);
                    }
                }
                v
            }
            BlockKind::Field => acc.field.clone(),
        })
        .collect()
}

/// One perspective's part of the head input: each block RMS-normalised with its gains, then
/// (with `ks`) one log-RMS per block (SPEC §5).
pub fn perspective_input(shape: &Shape, params: &Params<'_>, acc: &Accumulator) -> Vec<f64> {
    if shape.nnue {
        // SPEC §6: clip(acc) = min(max(x, 0), 1).
        return acc.nnue.iter().map(|&x| x.clamp(0.0, 1.0)).collect();
    }
    let mut out = Vec::with_capacity(shape.perspective_width() as usize);
    let mut log_rms = Vec::new();
    for (x, gains) in raw_blocks(shape, acc).iter().zip(&params.norms) {
        let rms = (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64 + RMS_EPS).sqrt();
        out.extend(
            x.iter()
                .zip(gains.iter())
                .map(|(&v, &g)| g as f64 * v / rms),
        );
        log_rms.push(rms.ln());
    }
    if shape.ks {
        out.extend(log_rms);
    }
    out
}

/// `y = W x + b` for row-major `W` (`b.len()` rows).
fn affine(w: &[f32], b: &[f32], x: &[f64]) -> Vec<f64> {
    let n = x.len();
    b.iter()
        .enumerate()
        .map(|(r, &bias)| {
            let row = &w[r * n..(r + 1) * n];
            bias as f64 + row.iter().zip(x).map(|(&a, &v)| a as f64 * v).sum::<f64>()
        })
        .collect()
}

/// The last hidden vector: ReLU (Manaka arithmetic) or clip to [0, 1] (NNUE) after each
/// layer.
pub fn hidden(
    shape: &Shape,
    params: &Params<'_>,
    stm: &Accumulator,
    other: &Accumulator,
) -> Vec<f64> {
    hidden_layers(shape, params, stm, other)
        .pop()
        .expect("a head has at least one hidden layer")
}

/// Every hidden layer's activations, first to last (the last is [`hidden`]); `manaka lab`'s
/// inspector shows them all.
pub fn hidden_layers(
    shape: &Shape,
    params: &Params<'_>,
    stm: &Accumulator,
    other: &Accumulator,
) -> Vec<Vec<f64>> {
    let mut u = perspective_input(shape, params, stm);
    u.extend(perspective_input(shape, params, other));
    let act = |v: f64| {
        if shape.nnue {
            v.clamp(0.0, 1.0)
        } else {
            v.max(0.0)
        }
    };
    let h1: Vec<f64> = affine(params.w1, params.b1, &u)
        .into_iter()
        .map(act)
        .collect();
    let mut layers = vec![h1];
    if let (Some(w2), Some(b2)) = (params.w2, params.b2) {
        let h2 = affine(w2, b2, &layers[0]).into_iter().map(act).collect();
        layers.push(h2);
    }
    layers
}

/// Value logit ℓ = w_v · h + b_v.
pub fn value_logit(params: &Params<'_>, h: &[f64]) -> f64 {
    params.value_b as f64
        + params
            .value_w
            .iter()
            .zip(h)
            .map(|(&w, &x)| w as f64 * x)
            .sum::<f64>()
}

/// Policy logit of each move (SPEC §5): `W_p[label]·h + b_p[label] + PF[kind][from] +
/// Σ_j F_stm[to][j]·U[class][j]`, with `from`/`to` relative to the side to move, `from` = 81
/// for a drop, `kind` the piece before promotion, and F the side to move's raw field sums.
pub fn policy_logits(
    shape: &Shape,
    params: &Params<'_>,
    h: &[f64],
    stm_acc: &Accumulator,
    pos: &Position,
    moves: &[Move],
) -> Vec<f64> {
    let side: Color = pos.side_to_move();
    let n = h.len();
    let f = shape.field.unwrap_or(0) as usize;
    moves
        .iter()
        .map(|&m| {
            let label = move_label(m, side) as usize;
            let row = &params.policy_w[label * n..(label + 1) * n];
            let mut logit = params.policy_b[label] as f64
                + row.iter().zip(h).map(|(&w, &x)| w as f64 * x).sum::<f64>();
            // No piece at the origin (no move of `pos`): no policy.from term, as in every
            // evaluator (`labels::move_feature`).
            if let Some(feature) = move_feature(pos, m) {
                logit += params.policy_from[feature] as f64;
            }
            if f > 0 {
                let to = m.to().relative(side).index();
                let class = move_class(m, side) as usize;
                let u = &params.policy_field.expect("policy.field")[class * f..(class + 1) * f];
                logit += (0..f)
                    .map(|j| stm_acc.field[to * f + j] * u[j] as f64)
                    .sum::<f64>();
            }
            logit
        })
        .collect()
}
