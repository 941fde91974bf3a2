//! The training loss (docs/training.md, "Loss").
//!
//! **Value.** Cross-entropy of the win probability `σ(ℓ)` against a target `t ∈ [0, 1]`,
//! `L_v = −t ln σ(ℓ) − (1 − t) ln(1 − σ(ℓ)) = softplus(ℓ) − t ℓ`, so `∂L_v/∂ℓ = σ(ℓ) − t`. The
//! target blends the teacher and the game: `t = λ·p_teacher + (1 − λ)·r`, with `p_teacher` the
//! win probability of the stored eval (`σ(eval / scale)`) and `r` the game result from the side
//! to move (1 win, ½ draw, 0 loss).
//!
//! **Policy.** Cross-entropy of the softmax over the legal moves alone (SPEC §5) against a
//! target distribution `q` (one-hot on the teacher's move, or the normalised visit counts):
//! `L_p = logsumexp(z) − Σ q_i z_i`, `∂L_p/∂z_i = softmax(z)_i − q_i`.
//!
//! The loss of a batch is the mean over its examples of `L_v + w_p · L_p`.

use super::real::Real;
use crate::shogi::{Move, Position};

/// What the network should output for one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// Value target `t` in [0, 1] (a win probability for the side to move).
    pub value: f64,
    /// Policy target over the example's legal moves (sums to 1), or empty for none.
    pub policy: Vec<f64>,
}

/// A position, its legal moves and its target: one training example.
#[derive(Clone, Debug)]
pub struct Example {
    pub position: Position,
    /// Every legal move of `position` (the policy's support).
    pub moves: Vec<Move>,
    pub target: Target,
}

impl Example {
    /// An example for `position`: value target `value` (clamped to [0, 1]) and a policy target
    /// given as weights of moves (normalised here; any move that is not legal is an error that
    /// names it; no moves or zero total weight: no policy target).
    pub fn new(position: Position, value: f64, policy: &[(Move, f64)]) -> Result<Example, String> {
        let moves = position.legal_moves();
        let mut q = vec![0.0; moves.len()];
        for &(m, w) in policy {
            let i = moves
                .iter()
                .position(|&x| x == m)
                .ok_or_else(|| format!("policy move {m} is not legal in {}", position.to_sfen()))?;
            if !(w.is_finite() && w >= 0.0) {
                return Err(format!(
                    "policy weight {w} of {m} is not a non-negative number"
                ));
            }
            q[i] += w;
        }
        let total: f64 = q.iter().sum();
        let policy = if total > 0.0 {
            q.iter().map(|&w| w / total).collect()
        } else {
            Vec::new()
        };
        if !value.is_finite() {
            return Err(format!("value target {value} is not a number"));
        }
        Ok(Example {
            position,
            moves,
            target: Target {
                value: value.clamp(0.0, 1.0),
                policy,
            },
        })
    }
}

/// `ln(1 + e^x)` without overflow.
pub fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// The logistic function.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        x.exp() / (1.0 + x.exp())
    }
}

/// Value loss `softplus(ℓ) − tℓ` and its derivative `σ(ℓ) − t`.
pub fn value_loss(logit: f64, target: f64) -> (f64, f64) {
    (softplus(logit) - target * logit, sigmoid(logit) - target)
}

/// Policy loss `logsumexp(z) − Σ q z` and its gradient `softmax(z) − q`; `None` without a
/// target (or without moves). Also says whether the most likely move is the target's.
pub fn policy_loss<R: Real>(logits: &[R], target: &[f64]) -> Option<(f64, Vec<f64>, bool)> {
    if target.is_empty() || logits.is_empty() || target.len() != logits.len() {
        return None;
    }
    let z: Vec<f64> = logits.iter().map(|v| v.to_f64()).collect();
    let max = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = z.iter().map(|&v| (v - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    let lse = max + sum.ln();
    let loss = lse - z.iter().zip(target).map(|(&a, &q)| a * q).sum::<f64>();
    let grad = exps
        .iter()
        .zip(target)
        .map(|(&e, &q)| e / sum - q)
        .collect();
    let argmax = |v: &[f64]| (0..v.len()).fold(0, |b, i| if v[i] > v[b] { i } else { b });
    Some((loss, grad, argmax(&z) == argmax(target)))
}

/// Loss sums over some examples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossSums {
    pub examples: u64,
    pub value: f64,
    /// Examples with a policy target.
    pub policy_examples: u64,
    pub policy: f64,
    /// Policy examples whose most likely move is the target's most likely move.
    pub policy_hits: u64,
}

impl LossSums {
    pub fn add(&mut self, other: &LossSums) {
        self.examples += other.examples;
        self.value += other.value;
        self.policy_examples += other.policy_examples;
        self.policy += other.policy;
        self.policy_hits += other.policy_hits;
    }

    /// Mean value loss.
    pub fn value_mean(&self) -> f64 {
        self.value / self.examples.max(1) as f64
    }

    /// Mean policy loss over the examples that have a policy target.
    pub fn policy_mean(&self) -> f64 {
        self.policy / self.policy_examples.max(1) as f64
    }

    /// Top-1 agreement with the policy target.
    pub fn policy_accuracy(&self) -> f64 {
        self.policy_hits as f64 / self.policy_examples.max(1) as f64
    }
}

/// Losses of `examples` given their forward outputs, with the gradients `∂L/∂ℓ` and `∂L/∂z`
/// of `scale · Σ (L_v + w_p L_p)` (scale = 1 / batch size for a mean).
pub fn losses<R: Real>(
    examples: &[Example],
    value: &[R],
    logits: &[Vec<R>],
    policy_weight: f64,
    scale: f64,
) -> (LossSums, Vec<R>, Vec<Vec<R>>) {
    let mut sums = LossSums::default();
    let mut dvalue = Vec::with_capacity(examples.len());
    let mut dlogits = Vec::with_capacity(examples.len());
    for (i, ex) in examples.iter().enumerate() {
        let (lv, gv) = value_loss(value[i].to_f64(), ex.target.value);
        sums.examples += 1;
        sums.value += lv;
        dvalue.push(R::from_f64(gv * scale));
        match policy_loss(&logits[i], &ex.target.policy) {
            Some((lp, gp, hit)) => {
                sums.policy_examples += 1;
                sums.policy += lp;
                sums.policy_hits += u64::from(hit);
                dlogits.push(
                    gp.iter()
                        .map(|&g| R::from_f64(g * scale * policy_weight))
                        .collect(),
                );
            }
            None => dlogits.push(vec![R::ZERO; logits[i].len()]),
        }
    }
    (sums, dvalue, dlogits)
}
