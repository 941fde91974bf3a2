//! Gumbel self-play producing dlshogi HCPE3 games.
//!
//! - Every move spends the full Sequential Halving schedule of `simulations` (no time limit,
//!   no early stop: a mid-search cutoff biases the improved policy — the seed), with
//!   non-zero root Gumbel noise so that games differ.
//! - Games run side by side ([`Batching`]): by default each thread plays one game at a time
//!   and evaluates its leaves itself, with no hand-off between threads; or each game in
//!   flight has a thread and their leaves meet in one network call per simulation
//!   ([`batcher`]), a call carrying one simulation of every game in flight.
//! - The game loop judges the rules: checkmate, entering-king declaration (the side to
//!   move declares as soon as it may), fourfold repetition with perpetual check, and a
//!   maximum game length (a draw).
//! - Each move is stored with its eval (the search's root value as dlshogi's eval) and
//!   candidates whose visit counts are proportional to the improved policy
//!   ([`game::candidates`]).
//! - Games are written in files of `games_per_file` games, each written atomically once all
//!   its games are done. A run is resumable: files already in the directory are kept and
//!   their games not played again; game `i` of a seed is the same game whenever and on
//!   whichever thread it is played (its noise depends only on the seed and `i`, and an
//!   evaluation only on its leaf — see [`crate::network::NetworkEvaluator`] for why the
//!   compiled engines' cached accumulators keep it so), so a resumed run writes the files
//!   an uninterrupted one would. A manifest in the directory refuses resuming with other
//!   settings.

pub mod batcher;
pub mod game;
pub mod opening;

pub use crate::runs::shard::Shard;
pub use game::{Ending, GameSettings, PlayedGame, Resign, VISIT_SCALE, candidates, judge, play};
pub use opening::Openings;

#[cfg(test)]
pub(crate) mod tests;

use crate::data::hcpe3::{Hcpe3Game, encode_hcpe3, read_hcpe3};
use crate::data::io::{DataError, write_atomic};
use crate::eval::{Evaluation, Evaluator, EvaluatorFactory, Leaf, ThreadedEvaluator};
use crate::runs::resume::{Finished, Manifest, ResumeError};
use crate::search::{GumbelSearch, SearchConfig};
use batcher::{BatchServer, BatchStats};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// A self-play run.
#[derive(Clone, Debug, PartialEq)]
pub struct SelfplayConfig {
    /// Games in the whole run (resumed runs count the games already written).
    pub games: u64,
    pub settings: GameSettings,
    pub seed: u64,
    /// How the games in flight reach the evaluator.
    pub batching: Batching,
    /// Games per output file.
    pub games_per_file: u64,
    /// Where the games start.
    pub openings: Openings,
    /// Which part of the run this process plays.
    pub shard: Shard,
}

/// How the games in flight share the network. Either way a game is the sequential search on
/// one thread and an evaluation depends only on its leaf, so the choice changes speed, never
/// a game (docs/data.md, "Reproducibility").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batching {
    /// Each of the run's threads plays one game at a time with an evaluator of its own and
    /// calls it directly, one leaf a call. Nothing waits on another thread: on a CPU this
    /// is the fastest (the batch server's hand-offs — a wake-up of a game thread per leaf —
    /// cost more than wide calls save; docs/data.md gives the figures).
    PerThread,
    /// `games` games in flight, each on a thread of its own, their leaves gathered by a batch
    /// server into one call per simulation — one simulation of every game — which the run's
    /// threads split between them: for evaluators that gain from wide calls.
    Server { games: usize },
}

#[derive(Debug, Error)]
pub enum SelfplayError {
    #[error(transparent)]
    Data(#[from] DataError),
    /// The directory holds another run: its manifest's settings differ from these.
    #[error(transparent)]
    Resume(ResumeError),
    #[error(
        "{file}: holds {found} games, but this run puts {expected} in that file; it is not from this run"
    )]
    ChunkSize {
        file: String,
        found: usize,
        expected: u64,
    },
    #[error("game {index}: {reason}")]
    Game { index: u64, reason: String },
    #[error("invalid settings: {0}")]
    Settings(String),
}

