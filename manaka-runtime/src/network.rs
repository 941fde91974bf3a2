//! The network trait that compiled (`manaka_net!`) engines implement, and the adapter that
//! turns any of them into an [`Evaluator`] for the search.
//!
//! A [`Network`] owns its weights and exposes the incremental interface: a `State` of fixed
//! size holding both perspectives' accumulators, built by `refresh`, moved along a game by
//! `update` (token deltas, SPEC §3–4), and read by the head, one position at a time or a
//! whole batch at once (the batch shares one pass over W1).

use crate::eval::{Evaluation, Evaluator, EvaluatorFactory, Leaf};
use crate::shogi::{MoveEffect, Position};
use manaka_shapes::Shape;
use std::sync::Arc;

/// One leaf of a batch: its accumulators and the position/moves they belong to.
pub struct StateLeaf<'a, S> {
    pub state: &'a S,
    pub leaf: Leaf<'a>,
}

/// A network engine with incremental accumulators.
pub trait Network: Send + Sync + 'static {
    /// Both perspectives' accumulators: fixed-size arrays, no heap.
    type State: Clone + Send + Sync;

    /// The network's shape.
    fn shape(&self) -> &Shape;

    /// A short description: shape, backend, SIMD level.
    fn describe(&self) -> String;

    /// The accumulators of `pos`, built from scratch.
    fn new_state(&self, pos: &Position) -> Self::State;

    /// Rebuilds `state` for `pos` from scratch.
    fn refresh(&self, state: &mut Self::State, pos: &Position);

    /// Moves `state` along the move described by `effect`; `after` is the position after it.
    fn update(&self, state: &mut Self::State, effect: &MoveEffect, after: &Position);

    /// Evaluates a batch of leaves; `out[i]` answers `batch[i]` (value logit and one policy
    /// logit per move of the leaf).
    fn evaluate_batch(&self, batch: &[StateLeaf<'_, Self::State>], out: &mut Vec<Evaluation>);

    /// Evaluates one leaf.
    fn evaluate(&self, state: &Self::State, leaf: Leaf<'_>) -> Evaluation {
        let mut out = Vec::with_capacity(1);
        self.evaluate_batch(&[StateLeaf { state, leaf }], &mut out);
        out.pop().expect("one leaf in, one evaluation out")
    }
}

/// Any [`Network`] as a search [`Evaluator`]: each leaf's accumulators are built from
/// scratch (cheap next to the head for every shape), then the heads run as one batch.
pub struct NetworkEvaluator<N: Network> {
    net: Arc<N>,
    scratch: Vec<N::State>,
}

impl<N: Network> NetworkEvaluator<N> {
    pub fn new(net: Arc<N>) -> Self {
        NetworkEvaluator { net, scratch: Vec::new() }
    }

    pub fn network(&self) -> &Arc<N> {
        &self.net
    }
}

impl<N: Network> Evaluator for NetworkEvaluator<N> {
    fn name(&self) -> String {
        self.net.describe()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        for (i, leaf) in batch.iter().enumerate() {
            match self.scratch.get_mut(i) {
                Some(s) => self.net.refresh(s, leaf.position),
                None => self.scratch.push(self.net.new_state(leaf.position)),
            }
        }
        let items: Vec<StateLeaf<'_, N::State>> =
            batch.iter().zip(&self.scratch).map(|(&leaf, state)| StateLeaf { state, leaf }).collect();
        self.net.evaluate_batch(&items, out);
    }
}

/// An [`EvaluatorFactory`] over a shared [`Network`]: every evaluator it makes (one per
/// search thread) reads the same weights.
pub struct NetworkFactory<N: Network>(pub Arc<N>);

impl<N: Network> EvaluatorFactory for NetworkFactory<N> {
    fn name(&self) -> String {
        self.0.describe()
    }

    fn create(&self) -> Box<dyn Evaluator> {
        Box::new(NetworkEvaluator::new(self.0.clone()))
    }
}
