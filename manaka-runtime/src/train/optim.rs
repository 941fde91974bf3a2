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
//!
//! **`nnue` shapes stay inside what nn.bin can hold.** Each updated value of a tensor YaneuraOu's
//! file stores is clamped to its tensor's [`float_limit`] (int8 weights within ±127 steps, as
//! YaneuraOu's trainer clips them; the int16 and int32 tensors within their types), so that
//! export never saturates: unclamped, 20 epochs at lr 0.01 took `value.w` to 3.65 against a
//! limit of 1.68 and the integer engine 919 cp away from the float one (issue 19). Dense
//! tensors are clamped at every update, token tables in the rows the batch touched; the first
//! update of a run clamps every value, so that `--init` weights beyond the limits come inside
//! at once. Other shapes have no limits and take the unclamped loop, bit for bit as before.

use super::grads::{Grads, SparseRows};
use super::model::Model;
use super::real::Real;
use crate::nnue::quant::float_limit;

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
    /// Test switch: train an `nnue` shape without its limits, to show what they prevent.
    #[cfg(test)]
    pub(crate) unclamped: bool,
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
            #[cfg(test)]
            unclamped: false,
        }
    }

    /// The clamp of each tensor of `model` (`None`: unlimited), as [`R`](Real).
    fn limits(&self, model: &Model<R>) -> Vec<Option<R>> {
        #[cfg(test)]
        if self.unclamped {
            return vec![None; model.specs.len()];
        }
        model
            .specs
            .iter()
            .map(|s| float_limit(&model.shape, &s.name).map(R::from_f64))
            .collect()
    }

    /// One update of `model` at learning rate `lr` by the sum of `grads` (one per worker
    /// thread of the batch, summed here in their order, entry by entry), spread over
    /// `threads` threads: each tensor is cut into `threads` parts — dense tensors into equal
    /// ranges, token tables at quantiles of the touched rows — and every thread updates its
    /// part of every tensor. The result does not depend on `threads`.
    #[inline(never)] // a unit of its own in profiles
    pub fn update(&mut self, model: &mut Model<R>, grads: &[Grads<R>], lr: f64, threads: usize) {
        let limits = self.limits(model);
        if self.step == 0 {
            // The first update of a run: weights from `--init` beyond the limits come inside
            // everywhere, not only in the rows this batch touches.
            for (theta, limit) in model.tensors.iter_mut().zip(&limits) {
                if let &Some(l) = limit {
                    clamp(theta, l);
                }
            }
        }
        self.step += 1;
        let c = self.config;
        let t = self.step as i32;
        let k = Kernel {
            b1: R::from_f64(c.beta1),
            b2: R::from_f64(c.beta2),
            nb1: R::ONE - R::from_f64(c.beta1),
            nb2: R::ONE - R::from_f64(c.beta2),
            inv_c1: R::from_f64(1.0 / (1.0 - c.beta1.powi(t))),
            inv_c2: R::from_f64(1.0 / (1.0 - c.beta2.powi(t))),
            lr: R::from_f64(lr),
            eps: R::from_f64(c.eps),
        };
        let threads = threads.max(1);
        let l = &model.layout;
        let (pair, first_lse) = (l.pair_table, l.first_lse);
        let mut work: Vec<Vec<Part<'_, R>>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, ((theta, m), v)) in model
            .tensors
            .iter_mut()
            .zip(&mut self.m)
            .zip(&mut self.v)
            .enumerate()
        {
            let limit = limits[i];
            if grads[0].sparse[i].is_none() {
                // Small tensors are not worth splitting.
                let parts = if theta.len() < 1 << 14 { 1 } else { threads };
                let cuts: Vec<usize> = (0..=parts).map(|p| p * theta.len() / parts).collect();
                for (p, ((theta, m), v)) in split(theta, &cuts)
                    .zip(split(m, &cuts))
                    .zip(split(v, &cuts))
                    .enumerate()
                {
                    let range = cuts[p]..cuts[p + 1];
                    let sources = grads.iter().map(|g| &g.dense[i][range.clone()]).collect();
                    work[p].push(Part::Dense {
                        theta,
                        m,
                        v,
                        sources,
                        limit,
                    });
                }
                continue;
            }
            let sources: Vec<&SparseRows<R>> = grads
                .iter()
                .map(|g| g.sparse[i].as_ref().expect("a token table"))
                .collect();
            let w = sources[0].width();
            let rows = theta.len() / w.max(1);
            // Cut the table at quantiles of the first worker's touched rows, so that every
            // thread gets about as many rows to update.
            let mut sample: Vec<u32> = sources[0].rows().to_vec();
            let mut cuts = vec![0usize; threads + 1];
            cuts[threads] = rows;
            for p in 1..threads {
                cuts[p] = if sample.is_empty() {
                    p * rows / threads
                } else {
                    let at = p * sample.len() / threads;
                    *sample.select_nth_unstable(at).1 as usize
                }
                .max(cuts[p - 1]);
            }
            let elems: Vec<usize> = cuts.iter().map(|&r| r * w).collect();
            let lse_from = if Some(i) == pair { first_lse } else { w };
            for (p, ((theta, m), v)) in split(theta, &elems)
                .zip(split(m, &elems))
                .zip(split(v, &elems))
                .enumerate()
            {
                let rows = cuts[p]..cuts[p + 1];
                work[p].push(Part::Rows {
                    theta,
                    m,
                    v,
                    rows,
                    width: w,
                    lse_from,
                    sources: sources.clone(),
                    limit,
                });
            }
        }
        let run = |parts: Vec<Part<'_, R>>| {
            for part in parts {
                part.apply(&k);
            }
        };
        let mut work = work.into_iter();
        let first = work.next().expect("at least one thread");
        std::thread::scope(|scope| {
            for parts in work {
                scope.spawn(move || run(parts));
            }
            run(first);
        });
    }
}

