//! The search thread: one search, its `info` lines while it runs and at its end, and its
//! `bestmove` — held for `go infinite` and `go ponder` until `stop` or `ponderhit`, as the
//! protocol requires.

use super::game;
use super::info::{self, Output, Scoring};
use crate::eval::Evaluator;
use crate::mate::MateSolver;
use crate::search::{GumbelSearch, Outcome, Proof, SearchControl, SearchLimits, SearchResult};
use crate::shogi::{EnteringKingRule, Position};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The evaluators (one per `Threads`) and the search, owned by the engine between searches
/// and by the search thread during one.
pub(super) struct Worker {
    pub evaluators: Vec<Box<dyn Evaluator>>,
    pub search: GumbelSearch,
}

/// What a thread hands back when it ends.
pub(super) enum Finished {
    /// A search: its worker, or `None` when the search failed (the evaluator is rebuilt).
    /// Boxed: the search state is large, and only moves.
    Search(Option<Box<Worker>>),
    /// A `go mate` search: the solver, whose table is kept between searches.
    Mate(MateSolver),
}

/// What the protocol thread and a search thread share.
pub(super) struct Shared {
    pub control: SearchControl,
    /// The control of a ponder search's first phase, on the position before the expected
    /// move ([`SearchJob::ponder_parent`]): stopped by `ponderhit`, `stop` and the rest.
    pub opponent: SearchControl,
    /// False while `go infinite` / `go ponder` must hold its `bestmove`.
    pub released: Mutex<bool>,
    release_cv: Condvar,
    /// Set by `gameover` / `usinewgame`: end without printing `bestmove`.
    pub silent: AtomicBool,
    /// The hard time limit that applies from `ponderhit` on.
    pub ponder_hard: Option<Duration>,
    /// Set once the search thread has answered (or decided to stay silent): from then on
    /// the search is over for the protocol, even if the thread has not quite exited.
    pub answered: AtomicBool,
}

impl Shared {
    pub fn new(limits: &SearchLimits, held: bool, ponder_hard: Option<Duration>) -> Shared {
        let opponent = SearchControl::new(limits);
        opponent.set_stop_at_budget(false);
        opponent.set_time_limit(None);
        Shared {
            control: SearchControl::new(limits),
            opponent,
            released: Mutex::new(!held),
            release_cv: Condvar::new(),
            silent: AtomicBool::new(false),
            ponder_hard,
            answered: AtomicBool::new(false),
        }
    }

    /// Stops the search, both phases of a ponder search included.
    pub fn stop(&self) {
        self.opponent.stop();
        self.control.stop();
    }

    pub fn release(&self) {
        *self.released.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.release_cv.notify_all();
    }

