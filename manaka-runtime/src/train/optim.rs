//! The optimiser: Adam (Kingma & Ba, 2015, Algorithm 1), dense for the head's tensors and
//! *lazy* for the token tables.
//!
//! **Dense tensors** (norm gains, W1/W2, biases, value and policy heads): the textbook update
//! every step, `m ← β1 m + (1−β1) g`, `v ← β2 v + (1−β2) g²`,
//! `θ ← θ − lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + ε)`.
//!
//! **Token tables** (`embed`, `pair`, `moment.proj`, `field`): only the rows the batch touched
//! are updated, with the same formula and the global step t in the bias corrections; the
//! moments of an untouched row stay as they were instead of decaying (what PyTorch's
//! `SparseAdam` and TensorFlow's `LazyAdam` do). An update then costs what the batch touched —
//! a few hundred thousand of the baseline pair table's 2.7 million rows — instead of the whole
//! 44-million-value table, and a rare token's row is not dragged by stale momentum between its
//! appearances.
//!
//! **The lse channels** store `exp(x)` (SPEC §4). The trainable parameter is `x`: the backward
//! pass gives `∂L/∂s` for the stored `s = exp(x)`, the optimiser uses `∂L/∂x = s · ∂L/∂s` in
//! Adam's moments, and applies the step as `s ← s · exp(Δx)`. The model keeps holding exactly
//! the stored values (the file format), they stay positive whatever the step, and a step is
//! the same relative change at any scale — the log-sum-exp readout `ln Σ exp(x)` is a smooth
//! maximum of the x, and Adam on x moves it evenly.

use super::grads::Grads;
use super::model::Model;
use super::real::Real;

/// Adam's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamConfig {
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
}

impl Default for AdamConfig {
    fn default() -> AdamConfig {
        AdamConfig {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }
}

/// Adam's state: the step count and two moments per parameter (in the tensors' layout).
#[derive(Clone, Debug, PartialEq)]
pub struct Adam<R> {
    pub config: AdamConfig,
    /// Updates applied so far.
    pub step: u64,
    pub m: Vec<Vec<R>>,
    pub v: Vec<Vec<R>>,
}

impl<R: Real> Adam<R> {
    pub fn new(model: &Model<R>, config: AdamConfig) -> Adam<R> {
        let zeros = || {
            model
                .tensors
                .iter()
                .map(|t| vec![R::ZERO; t.len()])
                .collect()
        };
        Adam {
            config,
            step: 0,
            m: zeros(),
            v: zeros(),
        }
    }

    /// One update of `model` by `grads` at learning rate `lr`.
    #[inline(never)] // a unit of its own in profiles
    pub fn update(&mut self, model: &mut Model<R>, grads: &Grads<R>, lr: f64) {
        self.step += 1;
        let c = self.config;
        let t = self.step as i32;
        let b1 = R::from_f64(c.beta1);
        let b2 = R::from_f64(c.beta2);
        let (nb1, nb2) = (R::ONE - b1, R::ONE - b2);
        // θ −= lr·m̂/(sqrt(v̂)+ε) with m̂ = m/c1, v̂ = v/c2.
        let inv_c1 = R::from_f64(1.0 / (1.0 - c.beta1.powi(t)));
        let inv_c2 = R::from_f64(1.0 / (1.0 - c.beta2.powi(t)));
        let lr = R::from_f64(lr);
        let eps = R::from_f64(c.eps);
        // θ −= lr·m̂/(sqrt(v̂)+ε) over zipped slices (no bounds checks: the loop vectorises).
        let adam = |theta: &mut [R], m: &mut [R], v: &mut [R], g: &[R]| {
            for (((t, m), v), &g) in theta.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(g) {
                *m = b1 * *m + nb1 * g;
                *v = b2 * *v + nb2 * g * g;
                *t -= lr * (*m * inv_c1) / ((*v * inv_c2).sqrt() + eps);
            }
        };
        let l = &model.layout;
        let (pair, first_lse) = (l.pair_table, l.first_lse);
        for (i, theta) in model.tensors.iter_mut().enumerate() {
            let (m, v) = (&mut self.m[i], &mut self.v[i]);
            let Some(rows) = &grads.sparse[i] else {
                adam(theta, m, v, &grads.dense[i]);
                continue;
            };
            let w = rows.width();
            let lse_from = if Some(i) == pair { first_lse } else { w };
            let (mut gx, mut x) = (vec![R::ZERO; w - lse_from], vec![R::ZERO; w - lse_from]);
            // Rows in table order: neighbouring pair rows share cache lines and pages.
            for (row, g) in rows.iter_sorted() {
                let r = row * w..(row + 1) * w;
                let (t, m, v) = (&mut theta[r.clone()], &mut m[r.clone()], &mut v[r]);
                adam(
                    &mut t[..lse_from],
                    &mut m[..lse_from],
                    &mut v[..lse_from],
                    &g[..lse_from],
                );
                if lse_from < w {
                    // x = ln s: ∂L/∂x = s·∂L/∂s, then s ← s·exp(x_new − x).
                    for ((gx, &g), &s) in gx.iter_mut().zip(&g[lse_from..]).zip(&t[lse_from..]) {
                        *gx = g * s;
                    }
                    x.iter_mut().for_each(|x| *x = R::ZERO);
                    adam(&mut x, &mut m[lse_from..], &mut v[lse_from..], &gx);
                    for (s, &dx) in t[lse_from..].iter_mut().zip(&x) {
                        *s *= dx.exp();
                    }
                }
            }
        }
    }
}
