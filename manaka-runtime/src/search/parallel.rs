//! The parallel search: several threads descend one shared tree, each with its own
//! evaluator, scratch board and batch (USI `Threads`; docs/search.md, "Threads").
//!
//! The tree sits behind one lock, held only for what must see the statistics: selecting a
//! path (and putting a virtual loss on it), and backing values up. Everything that costs
//! time per leaf runs outside it, on the thread's own board: playing the path, the leaf's
//! classification (repetition, legal moves, declaration, the leaf mate check) and the
//! network. One cycle of a thread is:
//!
//! 1. under the lock: back up the leaves its last batch evaluated (and every descent of
//!    another thread that reached one of them while it waited), then select up to a batch
//!    of new leaves, each a pending node with a virtual loss on its path;
//! 2. without it: classify the leaves, look them up in the evaluation cache (its own short
//!    lock), evaluate the rest in one evaluator call, store them in the cache.
//!
//! A descent that reaches a node another descent has queued waits for that evaluation (its
//! path is kept with the node, its virtual loss stays), as in the batched search; the
//! thread that owns the node backs every waiting path up. A full tree is recycled when no
//! descent is in flight (the threads stop selecting until then). With one thread the
//! search is not run here at all: `Threads 1` is the sequential or batched search,
//! bit for bit.
//!
//! lc0 keeps its tree behind a mutex in the same way (selection gathers a minibatch, the
//! network runs unlocked); dlshogi puts a lock in every node. What this costs at 16–64
//! cores is discussed, with the figures, in docs/search.md.

use super::batched::batch_width;
use super::cache::EvalCache;
use super::descent::{
    LeafClass, SearchState, Walk, classify_leaf, is_unusable, sanitized_logits, search_value,
};
use super::limits::SearchControl;
use super::result::Reporter;
use super::tree::{NodeId, NodeKind, Tree, priors};
use crate::eval::{Evaluation, Evaluator, Leaf};
use crate::shogi::{MAX_MOVES, Move, Position};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a thread that found nothing to do (every descent waiting on another thread's
/// leaves, or the tree full with descents in flight) sleeps before it looks again.
const IDLE: Duration = Duration::from_micros(20);

/// Counters of the parallel search, beside [`super::SearchStats`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParallelStats {
    /// Search threads.
    pub threads: u32,
    /// Time the threads held the tree's lock, summed over threads.
    pub locked: Duration,
    /// Time the threads waited for the lock, summed over threads.
    pub lock_wait: Duration,
    /// Cycles in which a thread found nothing to select and slept.
    pub idle_cycles: u64,
}

/// A leaf selected under the lock, to be classified and evaluated outside it.
struct NewLeaf {
    node: NodeId,
    path: Vec<NodeId>,
    moves: Vec<Move>,
}

/// What a thread learned about one of its leaves.
enum Verdict {
    Over {
        value: i8,
        plies: u16,
        leaf_mate: bool,
    },
    Evaluated {
        moves: Vec<Move>,
        value_logit: f32,
        logits: Vec<f32>,
        /// The softmax of `logits`, computed outside the lock.
        priors: Vec<f32>,
        cached: bool,
    },
}

struct Finished {
    node: NodeId,
    path: Vec<NodeId>,
    verdict: Verdict,
}

/// What the threads share under the tree's lock.
struct Inner<'s> {
    state: &'s mut SearchState,
    /// Descents waiting for a queued node's evaluation, by node.
    waiting: HashMap<NodeId, Vec<Vec<NodeId>>>,
    /// Descents selected but not backed up yet (new leaves and waiting ones).
    in_flight: u64,
    /// New leaves in flight: each may still need a node with [`MAX_MOVES`] edges.
    leaves_in_flight: u64,
    /// A selection found no room: no thread selects until the tree is recycled.
    tree_full: bool,
    /// Recycling freed nothing: the search is over.
    out_of_memory: bool,
    parallel: ParallelStats,
}

struct Shared<'s> {
    inner: Mutex<Inner<'s>>,
    cache: Mutex<EvalCache>,
    budget: u64,
    width: usize,
}