/// Results so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub black_wins: u64,
    pub white_wins: u64,
    pub draws: u64,
    pub checkmates: u64,
    pub sennichite: u64,
    pub nyugyoku: u64,
    pub max_moves: u64,
    /// Games that ended by resignation.
    pub resigned: u64,
    /// Games of this session played out for the resignation check in which a resignation
    /// was due, and of those the ones where it would have been wrong (the side drew or won).
    pub resign_checks: u64,
    pub false_resignations: u64,
}

impl Tally {
    /// Counts a game; `ending` is known for games played in this session, and for games read
    /// back a game without flags is told apart from a resignation by replaying it.
    fn add(&mut self, g: &Hcpe3Game, played: Option<&PlayedGame>) {
        use crate::data::records::GameResult;
        match g.outcome.result {
            GameResult::BlackWin => self.black_wins += 1,
            GameResult::WhiteWin => self.white_wins += 1,
            GameResult::Draw => self.draws += 1,
        }
        self.sennichite += u64::from(g.outcome.sennichite);
        self.nyugyoku += u64::from(g.outcome.nyugyoku);
        self.max_moves += u64::from(g.outcome.max_moves);
        if !g.outcome.sennichite && !g.outcome.nyugyoku && !g.outcome.max_moves {
            let resigned = match played {
                Some(p) => p.ending == Ending::Resignation,
                None => g.replay().is_ok_and(|end| end.has_legal_moves()),
            };
            if resigned {
                self.resigned += 1;
            } else {
                self.checkmates += 1;
            }
        }
        if let Some(right) = played.and_then(|p| p.resign_check) {
            self.resign_checks += 1;
            self.false_resignations += u64::from(!right);
        }
    }
}

/// Where a run stands.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub games_total: u64,
    /// Games finished, those found on disk at the start included.
    pub games_done: u64,
    /// Games found on disk at the start.
    pub games_resumed: u64,
    /// Moves played in this session.
    pub moves: u64,
    /// Simulations run in this session.
    pub simulations: u64,
    pub tally: Tally,
    /// Network calls and leaves evaluated in this session.
    pub calls: u64,
    pub leaves: u64,
    pub files_written: u64,
    pub elapsed: Duration,
}

impl Progress {
    pub fn moves_per_second(&self) -> f64 {
        self.moves as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// What a run started again over a directory that already holds all its games says
    /// (nothing was played); `None` when it played.
    pub fn finished(&self, dir: &Path) -> Option<Finished> {
        (self.games_resumed == self.games_total).then(|| Finished {
            out: dir.to_path_buf(),
            done: format!("{} games", self.games_total),
            further: "give a larger --games to play further".into(),
        })
    }

    /// Mean leaves per network call.
    pub fn batch_fill(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.leaves as f64 / self.calls as f64
        }
    }
}

/// The file holding chunk `c`.
pub fn chunk_path(dir: &Path, c: u64) -> PathBuf {
    dir.join(format!("selfplay-{c:06}.hcpe3"))
}

const MANIFEST: &str = "selfplay.manifest";

/// The settings that decide the games (not the shard: every shard of a run writes the same
/// manifest, so shards may share one directory).
fn manifest(config: &SelfplayConfig, network: &str) -> Manifest {
    let s = &config.settings;
    let o = &config.openings;
    let start = if o.is_plain_startpos() {
        "startpos".to_string()
    } else {
        format!(
            "{} openings xxh64 {:016x}, {} random plies",
            o.len(),
            o.fingerprint(),
            o.random_plies
        )
    };
    let manifest = Manifest::new()
        .with("format", "manaka self-play 1")
        .with("network", network)
        .with("seed", config.seed)
        .with("games_per_file", config.games_per_file)
        .with("simulations", s.simulations)
        .with("max_considered", s.max_considered)
        .with("gumbel_scale", s.gumbel_scale)
        .with("max_moves", s.max_moves)
        .with("entering_king", format!("{:?}", s.entering_king))
        .with("start", start);
    // Written only when set, so that the manifests of runs made before resignation existed
    // still match.
    match s.resign {
        Some(r) => manifest.with(
            "resign",
            format!("below {} played out {}", r.below, r.check_share),
        ),
        None => manifest,
    }
}

