//! The Gumbel AlphaZero formulas, each a small pure function.
//!
//! Sources: Danihelka, Guez, Schrittwieser, Silver, *Policy improvement by planning with
//! Gumbel*, ICLR 2022 (cited as "the paper"), and DeepMind's mctx, whose functions are named
//! where a formula follows one (`qtransforms.py`, `seq_halving.py`, `action_selection.py`,
//! `policies.py`). SPEC §8 fixes the constants: `c_visit = 50`, `c_scale = 1.0`, no min-max
//! rescaling by default (mctx's rescaling is [`QTransform::rescale`], for parity tests).
//!
//! Everything here works in `f64` on slices indexed by the node's legal moves; values are
//! from the point of view of the player choosing among those moves.

use crate::random::SplitMix64;

/// The paper's monotone transformation of Q (§4, "σ"):
/// `σ(q) = (c_visit + max_b N(b)) · c_scale · q`.
///
/// It grows with the visit count of the most visited move, so that search results weigh
/// more against the prior as evidence accumulates. mctx: the final scaling step of
/// `qtransform_completed_by_mix_value` (`maxvisit_init` = c_visit, `value_scale` = c_scale).
#[inline]
pub fn sigma(q: f64, max_visits: f64, c_visit: f64, c_scale: f64) -> f64 {
    (c_visit + max_visits) * c_scale * q
}

/// Numerically stable softmax (the maximum is subtracted first), written into `out`.
/// An empty input gives an empty output.
/// All −∞ (or NaN) inputs give the uniform distribution rather than NaN.
pub fn softmax(logits: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.extend_from_slice(logits);
    softmax_in_place(out);
}

/// The mixed value `v_mix`, the paper's Appendix D estimate of the node's value under the
/// prior policy, used to complete the Q of unvisited moves:
///
/// `v_mix = (v̂ + ΣN · Σ_{b: N(b)>0} π(b)·q(b) / Σ_{b: N(b)>0} π(b)) / (ΣN + 1)`
///
/// with `v̂` the network's raw value of the node and `π` the prior. With no visits it is `v̂`.
/// mctx: `qtransforms._compute_mixed_value`, which floors π at the smallest normal float to
/// avoid 0/0; here, when the visited prior mass underflows to zero (visited moves whose
/// prior is below ~1e-308), the weighted mean is replaced by the unweighted mean of the
/// visited q (SPEC §8), which is what the weights tend to when all visited priors are equal.
pub fn mixed_value(raw_value: f64, q: &[f64], visits: &[f64], prior: &[f64]) -> f64 {
    debug_assert!(q.len() == visits.len() && q.len() == prior.len());
    let mut sum_visits = 0.0;
    let mut visited_prior = 0.0;
    let mut weighted_q = 0.0;
    let mut visited = 0usize;
    let mut plain_q = 0.0;
    for i in 0..q.len() {
        if visits[i] > 0.0 {
            sum_visits += visits[i];
            visited_prior += prior[i];
            weighted_q += prior[i] * q[i];
            visited += 1;
            plain_q += q[i];
        }
    }
    if visited == 0 {
        return raw_value;
    }
    let mean_q = if visited_prior >= f64::MIN_POSITIVE && visited_prior.is_finite() {
        weighted_q / visited_prior
    } else {
        plain_q / visited as f64
    };
    (raw_value + sum_visits * mean_q) / (sum_visits + 1.0)
}

/// Completed Q (the paper §4, `completedQ`): the search's q for visited moves, `value` (the
/// mixed value) for the rest. mctx: `qtransforms._complete_qvalues`.
pub fn complete_q(q: &[f64], visits: &[f64], value: f64, out: &mut Vec<f64>) {
    out.clear();
    out.extend(
        q.iter()
            .zip(visits)
            .map(|(&q, &n)| if n > 0.0 { q } else { value }),
    );
}

/// Min-max rescaling of completed Q to [0, 1]: `(q − min) / max(max − min, ε)`.
/// Off by default (SPEC §8); mctx applies it by default (`rescale_values=True`,
/// `qtransforms._rescale_qvalues`, ε = 1e-8), so parity tests switch it on.
pub fn rescale(q: &mut [f64], epsilon: f64) {
    let min = q.iter().copied().fold(f64::INFINITY, f64::min);
    let max = q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = (max - min).max(epsilon);
    for v in q.iter_mut() {
        *v = (*v - min) / span;
    }
}

/// The whole Q transformation of one node, mctx's `qtransform_completed_by_mix_value`
/// (with `use_mixed_value=True`): complete Q with the mixed value, optionally rescale, then
/// apply [`sigma`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QTransform {
    pub c_visit: f64,
    pub c_scale: f64,
    /// mctx's min-max rescaling before σ (off by default, SPEC §8).
    pub rescale: bool,
}

/// mctx's ε for the rescaling denominator.
pub const RESCALE_EPSILON: f64 = 1e-8;

