//! Reading a search's answer off the tree.
//!
//! - The improved policy `π' = softmax(logit + σ(completedQ))` over the legal root moves is
//!   the training target (the paper §4) — not a softmax of visit counts.
//! - `root_value` is the expectation of completed Q under `π'`; `root_v_hat` is the network's
//!   raw value of the root (the pre-search opinion), kept separately (the seed).
//! - The played move is chosen among the most visited root moves by the same root score
//!   `g + logit + σ(completedQ)` (mctx `gumbel_muzero_policy`'s action); it need not be
//!   `argmax π'`.
//! - The principal variation follows, below the played move, the most visited child.

use super::descent::{SearchState, SearchStats};
use super::gumbel;
use super::limits::SearchControl;
use super::tree::{NO_NODE, NodeKind, ROOT};
use crate::eval::cp_from_logit;
use crate::shogi::Move;
use std::time::Duration;

/// How the answer was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// By search.
    Searched,
    /// From the policy alone (`policy_only`): one evaluation, no simulations.
    PolicyOnly,
    /// A mate in one found before any inference (the evaluator was not called).
    MateInOne,
    /// The side to move may declare an entering-king win (USI `bestmove win`).
    DeclareWin,
    /// No legal move: the side to move is mated (USI `bestmove resign`).
    NoLegalMoves,
}

/// One legal root move's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMove {
    pub mv: Move,
    /// Completed simulations through the move.
    pub visits: u32,
    /// The network's policy logit and its softmax over the legal moves.
    pub logit: f32,
    pub prior: f64,
    /// The search's Q of the move (side to move at the root), if visited.
    pub q: Option<f64>,
    /// Q completed with the mixed value for unvisited moves.
    pub completed_q: f64,
    /// σ(completedQ) (after the optional rescaling): what the search adds to the logit.
    pub sigma_q: f64,
    /// The improved policy `π'`, the training target.
    pub improved_policy: f64,
    /// The Gumbel noise the move received.
    pub gumbel: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    pub outcome: Outcome,
    /// The move to play; `None` for [`Outcome::DeclareWin`] and [`Outcome::NoLegalMoves`].
    pub best_move: Option<Move>,
    /// `Σ π'(a) · completedQ(a)`, in (−1, 1) from the side to move (±1 for exact outcomes).
    pub root_value: f64,
    /// The network's value of the root before search (equal to `root_value` when no
    /// evaluation was needed).
    pub root_v_hat: f64,
    /// Principal variation, starting with `best_move`.
    pub pv: Vec<Move>,
    /// Every legal root move, in [`Position::legal_moves`](crate::shogi::Position::legal_moves)
    /// order.
    pub root_moves: Vec<RootMove>,
    pub stats: SearchStats,
    pub elapsed: Duration,
}

impl SearchResult {
    /// USI score: `round(600 · 2·atanh(root_value))` clamped to ±30000 (SPEC §8).
    pub fn score_cp(&self) -> i32 {
        cp_from_value(self.root_value)
    }

    /// Simulations per second.
    pub fn nps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.stats.simulations as f64 / s
        } else {
            0.0
        }
    }

    /// Mean bytes per tree node.
    pub fn bytes_per_node(&self) -> f64 {
        if self.stats.nodes == 0 {
            0.0
        } else {
            self.stats.tree_bytes as f64 / self.stats.nodes as f64
        }
    }

    /// Root moves sorted by visits, then improved policy (best first).
    pub fn ranked_moves(&self) -> Vec<&RootMove> {
        let mut v: Vec<&RootMove> = self.root_moves.iter().collect();
        v.sort_by(|a, b| {
            b.visits
                .cmp(&a.visits)
                .then(b.improved_policy.total_cmp(&a.improved_policy))
        });
        v
    }
}

/// The USI score of a search value `v`: `ℓ = 2·atanh(v)`, `cp = round(600·ℓ)` clamped to
/// ±30000 (SPEC §5, §8). `v = ±1` gives ±30000; NaN gives 0.
pub fn cp_from_value(v: f64) -> i32 {
    if v.is_nan() {
        return 0;
    }
    cp_from_logit(2.0 * v.clamp(-1.0, 1.0).atanh())
}

