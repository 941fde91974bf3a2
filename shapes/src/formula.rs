//! The small formulas of SPEC §4–5 that every evaluator shares — the reference, the compiled
//! float and integer engines, the trainer and the CUDA kernels — in one place, so that no
//! engine keeps its own copy of a constant or an index.
//!
//! The runtime wraps [`move_feature`] with the position-dependent part (which piece moves,
//! from where): `manaka_runtime::formula::move_feature`.

use crate::params::{ORIGINS, PIECE_KINDS};

/// RMS-normalisation epsilon: `x̂ = g·x / sqrt(mean(x²) + RMS_EPS)` (SPEC §5).
pub const RMS_EPS: f64 = 1e-6;

/// The floor of the `lse` readout, `ln(max(sum, LSE_FLOOR))`: the smallest normal f32, so a
/// sum with no active pair stays finite (SPEC §5).
pub const LSE_FLOOR: f32 = f32::MIN_POSITIVE;

/// The origin of a drop in `policy.from`; board origins are the squares 0..81 (SPEC §5).
pub const DROP_ORIGIN: usize = 81;

/// Entries of `policy.from`: [`PIECE_KINDS`] × [`ORIGINS`].
pub const MOVE_FEATURES: usize = (PIECE_KINDS * ORIGINS) as usize;

/// The `policy.from` entry of a move of a piece of kind `kind` (before promotion, 0..14) from
/// `origin` (the square relative to the side to move, or [`DROP_ORIGIN`]): `kind · 82 +
/// origin` (SPEC §5).
///
/// # Panics
/// If `kind` or `origin` is out of range (a caller's bug: both come from a position).
#[inline]
pub const fn move_feature(kind: usize, origin: usize) -> usize {
    assert!(kind < PIECE_KINDS as usize && origin < ORIGINS as usize);
    kind * ORIGINS as usize + origin
}

/// The pair-table row of the unordered token pair `{a, b}` with `a < b`: `b(b−1)/2 + a`
/// (SPEC §4). Rows are ordered by the larger token, so the table has `T(T−1)/2` rows.
#[inline]
pub const fn pair_index(a: u32, b: u32) -> usize {
    debug_assert!(a < b, "pair_index takes the smaller token first");
    let (a, b) = (a as usize, b as usize);
    b * (b - 1) / 2 + a
}

/// [`pair_index`] of two distinct tokens in either order.
#[inline]
pub const fn pair_index_unordered(a: u32, b: u32) -> usize {
    if a < b {
        pair_index(a, b)
    } else {
        pair_index(b, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_rows_enumerate_every_pair_once() {
        // Rows 0.. in order: (0,1), (0,2), (1,2), (0,3), ... — the order of SPEC §4.
        let mut next = 0;
        for b in 1..40u32 {
            for a in 0..b {
                assert_eq!(pair_index(a, b), next);
                assert_eq!(pair_index_unordered(b, a), next);
                next += 1;
            }
        }
        assert_eq!(next, 40 * 39 / 2);
    }

    #[test]
    fn move_features_fill_policy_from() {
        assert_eq!(move_feature(0, 0), 0);
        assert_eq!(move_feature(6, DROP_ORIGIN), 6 * 82 + 81);
        assert_eq!(move_feature(13, 81) + 1, MOVE_FEATURES);
    }

    #[test]
    #[should_panic]
    fn move_feature_refuses_an_origin_past_the_drop() {
        move_feature(0, 82);
    }
}
