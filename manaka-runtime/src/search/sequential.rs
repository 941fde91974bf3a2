//! The sequential search: one descent, one evaluation (of one leaf), one backup, repeated.
//!
//! This is the reference behaviour; the batched search with batch size 1 must reproduce it
//! bit for bit (tested in `tests.rs`).

use super::descent::{DescentEnd, SearchState};
use super::limits::SearchControl;
use super::result::Reporter;
use crate::eval::{Evaluation, Evaluator, Leaf};

pub(crate) fn run(
    state: &mut SearchState,
    evaluator: &mut dyn Evaluator,
    budget: u64,
    control: &SearchControl,
    reporter: &mut Reporter<'_>,
) {
    let (mut path, mut played, mut out) = (Vec::new(), Vec::new(), Vec::with_capacity(1));
    while !state.root_done() && !control.should_stop(state.stats.simulations, 0, budget) {
        match state.descend(&mut path, &mut played) {
            DescentEnd::Known(v) => state.back_up(&path, v, false),
            DescentEnd::Evaluate { node, moves } => {
                let key = state.pos.key();
                evaluator.evaluate(
                    &[Leaf {
                        position: &state.pos,
                        moves: &moves,
                    }],
                    &mut out,
                );
                state.stats.batches += 1;
                let fallback = Evaluation::default();
                state.stats.unusable_evaluations +=
                    u64::from(super::descent::is_unusable(out.first(), moves.len()));
                let evaluation = out.first().unwrap_or(&fallback);
                let v = state.expand_evaluated(node, key, &moves, evaluation);
                state.back_up(&path, v, false);
            }
            // A full tree makes room and the search goes on (this descent is not counted).
            DescentEnd::TreeFull => {
                state.unwind(&played);
                if state.recycle() {
                    continue;
                }
                break;
            }
            // Nothing is ever left queued between descents here.
            DescentEnd::Queued { .. } => {
                state.unwind(&played);
                break;
            }
        }
        state.unwind(&played);
        state.stats.simulations += 1;
        reporter.tick(state, control);
    }
}
