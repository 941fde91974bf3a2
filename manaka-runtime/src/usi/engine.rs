//! The engine's protocol state machine: options, the position, the network, and the search
//! running in its own thread.
//!
//! The protocol thread never blocks on a search: `stop`, `ponderhit`, `isready`, `gameover`
//! and `quit` are handled while one runs. The search thread owns the evaluator and the search
//! (they travel into the thread and back), prints `info` while it runs and `bestmove` when it
//! ends — for `go infinite` and `go ponder` only after `stop` or `ponderhit`, as the protocol
//! requires.

use super::bench;
use super::command::{self, BenchParams, Command, GoParams, MateTime};
use super::eval_file::{self, LoadError, LoadedNetwork};
use super::info::Output;
use super::job::{Finished, SearchJob, Shared, Worker};
use super::options::{Backend, EngineOptions};
use super::plan;
use crate::eval::{Evaluator, MaterialEvaluator};
use crate::loader::{NetworkLoader, Precision, Weights};
use crate::mate::{MateLimits, MateOutcome, MateSolver};
use crate::search::{GumbelSearch, SearchLimits};
use crate::shogi::Position;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Loads the network for an `EvalFile` value (see [`eval_file::resolve`]), compiled engines
/// of float shapes at the `Precision` option's precision (a loader that cannot apply it
/// returns a network whose [`LoadedNetwork::precision`] says what runs instead).
pub type Loader = Box<dyn Fn(&str, Precision) -> Result<LoadedNetwork, LoadError> + Send>;

struct Running {
    handle: JoinHandle<Finished>,
    shared: Arc<Shared>,
}

