//! The network trait that compiled (`manaka_net!`) engines implement, and the adapter that
//! turns any of them into an [`Evaluator`] for the search.
//!
//! A [`Network`] owns its weights and exposes the incremental interface: a `State` of fixed
//! size holding both perspectives' accumulators, built by `refresh`, moved along a game by
//! `update` (token deltas, SPEC §3–4), and read by the head, one position at a time or a
//! whole batch at once (the batch shares one pass over W1).

use crate::eval::{Evaluation, Evaluator, EvaluatorFactory, Leaf};
use crate::random::SplitMix64;
use crate::search::cache::DirectMapped;
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
/// A leaf's accumulators are a function of its history alone, never of what was evaluated
/// before or by which evaluator (see [`ANCHOR_PLIES`]): they are those of the leaf's
/// *anchor* — the last history position whose ply is a multiple of [`ANCHOR_PLIES`], or the
/// position after a null move — built from scratch, carried forward by the token deltas of
/// the moves since, in order. f32 sums are not associative, so a state built along another
/// path (from another parent, a refresh, a transposition) differs in its last bits, and a
/// search that got one or the other depending on what a shared cache held would not be
/// reproducible (issue 16: self-play with several games or evaluator threads).
///
/// The cache only memoises that function. It is keyed by the *lineage*: the position keys
/// from the anchor to the leaf, hashed, so an entry is found only by a leaf with the same
/// history since the anchor, and its state is the one that leaf would build itself. A leaf
/// comes, cheapest first, from: its own entry; its parent's entry plus the last move's
/// delta (a search expands children of nodes it evaluated shortly before); the nearest
/// cached ancestor since the anchor, or the anchor refreshed, with the moves since replayed.
/// For shapes with a pair table an update reads about 80 table rows where a refresh reads
/// about 1,600, all cache misses; one leaf in [`ANCHOR_PLIES`] is an anchor and refreshed.
/// The heads then run as one batch, and a head's result does not depend on the batch.
pub struct NetworkEvaluator<N: Network> {
    net: Arc<N>,
    cache: StateCache<N::State>,
    stats: CacheStats,
}

/// How leaves got their accumulators (for benchmarks and logs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// The leaf (the same history since its anchor) was cached.
    pub hits: u64,
    /// Built from the cached parent by one incremental update.
    pub from_parent: u64,
    /// Refreshes from scratch: anchors, and the starting points of replays.
    pub refreshes: u64,
    /// Moves replayed from an older cached ancestor or the refreshed anchor because the
    /// parent was not cached.
    pub replayed: u64,
}

/// Plies between anchors: a leaf whose history length (plies since the position its
/// history starts from) is a multiple of this is built from scratch; any other is its
/// parent's state plus one update. Bounds the work for a leaf whose ancestors are not
/// cached (at most this many − 1 updates after one refresh) and the walk that hashes its
/// lineage, at the price of a refresh for one leaf in this many.
pub const ANCHOR_PLIES: usize = 32;

/// Lineage keys of the history positions from a leaf's anchor to the leaf: `keys[j]` hashes
/// the position keys of history positions `anchor ..= anchor + j`.
struct Lineage {
    keys: [u64; ANCHOR_PLIES],
    /// Positions from the anchor to the leaf, both included (1 when the leaf is an anchor).
    len: usize,
}

impl Lineage {
    fn of(pos: &Position) -> Lineage {
        let n = pos.history_len();
        let anchor = n - n % ANCHOR_PLIES;
        let mut keys = [0u64; ANCHOR_PLIES];
        let mut h = 0u64;
        for (j, k) in keys.iter_mut().enumerate().take(n - anchor + 1) {
            // `key_at` is `Some` for every ply up to `history_len`.
            h = SplitMix64::new(h ^ pos.key_at(anchor + j).unwrap_or_default()).next_u64();
            *k = h;
        }
        Lineage {
            keys,
            len: n - anchor + 1,
        }
    }

    fn leaf(&self) -> u64 {
        self.keys[self.len - 1]
    }
}

/// Accumulator states by lineage key, each checked against the leaf's position key too, in
/// the one direct-mapped table ([`DirectMapped`]: a new entry replaces whatever shared its
/// slot), with a fixed number of slots chosen from a byte budget.
struct StateCache<S> {
    table: DirectMapped<(u64, S)>,
}

impl<S: Clone> StateCache<S> {
    /// About `budget` bytes of states: a power of two between 16 and 65,536 slots.
    fn with_budget(budget: usize) -> Self {
        let per = std::mem::size_of::<Option<(u64, (u64, S))>>().max(1);
        StateCache {
            // Lineage keys are SplitMix64 outputs: their low bits, which choose the slot, are
            // as random as any.
            table: DirectMapped::with_slots((budget / per).clamp(16, 1 << 16)),
        }
    }

