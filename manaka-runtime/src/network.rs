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

/// Any [`Network`] as a search [`Evaluator`].
///
/// A leaf's accumulators come, cheapest first, from: a cache of recently evaluated
/// positions (by Zobrist key); its parent's cached accumulators plus the last move's token
/// delta (a search expands children of nodes it evaluated shortly before); or a refresh from
/// scratch. For shapes with a pair table an update reads about 80 table rows where a
/// refresh reads about 1,600, all cache misses. The heads then run as one batch.
pub struct NetworkEvaluator<N: Network> {
    net: Arc<N>,
    cache: StateCache<N::State>,
    stats: CacheStats,
}

/// How leaves got their accumulators (for benchmarks and logs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// The position itself was cached.
    pub hits: u64,
    /// Built from the cached parent by one incremental update.
    pub from_parent: u64,
    /// Built from scratch.
    pub refreshes: u64,
}

/// Accumulator states by position key, direct-mapped (a new entry replaces whatever shared
/// its slot), with a fixed number of slots chosen from a byte budget.
struct StateCache<S> {
    slots: Vec<Option<(u64, S)>>,
}

impl<S: Clone> StateCache<S> {
    /// About `budget` bytes of states: a power of two between 16 and 65,536 slots.
    fn with_budget(budget: usize) -> Self {
        let per = std::mem::size_of::<Option<(u64, S)>>().max(1);
        let fit = (budget / per).clamp(16, 1 << 16);
        let n = 1usize << (usize::BITS - 1 - fit.leading_zeros()); // largest power of two <= fit
        StateCache {
            slots: (0..n).map(|_| None).collect(),
        }
    }

    fn slot(&self, key: u64) -> usize {
        // The low bits of a Zobrist key are as random as any.
        (key as usize) & (self.slots.len() - 1)
    }

    fn get(&self, key: u64) -> Option<&S> {
        match &self.slots[self.slot(key)] {
            Some((k, s)) if *k == key => Some(s),
            _ => None,
        }
    }

    fn put(&mut self, key: u64, state: S) {
        let i = self.slot(key);
        self.slots[i] = Some((key, state));
    }
}

/// Bytes of accumulator states each [`NetworkEvaluator`] keeps.
pub const STATE_CACHE_BYTES: usize = 32 << 20;

impl<N: Network> NetworkEvaluator<N> {
    pub fn new(net: Arc<N>) -> Self {
        NetworkEvaluator {
            net,
            cache: StateCache::with_budget(STATE_CACHE_BYTES),
            stats: CacheStats::default(),
        }
    }

    pub fn network(&self) -> &Arc<N> {
        &self.net
    }

    /// How the leaves evaluated so far got their accumulators.
    pub fn cache_stats(&self) -> CacheStats {
        self.stats
    }

    /// The accumulators of `pos`, from the cache, from its parent, or from scratch.
    fn state_for(&mut self, pos: &Position) -> N::State {
        let key = pos.key();
        if let Some(s) = self.cache.get(key) {
            self.stats.hits += 1;
            return s.clone();
        }
        let from_parent = match (pos.previous_key(), pos.last_move_effect()) {
            (Some(parent), Some(effect)) => self.cache.get(parent).map(|p| {
                let mut s = p.clone();
                self.net.update(&mut s, &effect, pos);
                s
            }),
            _ => None,
        };
        let state = match from_parent {
            Some(s) => {
                self.stats.from_parent += 1;
                s
            }
            None => {
                self.stats.refreshes += 1;
                self.net.new_state(pos)
            }
        };
        self.cache.put(key, state.clone());
        state
    }
}

impl<N: Network> Evaluator for NetworkEvaluator<N> {
    fn name(&self) -> String {
        self.net.describe()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        let states: Vec<N::State> = batch
            .iter()
            .map(|leaf| self.state_for(leaf.position))
            .collect();
        let items: Vec<StateLeaf<'_, N::State>> = batch
            .iter()
            .zip(&states)
            .map(|(&leaf, state)| StateLeaf { state, leaf })
            .collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::FixedNet;
    use crate::weights::{TensorSource, init};
    use manaka_shapes::Shape;

    /// Leaves built from a cached parent by an incremental update evaluate exactly as leaves
    /// refreshed from scratch (to f32 rounding), and the cache is actually used.
    #[test]
    fn cached_and_parent_updated_states_equal_refreshes() {
        let shape = Shape::parse("pair4_d16_o2_h32").unwrap();
        let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, 9));
        let net = Arc::new(
            FixedNet::<16, 2, 1, 4, 0, 0, 36, 72, 32, 0, 32>::new(&shape.to_string(), src).unwrap(),
        );
        let mut cached = NetworkEvaluator::new(net.clone());
        let mut x = 77u64;
        let mut pos = Position::startpos();
        for _ in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            // Evaluate the position, then its children (each from the cached position), then
            // move on as a search descends.
            cached.evaluate_one(&pos, &moves);
            for &m in moves.iter().take(12) {
                pos.do_move(m);
                let child_moves = pos.legal_moves();
                let got = cached.evaluate_one(&pos, &child_moves);
                let want = net.evaluate(
                    &net.new_state(&pos),
                    Leaf {
                        position: &pos,
                        moves: &child_moves,
                    },
                );
                assert!(
                    (got.value_logit - want.value_logit).abs()
                        <= 1e-5 * (1.0 + want.value_logit.abs())
                );
                for (a, b) in got.policy_logits.iter().zip(&want.policy_logits) {
                    assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()));
                }
                pos.undo_move(m);
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pos.do_move(moves[(x % moves.len() as u64) as usize]);
        }
        let s = cached.cache_stats();
        assert!(s.from_parent > 1000 && s.refreshes < 10, "{s:?}");
    }
}