/// The network in use and what it was loaded for.
struct Net {
    /// The network, or why it could not be loaded: then `go` answers `bestmove resign`
    /// (docs/usi.md, "When EvalFile fails to load") — never another network in its place.
    network: Result<LoadedNetwork, String>,
    eval_file: String,
    backend: Backend,
    /// The `Precision` option the network was loaded for (not necessarily the one in use:
    /// see [`LoadedNetwork::precision_note`]).
    precision: Precision,
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
    /// The `go mate` solver, created at its first use (its table is kept between searches).
    mate: Option<MateSolver>,
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
            mate: None,
            running: None,
            position: Ok(Position::startpos()),
            nps: Arc::new(Mutex::new(None)),
        }
    }

    /// Gives `Backend integer` a loader (see [`eval_file::resolve_integer`]).
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
                self.refuse_position(e.to_string());
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
                // keeps its evaluator and the answer is immediate. A network that failed to
                // load is tried again, and while it fails every `isready` says so (and
                // still answers: a GUI waits for `readyok` forever).
                if self.running.is_none()
                    && let Err(e) = self.ensure_network(true)
                {
                    self.out.info_string(&format!(
                        "error: {e}; every 'go' answers 'bestmove resign' until a network \
                         loads (set EvalFile to a loadable file, or empty for the embedded \
                         default, and send isready)"
                    ));
                }
                self.out.line("readyok");
            }
            Command::SetOption { name, value } => match self.options.set(&name, &value) {
                Ok(None) => {}
                Ok(Some(note)) => self.out.info_string(&note),
                Err(e) => self.out.info_string(&format!("error: {e}")),
            },
            Command::UsiNewGame => {
                // A new game starts with a clean tree (nothing reused from the last one).
                self.finish_search(true);
                if let Some(w) = &mut self.worker {
                    w.search.clear_tree();
                }
            }
            Command::Position { sfen, moves } => self.set_position(&sfen, &moves),
            Command::Go(go) => self.go(&go),
            Command::Bench(b) => self.bench(&b),
            Command::Stop => {
                if let Some(r) = &self.running {
                    r.shared.stop();
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
                    // The first phase (the opponent's position) ends: the search goes on
                    // at the pondered position with what it found there.
                    s.opponent.stop();
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
            let held = !r.shared.is_released();
            if held
                || r.shared.control.time_limit().is_none() && !r.shared.control.stops_at_budget()
            {
                r.shared.stop();
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
                Ok(Finished::Search(Some(w))) => self.worker = Some(*w),
                Ok(Finished::Mate(m)) => self.mate = Some(m),
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
            r.shared.stop();
            r.shared.release();
        }
        self.join();
    }

    fn set_position(&mut self, sfen: &str, moves: &[String]) {
        self.position = game_position(sfen, moves);
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

    /// Loads the network if `EvalFile`, `Backend`, `Precision` or `Threads` changed (or
    /// nothing is loaded yet, or `retry` and the last load failed) and makes sure an
    /// evaluator and a search exist. `Err` says why there is no network: a file that fails
    /// to load never becomes another network. A `Precision` the network cannot take is said
    /// in an `info string` (docs/usi.md, `Precision`).
    fn ensure_network(&mut self, retry: bool) -> Result<(), String> {
        let eval_file = self.options.eval_file.clone();
        let backend = self.options.backend;
        let precision = self.options.precision;
        let threads = self.options.threads;
        let fresh = self.net.as_ref().is_none_or(|n| {
            n.eval_file != eval_file
                || n.backend != backend
                || n.precision != precision
                || retry && n.network.is_err()
        });
        if fresh {
            let loaded = match (&self.integer, backend) {
                (Some(integer), Backend::Integer) => integer(&eval_file, precision),
                _ => eval_file::resolve_backend(&eval_file, backend, &|f| {
                    (self.loader)(f, precision)
                }),
            };
            let network = match loaded {
                Ok(n) => {
                    self.out.info_string(&n.description);
                    if let Some(note) = n.precision_note(precision) {
                        self.out.info_string(&note);
                    }
                    Ok(n)
                }
                Err(e) if eval_file.trim().is_empty() || eval_file == "<empty>" => Err(format!(
                    "the embedded default network could not be loaded: {e}"
                )),
                Err(e) => Err(format!("EvalFile '{eval_file}' could not be loaded: {e}")),
            };
            // The old evaluator belongs to the old network.
            self.worker = None;
            self.net = Some(Net {
                network,
                eval_file,
                backend,
                precision,
                threads: 0,
            });
        }
        let net = self.net.as_mut().expect("loaded above");
        let network = net.network.as_ref().map_err(Clone::clone)?;
        if fresh || net.threads != threads || self.worker.is_none() {
            let factory = network.factory.as_ref();
            // One evaluator per search thread (search/parallel.rs), all on one network.
            let evaluators: Vec<Box<dyn Evaluator>> =
                (0..threads.max(1)).map(|_| factory.create()).collect();
            net.threads = threads;
            let search = match self.worker.take() {
                // Same network: the search keeps its cache (and its tree for reuse).
                Some(w) if !fresh => w.search,
                _ => GumbelSearch::new(self.options.search_config()),
            };
            self.worker = Some(Worker { evaluators, search });
        }
        Ok(())
    }

    /// Why the engine has no network, if a load failed (for `go mate`, which needs none).
    fn network_error(&self) -> Option<&str> {
        self.net
            .as_ref()?
            .network
            .as_ref()
            .err()
            .map(String::as_str)
    }

    fn go(&mut self, go: &GoParams) {
        for w in &go.ignored {
            self.out.info_string(&format!("warning: {w}"));
        }
        if let Some(time) = go.mate {
            self.go_mate(time);
            return;
        }
        let Some(position) = self.start_go("bestmove resign") else {
            return;
        };
        if let Err(e) = self.ensure_network(false) {
            // Loud and unmissable in a match: every game is lost at once, the log says why.
            self.out.info_string(&format!(
                "error: no network ({e}); answering 'bestmove resign'"
            ));
            self.out.line("bestmove resign");
            return;
        }
        let nps = *self.nps.lock().unwrap_or_else(|e| e.into_inner());
        let plan = plan::plan(&self.options, nps, &self.out, go, &position);
        let mut worker = self
            .worker
            .take()
            .expect("ensure_network provides a worker");
        let mut config = self.options.search_config();
        config.max_depth = plan.max_depth;
        // DrawValueBlack/White for the side the engine plays here, inside the search too.
        config.draw_value = self.options.draw_value(position.side_to_move());
        // MaxMovesToDraw: leaves at the game's last ply are draws in the tree.
        config.plies_to_draw = plan.scoring.plies_left;
        worker.search.set_config(config);
        let shared = Arc::new(Shared::new(
            &plan.limits,
            go.infinite || go.ponder,
            plan.ponder_hard,
        ));
        let job = SearchJob {
            out: self.out.clone(),
            shared: shared.clone(),
            nps: self.nps.clone(),
            limits: plan.limits,
            with_ponder: self.options.ponder,
            tree_bytes: self.options.tree_bytes(),
            rule: self.options.entering_king,
            scoring: plan.scoring,
            resign_below_cp: self.options.resign_below_cp(),
            forced: plan.forced,
            ponder_parent: if go.ponder && self.options.ponder_opponent_position {
                ponder_parent(&position)
            } else {
                None
            },
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
                    return Finished::Search(None);
                }
                Finished::Search(Some(Box::new(worker)))
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

    /// What every `go` does first: stops a search still running, and returns the position to
    /// search — or, without a valid one, says why and answers `refusal`.
    fn start_go(&mut self, refusal: &str) -> Option<Position> {
        if self.running.is_some() {
            self.out
                .info_string("error: go during a search; stopping the previous search first");
            self.finish_search(false);
        }
        match &self.position {
            Ok(p) => Some(p.clone()),
            Err(e) => {
                self.out
                    .info_string(&format!("error: no valid position ({e})"));
                self.out.line(refusal);
                None
            }
        }
    }

    /// `go mate <ms>|infinite`: the df-pn mate solver on the current position, in the
    /// search thread, answered with `checkmate <moves>`, `checkmate nomate` (proven: no mate
    /// by checks) or `checkmate timeout` (time up, or `stop`), as soon as it knows — also
    /// for `infinite`, as the protocol has it. It needs no network (one that failed to load
    /// is still reported).
    fn go_mate(&mut self, time: MateTime) {
        let Some(position) = self.start_go("checkmate nomate") else {
            return;
        };
        if let Some(e) = self.network_error() {
            self.out
                .info_string(&format!("error: no network ({e}); 'go mate' needs none"));
        }
        let limit = match time {
            MateTime::Millis(ms) => Some(Duration::from_millis(ms)),
            MateTime::Infinite => None,
        };
        // No budget: only the time limit, `stop` or the end of input (which stops an
        // infinite one) end it.
        let limits = SearchLimits {
            time_limit: limit,
            stop_at_budget: false,
            ..SearchLimits::simulations(1)
        };
        let shared = Arc::new(Shared::new(&limits, false, None));
        let (out, job_shared) = (self.out.clone(), shared.clone());
        let table = self.options.mate_hash_mb.saturating_mul(1 << 20);
        let solver = self.mate.take();
        let spawned = std::thread::Builder::new()
            .name("manaka-mate".into())
            .spawn(move || {
                let mut solver = solver.unwrap_or_else(|| MateSolver::new(table));
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
                Finished::Mate(solver)
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

    /// `bench [net] [N]`: the fixed positions searched with a fixed budget (bench.rs), here
    /// in the protocol thread (it is a command for people and CI, not for games).
    fn bench(&mut self, b: &BenchParams) {
        for w in &b.ignored {
            self.out.info_string(&format!("warning: {w}"));
        }
        if self.running.is_some() {
            self.out
                .info_string("error: bench during a search; send stop first");
            return;
        }
        let simulations = b.simulations.unwrap_or(bench::SIMULATIONS);
        if !b.net {
            let mut evaluator = vec![MaterialEvaluator::factory().create()];
            bench::run(
                &bench::config(),
                &mut evaluator,
                simulations,
                "material evaluator, fixed settings",
                &self.out,
            );
            return;
        }
        if let Err(e) = self.ensure_network(false) {
            self.out
                .info_string(&format!("error: bench net: no network ({e})"));
            return;
        }
        // A fresh search (the game's tree and tables untouched) with the engine's options.
        let config = self.options.search_config();
        let worker = self
            .worker
            .as_mut()
            .expect("ensure_network provides a worker");
        let label = format!(
            "{}, the engine's options ({} threads)",
            worker.evaluators[0].name(),
            worker.evaluators.len()
        );
        bench::run(
            &config,
            &mut worker.evaluators,
            simulations,
            &label,
            &self.out,
        );
    }
}

/// The position before the last move of `position`'s history (the expected move of a
/// `go ponder`), if there is one and the game was not over there.
fn ponder_parent(position: &Position) -> Option<Position> {
    let n = position.history_len();
    let last = *position.moves_since(n.checked_sub(1)?)?.first()?;
    let mut parent = position.clone();
    parent.undo_move(last);
    (!parent.legal_moves().is_empty()).then_some(parent)
}

/// The position of `position <sfen> moves …` (`sfen` is `startpos` or the SFEN fields), or
/// why not: a bad SFEN, or the first move of the list that is not legal.
pub fn game_position(sfen: &str, moves: &[String]) -> Result<Position, String> {
    let mut p = Position::from_sfen(sfen).map_err(|e| format!("bad SFEN '{sfen}': {e}"))?;
    for (i, m) in moves.iter().enumerate() {
        let mv = p
            .parse_usi_move(m)
            .map_err(|e| format!("move {} of the list: {e}", i + 1))?;
        p.do_move(mv);
    }
    Ok(p)
}

/// A loader over the runtime's [`NetworkLoader`] for `backend`, with its fallback policy
/// ([`NetworkLoader::load_or_fallback`]), at the precision each load asks for: `manaka usi`
/// passes one for [`Backend::Auto`] and one for [`Backend::Integer`].
pub fn network_loader(loader: NetworkLoader, backend: Backend) -> Loader {
    Box::new(move |eval_file, precision| {
        let loader = loader.clone().with_precision(precision);
        Ok(loader.load_or_fallback(&Weights::parse(eval_file), backend)?)
    })
}

/// The default loader: the reference evaluator for every shape ([`eval_file::resolve`]).
pub fn default_loader() -> Loader {
    network_loader(NetworkLoader::reference_only(), Backend::Auto)
}

/// A loader that prefers compiled engines: [`network_loader`] over `compiled`.
pub fn loader_with(compiled: Arc<eval_file::CompiledHook>) -> Loader {
    network_loader(
        NetworkLoader::reference_only().with_compiled(compiled),
        Backend::Auto,
    )
}

/// The `Backend integer` loader: `integer`'s engines, and `compiled`'s for shapes without one
/// ([`eval_file::resolve_integer`]).
pub fn integer_loader_with(
    integer: Arc<eval_file::IntegerHook>,
    compiled: Arc<eval_file::CompiledHook>,
) -> Loader {
    let loader = NetworkLoader::reference_only()
        .with_compiled(compiled)
        .with_integer(integer);
    network_loader(loader, Backend::Integer)
}