/// Adam's per-step constants (`θ −= lr·m̂/(sqrt(v̂)+ε)` with `m̂ = m·inv_c1`, `v̂ = v·inv_c2`).
#[derive(Clone, Copy)]
struct Kernel<R> {
    b1: R,
    b2: R,
    nb1: R,
    nb2: R,
    inv_c1: R,
    inv_c2: R,
    lr: R,
    eps: R,
}

impl<R: Real> Kernel<R> {
    /// The update of a run of parameters, each clamped to `±limit` if there is one.
    #[inline(always)]
    fn apply(&self, theta: &mut [R], m: &mut [R], v: &mut [R], g: &[R], limit: Option<R>) {
        match limit {
            None => self.run::<false>(theta, m, v, g, R::ZERO),
            Some(l) => self.run::<true>(theta, m, v, g, l),
        }
    }

    /// The loop, over zipped slices (no bounds checks: it vectorises, the clamp as a compare
    /// and a blend); `CLAMP` false is the textbook update exactly.
    #[inline(always)]
    fn run<const CLAMP: bool>(&self, theta: &mut [R], m: &mut [R], v: &mut [R], g: &[R], l: R) {
        let k = *self;
        for (((t, m), v), &g) in theta.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(g) {
            *m = k.b1 * *m + k.nb1 * g;
            *v = k.b2 * *v + k.nb2 * g * g;
            *t -= k.lr * (*m * k.inv_c1) / ((*v * k.inv_c2).sqrt() + k.eps);
            if CLAMP {
                *t = clamp_one(*t, l);
            }
        }
    }
}

/// `x` within `±l` (NaN stays NaN: the trainer reports divergence by the loss).
#[inline(always)]
fn clamp_one<R: Real>(x: R, l: R) -> R {
    if x > l {
        l
    } else if x < -l {
        -l
    } else {
        x
    }
}

/// Every value of `values` within `±l`.
fn clamp<R: Real>(values: &mut [R], l: R) {
    values.iter_mut().for_each(|x| *x = clamp_one(*x, l));
}

/// `values` cut at the (ascending) offsets `cuts` (first 0, last `values.len()`).
fn split<'a, R>(mut values: &'a mut [R], cuts: &[usize]) -> impl Iterator<Item = &'a mut [R]> {
    let mut out = Vec::with_capacity(cuts.len().saturating_sub(1));
    for pair in cuts.windows(2) {
        let (head, tail) = std::mem::take(&mut values).split_at_mut(pair[1] - pair[0]);
        out.push(head);
        values = tail;
    }
    out.into_iter()
}

