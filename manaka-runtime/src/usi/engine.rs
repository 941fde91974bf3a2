//! The engine's protocol state machine: options, the position, the network, and the search
//! running in its own thread.
//!
//! The protocol thread never blocks on a search: `stop`, `ponderhit`, `isready`, `gameover`
//! and `quit` are handled while one runs. The search thread owns the evaluator and the search
//! (they travel into the thread and back), prints `info` while it runs and `bestmove` when it
//! ends — for `go infinite` and `go ponder` only after `stop` or `ponderhit`, as the protocol
//! requires.

use super::command::{self, Command, GoParams, MateTime};
use super::info::{self, Output};
use super::network::{self, LoadError, LoadedNetwork};
use super::options::{Backend, EngineOptions};
use super::time;
use crate::eval::{Evaluator, MaterialEvaluator, ThreadedEvaluator};
use crate::mate::{MateLimits, MateOutcome, MateSolver};
use crate::search::{GumbelSearch, Outcome, Proof, SearchControl, SearchLimits, SearchResult};
use crate::shogi::{Color, EnteringKingRule, Position};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Loads the network for an `EvalFile` value (see [`network::resolve`]).
pub type Loader = Box<dyn Fn(&str) -> Result<LoadedNetwork, LoadError> + Send>;

/// The budget when nothing else sets one: no `Simulations`, no clock, speed unknown.
pub const DEFAULT_SIMULATIONS: u32 = 800;
/// The smallest budget the clock may set (`Simulations 0`).
pub const MIN_AUTO_SIMULATIONS: u32 = 8;
/// The largest budget the clock may set.
pub const MAX_AUTO_SIMULATIONS: u32 = 50_000_000;
/// `go infinite` with `Simulations 0` lays its schedule out for this much search time at the
/// measured speed (after it, the last two candidates keep being refined).
pub const INFINITE_SCHEDULE: Duration = Duration::from_secs(10);
/// A move with a single legal reply spends at most this many simulations (for a score).
pub const FORCED_MOVE_SIMULATIONS: u32 = 8;
/// How often a running search prints `info`.
pub const INFO_EVERY: Duration = Duration::from_millis(1000);

struct Worker {
    evaluator: Box<dyn Evaluator>,
    search: GumbelSearch,
    /// The `go mate` solver, created at its first use (its table is kept between searches).
    mate: Option<MateSolver>,
}

/// What the protocol thread and a search thread share.
struct Shared {
    control: SearchControl,
    /// False while `go infinite` / `go ponder` must hold its `bestmove`.
    released: Mutex<bool>,
    release_cv: Condvar,
    /// Set by `gameover` / `usinewgame`: end without printing `bestmove`.
    silent: AtomicBool,
    /// The hard time limit that applies from `ponderhit` on.
    ponder_hard: Option<Duration>,
    /// Set once the search thread has answered (or decided to stay silent): from then on
    /// the search is over for the protocol, even if the thread has not quite exited.
    answered: AtomicBool,
}

impl Shared {
    fn release(&self) {
        *self.released.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.release_cv.notify_all();
    }

    fn wait_released(&self) {
        let mut r = self.released.lock().unwrap_or_else(|e| e.into_inner());
        while !*r {
            r = self.release_cv.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }
}

struct Running {
    /// The worker comes back unless the search failed.
    handle: JoinHandle<Option<Worker>>,
    shared: Arc<Shared>,
}

/// The network in use and what it was loaded for.
struct Net {
    network: LoadedNetwork,
    eval_file: String,
    backend: Backend,
    threads: usize,
}

pub struct Engine {
    out: Output,
    options: EngineOptions,
    loader: Loader,
    /// Loads `Backend integer` networks (the integer engines of `nnue` shapes), if this
    /// engine has any.
    integer: Option<Loader>,
    net: Option<Net>,
    /// The evaluator and search while no search runs.
    worker: Option<Worker>,
    running: Option<Running>,
    /// The position of the last `position` command, or why it was refused.
    position: Result<Position, String>,
    /// Measured simulations per second (for `Simulations 0`).
    nps: Arc<Mutex<Option<f64>>>,
}

impl Engine {
    pub fn new(output: Output, loader: Loader) -> Engine {
        Engine {
            out: output,
            options: EngineOptions::default(),
            loader,
            integer: None,
            net: None,
            worker: None,
            running: None,
            position: Ok(Position::startpos()),
            nps: Arc::new(Mutex::new(None)),
        }
    }