/// Runs the search on `evaluators.len()` threads (at least two; the calling thread is the
/// first and the only one that reports progress).
pub(crate) fn run(
    state: &mut SearchState,
    evaluators: &mut [&mut dyn Evaluator],
    budget: u64,
    control: &SearchControl,
    reporter: &mut Reporter<'_>,
) -> ParallelStats {
    let cache = std::mem::replace(&mut state.cache, EvalCache::new(0));
    let root = state.pos.clone();
    let config = state.config.clone();
    let width = batch_width(config.batch_size, budget);
    let shared = Shared {
        inner: Mutex::new(Inner {
            state,
            waiting: HashMap::new(),
            in_flight: 0,
            leaves_in_flight: 0,
            tree_full: false,
            out_of_memory: false,
            parallel: ParallelStats {
                threads: evaluators.len() as u32,
                ..ParallelStats::default()
            },
        }),
        cache: Mutex::new(cache),
        budget,
        width,
    };
    std::thread::scope(|scope| {
        let mut evaluators = evaluators.iter_mut();
        let first = evaluators.next().expect("at least one evaluator");
        for evaluator in evaluators {
            let (shared, root, config) = (&shared, root.clone(), &config);
            scope.spawn(move || worker(shared, &mut **evaluator, root, config, control, None));
        }
        worker(
            &shared,
            &mut **first,
            root,
            &config,
            control,
            Some(reporter),
        );
    });
    let inner = shared.inner.into_inner().unwrap_or_else(|e| e.into_inner());
    debug_assert_eq!(inner.in_flight, 0);
    inner.state.cache = shared.cache.into_inner().unwrap_or_else(|e| e.into_inner());
    inner.parallel
}

fn lock<'a, 's>(shared: &'a Shared<'s>, waited: &mut Duration) -> MutexGuard<'a, Inner<'s>> {
    let t = Instant::now();
    let g = shared.inner.lock().unwrap_or_else(|e| e.into_inner());
    *waited += t.elapsed();
    g
}

/// One search thread: alternates a locked phase (back up, select) and an unlocked one
/// (classify, evaluate) until the search is over.
fn worker(
    shared: &Shared<'_>,
    evaluator: &mut dyn Evaluator,
    root: Position,
    config: &super::SearchConfig,
    control: &SearchControl,
    mut reporter: Option<&mut Reporter<'_>>,
) {
    let mut leaves: Vec<NewLeaf> = Vec::with_capacity(shared.width);
    let mut finished: Vec<Finished> = Vec::with_capacity(shared.width);
    let (mut batches, mut evaluations, mut unusable) = (0u64, 0u64, 0u64);
    let (mut path, mut played) = (Vec::new(), Vec::new());
    let (mut held, mut waited) = (Duration::ZERO, Duration::ZERO);
    let mut out = Vec::with_capacity(shared.width);
    let mut boards = vec![root];
    loop {
        let mut g = lock(shared, &mut waited);
        let start = Instant::now();
        let inner = &mut *g;
        inner.state.stats.batches += std::mem::take(&mut batches);
        inner.state.stats.evaluations += std::mem::take(&mut evaluations);
        inner.state.stats.unusable_evaluations += std::mem::take(&mut unusable);
        finish(inner, &mut finished);
        if inner.tree_full && inner.in_flight == 0 {
            // Nothing in flight: no path holds a node id the recycling would change.
            inner.tree_full = !inner.state.recycle();
            inner.out_of_memory = inner.tree_full;
        }
        if let Some(r) = reporter.as_deref_mut() {
            r.tick(inner.state, control);
        }
        let state = &*inner.state;
        if inner.out_of_memory
            || state.root_done()
            || control.should_stop(state.stats.simulations, inner.in_flight, shared.budget)
        {
            held += start.elapsed();
            inner.parallel.locked += held;
            inner.parallel.lock_wait += waited;
            return;
        }
        if !inner.tree_full {
            select(inner, shared, control, &mut leaves, &mut path, &mut played);
        }
        let idle = leaves.is_empty();
        inner.parallel.idle_cycles += u64::from(idle);
        held += start.elapsed();
        drop(g);
        if idle {
            std::thread::sleep(IDLE);
            continue;
        }
        let (b, e, u) = evaluate(
            &mut boards,
            config,
            &shared.cache,
            evaluator,
            &mut leaves,
            &mut finished,
            &mut out,
        );
        (batches, evaluations, unusable) = (batches + b, evaluations + e, unusable + u);
    }
}

