//! The one "engine equals the reference along random games" loop: every fast path (compiled
//! engines at each SIMD level, precisions, library expansions) is checked the same way, on
//! the positions a search meets, with its accumulators carried move by move as a search
//! carries them.

use super::{Output, ReferenceNet};
use crate::eval::{Evaluation, Leaf};
use crate::network::Network;
use crate::random::SplitMix64;
use crate::shogi::{Move, Position};

/// The agreement every f32 fast path keeps with the f64 oracle: relative error 1e-4, absolute
/// near zero.
pub const TOLERANCE: f64 = 1e-4;

/// Relative error of an engine's value against the reference's, as [`close`] measures it.
pub fn relative_error(engine: f32, reference: f64) -> f64 {
    (f64::from(engine) - reference).abs() / (1.0 + reference.abs())
}

/// Whether `engine` is within [`TOLERANCE`] of `reference`.
pub fn close(engine: f32, reference: f64) -> bool {
    relative_error(engine, reference) <= TOLERANCE
}

/// One position of a random game, with both evaluations of it.
pub struct GamePosition<'a> {
    /// Which game (from 0) and how many moves into it.
    pub game: usize,
    pub ply: usize,
    pub position: &'a Position,
    /// The legal moves, in `legal_moves()` order (the order of both policies).
    pub moves: &'a [Move],
    /// The engine's evaluation, from its incrementally updated accumulators.
    pub engine: &'a Evaluation,
    /// The reference's, from scratch.
    pub reference: &'a Output,
}

impl GamePosition<'_> {
    /// The largest relative errors (value, policy logits) of the engine here.
    pub fn errors(&self) -> (f64, f64) {
        let value = relative_error(self.engine.value_logit, self.reference.value_logit);
        let policy = self
            .engine
            .policy_logits
            .iter()
            .zip(&self.reference.policy)
            .map(|(&g, &w)| relative_error(g, w))
            .fold(0.0, f64::max);
        (value, policy)
    }

    /// Panics, naming `what`, the game, the ply and the position, unless the value and every
    /// policy logit are [`close`] and the engine scored every legal move.
    pub fn assert_close(&self, what: &str) {
        let at = || {
            format!(
                "{what}, game {} ply {}, {}",
                self.game,
                self.ply,
                self.position.to_sfen()
            )
        };
        assert_eq!(
            self.engine.policy_logits.len(),
            self.moves.len(),
            "{}: policy length",
            at()
        );
        assert!(
            close(self.engine.value_logit, self.reference.value_logit),
            "{}: value {} vs {}",
            at(),
            self.engine.value_logit,
            self.reference.value_logit
        );
        for ((g, w), m) in self
            .engine
            .policy_logits
            .iter()
            .zip(&self.reference.policy)
            .zip(self.moves)
        {
            assert!(
                close(*g, *w),
                "{}: policy of {} {g} vs {w}",
                at(),
                m.to_usi()
            );
        }
    }
}

/// Plays `games` random games of at most `plies` moves from the start position (uniform
/// legal moves drawn by SplitMix64 from `seed`; a game ends early at a mate), carrying `net`'s
/// accumulators incrementally (one `update` per move), and hands `check` every position with
/// the engine's evaluation and the reference's. Returns the positions compared.
pub fn along_random_games<N: Network>(
    net: &N,
    reference: &ReferenceNet,
    games: usize,
    plies: usize,
    seed: u64,
    mut check: impl FnMut(&GamePosition<'_>),
) -> usize {
    let mut rng = SplitMix64::new(seed);
    let mut compared = 0;
    for game in 0..games {
        let mut pos = Position::startpos();
        let mut state = net.new_state(&pos);
        for ply in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let leaf = Leaf {
                position: &pos,
                moves: &moves,
            };
            let engine = net.evaluate(&state, leaf);
            let want = reference.evaluate_position(&pos, &moves);
            check(&GamePosition {
                game,
                ply,
                position: &pos,
                moves: &moves,
                engine: &engine,
                reference: &want,
            });
            compared += 1;
            let m = moves[rng.below(moves.len() as u64) as usize];
            let effect = pos.do_move(m);
            net.update(&mut state, &effect, &pos);
        }
    }
    compared
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::{TensorSource, init};
    use manaka_shapes::Shape;
    use std::sync::Arc;

    fn reference(seed: u64) -> ReferenceNet {
        let shape = Shape::parse("pair4_d16_o2_h32").unwrap();
        let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, seed));
        ReferenceNet::new(src).unwrap()
    }

    /// The oracle through its own `Network` impl (incremental f64, rounded to f32) passes;
    /// the same network checked against other weights fails: the loop can tell them apart.
    #[test]
    fn the_loop_passes_the_oracle_and_catches_other_weights() {
        let (a, b) = (reference(1), reference(2));
        let n = along_random_games(&a, &a, 3, 40, 7, |p| p.assert_close("reference"));
        assert_eq!(n, 120);
        let mut worst = 0.0f64;
        along_random_games(&a, &b, 1, 10, 7, |p| worst = worst.max(p.errors().0));
        assert!(worst > TOLERANCE, "{worst}");
        assert!(close(1.0, 1.0 + 1e-5) && !close(1.0, 1.01));
    }
}