    /// Gives `Backend integer` a loader (see [`network::resolve_integer`]).
    pub fn with_integer_loader(mut self, integer: Loader) -> Engine {
        self.integer = Some(integer);
        self
    }

    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// Handles one input line; `false` after `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        self.reap();
        let cmd = match command::parse(line) {
            Ok(c) => c,
            Err(e) if line.split_whitespace().next() == Some("position") => {
                // A position the GUI meant but we could not read: never go on playing the
                // previous one (a move of it may be illegal in the GUI's position).
                self.refuse_position(e);
                return true;
            }
            Err(e) => {
                self.out.info_string(&format!("error: {e}"));
                return true;
            }
        };
        match cmd {
            Command::Empty => {}
            Command::Usi => {
                self.out
                    .line(&format!("id name Manaka {}", env!("CARGO_PKG_VERSION")));
                self.out.line("id author the Manaka developers");
                for l in self.options.usi_lines() {
                    self.out.line(&l);
                }
                self.out.line("usiok");
            }
            Command::IsReady => {
                // Weights are loaded here, not at start-up; a running search (pondering)
                // keeps its evaluator and the answer is immediate.
                if self.running.is_none() {
                    self.ensure_network();
                }
                self.out.line("readyok");
            }
            Command::SetOption { name, value } => {
                if let Err(e) = self.options.set(&name, &value) {
                    self.out.info_string(&format!("error: {e}"));
                }
            }
            Command::UsiNewGame => self.finish_search(true),
            Command::Position { sfen, moves } => self.set_position(&sfen, &moves),
            Command::Go(go) => self.go(&go),
            Command::Stop => {
                if let Some(r) = &self.running {
                    r.shared.control.stop();
                    r.shared.release();
                }
            }
            Command::PonderHit => {
                if let Some(r) = &self.running {
                    // The opponent played the expected move: from now on this is our own
                    // clock's search, with its hard limit and its budget final.
                    let s = &r.shared;
                    if let Some(hard) = s.ponder_hard {
                        s.control.set_time_limit(Some(s.control.elapsed() + hard));
                    }
                    s.control.set_stop_at_budget(true);
                    s.release();
                }
            }
            Command::GameOver(_) => self.finish_search(true),
            Command::Quit => {
                self.finish_search(false);
                return false;
            }
        }
        true
    }

    /// The end of input: a search with a budget or a clock finishes (so piped command
    /// files get their `bestmove`); one waiting for `stop` (`go infinite`, `go ponder`) is
    /// stopped.
    pub fn end_of_input(&mut self) {
        if let Some(r) = &self.running {
            let held = !*r.shared.released.lock().unwrap_or_else(|e| e.into_inner());
            if held
                || r.shared.control.time_limit().is_none() && !r.shared.control.stops_at_budget()
            {
                r.shared.control.stop();
                r.shared.release();
            }
        }
        self.join();
    }

    /// Joins a search thread that has answered (it is exiting).
    fn reap(&mut self) {
        if self
            .running
            .as_ref()
            .is_some_and(|r| r.shared.answered.load(Ordering::SeqCst))
        {
            self.join();
        }
    }

    fn join(&mut self) {
        if let Some(r) = self.running.take() {
            match r.handle.join() {
                Ok(Some(w)) => self.worker = Some(w),
                _ => {
                    // The search failed (it answered already): rebuild the evaluator.
                    self.net = None;
                    self.worker = None;
                }
            }
        }
    }

    /// Stops a running search and waits for it; `silent` suppresses its `bestmove`.
    fn finish_search(&mut self, silent: bool) {
        if let Some(r) = &self.running {
            if silent {
                r.shared.silent.store(true, Ordering::SeqCst);
            }
            r.shared.control.stop();
            r.shared.release();
        }
        self.join();
    }

    fn set_position(&mut self, sfen: &str, moves: &[String]) {
        self.position = Position::from_sfen(sfen)
            .map_err(|e| format!("bad SFEN '{sfen}': {e}"))
            .and_then(|mut p| {
                for (i, m) in moves.iter().enumerate() {
                    let mv = p
                        .parse_usi_move(m)
                        .map_err(|e| format!("move {} of the list: {e}", i + 1))?;
                    p.do_move(mv);
                }
                Ok(p)
            });
        if let Err(e) = self.position.clone() {
            self.refuse_position(e);
        }
    }