    fn get(&self, lineage: u64, key: u64) -> Option<&S> {
        match self.table.get(lineage) {
            Some((k, s)) if *k == key => Some(s),
            _ => None,
        }
    }

    fn put(&mut self, lineage: u64, key: u64, state: S) {
        self.table.insert(lineage, (key, state));
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

    /// The accumulators of `pos` as its history defines them (see the type's docs).
    fn state_for(&mut self, pos: &Position) -> N::State {
        let lineage = Lineage::of(pos);
        if let Some(s) = self.cache.get(lineage.leaf(), pos.key()) {
            self.stats.hits += 1;
            return s.clone();
        }
        let state = self.build(pos, &lineage);
        self.cache.put(lineage.leaf(), pos.key(), state.clone());
        state
    }

    /// Builds the state of a leaf that is not cached: refreshed if it is an anchor (or
    /// follows a null move), else its parent's plus one update, else the nearest cached
    /// ancestor's (or the anchor's, refreshed) with the moves since replayed, each
    /// intermediate state cached on the way.
    fn build(&mut self, pos: &Position, lineage: &Lineage) -> N::State {
        let leaf = lineage.len - 1;
        if leaf == 0 || pos.last_move().is_none() {
            self.stats.refreshes += 1;
            return self.net.new_state(pos);
        }
        if let (Some(parent), Some(effect)) = (pos.previous_key(), pos.last_move_effect())
            && let Some(p) = self.cache.get(lineage.keys[leaf - 1], parent)
        {
            let mut s = p.clone();
            self.net.update(&mut s, &effect, pos);
            self.stats.from_parent += 1;
            return s;
        }
        // Back to a cached ancestor or a point where the state starts from scratch.
        let mut p = pos.clone();
        let mut undone = Vec::with_capacity(leaf);
        let mut j = leaf;
        let mut state = loop {
            match p.last_move() {
                Some(m) if j > 0 => {
                    p.undo_move(m);
                    undone.push(m);
                    j -= 1;
                    if let Some(s) = self.cache.get(lineage.keys[j], p.key()) {
                        break s.clone();
                    }
                }
                // The anchor, or the position after a null move.
                _ => {
                    self.stats.refreshes += 1;
                    break self.net.new_state(&p);
                }
            }
        };
        // Forward again, in the order that defines the state.
        while let Some(m) = undone.pop() {
            let effect = p.do_move(m);
            self.net.update(&mut state, &effect, &p);
            self.stats.replayed += 1;
            j += 1;
            if j < leaf {
                self.cache.put(lineage.keys[j], p.key(), state.clone());
            }
        }
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
    use crate::compiled::{Affine, Dense, Head, Manaka, Native, Net, NoField, NoMoments};
    use crate::compiled::{Pairs, Policy, Powers, Relu, Value};
    use crate::weights::{TensorSource, init};
    use manaka_shapes::Shape;

    /// `pair4_d16_o2_h32`, as `manaka_net!` writes it.
    type Tiny = Net<
        Native,
        Manaka<Powers<16, 2, 1>, Pairs<4, 0>, NoMoments, NoField, false, 36, 72>,
        Head<Dense<Affine<72, 32>, Relu>, Value<32>, Policy<32, 0>>,
    >;

    fn tiny_net() -> Arc<Tiny> {
        let shape = Shape::parse("pair4_d16_o2_h32").unwrap();
        let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, 9));
        Arc::new(Tiny::new(&shape.to_string(), src).unwrap())
    }

    /// An evaluation's exact bits.
    fn bits(e: &Evaluation) -> (u32, Vec<u32>) {
        (
            e.value_logit.to_bits(),
            e.policy_logits.iter().map(|x| x.to_bits()).collect(),
        )
    }

    /// The positions along `moves` (USI) from the start position, then `plies` pseudo-random
    /// legal moves more (the same ones whatever the first moves were, while they are legal).
    fn line(moves: &[&str], plies: usize, seed: u64) -> Vec<Position> {
        let mut pos = Position::startpos();
        let mut out = vec![pos.clone()];
        for m in moves {
            pos.do_move(pos.parse_usi_move(m).unwrap());
            out.push(pos.clone());
        }
        let mut rng = crate::random::SplitMix64::new(seed);
        for _ in 0..plies {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            pos.do_move(legal[rng.below(legal.len() as u64) as usize]);
            out.push(pos.clone());
        }
        out
    }

