//! Gumbel AlphaZero search (Danihelka et al., ICLR 2022), cross-checked against DeepMind's
//! mctx; SPEC §8 fixes the conventions and ../shared/seeds/gumbel-search-design.txt the design.
//!
//! The search sees networks only through [`Evaluator`]: a batch of leaves (position, legal
//! moves) in, a value logit and one logit per legal move out. It knows nothing of shapes or
//! devices.
//!
//! ```
//! use manaka_runtime::eval::MaterialEvaluator;
//! use manaka_runtime::search::{GumbelSearch, SearchConfig, SearchLimits};
//! use manaka_runtime::shogi::Position;
//!
//! let position = Position::from_sfen("startpos").unwrap();
//! let mut search = GumbelSearch::new(SearchConfig::default());
//! let result = search.run(&position, &mut MaterialEvaluator, &SearchLimits::simulations(64));
//! let best = result.best_move.unwrap();
//! assert!(position.is_legal(best));
//! println!("{} {} cp, pv {:?}", best.to_usi(), result.score_cp(), result.pv);
//! ```
//!
//! Code map (the seed's): [`gumbel`] σ, completed Q, selection rules; [`halving`] the
//! Sequential Halving schedule; [`tree`] nodes, edges, backup, subtree copies (tree reuse,
//! recycling); `sequential.rs` one leaf at a time; `batched.rs` batched descents with virtual
//! loss; `parallel.rs` several threads on one tree (USI `Threads`); [`result`] the read-out (PV, MultiPV lines). Beside them: `descent.rs` (the descent
//! both drivers share, the interior rule — PUCT for play, mctx's for self-play —, the leaf mate
//! check, tree reuse and recycling), [`proof`] (proven bounds: score-bounded MCTS),
//! [`limits`] (budget, clock, stop, `searchmoves`), [`cache`] (evaluations by position key),
//! [`bench`](mod@bench) (throughput for `manaka bench`). The root mate search calls [`crate::mate`].
//!
//! Exact rules, before and around the network: at the root, no legal move is a loss
//! (`NoLegalMoves`), a possible entering-king declaration wins (`DeclareWin`, under
//! [`SearchConfig::entering_king`]), a mate in one is returned without any inference
//! (`MateInOne`), and so is a mate the root mate search finds (`MateFound`). In the tree: no legal move is −1 for the side to move, repetition is judged
//! against the game history the root position carries plus the path
//! ([`Position::repetition`]), a declaration is a win, and a depth cap bounds every descent.

pub mod batched;
pub mod bench;
pub mod cache;
mod config;
mod descent;
pub mod gumbel;
pub mod halving;
pub mod limits;
mod parallel;
pub mod proof;
pub mod puct;
pub mod result;
mod sequential;
pub mod tree;

#[cfg(test)]
mod mctx_parity;
#[cfg(test)]
mod mctx_vectors;
#[cfg(test)]
mod parallel_tests;
#[cfg(test)]
pub(crate) mod solver_tests;
#[cfg(test)]
mod tests;

pub use config::{InteriorRule, RootNoise, SearchConfig};
pub use descent::SearchStats;
pub use gumbel::QTransform;
pub use halving::SequentialHalving;
pub use limits::{SearchControl, SearchLimits};
pub use parallel::ParallelStats;
pub use proof::Proof;
pub use result::{Outcome, PvLine, RootMove, SearchResult, cp_from_value};

use crate::eval::material::PIECE_VALUES;
use crate::eval::{Evaluation, Evaluator, Leaf};
use crate::mate::{MateLimits, MateOutcome, MateSolver};
use crate::shogi::Position;
use cache::EvalCache;
use descent::{RootMark, SearchState};
use result::Reporter;
use std::sync::atomic::{AtomicU64, Ordering};
use tree::{NodeKind, ROOT};

/// Which loop drives the descents (tests compare the two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Driver {
    Sequential,
    Batched,
    /// One thread per evaluator on one tree.
    Parallel,
}

/// A reusable Gumbel search: keeps its tree memory and evaluation cache between searches.
pub struct GumbelSearch {
    state: SearchState,
}

impl GumbelSearch {
    pub fn new(config: SearchConfig) -> GumbelSearch {
        GumbelSearch {
            state: SearchState::new(config),
        }
    }

    pub fn config(&self) -> &SearchConfig {
        &self.state.config
    }