    /// Forgets the position: until a valid `position` arrives, `go` answers `bestmove
    /// resign` (docs/usi.md).
    fn refuse_position(&mut self, why: String) {
        self.out.info_string(&format!(
            "error: position refused: {why}; 'go' answers 'bestmove resign' until a valid position is set"
        ));
        self.position = Err(why);
    }

    /// Loads the network if `EvalFile`, `Backend` or `Threads` changed (or nothing is loaded
    /// yet) and makes sure an evaluator and a search exist.
    fn ensure_network(&mut self) {
        let eval_file = self.options.eval_file.clone();
        let backend = self.options.backend;
        let threads = self.options.threads;
        let fresh = self
            .net
            .as_ref()
            .is_none_or(|n| n.eval_file != eval_file || n.backend != backend);
        if fresh {
            let loaded = match (&self.integer, backend) {
                (Some(integer), Backend::Integer) => integer(&eval_file),
                _ => network::resolve_backend(&eval_file, backend, &*self.loader),
            };
            let network = match loaded {
                Ok(n) => n,
                Err(e) => {
                    self.out.info_string(&format!(
                        "error: EvalFile '{eval_file}' could not be loaded: {e}"
                    ));
                    match (self.loader)("") {
                        Ok(n) => n,
                        Err(e) => {
                            self.out.info_string(&format!(
                                "error: the default network failed too: {e}"
                            ));
                            LoadedNetwork {
                                factory: MaterialEvaluator::factory(),
                                description: "fallback: built-in material evaluator".to_string(),
                            }
                        }
                    }
                }
            };
            self.out.info_string(&network.description);
            self.net = Some(Net {
                network,
                eval_file,
                backend,
                threads: 0,
            });
        }
        let net = self.net.as_mut().expect("loaded above");
        if fresh || net.threads != threads || self.worker.is_none() {
            let factory = net.network.factory.as_ref();
            let evaluator: Box<dyn Evaluator> = if threads > 1 {
                Box::new(ThreadedEvaluator::new(factory, threads))
            } else {
                factory.create()
            };
            net.threads = threads;
            let (search, mate) = match self.worker.take() {
                Some(w) => (Some(w.search), w.mate),
                None => (None, None),
            };
            let mut search =
                search.unwrap_or_else(|| GumbelSearch::new(self.options.search_config()));
            if fresh {
                search.clear_cache();
            }
            self.worker = Some(Worker {
                evaluator,
                search,
                mate,
            });
        }
    }

