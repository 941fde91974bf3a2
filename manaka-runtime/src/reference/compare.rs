//! The one "engine equals the reference along random games" loop: every fast path (compiled
//! engines at each SIMD level, precisions, library expansions) is checked the same way, on
//! the positions a search meets, with its accumulators carried move by move as a search
//! carries them.

use super::{Output, ReferenceNet};
use crate::eval::{Evaluation, Leaf};
use crate::network::{Network, StateLeaf};
use crate::random::SplitMix64;
use crate::shogi::{Move, MoveEffect, Position};

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

/// How the engine evaluated a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// One leaf at a time (`Network::evaluate`).
    Single,
    /// In a batch of leaves (`Network::evaluate_batch`, the shared-W1 path).
    Batch,
}

/// One position of a random game, with both evaluations of it.
pub struct GamePosition<'a> {
    /// Which game (from 0) and how many moves into it.
    pub game: usize,
    pub ply: usize,
    /// Which of the engine's calls evaluated it.
    pub call: Call,
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
                "{what} ({:?}), game {} ply {}, {}",
                self.call,
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
    check: impl FnMut(&GamePosition<'_>),
) -> usize {
    RandomGames::play(reference, games, plies, 0, seed).replay(net, &Batches::NONE, check)
}

/// A position of a random game as [`random_game`] reaches it.
pub struct Step<'a> {
    /// Moves played before it.
    pub ply: usize,
    pub position: &'a Position,
    /// Its legal moves, in `legal_moves()` order; empty at a mate (the game's last step).
    pub moves: &'a [Move],
    /// What the move that led here changed (`None` at the start), for an engine's
    /// incremental update.
    pub effect: Option<&'a MoveEffect>,
}

/// Plays one random game from `start`: at most `plies` moves, each uniform over the legal
/// moves (drawn from `rng` by [`SplitMix64::below`]), handing `visit` every position before
/// a move and the mate that ends a game early. The one walk of every "engine equals its
/// oracle along random games" test: they differ in the oracle, not in the games.
pub fn random_game(
    start: &Position,
    plies: usize,
    rng: &mut SplitMix64,
    mut visit: impl FnMut(&Step<'_>),
) {
    let mut pos = start.clone();
    let mut effect = None;
    for ply in 0..plies {
        let moves = pos.legal_moves();
        visit(&Step {
            ply,
            position: &pos,
            moves: &moves,
            effect: effect.as_ref(),
        });
        if moves.is_empty() {
            break;
        }
        effect = Some(pos.do_move(moves[rng.below(moves.len() as u64) as usize]));
    }
}

/// Random games with the reference's evaluation of every position, made once and replayed on
/// any number of engines (the reference is the slow part: a test of every SIMD level of a
/// shape evaluates each position with it once).
pub struct RandomGames {
    games: Vec<RandomGame>,
}

struct RandomGame {
    /// `moves[i]` was played from position `i` (the last position's move is not kept: no
    /// position after it is compared).
    moves: Vec<Move>,
    /// `reference[i]` answers position `i`, over its legal moves.
    reference: Vec<Output>,
}

/// Which positions a replay also evaluates in batches, and how many leaves a batch holds.
pub struct Batches<'a> {
    pub leaves: usize,
    /// Whether game `g` (from 0) is replayed in batches too.
    pub games: &'a dyn Fn(usize) -> bool,
}

impl Batches<'_> {
    /// Every position one leaf at a time only.
    pub const NONE: Batches<'static> = Batches {
        leaves: 0,
        games: &no_game,
    };
}

fn no_game(_: usize) -> bool {
    false
}

impl RandomGames {
    /// At least `games` random games of at most `plies` moves from the start position, and
    /// more until they hold `min_positions` positions (a game ending in mate early is kept,
    /// and an extra game makes up the count). Moves are uniform over the legal moves, drawn
    /// from one SplitMix64 of `seed` across the games.
    pub fn play(
        reference: &ReferenceNet,
        games: usize,
        plies: usize,
        min_positions: usize,
        seed: u64,
    ) -> RandomGames {
        let mut rng = SplitMix64::new(seed);
        let mut out = Vec::with_capacity(games);
        let mut positions = 0;
        let start = Position::startpos();
        while out.len() < games || (positions < min_positions && plies > 0) {
            let mut game = RandomGame {
                moves: Vec::with_capacity(plies),
                reference: Vec::with_capacity(plies),
            };
            random_game(&start, plies, &mut rng, |s| {
                if let Some(m) = s.position.last_move().filter(|_| s.ply > 0) {
                    game.moves.push(m);
                }
                if !s.moves.is_empty() {
                    game.reference
                        .push(reference.evaluate_position(s.position, s.moves));
                }
            });
            positions += game.reference.len();
            out.push(game);
        }
        RandomGames { games: out }
    }