    /// Changes the settings; the evaluation cache is rebuilt only if its size changed.
    pub fn set_config(&mut self, config: SearchConfig) {
        if config.cache_entries != self.state.config.cache_entries {
            self.state.cache = EvalCache::new(config.cache_entries);
        }
        // The tree's edges hold priors computed at the old temperature: a kept subtree
        // would mix two priors (USI `setoption PolicyTemperature` between moves).
        if config.interior.prior_temperature() != self.state.config.interior.prior_temperature() {
            self.clear_tree();
        }
        self.state.q_transform = config.q_transform;
        self.state.config = config;
    }

    /// Forgets cached evaluations, the tree and the root mate search's table (a new network,
    /// or a self-play game: what a search finds must not depend on the games searched before
    /// it, or self-play's games would depend on which thread played them — docs/data.md,
    /// "Reproducibility").
    pub fn clear_cache(&mut self) {
        self.state.cache.clear();
        if let Some(mate) = self.state.mate.as_mut() {
            mate.clear();
        }
        self.clear_tree();
    }

    /// Forgets the tree, so the next search starts clean instead of reusing the subtree of
    /// its position (a new game: USI `usinewgame`).
    pub fn clear_tree(&mut self) {
        self.state.tree.clear();
        self.state.root_mark = None;
    }

    /// Searches `position` within `limits`.
    pub fn run(
        &mut self,
        position: &Position,
        evaluator: &mut dyn Evaluator,
        limits: &SearchLimits,
    ) -> SearchResult {
        let control = SearchControl::new(limits);
        self.run_with(position, evaluator, limits, &control, &mut |_| {})
    }

    /// Searches `position`, polling `control` (stop, deadline, budget rule: another thread
    /// may change them) and calling `progress` with a snapshot every
    /// [`SearchLimits::report_every`].
    pub fn run_with(
        &mut self,
        position: &Position,
        evaluator: &mut dyn Evaluator,
        limits: &SearchLimits,
        control: &SearchControl,
        progress: &mut dyn FnMut(&SearchResult),
    ) -> SearchResult {
        let driver = if self.state.config.batch_size > 1 {
            Driver::Batched
        } else {
            Driver::Sequential
        };
        self.run_driver(
            position,
            &mut [evaluator],
            limits,
            control,
            progress,
            driver,
        )
    }

    /// Searches `position` with one thread per evaluator, all on one tree (USI `Threads`;
    /// `parallel.rs`, docs/search.md "Threads"). Each thread evaluates batches of
    /// [`SearchConfig::batch_size`] leaves. With one evaluator this is [`Self::run_with`],
    /// bit for bit; with more the search is no longer deterministic (which thread backs up
    /// first depends on timing).
    pub fn run_threads(
        &mut self,
        position: &Position,
        evaluators: &mut [Box<dyn Evaluator>],
        limits: &SearchLimits,
        control: &SearchControl,
        progress: &mut dyn FnMut(&SearchResult),
    ) -> SearchResult {
        let mut refs: Vec<&mut dyn Evaluator> = evaluators
            .iter_mut()
            .map(|e| &mut **e as &mut dyn Evaluator)
            .collect();
        match refs.as_mut_slice() {
            [] => panic!("run_threads needs at least one evaluator"),
            [one] => self.run_with(position, *one, limits, control, progress),
            many => self.run_driver(position, many, limits, control, progress, Driver::Parallel),
        }
    }