    fn go(&mut self, go: &GoParams) {
        if let Some(time) = go.mate {
            self.go_mate(time);
            return;
        }
        if self.running.is_some() {
            self.out
                .info_string("error: go during a search; stopping the previous search first");
            self.finish_search(false);
        }
        let position = match &self.position {
            Ok(p) => p.clone(),
            Err(e) => {
                self.out
                    .info_string(&format!("error: no valid position ({e})"));
                self.out.line("bestmove resign");
                return;
            }
        };
        self.ensure_network();
        let mut worker = self
            .worker
            .take()
            .expect("ensure_network provides a worker");
        let mut config = self.options.search_config();
        if let Some(d) = go.depth {
            config.max_depth = d.clamp(1, 1024) as u16;
        }
        worker.search.set_config(config);
        let (limits, ponder_hard) = self.limits(go, &position);
        let shared = Arc::new(Shared {
            control: SearchControl::new(&limits),
            released: Mutex::new(!(go.infinite || go.ponder)),
            release_cv: Condvar::new(),
            silent: AtomicBool::new(false),
            ponder_hard,
            answered: AtomicBool::new(false),
        });
        let job = SearchJob {
            out: self.out.clone(),
            shared: shared.clone(),
            nps: self.nps.clone(),
            limits,
            with_ponder: self.options.ponder,
            tree_bytes: self.options.tree_bytes(),
            rule: self.options.entering_king,
        };
        let spawned = std::thread::Builder::new()
            .name("manaka-search".into())
            .spawn(move || {
                // A panic inside an evaluator must not leave the GUI waiting for a bestmove.
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    job.run(&mut worker, &position);
                }));
                if run.is_err() {
                    job.fail(&position);
                    return None;
                }
                Some(worker)
            });
        match spawned {
            Ok(handle) => self.running = Some(Running { handle, shared }),
            Err(e) => {
                self.out
                    .info_string(&format!("error: cannot start the search thread: {e}"));
                self.out.line("bestmove resign");
            }
        }
    }

    /// `go mate <ms>|infinite`: the df-pn mate solver on the current position, in the
    /// search thread, answered with `checkmate <moves>`, `checkmate nomate` (proven: no mate
    /// by checks) or `checkmate timeout` (time up, or `stop`), as soon as it knows — also
    /// for `infinite`, as the protocol has it.
    fn go_mate(&mut self, time: MateTime) {
        if self.running.is_some() {
            self.out
                .info_string("error: go during a search; stopping the previous search first");
            self.finish_search(false);
        }
        let position = match &self.position {
            Ok(p) => p.clone(),
            Err(e) => {
                self.out
                    .info_string(&format!("error: no valid position ({e})"));
                self.out.line("checkmate nomate");
                return;
            }
        };
        self.ensure_network();
        let mut worker = self
            .worker
            .take()
            .expect("ensure_network provides a worker");
        let limit = match time {
            MateTime::Millis(ms) => Some(Duration::from_millis(ms)),
            MateTime::Infinite => None,
        };
        let shared = Arc::new(Shared {
            // No budget: only the time limit, `stop` or the end of input (which stops an
            // infinite one) end it.
            control: SearchControl::new(&SearchLimits {
                time_limit: limit,
                stop_at_budget: false,
                ..SearchLimits::simulations(1)
            }),
            released: Mutex::new(true),
            release_cv: Condvar::new(),
            silent: AtomicBool::new(false),
            ponder_hard: None,
            answered: AtomicBool::new(false),
        });
        let (out, job_shared) = (self.out.clone(), shared.clone());
        let table = self.options.mate_hash_mb.saturating_mul(1 << 20);
        let spawned = std::thread::Builder::new()
            .name("manaka-mate".into())
            .spawn(move || {
                let solver = worker.mate.get_or_insert_with(|| MateSolver::new(table));
                let limits = MateLimits {
                    time: limit,
                    ..MateLimits::default()
                };
                let r = solver.search(&position, &limits, job_shared.control.stop_flag());
                let answer = match &r.outcome {
                    MateOutcome::Mate(line) => {
                        let moves: Vec<String> = line.iter().map(|m| m.to_usi()).collect();
                        format!("checkmate {}", moves.join(" "))
                    }
                    MateOutcome::NoMate => "checkmate nomate".to_string(),
                    MateOutcome::Unknown => "checkmate timeout".to_string(),
                };
                out.line(&format!(
                    "info nodes {} nps {} time {} hashfull {}",
                    r.nodes,
                    r.nps().round() as u64,
                    r.elapsed.as_millis(),
                    solver.hashfull().min(1000)
                ));
                let silent = job_shared.silent.load(Ordering::SeqCst);
                job_shared.answered.store(true, Ordering::SeqCst);
                if !silent {
                    out.line(&answer);
                }
                Some(worker)
            });
        match spawned {
            Ok(handle) => self.running = Some(Running { handle, shared }),
            Err(e) => {
                self.out
                    .info_string(&format!("error: cannot start the mate search: {e}"));
                self.out.line("checkmate timeout");
            }
        }
    }

    /// The search limits for `go` in `position`, and the hard limit that a `ponderhit`
    /// would start.
    fn limits(&self, go: &GoParams, position: &Position) -> (SearchLimits, Option<Duration>) {
        let black = position.side_to_move() == Color::Black;
        let plan = time::plan(go, black, position.ply(), self.options.move_overhead_ms);
        let nps = *self.nps.lock().unwrap_or_else(|e| e.into_inner());
        let open_ended = go.infinite || go.ponder;
        let from_speed = |t: Duration| {
            nps.map(|n| {
                (n * t.as_secs_f64()).clamp(
                    f64::from(MIN_AUTO_SIMULATIONS),
                    f64::from(MAX_AUTO_SIMULATIONS),
                ) as u32
            })
        };
        let mut simulations = if let Some(n) = go.nodes {
            n.clamp(1, u64::from(u32::MAX)) as u32
        } else if self.options.simulations > 0 {
            self.options.simulations
        } else if go.infinite {
            from_speed(INFINITE_SCHEDULE).unwrap_or(DEFAULT_SIMULATIONS)
        } else if let Some(p) = plan {
            from_speed(p.soft).unwrap_or(DEFAULT_SIMULATIONS)
        } else {
            DEFAULT_SIMULATIONS
        };
        if !open_ended && position.legal_moves().len() == 1 {
            simulations = simulations.min(FORCED_MOVE_SIMULATIONS);
        }
        // An estimated budget may be wrong: the hard limit guards the clock. With the speed
        // unknown (the first timed move), the default budget is laid out and the search runs
        // on past it until the soft target.
        let calibrating =
            plan.is_some() && self.options.simulations == 0 && go.nodes.is_none() && nps.is_none();
        let time_limit = plan.map(|p| if calibrating { p.soft } else { p.hard });
        let limits = SearchLimits {
            simulations,
            stop_at_budget: !open_ended && !calibrating,
            time_limit: if open_ended { None } else { time_limit },
            report_every: Some(INFO_EVERY),
            searchmoves: None,
        };
        (limits, if go.ponder { time_limit } else { None })
    }
}