    /// A leaf (a position with its history) evaluates to the same bits whatever the state
    /// cache holds and whichever evaluator of a threaded set gets it: alone on a fresh
    /// evaluator, along its game (each state from its parent's), after the same positions
    /// were reached through another move order (a transposition a shared cache would hand
    /// out), after unrelated games filled the cache, and split across two threads in
    /// another order. Self-play's reproducibility across `--parallel`, `--threads` and
    /// resumes rests on this (docs/data.md).
    #[test]
    fn a_leaf_evaluates_to_the_same_bits_whatever_the_cache_holds() {
        let net = tiny_net();
        let a = line(&["7g7f", "3c3d", "2g2f", "8c8d"], 44, 5);
        let b = line(&["2g2f", "8c8d", "7g7f", "3c3d"], 44, 5);
        assert_eq!(a[4].key(), b[4].key(), "the two openings transpose");
        assert_eq!(a.last().unwrap().key(), b.last().unwrap().key());
        let moves: Vec<_> = a.iter().map(|p| p.legal_moves()).collect();
        let alone: Vec<_> = a
            .iter()
            .zip(&moves)
            .map(|(p, m)| bits(&NetworkEvaluator::new(net.clone()).evaluate_one(p, m)))
            .collect();

        let mut along = NetworkEvaluator::new(net.clone());
        for (i, (p, m)) in a.iter().zip(&moves).enumerate() {
            assert_eq!(
                bits(&along.evaluate_one(p, m)),
                alone[i],
                "along the game, ply {i}"
            );
        }

        let mut crowded = NetworkEvaluator::new(net.clone());
        for seed in [1, 2, 3] {
            for p in line(&[], 60, seed) {
                crowded.evaluate_one(&p, &p.legal_moves());
            }
        }
        for p in &b {
            crowded.evaluate_one(p, &p.legal_moves());
        }
        for (i, (p, m)) in a.iter().zip(&moves).enumerate().rev() {
            assert_eq!(
                bits(&crowded.evaluate_one(p, m)),
                alone[i],
                "after a transposition and other games, ply {i}"
            );
        }

        // After a null move (the state starts from scratch there), alone and along.
        let mut after_null = vec![a[21].clone()];
        assert!(!after_null[0].in_check());
        after_null[0].do_null_move();
        for _ in 0..3 {
            let mut p = after_null.last().unwrap().clone();
            let m = p.legal_moves()[0];
            p.do_move(m);
            after_null.push(p);
        }
        let mut along = NetworkEvaluator::new(net.clone());
        for p in &after_null {
            let m = p.legal_moves();
            let fresh = NetworkEvaluator::new(net.clone()).evaluate_one(p, &m);
            assert_eq!(
                bits(&along.evaluate_one(p, &m)),
                bits(&fresh),
                "after a null move"
            );
        }

        let factory = NetworkFactory(net.clone());
        let mut threaded = crate::eval::ThreadedEvaluator::new(&factory, 2);
        let order: Vec<usize> = (0..a.len())
            .step_by(2)
            .chain((1..a.len()).step_by(2).rev())
            .collect();
        for chunk in [
            &order[..order.len() / 2],
            &order[order.len() / 2..],
            &order[..],
        ] {
            let leaves: Vec<Leaf<'_>> = chunk
                .iter()
                .map(|&i| Leaf {
                    position: &a[i],
                    moves: &moves[i],
                })
                .collect();
            let mut out = Vec::new();
            threaded.evaluate(&leaves, &mut out);
            for (&i, e) in chunk.iter().zip(&out) {
                assert_eq!(bits(e), alone[i], "two threads, ply {i}");
            }
        }
    }

    /// Leaves built from a cached parent by an incremental update evaluate exactly as leaves
    /// refreshed from scratch (to f32 rounding), and the cache is actually used.
    #[test]
    fn cached_and_parent_updated_states_equal_refreshes() {
        let net = tiny_net();
        let mut cached = NetworkEvaluator::new(net.clone());
        // Leaves at an anchor ply, which are refreshed by design.
        let mut anchors = 0;
        let mut rng = crate::random::SplitMix64::new(77);
        let mut pos = Position::startpos();
        for _ in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            // Evaluate the position, then its children (each from the cached position), then
            // move on as a search descends.
            cached.evaluate_one(&pos, &moves);
            anchors += u64::from(pos.history_len().is_multiple_of(ANCHOR_PLIES));
            for &m in moves.iter().take(12) {
                pos.do_move(m);
                anchors += u64::from(pos.history_len().is_multiple_of(ANCHOR_PLIES));
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
            pos.do_move(moves[rng.below(moves.len() as u64) as usize]);
        }
        let s = cached.cache_stats();
        assert!(
            s.from_parent > 1000 && s.refreshes <= anchors && s.replayed == 0,
            "{s:?}, {anchors} anchor leaves"
        );
    }
}