/// One thread's share of one tensor's update.
enum Part<'a, R> {
    /// A range of a dense tensor, with that range of every worker's gradient.
    Dense {
        theta: &'a mut [R],
        m: &'a mut [R],
        v: &'a mut [R],
        sources: Vec<&'a [R]>,
        /// The clamp of the tensor (`nnue` shapes), none if unlimited.
        limit: Option<R>,
    },
    /// Rows `rows` of a token table (`theta` etc. start at row `rows.start`).
    Rows {
        theta: &'a mut [R],
        m: &'a mut [R],
        v: &'a mut [R],
        rows: std::ops::Range<usize>,
        width: usize,
        /// First lse channel (pair table), `width` if none.
        lse_from: usize,
        sources: Vec<&'a SparseRows<R>>,
        /// The clamp of the tensor's non-lse channels, none if unlimited.
        limit: Option<R>,
    },
}

impl<R: Real> Part<'_, R> {
    fn apply(self, k: &Kernel<R>) {
        match self {
            Part::Dense {
                theta,
                m,
                v,
                sources,
                limit,
            } => {
                if let [only] = sources.as_slice() {
                    return k.apply(theta, m, v, only, limit);
                }
                const PIECE: usize = 4096;
                let mut g = [R::ZERO; PIECE];
                for start in (0..theta.len()).step_by(PIECE) {
                    let end = (start + PIECE).min(theta.len());
                    let g = &mut g[..end - start];
                    g.copy_from_slice(&sources[0][start..end]);
                    for s in &sources[1..] {
                        for (a, &b) in g.iter_mut().zip(&s[start..end]) {
                            *a += b;
                        }
                    }
                    k.apply(
                        &mut theta[start..end],
                        &mut m[start..end],
                        &mut v[start..end],
                        g,
                        limit,
                    );
                }
            }
            Part::Rows {
                theta,
                m,
                v,
                rows,
                width: w,
                lse_from,
                sources,
                limit,
            } => {
                // The touched rows of this range, each once (a row is taken from the first
                // worker that touched it), in table order: neighbouring pair rows share cache
                // lines and pages.
                let mut todo: Vec<u32> = Vec::new();
                for (t, src) in sources.iter().enumerate() {
                    for &r in src.rows() {
                        let ru = r as usize;
                        if rows.contains(&ru) && sources[..t].iter().all(|s| s.row(ru).is_none()) {
                            todo.push(r);
                        }
                    }
                }
                todo.sort_unstable();
                let mut g = vec![R::ZERO; w];
                let (mut gx, mut x) = (vec![R::ZERO; w - lse_from], vec![R::ZERO; w - lse_from]);
                for r in todo {
                    g.iter_mut().for_each(|g| *g = R::ZERO);
                    for src in &sources {
                        if let Some(sg) = src.row(r as usize) {
                            for (a, &b) in g.iter_mut().zip(sg) {
                                *a += b;
                            }
                        }
                    }
                    let at = (r as usize - rows.start) * w;
                    let (t, m, v) = (
                        &mut theta[at..at + w],
                        &mut m[at..at + w],
                        &mut v[at..at + w],
                    );
                    k.apply(
                        &mut t[..lse_from],
                        &mut m[..lse_from],
                        &mut v[..lse_from],
                        &g[..lse_from],
                        limit,
                    );
                    if lse_from < w {
                        // x = ln s: ∂L/∂x = s·∂L/∂s; the step Δx applied as s ← s·exp(Δx).
                        for ((gx, &g), &s) in gx.iter_mut().zip(&g[lse_from..]).zip(&t[lse_from..])
                        {
                            *gx = g * s;
                        }
                        x.iter_mut().for_each(|x| *x = R::ZERO);
                        k.apply(&mut x, &mut m[lse_from..], &mut v[lse_from..], &gx, None);
                        for (s, &dx) in t[lse_from..].iter_mut().zip(&x) {
                            *s *= dx.exp();
                        }
                    }
                }
            }
        }
    }
}