    pub(crate) fn run_driver(
        &mut self,
        position: &Position,
        evaluators: &mut [&mut dyn Evaluator],
        limits: &SearchLimits,
        control: &SearchControl,
        progress: &mut dyn FnMut(&SearchResult),
        driver: Driver,
    ) -> SearchResult {
        let state = &mut self.state;
        state.stats = SearchStats::default();
        let legal = position.legal_moves();
        // `searchmoves`: the legal moves among them (all legal moves when none is legal).
        let moves: Vec<crate::shogi::Move> = match &limits.searchmoves {
            Some(only) if legal.iter().any(|m| only.contains(m)) => {
                legal.iter().copied().filter(|m| only.contains(m)).collect()
            }
            _ => legal.clone(),
        };
        // The exact root decisions look at every legal move: with a restriction they are
        // left to the tree, which still proves what it finds among the moves allowed.
        if moves.len() == legal.len() {
            if let Some(r) = exact_outcome(position, &moves, &state.config, control) {
                return r;
            }
            if let Some(r) = root_mate(state, position, &moves, control) {
                return r;
            }
        }

        state.pos = position.clone();
        let restricted = moves.len() < legal.len();
        let reused = state.config.reuse_tree && !restricted && state.reroot(position);
        state.root_mark = Some(RootMark::of(position, restricted, &state.config));
        if reused {
            // The subtree of this position, with its statistics (docs/search.md, "Tree
            // reuse"); noise and the schedule start afresh below.
            state.stats.reused_visits = u64::from(state.tree.node(ROOT).visits);
            state.stats.reused_nodes = state.tree.len() as u64;
        } else {
            // The root: one evaluation of every legal move (or a cached one), counted as
            // the root's first visit; its edges are the moves searched.
            state.tree.clear();
            let root = state.tree.add_node(NodeKind::Pending, 0.0);
            let (value, all_logits) = root_evaluation(state, position, &legal, &mut *evaluators[0]);
            let logits: Vec<f32> = legal
                .iter()
                .zip(&all_logits)
                .filter(|(m, _)| moves.contains(m))
                .map(|(_, &l)| l)
                .collect();
            state.expand_node(root, &moves, &logits, value);
            state.tree.backup(&[ROOT], f64::from(value), false);
            state.stats.new_nodes = 1;
        }
        state.root_baseline = state
            .tree
            .edges(ROOT)
            .iter()
            .map(|e| state.tree.edge_visits(e))
            .collect();
        state.root_prior.clear();
        state.tie_break = tie_break_keys(position, &moves);
        state.noise = match &state.config.noise {
            RootNoise::Sampled { scale, seed } => {
                gumbel::gumbel_noise(moves.len(), *scale, seed.unwrap_or_else(fresh_seed))
            }
            RootNoise::Fixed(g) => (0..moves.len())
                .map(|i| g.get(i).copied().unwrap_or(0.0))
                .collect(),
        };
        let considered = state.config.max_considered.min(moves.len() as u32);
        state.schedule = SequentialHalving::new(considered, limits.simulations.max(1));

        let mut reporter = Reporter::new(limits.report_every, progress);
        let outcome = if state.config.policy_only {
            // No simulation: the read-out then picks argmax(g + logit) and π' = prior.
            Outcome::PolicyOnly
        } else {
            let budget = u64::from(limits.simulations.max(1));
            match driver {
                Driver::Sequential => {
                    sequential::run(state, &mut *evaluators[0], budget, control, &mut reporter)
                }
                Driver::Batched => {
                    batched::run(state, &mut *evaluators[0], budget, control, &mut reporter)
                }
                Driver::Parallel => {
                    state.stats.parallel =
                        parallel::run(state, evaluators, budget, control, &mut reporter);
                }
            }
            Outcome::Searched
        };
        result::read(state, outcome, control.elapsed())
    }
}

/// The root's search value and one logit per legal move, from the evaluation cache or one
/// evaluator call (then cached, like every evaluation).
fn root_evaluation(
    state: &mut SearchState,
    position: &Position,
    legal: &[crate::shogi::Move],
    evaluator: &mut dyn Evaluator,
) -> (f32, Vec<f32>) {
    let key = position.key();
    if let Some((value_logit, logits)) = state.cache.get(key, legal.len()) {
        state.stats.cache_hits += 1;
        return (descent::search_value(value_logit), logits.to_vec());
    }
    let mut out = Vec::with_capacity(1);
    evaluator.evaluate(
        &[Leaf {
            position,
            moves: legal,
        }],
        &mut out,
    );
    state.stats.batches += 1;
    state.stats.evaluations += 1;
    let fallback = Evaluation::default();
    state.stats.unusable_evaluations += u64::from(descent::is_unusable(out.first(), legal.len()));
    let evaluation = out.first().unwrap_or(&fallback);
    let logits = descent::sanitized_logits(&evaluation.policy_logits, legal.len());
    state.cache.insert(key, evaluation.value_logit, &logits);
    (descent::search_value(evaluation.value_logit), logits)
}