impl Default for QTransform {
    /// SPEC §8: `c_visit = 50`, `c_scale = 1.0`, no rescaling.
    fn default() -> Self {
        QTransform {
            c_visit: 50.0,
            c_scale: 1.0,
            rescale: false,
        }
    }
}

impl QTransform {
    /// Fills `completed` with the completed Q (before rescaling: what `root_value` averages)
    /// and `transformed` with σ of the (optionally rescaled) completed Q (what is added to
    /// the logits). `prior` is the softmax of the node's logits.
    pub fn apply(
        &self,
        raw_value: f64,
        q: &[f64],
        visits: &[f64],
        prior: &[f64],
        completed: &mut Vec<f64>,
        transformed: &mut Vec<f64>,
    ) {
        let v_mix = mixed_value(raw_value, q, visits, prior);
        complete_q(q, visits, v_mix, completed);
        transformed.clear();
        transformed.extend_from_slice(completed);
        if self.rescale {
            rescale(transformed, RESCALE_EPSILON);
        }
        let max_visits = visits.iter().copied().fold(0.0, f64::max);
        for t in transformed.iter_mut() {
            *t = sigma(*t, max_visits, self.c_visit, self.c_scale);
        }
    }
}

/// The improved policy `π' = softmax(logits + σ(completedQ))` (the paper §4), over the
/// node's legal moves only. mctx: `policies.gumbel_muzero_policy`'s `action_weights`.
pub fn improved_policy(logits: &[f64], sigma_q: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.extend(logits.iter().zip(sigma_q).map(|(l, s)| l + s));
    softmax_in_place(out);
}

/// [`softmax`] overwriting its input.
pub fn softmax_in_place(values: &mut [f64]) {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        let n = values.len().max(1) as f64;
        values.iter_mut().for_each(|v| *v = 1.0 / n);
        return;
    }
    let mut sum = 0.0;
    for v in values.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    for v in values.iter_mut() {
        *v /= sum;
    }
}

/// The floor mctx puts under root scores (`seq_halving.score_considered`'s `low_logit`),
/// so that a −∞ logit still compares.
pub const LOW_LOGIT: f64 = -1e9;

/// The root score of one move: `g + (logit − max_logit) + σ(completedQ)`, floored at
/// [`LOW_LOGIT`]. Used to pick among the moves Sequential Halving still considers, and to
/// pick the played move among the most visited (the paper §3–4; mctx:
/// `seq_halving.score_considered`, whose eligibility mask the caller applies).
#[inline]
pub fn root_score(gumbel: f64, logit: f64, max_logit: f64, sigma_q: f64) -> f64 {
    (gumbel + (logit - max_logit) + sigma_q).max(LOW_LOGIT)
}

/// Non-root selection (the paper §5, "Planning at non-root nodes"): the move maximising
/// `π'(a) − N(a) / (1 + Σ_b N(b))`, which makes visit frequencies track the improved policy
/// deterministically. Ties go to the first move. mctx:
/// `action_selection._prepare_argmax_input` + argmax. Returns `None` for no moves.
pub fn select_non_root(improved: &[f64], visits: &[f64]) -> Option<usize> {
    select_non_root_among(improved, visits, &vec![true; improved.len()])
}

