//! Reading a search's answer off the tree.
//!
//! - The improved policy `π' = softmax(logit + σ(completedQ))` over the legal root moves is
//!   the training target (the paper §4) — not a softmax of visit counts.
//! - `root_value` is the expectation of completed Q under `π'`; `root_v_hat` is the network's
//!   raw value of the root (the pre-search opinion), kept separately (the seed).
//! - The played move is chosen among the most visited root moves by the same root score
//!   `g + logit + σ(completedQ)` (mctx `gumbel_muzero_policy`'s action); it need not be
//!   `argmax π'`.
//! - The principal variation follows, below the played move, the most visited child — or,
//!   through proven nodes, the proof: the quickest win, the longest resistance.
//! - Proven bounds (`proof.rs`) overrule statistics: a proven root plays its proof (the
//!   quickest mate, the longest defence, the draw), and a root that is guaranteed at least
//!   a draw never plays a move whose Q is below it.

use super::descent::{SearchState, SearchStats};
use super::gumbel;
use super::limits::SearchControl;
use super::proof::Proof;
use super::tree::{Edge, NO_NODE, NodeId, NodeKind, ROOT, Tree};
use crate::eval::cp_from_logit;
use crate::mate::{MateLimits, MateSolver};
use crate::shogi::{Move, Position};
use std::sync::atomic::AtomicBool;
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
    /// A longer mate found by the root mate search before any inference (the PV is the
    /// whole mate).
    MateFound,
    /// The side to move may declare an entering-king win (USI `bestmove win`).
    DeclareWin,
    /// No legal move: the side to move is mated (USI `bestmove resign`).
    NoLegalMoves,
}

/// One of the MultiPV lines: a root move, its PV and what the search thinks of it.
#[derive(Clone, Debug, PartialEq)]
pub struct PvLine {
    /// The line, starting with the root move.
    pub pv: Vec<Move>,
    /// The move's completed Q, from the side to move at the root.
    pub value: f64,
    pub visits: u32,
    /// `score mate N` for the move when its outcome is proven (plies, negative when mated).
    pub mate: Option<i32>,
}

impl PvLine {
    /// USI score of the line: `mate N` or `cp C`.
    pub fn score(&self) -> String {
        match self.mate {
            Some(n) => format!("mate {n}"),
            None => format!("cp {}", cp_from_value(self.value)),
        }
    }
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
    /// The root's outcome when it is proven (then `root_value` is its exact value and USI
    /// reports `score mate N` for a win or a loss).
    pub proof: Option<Proof>,
    /// With `SearchConfig::multipv` > 1: the best root moves, best first (the played move,
    /// then by visits and improved policy), each with its own PV (USI `MultiPV`). Empty
    /// otherwise.
    pub lines: Vec<PvLine>,
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

    /// New tree nodes per simulation (docs/search.md, "Growth"); 0 without simulations.
    pub fn growth(&self) -> f64 {
        if self.stats.simulations == 0 {
            0.0
        } else {
            self.stats.new_nodes as f64 / self.stats.simulations as f64
        }
    }