/// The answer of a search decided without the tree: every root move listed, `pv[0]` (if
/// any) played with the whole improved policy, `proof` the root's exact outcome.
fn exact_result(
    outcome: Outcome,
    moves: &[crate::shogi::Move],
    pv: Vec<crate::shogi::Move>,
    proof: Proof,
    stats: SearchStats,
    control: &SearchControl,
) -> SearchResult {
    let value = proof.value();
    let best_move = pv.first().copied();
    let root_moves = moves
        .iter()
        .map(|&mv| RootMove {
            mv,
            visits: 0,
            logit: 0.0,
            prior: 1.0 / moves.len() as f64,
            q: None,
            completed_q: if Some(mv) == best_move { value } else { 0.0 },
            sigma_q: 0.0,
            improved_policy: if Some(mv) == best_move { 1.0 } else { 0.0 },
            gumbel: 0.0,
        })
        .collect();
    SearchResult {
        outcome,
        best_move,
        root_value: value,
        root_v_hat: value,
        pv,
        proof: Some(proof),
        lines: Vec::new(),
        root_moves,
        stats,
        elapsed: control.elapsed(),
    }
}

/// The root decisions taken before any inference.
fn exact_outcome(
    position: &Position,
    moves: &[crate::shogi::Move],
    config: &SearchConfig,
    control: &SearchControl,
) -> Option<SearchResult> {
    let exact = |outcome, pv: Vec<crate::shogi::Move>, proof| {
        Some(exact_result(
            outcome,
            moves,
            pv,
            proof,
            SearchStats::default(),
            control,
        ))
    };
    if moves.is_empty() {
        return exact(Outcome::NoLegalMoves, Vec::new(), Proof::Loss { plies: 0 });
    }
    if config
        .entering_king
        .is_some_and(|r| position.can_declare_win(r))
    {
        return exact(Outcome::DeclareWin, Vec::new(), Proof::Win { plies: 1 });
    }
    if let Some(m) = position.mate_in_one() {
        return exact(Outcome::MateInOne, vec![m], Proof::Win { plies: 1 });
    }
    None
}

/// The root mate search (df-pn) before the tree search, within
/// [`SearchConfig::root_mate_nodes`] nodes and [`config::ROOT_MATE_SHARE`] of the time
/// limit: a mate found is the answer, with the whole mate as its PV.
fn root_mate(
    state: &mut SearchState,
    position: &Position,
    moves: &[crate::shogi::Move],
    control: &SearchControl,
) -> Option<SearchResult> {
    let config = &state.config;
    if config.root_mate_nodes == 0 || config.policy_only {
        return None;
    }
    let limits = MateLimits {
        max_nodes: Some(config.root_mate_nodes),
        time: control
            .time_limit()
            .map(|t| t.mul_f64(config::ROOT_MATE_SHARE)),
        max_plies: None,
    };
    let bytes = config.mate_table_bytes;
    if state.mate.as_ref().is_none_or(|m| m.table_bytes() > bytes) {
        state.mate = Some(MateSolver::new(bytes));
    }
    let solver = state.mate.as_mut().expect("created above");
    let r = solver.search(position, &limits, control.stop_flag());
    state.stats.mate_nodes = r.nodes;
    let MateOutcome::Mate(line) = r.outcome else {
        return None;
    };
    let plies = line.len() as u16;
    let stats = SearchStats {
        mate_nodes: r.nodes,
        ..SearchStats::default()
    };
    Some(exact_result(
        Outcome::MateFound,
        moves,
        line,
        Proof::Win { plies },
        stats,
        control,
    ))
}

/// The key that breaks exact ties between root scores — with a policy that does not tell
/// the moves apart (the material evaluator, an imported nn.bin without a policy) every
/// unvisited move scores the same, and generation order alone would pick the moves
/// Sequential Halving considers. Larger first: captures by the captured piece's value, then
/// checks, then promotions (docs/search.md, "Flat priors").
fn tie_break_keys(position: &Position, moves: &[crate::shogi::Move]) -> Vec<u32> {
    let mut after = position.clone();
    moves
        .iter()
        .map(|&mv| {
            let captured = position
                .piece_at(mv.to())
                .map_or(0, |p| PIECE_VALUES[p.kind.index()].max(1) as u32);
            after.do_move(mv);
            let check = after.in_check();
            after.undo_move(mv);
            captured * 4 + u32::from(check) * 2 + u32::from(mv.is_promotion())
        })
        .collect()
}

/// A seed for searches that asked for fresh noise: a counter mixed with the clock.
fn fresh_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::random::SplitMix64::new(t ^ n.rotate_left(32)).next_u64()
}