/// Selects up to a batch of new leaves (under the lock). Descents whose value is known are
/// backed up at once; descents reaching a queued node wait for it.
fn select(
    inner: &mut Inner<'_>,
    shared: &Shared<'_>,
    control: &SearchControl,
    leaves: &mut Vec<NewLeaf>,
    path: &mut Vec<NodeId>,
    played: &mut Vec<Move>,
) {
    for _ in 0..shared.width {
        let state = &mut *inner.state;
        if state.root_done()
            || control.should_stop(state.stats.simulations, inner.in_flight, shared.budget)
        {
            return;
        }
        match state.walk(path, played) {
            Walk::Known(v) => {
                state.back_up(path, v, false);
                state.stats.simulations += 1;
            }
            Walk::Queued { node } => {
                state.tree.add_pending(path);
                state.stats.collisions += 1;
                inner.in_flight += 1;
                inner.waiting.entry(node).or_default().push(path.clone());
            }
            Walk::Untried { parent, edge } => {
                // Room for this leaf and every one in flight, at the most edges a
                // position can have (their move counts are not known yet).
                let reserve = Tree::node_cost(MAX_MOVES) * (inner.leaves_in_flight as usize + 1);
                if state.tree.bytes_used() + reserve > state.config.max_tree_bytes {
                    inner.tree_full = true;
                    return;
                }
                let child = state.tree.add_node(NodeKind::Pending, 0.0);
                state.tree.set_child(parent, edge, child);
                path.push(child);
                state.note_depth(path);
                state.stats.new_nodes += 1;
                state.tree.add_pending(path);
                inner.in_flight += 1;
                inner.leaves_in_flight += 1;
                leaves.push(NewLeaf {
                    node: child,
                    path: path.clone(),
                    moves: played.clone(),
                });
            }
        }
    }
}

/// Stores what the last batch learned and backs it up (under the lock), with every
/// descent that waited for one of its leaves.
fn finish(inner: &mut Inner<'_>, finished: &mut Vec<Finished>) {
    let state = &mut *inner.state;
    for f in finished.drain(..) {
        let value = match f.verdict {
            Verdict::Over {
                value,
                plies,
                leaf_mate,
            } => {
                state.stats.leaf_mates += u64::from(leaf_mate);
                // The leaf's depth: its path holds the root too.
                match (value, state.draw_value_at(f.path.len() - 1)) {
                    (0, Some(d)) => state.tree.make_terminal(f.node, d as f32),
                    _ => state.tree.make_proven(f.node, value, plies),
                }
                f64::from(state.tree.node(f.node).raw_value)
            }
            Verdict::Evaluated {
                moves,
                value_logit,
                logits,
                priors,
                cached,
            } => {
                state.stats.cache_hits += u64::from(cached);
                let value = search_value(value_logit);
                state
                    .tree
                    .expand_with_priors(f.node, &moves, &logits, &priors, value);
                f64::from(value)
            }
        };
        state.back_up(&f.path, value, true);
        state.stats.simulations += 1;
        inner.in_flight -= 1;
        inner.leaves_in_flight -= 1;
        for p in inner.waiting.remove(&f.node).unwrap_or_default() {
            state.back_up(&p, value, true);
            state.stats.simulations += 1;
            inner.in_flight -= 1;
        }
    }
}

/// One position the evaluator is asked for.
struct Request {
    key: u64,
    /// The board (of the thread's boards) that shows it.
    board: usize,
    moves: Vec<Move>,
    /// The leaves of the batch holding this position (more than one for a transposition).
    leaves: Vec<usize>,
}