    /// USI `score mate N` for a proven win or loss (plies; negative when the side to move
    /// is mated).
    pub fn mate_plies(&self) -> Option<i32> {
        self.proof.and_then(Proof::mate_plies)
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
    state.view_node(ROOT, false, true);
    let v = &state.view;
    let edges = state.tree.edges(ROOT);
    let root = *state.tree.node(ROOT);
    let proof = Proof::of(&root);
    let root_value: f64 = match proof {
        Some(p) => p.value(),
        None => v
            .improved
            .iter()
            .zip(&v.completed)
            .map(|(p, q)| p * q)
            .sum(),
    };
    let max_visits = v.counts.iter().copied().max().unwrap_or(0);
    let max_logit = v.logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut best: Option<(usize, f64)> = None;
    for i in 0..edges.len() {
        if v.counts[i] != max_visits {
            continue;
        }
        let s = gumbel::root_score(state.noise[i], v.logits[i], max_logit, v.sigma[i]);
        let tie = |j: usize| state.tie_break.get(j).copied().unwrap_or(0);
        if best.is_none_or(|(bi, b)| s > b || (s == b && tie(i) > tie(bi))) {
            best = Some((i, s));
        }
    }
    let mut best = best.map(|(i, _)| i);
    // The proof overrules the statistics: a proven root plays its proof, and a root that
    // is guaranteed more than the chosen move's Q plays the move that guarantees it.
    let guaranteed = proof_move(&state.tree, ROOT);
    if let Some(g) = guaranteed
        && (proof.is_some() || best.is_none_or(|i| v.completed[i] < f64::from(root.lower)))
    {
        best = Some(g);
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
    let best_edge = best.map(|i| edges[i]);
    let pv = best_edge.map_or_else(Vec::new, |e| line(state, e));
    let multipv = state.config.multipv;
    let lines = if multipv > 1 {
        let mut order: Vec<usize> = (0..edges.len()).collect();
        order.sort_by(|&a, &b| {
            let first = |i: usize| Some(i) == best;
            first(b)
                .cmp(&first(a))
                .then(v.counts[b].cmp(&v.counts[a]))
                .then(v.improved[b].total_cmp(&v.improved[a]))
        });
        order
            .into_iter()
            .take(multipv)
            .map(|i| {
                let e = edges[i];
                let mate = (e.child != NO_NODE)
                    .then(|| Proof::of(state.tree.node(e.child)))
                    .flatten()
                    .and_then(|p| p.mate_plies())
                    // The child's count is from the opponent's side, one ply further.
                    .map(|n| if n > 0 { -(n + 1) } else { -n + 1 });
                PvLine {
                    pv: line(state, e),
                    value: v.completed[i],
                    visits: v.counts[i] as u32,
                    mate,
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    SearchResult {
        outcome,
        best_move: best_edge.map(|e| e.mv),
        root_value,
        root_v_hat: f64::from(state.tree.node(ROOT).raw_value),
        pv,
        proof,
        lines,
        root_moves,
        stats,
        elapsed,
    }
}

/// The PV through a root edge: below it the proof where something is proven, else the most
/// visited child, extended by the mate of a node the leaf mate check proved.
fn line(state: &SearchState, first: Edge) -> Vec<Move> {
    let mut pv = vec![first.mv];
    let mut id = first.child;
    while id != NO_NODE && state.tree.node(id).kind == NodeKind::Expanded && pv.len() < 64 {
        let next = match proof_move(&state.tree, id) {
            Some(i) if state.tree.node(id).is_proven() => Some(state.tree.edges(id)[i]),
            _ => most_visited(&state.tree, id),
        };
        let Some(next) = next else { break };
        pv.push(next.mv);
        id = next.child;
    }
    if id != NO_NODE
        && let Some(Proof::Win { plies }) = Proof::of(state.tree.node(id))
        && plies > 0
    {
        let mut end = state.pos.clone();
        for &m in &pv {
            end.do_move(m);
        }
        pv.extend(mate_line(&end, plies));
    }
    pv
}

/// The moves of a mate the side to move of `pos` has within `plies` (empty if none is
/// found: the PV then ends before it).
fn mate_line(pos: &Position, plies: u16) -> Vec<Move> {
    if plies == 1 {
        return pos.mate_in_one().into_iter().collect();
    }
    // A small solver: the leaf check found a mate this short, so a few thousand nodes do.
    let limits = MateLimits::nodes(20_000).with_max_plies(u32::from(plies));
    let r = MateSolver::new(1 << 20).search(pos, &limits, &AtomicBool::new(false));
    r.mate().map(<[Move]>::to_vec).unwrap_or_default()
}

/// The most visited tried move of a node (ties to the larger logit).
fn most_visited(tree: &Tree, id: NodeId) -> Option<Edge> {
    tree.edges(id)
        .iter()
        .filter(|e| tree.edge_visits(e) > 0)
        .max_by(|a, b| {
            tree.edge_visits(a)
                .cmp(&tree.edge_visits(b))
                .then(a.logit.total_cmp(&b.logit))
        })
        .copied()
}

/// The edge that achieves a node's lower bound, if something is proven about it: for a won
/// node the quickest win, for a lost one the longest resistance, else a move whose outcome
/// is at least the lower bound (a draw, when one is guaranteed). `None` when the node has
/// no such guarantee (lower bound −1 and not proven lost).
fn proof_move(tree: &Tree, id: NodeId) -> Option<usize> {
    let node = tree.node(id);
    if node.lower == -1 && node.upper != -1 {
        return None;
    }
    let mut best: Option<(usize, (i8, i32))> = None;
    for (i, e) in tree.edges(id).iter().enumerate() {
        if e.child == NO_NODE {
            continue;
        }
        let c = tree.node(e.child);
        // For the chooser: the guaranteed outcome first, then quick wins and slow losses.
        let guaranteed = -c.upper;
        let speed = match guaranteed {
            1 => -i32::from(c.plies),
            -1 => i32::from(c.plies),
            _ => 0,
        };
        let key = (guaranteed, speed);
        if guaranteed >= node.lower && best.is_none_or(|(_, b)| key > b) {
            best = Some((i, key));
        }
    }
    best.map(|(i, _)| i)
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