/// Calls the progress callback every `every` of search time.
pub(crate) struct Reporter<'a> {
    every: Option<Duration>,
    next: Duration,
    callback: &'a mut dyn FnMut(&SearchResult),
}

impl<'a> Reporter<'a> {
    pub fn new(
        every: Option<Duration>,
        callback: &'a mut dyn FnMut(&SearchResult),
    ) -> Reporter<'a> {
        Reporter {
            every,
            next: every.unwrap_or(Duration::MAX),
            callback,
        }
    }

    pub fn tick(&mut self, state: &mut SearchState, control: &SearchControl) {
        let Some(every) = self.every else { return };
        let elapsed = control.elapsed();
        if elapsed >= self.next {
            let snapshot = read(state, Outcome::Searched, elapsed);
            (self.callback)(&snapshot);
            while self.next <= elapsed {
                self.next += every;
            }
        }
    }
}

/// Reads the result of a search (or of a snapshot during one) from the tree.
pub(crate) fn read(state: &mut SearchState, outcome: Outcome, elapsed: Duration) -> SearchResult {
    let mut stats = state.stats.clone();
    stats.nodes = state.tree.len() as u64;
    stats.tree_bytes = state.tree.bytes_used() as u64;
    // Completed visits only: a snapshot taken mid-batch ignores descents in flight.
    state.view_node(ROOT, false);
    let v = &state.view;
    let edges = state.tree.edges(ROOT);
    let root_value: f64 = v
        .improved
        .iter()
        .zip(&v.completed)
        .map(|(p, q)| p * q)
        .sum();
    let max_visits = v.counts.iter().copied().max().unwrap_or(0);
    let max_logit = v.logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut best: Option<(usize, f64)> = None;
    for i in 0..edges.len() {
        if v.counts[i] != max_visits {
            continue;
        }
        let s = gumbel::root_score(state.noise[i], v.logits[i], max_logit, v.sigma[i]);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((i, s));
        }
    }
    let root_moves = edges
        .iter()
        .enumerate()
        .map(|(i, e)| RootMove {
            mv: e.mv,
            visits: v.counts[i] as u32,
            logit: e.logit,
            prior: v.prior[i],
            q: (v.visits[i] > 0.0).then_some(v.q[i]),
            completed_q: v.completed[i],
            sigma_q: v.sigma[i],
            improved_policy: v.improved[i],
            gumbel: state.noise[i],
        })
        .collect();
    let best_edge = best.map(|(i, _)| edges[i]);
    let mut pv = Vec::new();
    if let Some(e) = best_edge {
        pv.push(e.mv);
        let mut id = e.child;
        while id != NO_NODE && state.tree.node(id).kind == NodeKind::Expanded && pv.len() < 64 {
            let next = state
                .tree
                .edges(id)
                .iter()
                .filter(|e| state.tree.edge_visits(e) > 0)
                .max_by(|a, b| {
                    state
                        .tree
                        .edge_visits(a)
                        .cmp(&state.tree.edge_visits(b))
                        .then(a.logit.total_cmp(&b.logit))
                });
            let Some(next) = next else { break };
            pv.push(next.mv);
            id = next.child;
        }
    }
    SearchResult {
        outcome,
        best_move: best_edge.map(|e| e.mv),
        root_value,
        root_v_hat: f64::from(state.tree.node(ROOT).raw_value),
        pv,
        root_moves,
        stats,
        elapsed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_spec_8() {
        assert_eq!(cp_from_value(0.0), 0);
        // v = tanh(ℓ/2) with ℓ = 1 → 600.
        assert_eq!(cp_from_value((0.5f64).tanh()), 600);
        assert_eq!(cp_from_value(-(0.25f64).tanh()), -300);
        assert_eq!(cp_from_value(1.0), 30000);
        assert_eq!(cp_from_value(-1.0), -30000);
        assert_eq!(cp_from_value(f64::NAN), 0);
    }
}