/// Everything a search thread needs besides the worker and the position.
struct SearchJob {
    out: Output,
    shared: Arc<Shared>,
    nps: Arc<Mutex<Option<f64>>>,
    limits: SearchLimits,
    with_ponder: bool,
    tree_bytes: usize,
    rule: Option<EnteringKingRule>,
}

impl SearchJob {
    /// After a failed search: says so and still answers a legal move (the first legal one),
    /// or `resign` without one, unless silenced or already answered.
    fn fail(&self, position: &Position) {
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

    fn run(&self, worker: &mut Worker, position: &Position) {
        let out = &self.out;
        let mut progress = |snap: &SearchResult| {
            if let Some(l) = info::info_line(snap, self.hashfull(snap)) {
                out.line(&l);
            }
        };
        let control = &self.shared.control;
        let r = worker.search.run_with(
            position,
            worker.evaluator.as_mut(),
            &self.limits,
            control,
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
                out.info_string(&format!(
                    "value {:.4} v_hat {:.4} evals {} batches {} cache_hits {} collisions {} new_nodes {} growth {:.3} leaf_mates {}{proven} top {}",
                    r.root_value,
                    r.root_v_hat,
                    r.stats.evaluations,
                    r.stats.batches,
                    r.stats.cache_hits,
                    r.stats.collisions,
                    r.stats.new_nodes,
                    r.growth(),
                    r.stats.leaf_mates,
                    top.join(", ")
                ));
                if let Some(l) = info::info_line(&r, self.hashfull(&r)) {
                    out.line(&l);
                }
            }
        }
        // Speed for the next budget (simulations per second, smoothed).
        let secs = r.elapsed.as_secs_f64();
        if r.stats.simulations >= 32 && secs >= 0.002 {
            let now = r.stats.simulations as f64 / secs;
            let mut nps = self.nps.lock().unwrap_or_else(|e| e.into_inner());
            *nps = Some(nps.map_or(now, |old| 0.5 * old + 0.5 * now));
        }
        // go infinite / go ponder: the bestmove waits for stop or ponderhit.
        self.shared.wait_released();
        // Marked answered before the line goes out: a GUI that reacts to the bestmove at
        // once finds the search over (the protocol thread then joins this thread, which
        // only has the write left to do).
        let silent = self.shared.silent.load(Ordering::SeqCst);
        self.shared.answered.store(true, Ordering::SeqCst);
        if !silent {
            out.line(&info::bestmove_line(&r, self.with_ponder));
        }
    }
}

/// The default loader: [`network::resolve`] (the reference evaluator for every shape).
pub fn default_loader() -> Loader {
    Box::new(network::resolve)
}

/// A loader that prefers compiled engines: [`network::resolve_with`] with `compiled`.
pub fn loader_with(compiled: Arc<network::CompiledHook>) -> Loader {
    Box::new(move |eval_file| network::resolve_with(eval_file, compiled.as_ref()))
}

/// The `Backend integer` loader: [`network::resolve_integer`] with `integer`'s engines, and
/// `compiled`'s for shapes without one.
pub fn integer_loader_with(
    integer: Arc<network::CompiledHook>,
    compiled: Arc<network::CompiledHook>,
) -> Loader {
    Box::new(move |eval_file| {
        network::resolve_integer(eval_file, integer.as_ref(), compiled.as_ref())
    })
}