    pub fn is_released(&self) -> bool {
        *self.released.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn wait_released(&self) {
        let mut r = self.released.lock().unwrap_or_else(|e| e.into_inner());
        while !*r {
            r = self.release_cv.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Everything a search thread needs besides the worker and the position.
pub(super) struct SearchJob {
    pub out: Output,
    pub shared: Arc<Shared>,
    /// Measured simulations per second, updated after the search.
    pub nps: Arc<Mutex<Option<f64>>>,
    pub limits: SearchLimits,
    pub with_ponder: bool,
    pub tree_bytes: usize,
    pub rule: Option<EnteringKingRule>,
    /// How scores are written (draw value, move limit, MultiPV).
    pub scoring: Scoring,
    /// `ResignValue`'s threshold in centipawns (`None`: never resign).
    pub resign_below_cp: Option<i32>,
    /// A single move allowed (never resigned on: game.rs).
    pub forced: bool,
    /// For `go ponder`: the position before the expected move. The search first runs
    /// there, from the opponent's side, until `ponderhit` or `stop`, so that whatever the
    /// opponent plays, its subtree is in the tree for the next search (docs/usi.md,
    /// "Pondering"); then it continues at the pondered position, reusing that subtree.
    pub ponder_parent: Option<Position>,
}

impl SearchJob {
    /// After a failed search: says so and still answers a legal move (the first legal one),
    /// or `resign` without one, unless silenced or already answered.
    pub fn fail(&self, position: &Position) {
        self.out
            .info_string("error: the search failed; answering the first legal move");
        self.shared.wait_released();
        let silent = self.shared.silent.load(Ordering::SeqCst);
        if self.shared.answered.swap(true, Ordering::SeqCst) || silent {
            return;
        }
        match position.legal_moves().first() {
            Some(m) => self.out.line(&format!("bestmove {}", m.to_usi())),
            None => self.out.line("bestmove resign"),
        }
    }

    fn hashfull(&self, r: &SearchResult) -> u32 {
        (r.stats.tree_bytes.saturating_mul(1000) / self.tree_bytes.max(1) as u64) as u32
    }

    fn print_info(&self, r: &SearchResult) {
        for l in info::info_lines(r, self.hashfull(r), &self.scoring) {
            self.out.line(&l);
        }
    }

    /// The first phase of a ponder search: the opponent's position, searched with the
    /// opponent's draw value and move limit, without `info` lines (they would speak for the
    /// wrong side), until the protocol thread stops [`Shared::opponent`].
    fn ponder_parent_phase(&self, worker: &mut Worker, parent: &Position) {
        let control = &self.shared.opponent;
        if control.is_stopped() {
            return;
        }
        self.out.info_string(
            "ponder: searching the position before the expected move until ponderhit or stop \
             (every reply keeps its subtree)",
        );
        let ours = worker.search.config().clone();
        let mut theirs = ours.clone();
        theirs.draw_value = -ours.draw_value;
        theirs.plies_to_draw = ours.plies_to_draw.map(|k| k + 1);
        theirs.max_depth = ours.max_depth.saturating_add(1);
        theirs.multipv = 1;
        theirs.root_interior = true;
        worker.search.set_config(theirs);
        let limits = SearchLimits {
            searchmoves: None,
            report_every: None,
            ..self.limits.clone()
        };
        worker.search.run_threads(
            parent,
            &mut worker.evaluators,
            &limits,
            control,
            &mut |_| {},
        );
        worker.search.set_config(ours);
    }

    pub fn run(&self, worker: &mut Worker, position: &Position) {
        if let Some(parent) = &self.ponder_parent {
            self.ponder_parent_phase(worker, parent);
            if self.shared.control.is_stopped() {
                // `stop` while pondering (the opponent played another move, or the game
                // ended): the GUI discards this bestmove, and the tree stays rooted before
                // the opponent's move, so that the next search finds the reply's subtree.
                self.shared.wait_released();
                let silent = self.shared.silent.load(Ordering::SeqCst);
                if !self.shared.answered.swap(true, Ordering::SeqCst) && !silent {
                    match position.legal_moves().first() {
                        Some(m) => self.out.line(&format!("bestmove {}", m.to_usi())),
                        None => self.out.line("bestmove resign"),
                    }
                }
                return;
            }
        }
        let out = &self.out;
        let mut progress = |snap: &SearchResult| self.print_info(snap);
        let r = worker.search.run_threads(
            position,
            &mut worker.evaluators,
            &self.limits,
            &self.shared.control,
            &mut progress,
        );
        match r.outcome {
            Outcome::NoLegalMoves => out.info_string("no legal moves: the side to move is mated"),
            Outcome::DeclareWin => {
                let rule = match self.rule {
                    Some(EnteringKingRule::Jsa24) => "JSA 24-point rule",
                    _ => "CSA 27-point rule",
                };
                out.info_string(&format!("entering-king declaration ({rule})"));
            }
            _ => {
                if r.stats.recycled > 0 {
                    // Once per search: the tree filled its share of USI_Hash and went on.
                    out.info_string(&format!(
                        "tree full (USI_Hash): recycled {} times, the {} least visited nodes dropped",
                        r.stats.recycled, r.stats.recycled_nodes
                    ));
                }
                if r.stats.unusable_evaluations > 0 {
                    // Never silent: a broken network or backend shows in the GUI's log.
                    out.info_string(&format!(
                        "warning: the evaluator returned {} unusable evaluations (missing, NaN \
                         or infinite, or the wrong number of logits); they were repaired \
                         (an even value, a flat or clamped policy)",
                        r.stats.unusable_evaluations
                    ));
                }
                out.info_string(&summary(&r));
                self.print_info(&r);
            }
        }
        // Speed for the next budget (simulations per second, smoothed).
        let secs = r.elapsed.as_secs_f64();
        // Not after pondering: the clock ran through the first phase, whose simulations
        // were another search's.
        if r.stats.simulations >= 32 && secs >= 0.002 && self.ponder_parent.is_none() {
            let now = r.stats.simulations as f64 / secs;
            let mut nps = self.nps.lock().unwrap_or_else(|e| e.into_inner());
            *nps = Some(nps.map_or(now, |old| 0.5 * old + 0.5 * now));
        }
        let resign = game::resignation(&r, self.resign_below_cp, self.forced, &self.scoring);
        // go infinite / go ponder: the bestmove waits for stop or ponderhit.
        self.shared.wait_released();
        // Marked answered before the line goes out: a GUI that reacts to the bestmove at
        // once finds the search over (the protocol thread then joins this thread, which
        // only has the write left to do).
        let silent = self.shared.silent.load(Ordering::SeqCst);
        self.shared.answered.store(true, Ordering::SeqCst);
        if !silent {
            match resign {
                Some(why) => {
                    out.info_string(&why);
                    out.line("bestmove resign");
                }
                None => out.line(&info::bestmove_line(
                    &r,
                    self.with_ponder.then_some(position),
                )),
            }
        }
    }
}

/// The `info string` summarising a search (docs/usi.md, "Info lines").
fn summary(r: &SearchResult) -> String {
    let top: Vec<String> = r
        .ranked_moves()
        .iter()
        .take(3)
        .map(|m| format!("{} {} {:.3}", m.mv.to_usi(), m.visits, m.improved_policy))
        .collect();
    let proven = match r.proof {
        Some(Proof::Win { plies }) => format!(" proven win in {plies}"),
        Some(Proof::Loss { plies }) => format!(" proven loss in {plies}"),
        Some(Proof::Draw) => " proven draw".to_string(),
        None => String::new(),
    };
    format!(
        "value {:.4} v_hat {:.4} evals {} batches {} cache_hits {} collisions {} new_nodes {} growth {:.3} leaf_mates {} reused_visits {} reused_nodes {} threads {}{proven} top {}",
        r.root_value,
        r.root_v_hat,
        r.stats.evaluations,
        r.stats.batches,
        r.stats.cache_hits,
        r.stats.collisions,
        r.stats.new_nodes,
        r.growth(),
        r.stats.leaf_mates,
        r.stats.reused_visits,
        r.stats.reused_nodes,
        r.stats.parallel.threads.max(1),
        top.join(", ")
    )
}