/// Classifies the batch's leaves on the thread's boards (`boards[i]` shows leaf `i` while
/// the batch is evaluated: no position is copied), answers what the cache knows and
/// evaluates the rest in one call (no tree lock held). Returns (evaluator calls,
/// positions evaluated, unusable evaluations).
fn evaluate(
    boards: &mut Vec<Position>,
    config: &super::SearchConfig,
    cache: &Mutex<EvalCache>,
    evaluator: &mut dyn Evaluator,
    leaves: &mut Vec<NewLeaf>,
    finished: &mut Vec<Finished>,
    out: &mut Vec<Evaluation>,
) -> (u64, u64, u64) {
    while boards.len() < leaves.len() {
        let root = boards[0].clone();
        boards.push(root);
    }
    let mut requests: Vec<Request> = Vec::new();
    // Per leaf: its verdict, once known.
    let mut verdicts: Vec<Option<Verdict>> = Vec::with_capacity(leaves.len());
    for (i, (leaf, pos)) in leaves.iter().zip(boards.iter_mut()).enumerate() {
        for &m in &leaf.moves {
            pos.do_move(m);
        }
        match classify_leaf(pos, config, leaf.path.len() - 1) {
            LeafClass::Over {
                value,
                plies,
                leaf_mate,
            } => verdicts.push(Some(Verdict::Over {
                value,
                plies,
                leaf_mate,
            })),
            LeafClass::Open { moves } => {
                verdicts.push(None);
                let key = pos.key();
                match requests
                    .iter_mut()
                    .find(|r| r.key == key && r.moves == moves)
                {
                    Some(r) => r.leaves.push(i),
                    None => requests.push(Request {
                        key,
                        board: i,
                        moves,
                        leaves: vec![i],
                    }),
                }
            }
        }
    }
    // (request, value logit, logits, from the cache)
    let mut answers: Vec<(usize, f32, Vec<f32>, bool)> = Vec::with_capacity(requests.len());
    // The requests the cache does not answer, for the evaluator.
    let mut missing: Vec<usize> = Vec::with_capacity(requests.len());
    if !requests.is_empty() {
        let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
        for (i, r) in requests.iter().enumerate() {
            match c.get(r.key, r.moves.len()) {
                Some((value_logit, logits)) => {
                    answers.push((i, value_logit, logits.to_vec(), true))
                }
                None => missing.push(i),
            }
        }
    }
    let (mut batches, mut evaluations, mut unusable) = (0, 0, 0);
    if !missing.is_empty() {
        let batch: Vec<Leaf<'_>> = missing
            .iter()
            .map(|&i| Leaf {
                position: &boards[requests[i].board],
                moves: &requests[i].moves,
            })
            .collect();
        evaluator.evaluate(&batch, out);
        (batches, evaluations) = (1, missing.len() as u64);
        let fallback = Evaluation::default();
        let evaluated = answers.len();
        for (k, &i) in missing.iter().enumerate() {
            unusable += u64::from(is_unusable(out.get(k), requests[i].moves.len()));
            let e = out.get(k).unwrap_or(&fallback);
            let logits = sanitized_logits(&e.policy_logits, requests[i].moves.len());
            answers.push((i, e.value_logit, logits, false));
        }
        let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
        for (i, value_logit, logits, _) in &answers[evaluated..] {
            c.insert(requests[*i].key, *value_logit, logits);
        }
    }
    for (i, value_logit, logits, cached) in answers {
        let r = &mut requests[i];
        let priors = priors(&logits, config.interior.prior_temperature());
        // The last leaf takes the vectors, the others (transpositions) copies.
        let (last, others) = r.leaves.split_last().expect("a request has a leaf");
        for &leaf in others {
            verdicts[leaf] = Some(Verdict::Evaluated {
                moves: r.moves.clone(),
                value_logit,
                logits: logits.clone(),
                priors: priors.clone(),
                cached,
            });
        }
        verdicts[*last] = Some(Verdict::Evaluated {
            moves: std::mem::take(&mut r.moves),
            value_logit,
            logits,
            priors,
            cached,
        });
    }
    // The boards show the root again.
    for (leaf, pos) in leaves.iter().zip(boards.iter_mut()) {
        for &m in leaf.moves.iter().rev() {
            pos.undo_move(m);
        }
    }
    for (leaf, verdict) in leaves.drain(..).zip(verdicts) {
        finished.push(Finished {
            node: leaf.node,
            path: leaf.path,
            verdict: verdict.expect("every leaf classified, found in the cache or evaluated"),
        });
    }
    (batches, evaluations, unusable)
}
