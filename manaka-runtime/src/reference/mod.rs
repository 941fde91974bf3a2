//! The reference evaluator: plain, shape-generic, f64 Rust that computes SPEC §4–6 exactly
//! for any valid shape. It reads the shape at run time and is the oracle every fast path —
//! generated SIMD engines, CUDA kernels, the trainer's forward pass — is tested against.
//! Clarity over speed.

pub mod accumulator;
pub mod compare;
pub mod head;
pub mod params;

pub use accumulator::Accumulator;
pub use params::{Params, ReferenceError};

use crate::eval::{Evaluation, Evaluator, Leaf};
use crate::network::{Network, StateLeaf};
use crate::shogi::{Color, Move, MoveEffect, Position};
use crate::tokens;
use crate::weights::TensorSource;
use manaka_shapes::Shape;
use std::sync::Arc;

/// A network: a shape and its weights, evaluated the slow, exact way.
#[derive(Clone)]
pub struct ReferenceNet {
    shape: Shape,
    source: Arc<dyn TensorSource + Send + Sync>,
}

/// The network's output for one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub value_logit: f64,
    /// One logit per requested move.
    pub policy: Vec<f64>,
}

/// Both perspectives' accumulators for the position they were built or updated for.
#[derive(Clone, Debug, PartialEq)]
pub struct NetState {
    /// Indexed by perspective colour.
    pub acc: [Accumulator; 2],
}

impl ReferenceNet {
    /// Wraps a weight source (its shape is the network's shape). Fails when a tensor the
    /// shape needs is missing.
    pub fn new(
        source: Arc<dyn TensorSource + Send + Sync>,
    ) -> Result<ReferenceNet, ReferenceError> {
        let shape = *source.shape();
        Params::new(&shape, source.as_ref())?;
        Ok(ReferenceNet { shape, source })
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    pub fn params(&self) -> Params<'_> {
        Params::new(&self.shape, self.source.as_ref()).expect("checked in new")
    }

    /// Accumulators of `pos` built from scratch.
    pub fn refresh(&self, pos: &Position) -> NetState {
        let params = self.params();
        let acc = Color::ALL.map(|c| {
            let t = tokens::active_tokens(self.shape.features, pos, c);
            Accumulator::refresh(&self.shape, &params, t.as_slice())
        });
        NetState { acc }
    }

    /// Updates `state` for the move described by `effect`; `after` is the position after it.
    pub fn update(&self, state: &mut NetState, effect: &MoveEffect, after: &Position) {
        let params = self.params();
        for c in Color::ALL {
            let d = tokens::delta(self.shape.features, effect, after, c);
            if d.refresh {
                let t = tokens::active_tokens(self.shape.features, after, c);
                state.acc[c.index()] = Accumulator::refresh(&self.shape, &params, t.as_slice());
            } else {
                state.acc[c.index()].apply(&self.shape, &params, &d);
            }
        }
    }

    /// The head on `state` (which must belong to `pos`): value logit and a logit per move.
    pub fn evaluate(&self, state: &NetState, pos: &Position, moves: &[Move]) -> Output {
        let params = self.params();
        let stm = pos.side_to_move();
        let (a, b) = (&state.acc[stm.index()], &state.acc[stm.flip().index()]);
        let h = head::hidden(&self.shape, &params, a, b);
        Output {
            value_logit: head::value_logit(&params, &h),
            policy: head::policy_logits(&self.shape, &params, &h, a, pos, moves),
        }
    }

    /// Refresh and evaluate in one call.
    pub fn evaluate_position(&self, pos: &Position, moves: &[Move]) -> Output {
        self.evaluate(&self.refresh(pos), pos, moves)
    }
}

/// The reference network through the same trait as the compiled engines, so code generic over
/// a [`Network`] (equivalence tests, `manaka eval`'s line evaluation) runs the oracle too.
/// Its f64 results are rounded to f32 here; [`ReferenceNet::evaluate`] keeps them exact.
impl Network for ReferenceNet {
    type State = NetState;

    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn describe(&self) -> String {
        format!("{} (reference)", self.shape)
    }

    fn new_state(&self, pos: &Position) -> NetState {
        ReferenceNet::refresh(self, pos)
    }

    fn refresh(&self, state: &mut NetState, pos: &Position) {
        *state = ReferenceNet::refresh(self, pos);
    }

    fn update(&self, state: &mut NetState, effect: &MoveEffect, after: &Position) {
        ReferenceNet::update(self, state, effect, after);
    }

    fn evaluate_batch(&self, batch: &[StateLeaf<'_, NetState>], out: &mut Vec<Evaluation>) {
        out.clear();
        for item in batch {
            let o = ReferenceNet::evaluate(self, item.state, item.leaf.position, item.leaf.moves);
            out.push(o.to_evaluation());
        }
    }
}

impl Output {
    /// The search's f32 [`Evaluation`] of this output.
    pub fn to_evaluation(&self) -> Evaluation {
        Evaluation {
            value_logit: self.value_logit as f32,
            policy_logits: self.policy.iter().map(|&x| x as f32).collect(),
        }
    }
}

/// [`Evaluator`] over the reference network: every leaf is refreshed from scratch (no state
/// cache: the oracle's answer for a leaf depends on the leaf alone, and its f64 accumulators
/// would make a cache of the compiled engines' size many times larger).
pub struct ReferenceEvaluator {
    net: ReferenceNet,
}

impl ReferenceEvaluator {
    pub fn new(net: ReferenceNet) -> ReferenceEvaluator {
        ReferenceEvaluator { net }
    }

    pub fn net(&self) -> &ReferenceNet {
        &self.net
    }
}

impl Evaluator for ReferenceEvaluator {
    fn name(&self) -> String {
        format!("{} (reference)", self.net.shape())
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        out.clear();
        for leaf in batch {
            let o = self.net.evaluate_position(leaf.position, leaf.moves);
            out.push(o.to_evaluation());
        }
    }
}

#[cfg(test)]
mod tests;
