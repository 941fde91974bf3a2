//! The batched search: gather several descents, evaluate their leaves in one evaluator call,
//! back them all up.
//!
//! While a leaf waits for its evaluation, every node on its path carries a virtual loss, so
//! the next descents of the batch spread to other branches (the root schedule counts the
//! waiting descent as a visit, so Sequential Halving's slots are respected). A descent that
//! reaches a leaf already queued does not queue it again: the leaf is evaluated once and the
//! value is backed up along every path that reached it. Different nodes holding the same
//! position (transpositions) share one evaluation too. With batch size 1 nothing is ever
//! waiting when a descent selects, and the search is the sequential one exactly.
//!
//! The batch width is bounded by the simulation budget (the seed's second invariant): never
//! more than the budget has left when the budget is final, and never more than one eighth of
//! the budget, so a small budget is not spent in one or two blind batches whose descents
//! would mostly collide.

use super::descent::{DescentEnd, SearchState};
use super::limits::SearchControl;
use super::result::Reporter;
use super::tree::NodeId;
use crate::eval::{Evaluation, Evaluator, Leaf};
use crate::shogi::{Move, Position};

/// A budget of `n` simulations allows batches of at most `n / BUDGET_PER_BATCH` descents.
pub const BUDGET_PER_BATCH: u64 = 8;

/// The batch width used for a configured batch size and a simulation budget (at least 1).
pub fn batch_width(batch_size: usize, budget: u64) -> usize {
    let cap = (budget / BUDGET_PER_BATCH).max(1);
    (batch_size as u64).min(cap).max(1) as usize
}

/// One position waiting for the evaluator.
struct Request {
    key: u64,
    position: Position,
    moves: Vec<Move>,
    /// The queued nodes holding this position (more than one for a transposition).
    nodes: Vec<NodeId>,
    /// Every descent waiting for it (more than one after collisions).
    paths: Vec<Vec<NodeId>>,
}

pub(crate) fn run(
    state: &mut SearchState,
    evaluator: &mut dyn Evaluator,
    budget: u64,
    control: &SearchControl,
    reporter: &mut Reporter<'_>,
) {
    let width = batch_width(state.config.batch_size, budget);
    let mut requests: Vec<Request> = Vec::with_capacity(width);
    let (mut path, mut played, mut out) = (Vec::new(), Vec::new(), Vec::with_capacity(width));
    let mut tree_full = false;
    while !tree_full
        && !state.root_done()
        && !control.should_stop(state.stats.simulations, 0, budget)
    {
        requests.clear();
        let mut in_flight = 0u64;
        for _ in 0..width {
            if state.root_done() || control.should_stop(state.stats.simulations, in_flight, budget)
            {
                break;
            }
            match state.descend(&mut path, &mut played) {
                DescentEnd::Known(v) => {
                    state.back_up(&path, v, false);
                    state.stats.simulations += 1;
                }
                DescentEnd::Evaluate { node, moves } => {
                    state.tree.add_pending(&path);
                    in_flight += 1;
                    let key = state.pos.key();
                    match requests
                        .iter_mut()
                        .find(|r| r.key == key && r.moves == moves)
                    {
                        Some(r) => {
                            r.nodes.push(node);
                            r.paths.push(path.clone());
                        }
                        None => requests.push(Request {
                            key,
                            position: state.pos.clone(),
                            moves,
                            nodes: vec![node],
                            paths: vec![path.clone()],
                        }),
                    }
                }
                DescentEnd::Queued { node } => {
                    state.tree.add_pending(&path);
                    in_flight += 1;
                    state.stats.collisions += 1;
                    // Every queued node belongs to a request of this batch (all are expanded
                    // before the next batch starts).
                    match requests.iter_mut().find(|r| r.nodes.contains(&node)) {
                        Some(r) => r.paths.push(path.clone()),
                        None => {
                            debug_assert!(false, "queued node {node} outside the batch");
                            state.tree.remove_pending(&path);
                            in_flight -= 1;
                        }
                    }
                }
                DescentEnd::TreeFull => tree_full = true,
            }
            state.unwind(&played);
            if tree_full {
                break;
            }
        }
        if !requests.is_empty() {
            let leaves: Vec<Leaf<'_>> = requests
                .iter()
                .map(|r| Leaf {
                    position: &r.position,
                    moves: &r.moves,
                })
                .collect();
            evaluator.evaluate(&leaves, &mut out);
            state.stats.batches += 1;
            let fallback = Evaluation::default();
            for (i, r) in requests.iter().enumerate() {
                state.stats.unusable_evaluations +=
                    u64::from(super::descent::is_unusable(out.get(i), r.moves.len()));
                let evaluation = out.get(i).unwrap_or(&fallback);
                let mut value = 0.0;
                for &node in &r.nodes {
                    value = state.expand_evaluated(node, r.key, &r.moves, evaluation);
                }
                // One evaluation, however many nodes share the position.
                state.stats.evaluations -= r.nodes.len() as u64 - 1;
                for p in &r.paths {
                    state.back_up(p, value, true);
                    state.stats.simulations += 1;
                }
            }
        }
        // A full tree makes room once the batch is backed up (no descent in flight).
        if tree_full && state.recycle() {
            tree_full = false;
        }
        reporter.tick(state, control);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_is_bounded_by_the_budget() {
        assert_eq!(batch_width(1, 800), 1);
        assert_eq!(batch_width(16, 800), 16);
        assert_eq!(batch_width(16, 32), 4);
        assert_eq!(batch_width(16, 7), 1);
        assert_eq!(batch_width(0, 800), 1);
    }
}