/// [`select_non_root`] over the moves with `open[i]` only (the others still count in
/// `Σ_b N(b)`): moves whose outcome is proven take no more descents (`proof.rs`).
pub fn select_non_root_among(improved: &[f64], visits: &[f64], open: &[bool]) -> Option<usize> {
    let total: f64 = visits.iter().sum();
    let mut best: Option<(usize, f64)> = None;
    for (i, (&p, &n)) in improved.iter().zip(visits).enumerate() {
        if !open[i] {
            continue;
        }
        let score = p - n / (1.0 + total);
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

/// A standard Gumbel sample, `−ln(−ln U)` (the Gumbel-Max trick, the paper §2), with `U`
/// uniform in the open interval (0, 1): 53 random bits of the project's one seedable
/// generator ([`SplitMix64`]), offset by half a step. The search needs reproducible noise
/// for tests and nothing cryptographic.
pub fn gumbel_sample(rng: &mut SplitMix64) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    -(-u.ln()).ln()
}

/// `n` Gumbel samples scaled by `scale` (0 gives zeros without drawing: the noise-free
/// search used for play).
pub fn gumbel_noise(n: usize, scale: f64, seed: u64) -> Vec<f64> {
    if scale == 0.0 {
        return vec![0.0; n];
    }
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| scale * gumbel_sample(&mut rng)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn sigma_matches_the_spec_formula() {
        // (50 + 0)·1·0.5 = 25; (50 + 10)·1·(−0.25) = −15; (50 + 3)·0.1·1 = 5.3
        assert_eq!(sigma(0.5, 0.0, 50.0, 1.0), 25.0);
        assert_eq!(sigma(-0.25, 10.0, 50.0, 1.0), -15.0);
        assert!(close(sigma(1.0, 3.0, 50.0, 0.1), 5.3, 1e-12));
    }

    #[test]
    fn mixed_value_by_hand() {
        // raw 0.1; moves a, b, c with prior 0.5, 0.3, 0.2; a visited 2 times with q 0.4,
        // b visited once with q −0.2, c unvisited.
        // Σ_visited π = 0.8, Σ π·q = 0.5·0.4 + 0.3·(−0.2) = 0.14, weighted q = 0.175,
        // ΣN = 3, v_mix = (0.1 + 3·0.175) / 4 = 0.625 / 4 = 0.15625.
        let v = mixed_value(0.1, &[0.4, -0.2, 0.0], &[2.0, 1.0, 0.0], &[0.5, 0.3, 0.2]);
        assert!(close(v, 0.15625, 1e-15), "{v}");
        // No visits: the raw value.
        assert_eq!(
            mixed_value(-0.3, &[0.0, 0.0], &[0.0, 0.0], &[0.5, 0.5]),
            -0.3
        );
    }

    #[test]
    fn mixed_value_falls_back_to_plain_mean_when_prior_mass_underflows() {
        // Visited moves have prior exactly 0 (underflowed): the unweighted mean of their q,
        // (0.6 + 0.2) / 2 = 0.4; ΣN = 2; v_mix = (−0.5 + 2·0.4) / 3 = 0.1.
        let v = mixed_value(-0.5, &[0.6, 0.2, 0.0], &[1.0, 1.0, 0.0], &[0.0, 0.0, 1.0]);
        assert!(close(v, 0.1, 1e-15), "{v}");
        assert!(v.is_finite());
    }

    #[test]
    fn completed_q_and_transform_by_hand() {
        // The mixed-value example above, through the whole transformation.
        let (q, n, p) = ([0.4, -0.2, 0.0], [2.0, 1.0, 0.0], [0.5, 0.3, 0.2]);
        let (mut completed, mut sig) = (Vec::new(), Vec::new());
        QTransform::default().apply(0.1, &q, &n, &p, &mut completed, &mut sig);
        assert_eq!(completed[..2], [0.4, -0.2]);
        assert!(close(completed[2], 0.15625, 1e-15));
        // max N = 2: σ = 52·q.
        assert!(
            close(sig[0], 20.8, 1e-12)
                && close(sig[1], -10.4, 1e-12)
                && close(sig[2], 8.125, 1e-12)
        );
        // mctx's defaults: c_scale 0.1 with rescaling. min −0.2, max 0.4, span 0.6:
        // rescaled (1, 0, (0.15625 + 0.2) / 0.6 = 0.59375); σ = 52·0.1·r = (5.2, 0, 3.0875).
        let t = QTransform {
            c_visit: 50.0,
            c_scale: 0.1,
            rescale: true,
        };
        t.apply(0.1, &q, &n, &p, &mut completed, &mut sig);
        assert!(
            close(sig[0], 5.2, 1e-12) && close(sig[1], 0.0, 1e-12) && close(sig[2], 3.0875, 1e-12),
            "{sig:?}"
        );
        // Completed Q itself is not rescaled.
        assert_eq!(completed[0], 0.4);
    }

    #[test]
    fn softmax_is_stable_and_normalised() {
        let mut out = Vec::new();
        softmax(&[1000.0, 1000.0, -1000.0], &mut out);
        assert!(close(out[0], 0.5, 1e-15) && close(out[1], 0.5, 1e-15) && out[2] == 0.0);
        softmax(&[f64::NEG_INFINITY, f64::NEG_INFINITY], &mut out);
        assert_eq!(out, [0.5, 0.5]);
        softmax(&[], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn non_root_selection_tracks_the_improved_policy() {
        // Repeatedly selecting and counting reproduces the target frequencies.
        let target = [0.5, 0.3, 0.2];
        let mut n = [0.0; 3];
        for _ in 0..100 {
            let i = select_non_root(&target, &n).unwrap();
            n[i] += 1.0;
        }
        assert_eq!(n, [50.0, 30.0, 20.0]);
        assert_eq!(select_non_root(&[], &[]), None);
    }

    #[test]
    fn root_score_floors_like_mctx() {
        assert_eq!(root_score(0.0, f64::NEG_INFINITY, 0.0, 0.0), LOW_LOGIT);
        assert_eq!(root_score(0.5, 1.0, 2.0, 3.0), 2.5);
    }

    #[test]
    fn gumbel_noise_is_reproducible_and_plausible() {
        let a = gumbel_noise(10_000, 1.0, 42);
        assert_eq!(a, gumbel_noise(10_000, 1.0, 42));
        assert_ne!(a, gumbel_noise(10_000, 1.0, 43));
        // Mean of a standard Gumbel is the Euler–Mascheroni constant 0.5772.
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!(close(mean, 0.5772, 0.05), "{mean}");
        assert!(gumbel_noise(5, 0.0, 1).iter().all(|&g| g == 0.0));
    }
}