    /// Games played.
    pub fn len(&self) -> usize {
        self.games.len()
    }

    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }

    /// Positions in all the games (each compared once per call kind).
    pub fn positions(&self) -> usize {
        self.games.iter().map(|g| g.reference.len()).sum()
    }

    /// Replays the games on `net` from the start position, its accumulators carried by one
    /// `update` per move, and hands `check` every position evaluated one leaf at a time and,
    /// for the games `batches` names, again in batches of its leaves (each leaf with the
    /// state it had along the game). Returns the single-leaf positions compared.
    pub fn replay<N: Network>(
        &self,
        net: &N,
        batches: &Batches<'_>,
        mut check: impl FnMut(&GamePosition<'_>),
    ) -> usize {
        let mut compared = 0;
        let mut out = Vec::with_capacity(batches.leaves);
        for (g, game) in self.games.iter().enumerate() {
            let batched = batches.leaves > 0 && (batches.games)(g);
            let mut pos = Position::startpos();
            let mut state = net.new_state(&pos);
            // The last few positions, their legal moves and states, for a batch.
            let mut pending: Vec<(usize, Position, Vec<Move>, N::State)> = Vec::new();
            let mut flush = |pending: &mut Vec<(usize, Position, Vec<Move>, N::State)>,
                             check: &mut dyn FnMut(&GamePosition<'_>)| {
                let leaves: Vec<StateLeaf<'_, N::State>> = pending
                    .iter()
                    .map(|(_, p, m, s)| StateLeaf {
                        state: s,
                        leaf: Leaf {
                            position: p,
                            moves: m,
                        },
                    })
                    .collect();
                net.evaluate_batch(&leaves, &mut out);
                assert_eq!(out.len(), leaves.len(), "one evaluation per leaf");
                for ((ply, p, m, _), engine) in pending.iter().zip(&out) {
                    check(&GamePosition {
                        game: g,
                        ply: *ply,
                        call: Call::Batch,
                        position: p,
                        moves: m,
                        engine,
                        reference: &game.reference[*ply],
                    });
                }
                pending.clear();
            };
            for (ply, want) in game.reference.iter().enumerate() {
                let moves = pos.legal_moves();
                let engine = net.evaluate(
                    &state,
                    Leaf {
                        position: &pos,
                        moves: &moves,
                    },
                );
                check(&GamePosition {
                    game: g,
                    ply,
                    call: Call::Single,
                    position: &pos,
                    moves: &moves,
                    engine: &engine,
                    reference: want,
                });
                compared += 1;
                if batched {
                    pending.push((ply, pos.clone(), moves, state.clone()));
                    if pending.len() == batches.leaves {
                        flush(&mut pending, &mut check);
                    }
                }
                if let Some(&m) = game.moves.get(ply) {
                    let effect = pos.do_move(m);
                    net.update(&mut state, &effect, &pos);
                }
            }
            if !pending.is_empty() {
                flush(&mut pending, &mut check);
            }
        }
        compared
    }
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

    /// Recorded games are the ones the loop walks (same moves from the same seed), extra
    /// games make up a position count, and a replay in batches hands over every position of
    /// the chosen games once more, with the same oracle, passing.
    #[test]
    fn recorded_games_replay_singly_and_in_batches() {
        let a = reference(1);
        let games = RandomGames::play(&a, 2, 30, 100, 7);
        assert_eq!((games.len(), games.positions()), (4, 120));
        let mut walked = Vec::new();
        along_random_games(&a, &a, 4, 30, 7, |p| walked.push(p.position.key()));
        let (mut single, mut batch) = (Vec::new(), 0);
        let n = games.replay(
            &a,
            &Batches {
                leaves: 7,
                games: &|g| g % 2 == 1,
            },
            |p| {
                p.assert_close("reference");
                match p.call {
                    Call::Single => single.push(p.position.key()),
                    Call::Batch => {
                        assert_eq!(p.game % 2, 1, "only the chosen games in batches");
                        batch += 1;
                    }
                }
            },
        );
        assert_eq!((n, single, batch), (120, walked, 60));
    }
}