/// Writes the run's manifest into `dir`, or checks that the one there is this run's.
fn check_manifest(dir: &Path, wanted: &Manifest) -> Result<(), SelfplayError> {
    wanted
        .write_or_check(
            &dir.join(MANIFEST),
            "a self-play run",
            "resume with the same settings or use another --out",
        )
        .map_err(|e| match e {
            ResumeError::Data(e) => SelfplayError::Data(e),
            other => SelfplayError::Resume(other),
        })
}

/// Runs (or resumes) self-play into `dir` with evaluators from `factory` (`threads` of
/// them share each network call). `network` names the network for the manifest (shape and
/// weights checksum, say). `progress` is called about twice a second and once at the end.
pub fn run(
    config: &SelfplayConfig,
    network: &str,
    factory: Arc<dyn EvaluatorFactory>,
    threads: usize,
    dir: &Path,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Progress, SelfplayError> {
    check_settings(config)?;
    std::fs::create_dir_all(dir).map_err(|e| DataError::Io {
        path: dir.to_path_buf(),
        source: e,
    })?;
    check_manifest(dir, &manifest(config, network))?;
    let start = Instant::now();
    let (mut report, todo) = resume(config, dir)?;
    if todo.is_empty() {
        report.elapsed = start.elapsed();
        progress(&report);
        return Ok(report);
    }
    let result = play_all(
        config,
        factory,
        threads,
        dir,
        &todo,
        &mut report,
        start,
        progress,
    );
    report.elapsed = start.elapsed();
    progress(&report);
    result.map(|()| report)
}

/// Refuses settings that cannot make a run: zero counts, no noise, a resignation rule out
/// of range, a shard that does not exist, no openings, a game too long for HCPE3.
fn check_settings(config: &SelfplayConfig) -> Result<(), SelfplayError> {
    let s = &config.settings;
    if config.games == 0
        || config.games_per_file == 0
        || config.batching == (Batching::Server { games: 0 })
    {
        return Err(SelfplayError::Settings(
            "games, games per file and parallel games must be at least 1".into(),
        ));
    }
    if s.simulations == 0 || s.max_considered == 0 || s.max_moves == 0 {
        return Err(SelfplayError::Settings(
            "simulations, max considered and max moves must be at least 1".into(),
        ));
    }
    if !(s.gumbel_scale.is_finite() && s.gumbel_scale > 0.0) {
        return Err(SelfplayError::Settings(format!(
            "the Gumbel scale must be a finite number above 0 (self-play needs noise so games differ), not {}",
            s.gumbel_scale
        )));
    }
    if let Some(r) = s.resign {
        if !(r.below > 0.0 && r.below < 0.5) || !(0.0..=1.0).contains(&r.check_share) {
            return Err(SelfplayError::Settings(format!(
                "resigning needs a win probability threshold in (0, 0.5) and a played-out share in [0, 1], not {} and {}",
                r.below, r.check_share
            )));
        }
    }
    if config.shard.count == 0 || config.shard.index >= config.shard.count {
        return Err(SelfplayError::Settings(format!(
            "shard {} does not exist: give i/n with 0 <= i < n",
            config.shard
        )));
    }
    if config.openings.is_empty() {
        return Err(SelfplayError::Settings("the opening list is empty".into()));
    }
    if u16::try_from(s.max_moves).is_err() {
        return Err(SelfplayError::Settings(
            "max moves must fit HCPE3's 16-bit move count".into(),
        ));
    }
    Ok(())
}

/// Games in chunk `c` (the last chunk may be short).
fn chunk_len(config: &SelfplayConfig, c: u64) -> u64 {
    (config.games - c * config.games_per_file).min(config.games_per_file)
}

/// What is on disk already: the report of this shard's games found in `dir` (counted into
/// the tally), and the indices of the games still to play — those of its missing files.
fn resume(config: &SelfplayConfig, dir: &Path) -> Result<(Progress, Vec<u64>), SelfplayError> {
    let chunks = config.games.div_ceil(config.games_per_file);
    let mine = || (0..chunks).filter(|&c| config.shard.owns(c));
    let mut report = Progress {
        games_total: mine().map(|c| chunk_len(config, c)).sum(),
        ..Progress::default()
    };
    let mut todo: Vec<u64> = Vec::new();
    for c in mine() {
        let path = chunk_path(dir, c);
        let len = chunk_len(config, c);
        if path.exists() {
            let games = read_hcpe3(&path)?;
            if games.len() as u64 != len {
                return Err(SelfplayError::ChunkSize {
                    file: path.display().to_string(),
                    found: games.len(),
                    expected: len,
                });
            }
            for g in &games {
                report.tally.add(g, None);
            }
            report.games_resumed += games.len() as u64;
        } else {
            todo.extend(c * config.games_per_file..c * config.games_per_file + len);
        }
    }
    report.games_done = report.games_resumed;
    Ok((report, todo))
}

/// Plays the games `todo` as `config.batching` says — `threads` workers each with its own
/// evaluator, or a game thread per game in flight feeding a batch server — and writes each
/// chunk as its last game finishes ([`Chunks`]). The first error stops the run; what was
/// written stays.
#[allow(clippy::too_many_arguments)]
fn play_all(
    config: &SelfplayConfig,
    factory: Arc<dyn EvaluatorFactory>,
    threads: usize,
    dir: &Path,
    todo: &[u64],
    report: &mut Progress,
    start: Instant,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(), SelfplayError> {
    let stats = Arc::new(BatchStats::default());
    let next = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    let (done_tx, done_rx) = mpsc::channel::<(u64, Result<PlayedGame, String>)>();
    let mut chunks = Chunks {
        config,
        dir,
        pending: BTreeMap::new(),
    };
    let mut first_error: Option<SelfplayError> = None;
    let counters = |report: &mut Progress| {
        report.calls = stats.calls.load(Ordering::Relaxed);
        report.leaves = stats.leaves.load(Ordering::Relaxed);
    };

    let factory: &dyn EvaluatorFactory = factory.as_ref();
    std::thread::scope(|scope| {
        let (next, abort) = (&next, &abort);
        match config.batching {
            Batching::PerThread => {
                for _ in 0..threads.max(1).min(todo.len()) {
                    let done_tx = done_tx.clone();
                    let stats = Arc::clone(&stats);
                    scope.spawn(move || {
                        let mut evaluator = Counted::new(factory.create(), stats);
                        play_games(
                            config,
                            todo,
                            next,
                            abort,
                            &mut evaluator,
                            &|| false,
                            done_tx,
                        )
                    });
                }
            }
            Batching::Server { games } => {
                let server = BatchServer::with_stats(Arc::clone(&stats));
                let connections: Vec<_> = (0..games.min(todo.len()))
                    .map(|_| server.connect())
                    .collect();
                scope.spawn(move || {
                    let mut evaluator = ThreadedEvaluator::new(factory, threads.max(1));
                    server.run(&mut evaluator);
                });
                for mut conn in connections {
                    let done_tx = done_tx.clone();
                    scope.spawn(move || {
                        let flag = conn.failure_flag();
                        let failed = move || flag.load(Ordering::Relaxed);
                        play_games(config, todo, next, abort, &mut conn, &failed, done_tx)
                    });
                }
            }
        }
        drop(done_tx);

        let mut last_report = Instant::now();
        loop {
            match done_rx.recv_timeout(Duration::from_millis(250)) {
                Ok((index, Ok(game))) => {
                    report.games_done += 1;
                    report.moves += game.record.moves.len() as u64;
                    report.simulations += game.simulations;
                    report.tally.add(&game.record, Some(&game));
                    match chunks.add(index, game.record) {
                        Ok(written) => report.files_written += u64::from(written),
                        Err(e) => {
                            abort.store(true, Ordering::Relaxed);
                            first_error.get_or_insert(e);
                        }
                    }
                }
                Ok((index, Err(reason))) => {
                    abort.store(true, Ordering::Relaxed);
                    first_error.get_or_insert(SelfplayError::Game { index, reason });
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if last_report.elapsed() >= Duration::from_millis(500) {
                last_report = Instant::now();
                counters(report);
                report.elapsed = start.elapsed();
                progress(report);
            }
        }
    });
    counters(report);
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A worker's own evaluator, counting its calls and leaves into the run's statistics. The
/// counts are kept here and added to the shared ones every [`Counted::FLUSH_EVERY`] calls
/// and when the worker ends: an atomic add per leaf on a counter both workers write would
/// bounce its cache line between the cores on every evaluation.
struct Counted {
    inner: Box<dyn Evaluator>,
    stats: Arc<BatchStats>,
    calls: u64,
    leaves: u64,
}

impl Counted {
    /// Calls between two updates of the shared counts (~10 ms of evaluations; the progress
    /// line is printed every 500 ms).
    const FLUSH_EVERY: u64 = 1024;

    fn new(inner: Box<dyn Evaluator>, stats: Arc<BatchStats>) -> Counted {
        Counted {
            inner,
            stats,
            calls: 0,
            leaves: 0,
        }
    }

    fn flush(&mut self) {
        self.stats.calls.fetch_add(self.calls, Ordering::Relaxed);
        self.stats.leaves.fetch_add(self.leaves, Ordering::Relaxed);
        (self.calls, self.leaves) = (0, 0);
    }
}

impl Evaluator for Counted {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        self.inner.evaluate(batch, out);
        self.calls += 1;
        self.leaves += batch.len() as u64;
        if self.calls >= Counted::FLUSH_EVERY {
            self.flush();
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.flush();
    }
}

/// One game thread: plays the next game of `todo` not yet taken (`next`) until none is left
/// or the run aborts, each from its opening with its own noise stream, its leaves going to
/// `evaluator` (`failed` says when its answers were lost), and sends each result to the
/// writer.
fn play_games(
    config: &SelfplayConfig,
    todo: &[u64],
    next: &AtomicUsize,
    abort: &AtomicBool,
    evaluator: &mut dyn Evaluator,
    failed: &dyn Fn() -> bool,
    done: mpsc::Sender<(u64, Result<PlayedGame, String>)>,
) {
    let s = &config.settings;
    let mut search = GumbelSearch::new(SearchConfig {
        cache_entries: s.cache_entries,
        ..SearchConfig::default()
    });
    while !abort.load(Ordering::Relaxed) {
        let Some(&index) = todo.get(next.fetch_add(1, Ordering::Relaxed)) else {
            break;
        };
        let opening = config.openings.start(config.seed, index);
        let r = play(
            &opening,
            s,
            config.seed,
            index,
            &mut search,
            evaluator,
            failed,
        );
        if done.send((index, r)).is_err() {
            break;
        }
    }
}

/// Finished games waiting for the rest of their chunk, written (atomically, in game order)
/// once the chunk is complete: the file an uninterrupted run would write, whatever order
/// the games finished in.
struct Chunks<'a> {
    config: &'a SelfplayConfig,
    dir: &'a Path,
    pending: BTreeMap<u64, Vec<(u64, Hcpe3Game)>>,
}

impl Chunks<'_> {
    /// Adds game `index`; whether that completed and wrote its chunk's file.
    fn add(&mut self, index: u64, game: Hcpe3Game) -> Result<bool, SelfplayError> {
        let c = index / self.config.games_per_file;
        let entry = self.pending.entry(c).or_default();
        entry.push((index, game));
        if entry.len() as u64 != chunk_len(self.config, c) {
            return Ok(false);
        }
        let mut games = self.pending.remove(&c).unwrap_or_default();
        games.sort_by_key(|(i, _)| *i);
        let games: Vec<Hcpe3Game> = games.into_iter().map(|(_, g)| g).collect();
        let path = chunk_path(self.dir, c);
        let bytes = encode_hcpe3(&games).map_err(|source| DataError::Encode {
            path: path.clone(),
            source,
        })?;
        write_atomic(path, &bytes)?;
        Ok(true)
    }
}
