//! PUCT, the rule for play below the root (docs/search.md, "Below the root"): AlphaZero's
//! `Q(a) + c·P(a)·√ΣN / (1 + N(a))` (Silver et al., *Mastering chess and shogi by self-play*,
//! 2017; the rule lc0 and dlshogi explore with), and the value an untried move is scored with
//! (*first-play urgency*, lc0's `FpuStrategy reduction`). Q is in (−1, 1) from the chooser's
//! side.

/// The PUCT score of a move with `visits` visits, mean value `q` and prior `prior`, at a
/// node whose children have `sqrt_total` = √ΣN visits (at least 1, so that the prior
/// decides the node's second visit).
pub fn score(q: f64, prior: f64, visits: f64, sqrt_total: f64, c: f64) -> f64 {
    q + c * prior * sqrt_total / (1.0 + visits)
}

/// First-play urgency: the Q an untried move is scored with. The mixed value `v_mix`
/// (gumbel::mixed_value, the Gumbel completion of what was not tried) less
/// `reduction · √(prior mass of the visited moves)`, lc0's FPU reduction: the more of the
/// prior the visited moves already hold, the less an untried move is expected to be
/// worth, so the search stays on the moves it has found good instead of trying every
/// low-prior move once. `reduction = 0` is the plain mixed value.
pub fn first_play_value(v_mix: f64, p_visited: f64, reduction: f64) -> f64 {
    v_mix - reduction * p_visited.clamp(0.0, 1.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_by_hand() {
        // q 0.1, P 0.25, N 3, ΣN 16: 0.1 + 2·0.25·4/4 = 0.6.
        assert!((score(0.1, 0.25, 3.0, 4.0, 2.0) - 0.6).abs() < 1e-12);
        // Untried (N 0) with Q −0.2, P 0.1, ΣN 9, c 1.5: −0.2 + 1.5·0.1·3 = 0.25.
        assert!((score(-0.2, 0.1, 0.0, 3.0, 1.5) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn first_play_value_by_hand() {
        // v_mix 0.3, visited prior 0.64, reduction 0.25: 0.3 − 0.25·0.8 = 0.1.
        assert!((first_play_value(0.3, 0.64, 0.25) - 0.1).abs() < 1e-12);
        assert_eq!(first_play_value(0.3, 0.64, 0.0), 0.3);
        // Rounding may push the visited mass past 1 or below 0: clamped.
        assert!((first_play_value(0.0, 1.0 + 1e-9, 0.5) + 0.5).abs() < 1e-12);
        assert_eq!(first_play_value(0.2, -1e-12, 0.5), 0.2);
    }
}
