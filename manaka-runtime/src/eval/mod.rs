//! The evaluator boundary: the one interface between search and networks.
//!
//! The search hands a batch of leaves (a position and its legal moves) to an [`Evaluator`]
//! and gets back, per leaf, a value logit and one policy logit per legal move. It knows
//! nothing of shapes, SIMD or devices — the reference evaluator, the generated CPU engines
//! and the CUDA batch executor are all implementations of this trait (as lc0's search talks
//! to its backends).

use crate::shogi::{Move, Position};

pub mod material;
pub mod threaded;

pub use material::MaterialEvaluator;
pub use threaded::ThreadedEvaluator;

/// One position to evaluate, with the legal moves to score (in the order the caller wants
/// the logits back).
#[derive(Clone, Copy)]
pub struct Leaf<'a> {
    pub position: &'a Position,
    pub moves: &'a [Move],
}

/// A network's opinion of one leaf.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Value logit ℓ from the side to move's point of view (SPEC §5): win probability
    /// σ(ℓ), search value tanh(ℓ/2), USI score round(600·ℓ).
    pub value_logit: f32,
    /// One logit per move of the leaf, in the leaf's move order.
    pub policy_logits: Vec<f32>,
}

impl Evaluation {
    /// Search value in (−1, 1): tanh(ℓ / 2) (SPEC §5).
    pub fn value(&self) -> f32 {
        (self.value_logit * 0.5).tanh()
    }
}

/// Evaluates batches of leaves.
pub trait Evaluator: Send {
    /// A short description for logs and `info string` (e.g. the shape and backend).
    fn name(&self) -> String;

    /// Evaluates every leaf of `batch`; `out` is resized to the batch length and entry `i`
    /// answers leaf `i`.
    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>);

    /// Evaluates one leaf (a batch of one).
    fn evaluate_one(&mut self, position: &Position, moves: &[Move]) -> Evaluation {
        let mut out = Vec::with_capacity(1);
        self.evaluate(&[Leaf { position, moves }], &mut out);
        out.pop().expect("evaluator answered the leaf")
    }
}

/// Makes evaluators that share one loaded network (weights behind an `Arc`, say), each with
/// its own scratch state. The USI engine asks a factory for one evaluator per `Threads` and
/// runs them side by side on the parts of a batch ([`ThreadedEvaluator`]); a loader returns
/// a factory so that loading happens once, whatever the thread count.
pub trait EvaluatorFactory: Send + Sync {
    /// A short description, as [`Evaluator::name`].
    fn name(&self) -> String;

    /// A fresh evaluator for the shared network.
    fn create(&self) -> Box<dyn Evaluator>;
}

/// An [`EvaluatorFactory`] from a name and a closure.
pub struct FnFactory<F> {
    name: String,
    make: F,
}

impl<F> FnFactory<F>
where
    F: Fn() -> Box<dyn Evaluator> + Send + Sync,
{
    pub fn new(name: impl Into<String>, make: F) -> FnFactory<F> {
        FnFactory {
            name: name.into(),
            make,
        }
    }
}

impl<F> EvaluatorFactory for FnFactory<F>
where
    F: Fn() -> Box<dyn Evaluator> + Send + Sync,
{
    fn name(&self) -> String {
        self.name.clone()
    }

    fn create(&self) -> Box<dyn Evaluator> {
        (self.make)()
    }
}

/// USI centipawn score for a value logit: round(600·ℓ) clamped to ±30000 (SPEC §5).
pub fn cp_from_logit(value_logit: f64) -> i32 {
    (600.0 * value_logit).round().clamp(-30000.0, 30000.0) as i32
}

/// Win probability σ(ℓ).
pub fn win_probability(value_logit: f64) -> f64 {
    1.0 / (1.0 + (-value_logit).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_conversions_match_spec() {
        assert_eq!(cp_from_logit(0.0), 0);
        assert_eq!(cp_from_logit(1.0), 600);
        assert_eq!(cp_from_logit(-0.5), -300);
        assert_eq!(cp_from_logit(100.0), 30000);
        assert_eq!(cp_from_logit(-100.0), -30000);
        assert!((win_probability(0.0) - 0.5).abs() < 1e-12);
        // win probability 1/(1+e^(−cp/600)) with cp = 600ℓ
        assert!((win_probability(1.0) - 1.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-12);
        let e = Evaluation {
            value_logit: 2.0,
            policy_logits: vec![],
        };
        assert!((e.value() - 1.0f32.tanh()).abs() < 1e-6);
    }
}
