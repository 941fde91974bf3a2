//! Labelling: teacher data from any USI engine's score and best move, in a resumable run
//! (`manaka label`; docs/data.md, "Resuming a labelling run").
//!
//! Every position is sent alone (`position sfen …`, no game history) and searched with a
//! depth or node limit by one of `threads` engine processes. Each process takes the positions
//! in runs of `RUN` (64) consecutive ones, so that a game's positions mostly meet the same
//! engine one after another and its hash table (kept between positions) already holds much
//! of the next position's tree. Scores are the engine's, from
//! the side to move ([`Score::to_eval`](super::usi_client::Score::to_eval)). Positions
//! without a legal move, and positions where the engine resigns or declares a win (no move
//! to store), are skipped and counted.
//!
//! Finished records go, in input order, to `OUT.partial`, and `OUT.partial.json` says how far
//! that is and with which settings (the journal); the same run started again resumes there.
//! `OUT` appears, complete, only when every position is done.

use super::resume::{self, Finished, Manifest, ResumeError};
use super::usi_client::{BestMove, Limit, UsiClient, UsiError};
use crate::data::records::{GameResult, HcpeRecord, PsvRecord, Record};
use crate::data::sources::{SourcePosition, result_for_side};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

/// The record format written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelFormat {
    /// cshogi's HCPE (38 bytes).
    Hcpe,
    /// YaneuraOu's PackedSfenValue (40 bytes).
    Psv,
}

impl LabelFormat {
    pub fn record_size(self) -> usize {
        match self {
            LabelFormat::Hcpe => HcpeRecord::SIZE,
            LabelFormat::Psv => PsvRecord::SIZE,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LabelFormat::Hcpe => "hcpe",
            LabelFormat::Psv => "psv",
        }
    }
}

/// Which positions `--sample K` labels: [`crate::random::sampled`].
pub use crate::random::sampled;

/// The teacher engine: a program, its arguments and the options set on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Teacher {
    pub program: String,
    pub args: Vec<String>,
    pub options: Vec<(String, String)>,
    /// Seconds the engine may take to start, set options and answer isready.
    pub timeout: Duration,
    /// Seconds one search may take before the engine is told to stop.
    pub search_timeout: Duration,
}

/// A labelling run.
#[derive(Clone, Debug)]
pub struct LabelConfig {
    pub teacher: Teacher,
    pub limit: Limit,
    pub format: LabelFormat,
    /// Engine processes side by side.
    pub threads: usize,
    /// What makes two runs the same run (docs/data.md): a resume is refused unless the
    /// journal's settings are these.
    pub settings: Manifest,
    /// The input index of the first position (a shard's start), for messages.
    pub first_index: usize,
}

/// Why a labelling run stopped.
#[derive(Debug, Error)]
pub enum LabelError {
    #[error("{0}")]
    Engine(#[from] UsiError),
    #[error("position {index} ({sfen}): {reason}")]
    Position {
        index: usize,
        sfen: String,
        reason: String,
    },
    /// The journal beside OUT: another run's (its settings differ), or damaged.
    #[error(transparent)]
    Journal(#[from] ResumeError),
    #[error("{path}: {reason}")]
    Data { path: String, reason: String },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("{0} is not a file name")]
    BadOut(String),
    #[error("a labelling thread panicked")]
    Panicked,
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> LabelError + use<> {
    let path = path.display().to_string();
    move |source| LabelError::Io { what, path, source }
}

/// Where a run stands.
#[derive(Clone, Debug, Default)]
pub struct LabelProgress {
    pub total: usize,
    /// Positions done (labelled or skipped), those found in the journal at the start included.
    pub done: usize,
    /// Positions the journal held at the start.
    pub resumed: usize,
    pub elapsed: Duration,
}

impl LabelProgress {
    /// Positions per second in this session.
    pub fn rate(&self) -> f64 {
        (self.done - self.resumed) as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// What a finished run wrote.
#[derive(Clone, Debug)]
pub struct LabelSummary {
    pub records: usize,
    pub skipped: usize,
    pub resumed: usize,
    pub engine: String,
    pub elapsed: Duration,
}

/// A finished run's output: `out` exists and no journal of an unfinished run
/// (`OUT.partial.json`, which resumes) lies beside it. Says how many records it holds.
pub fn finished_run(out: &Path, format: LabelFormat) -> Option<Finished> {
    let (_, meta) = Journal::paths(out).ok()?;
    if meta.exists() {
        return None;
    }
    let m = std::fs::metadata(out).ok()?;
    m.is_file().then(|| Finished {
        out: out.to_path_buf(),
        done: format!("{} records", m.len() / format.record_size() as u64),
        further: "pass --force to label again and replace it".into(),
    })
}

/// What an unfinished run's journal beside `out` keeps: the input positions done (labelled
/// or skipped) and the path of `OUT.partial`; `None` without a readable journal.
pub fn unfinished_run(out: &Path) -> Option<(usize, PathBuf)> {
    let (data, meta) = Journal::paths(out).ok()?;
    let counts = resume::Journal::counters_at(&meta, &COUNTERS)?;
    Some(((counts[0] + counts[1]) as usize, data))
}

/// The journal's counters: records written to `OUT.partial`, positions skipped.
const COUNTERS: [&str; 2] = ["records", "skipped"];

/// Seconds and positions between two saves of the journal.
const SAVE_EVERY: Duration = Duration::from_secs(60);
const SAVE_RECORDS: usize = 4096;
/// Consecutive positions one engine labels in a row (about a game's worth): fairy-stockfish
/// labelled a self-play set at depth 9 1.17× faster with each process given a contiguous half
/// than with the positions dealt one at a time (docs/data.md, `manaka label`, `--threads`).
const RUN: usize = 64;

enum Labelled {
    Record(Vec<u8>),
    Skipped,
}

/// Labels `positions` into `out` (resuming a journal of the same settings), calling
/// `progress` every `every` and once at the end. `on_resume` is told how many positions the
/// journal already held, before any engine starts.
pub fn label(
    positions: &[SourcePosition],
    out: &Path,
    config: &LabelConfig,
    every: Duration,
    on_resume: &mut dyn FnMut(usize, &Path),
    progress: &mut dyn FnMut(&LabelProgress),
) -> Result<LabelSummary, LabelError> {
    let total = positions.len();
    let mut journal = Journal::open(out, config.format.record_size(), config.settings.clone())?;
    let resumed = journal.done();
    if resumed > 0 {
        on_resume(resumed, &journal.data);
    }
    // No more engines than runs of positions to give them.
    let threads = config.threads.min((total - resumed).div_ceil(RUN)).max(1);
    let next = AtomicUsize::new(resumed);
    let done = AtomicUsize::new(resumed);
    // Threads that have left their loop (finished, or failed and said why).
    let stopped = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Labelled>>> = Mutex::new((0..total).map(|_| None).collect());
    let first_error: Mutex<Option<LabelError>> = Mutex::new(None);
    let names: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let start = Instant::now();
    let t = &config.teacher;
    let fail = |e: LabelError| {
        abort.store(true, Ordering::Relaxed);
        if let Ok(mut f) = first_error.lock() {
            f.get_or_insert(e);
        }
    };

    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let work = || -> Result<(), LabelError> {
                    let mut engine = UsiClient::start(&t.program, &t.args, &t.options, t.timeout)?;
                    engine.new_game()?;
                    if let Ok(mut n) = names.lock() {
                        n.push(engine.name().to_string());
                    }
                    'runs: while !abort.load(Ordering::Relaxed) {
                        let first = next.fetch_add(RUN, Ordering::Relaxed);
                        if first >= total {
                            break;
                        }
                        for (i, src) in positions.iter().enumerate().take(first + RUN).skip(first) {
                            if abort.load(Ordering::Relaxed) {
                                break 'runs;
                            }
                            let labelled =
                                label_one(&mut engine, src, config).map_err(|reason| {
                                    LabelError::Position {
                                        index: config.first_index + i + 1,
                                        sfen: src.position.to_sfen(),
                                        reason,
                                    }
                                })?;
                            if let Ok(mut r) = results.lock() {
                                r[i] = Some(labelled);
                            }
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    engine.quit();
                    Ok(())
                };
                // Counted on the way out, a panic included, so the loop below ends.
                let _stopping = Stopping(&stopped);
                if let Err(e) = work() {
                    fail(e);
                }
            });
        }
        let mut last = Instant::now();
        let mut saved = Instant::now();
        loop {
            let d = done.load(Ordering::Relaxed);
            if d >= total
                || abort.load(Ordering::Relaxed)
                || stopped.load(Ordering::Relaxed) >= threads
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
            if saved.elapsed() >= SAVE_EVERY || d >= journal.done() + SAVE_RECORDS {
                saved = Instant::now();
                if let Err(e) = journal.save(&results) {
                    fail(e);
                }
            }
            if last.elapsed() >= every {
                last = Instant::now();
                progress(&LabelProgress {
                    total,
                    done: d,
                    resumed,
                    elapsed: start.elapsed(),
                });
            }
        }
    });
    // What finished is kept even when the run fails, so the next run resumes after it.
    let saved = journal.save(&results);
    if let Some(e) = first_error.into_inner().unwrap_or(None) {
        if journal.done() == 0 {
            // Nothing to keep: leave no journal behind.
            journal.discard();
        }
        return Err(e);
    }
    saved?;
    if journal.done() < total {
        return Err(LabelError::Data {
            path: journal.kept.path().display().to_string(),
            reason: "a position was not labelled".into(),
        });
    }
    progress(&LabelProgress {
        total,
        done: journal.done(),
        resumed,
        elapsed: start.elapsed(),
    });
    let engine = names
        .into_inner()
        .unwrap_or_default()
        .first()
        .cloned()
        .unwrap_or_default();
    let (records, skipped) = (journal.records, journal.skipped);
    journal.finish()?;
    Ok(LabelSummary {
        records,
        skipped,
        resumed,
        engine,
        elapsed: start.elapsed(),
    })
}

/// Counts a labelling thread out when it ends, however it ends.
struct Stopping<'a>(&'a AtomicUsize);

impl Drop for Stopping<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// One position's record, or `Skipped` (no legal move; the engine resigned or declared).
fn label_one(
    engine: &mut UsiClient,
    src: &SourcePosition,
    config: &LabelConfig,
) -> Result<Labelled, String> {
    let pos = &src.position;
    if !pos.has_legal_moves() {
        return Ok(Labelled::Skipped);
    }
    let analysis = engine
        .analyse(pos, config.limit, config.teacher.search_timeout)
        .map_err(|e| e.to_string())?;
    let BestMove::Move(best) = analysis.best_move else {
        return Ok(Labelled::Skipped);
    };
    let score = analysis
        .score
        .ok_or_else(|| format!("{} sent bestmove without any score", engine.name()))?;
    let eval = score.to_eval();
    let mut bytes = Vec::new();
    match config.format {
        LabelFormat::Hcpe => HcpeRecord::new(
            pos,
            eval,
            Some(best),
            src.result.unwrap_or(GameResult::Draw),
        )
        .map_err(|e| e.to_string())?
        .write_bytes(&mut bytes),
        LabelFormat::Psv => PsvRecord::new(
            pos,
            eval,
            Some(best),
            result_for_side(src.result, pos.side_to_move()),
        )
        .map_err(|e| e.to_string())?
        .write_bytes(&mut bytes),
    }
    Ok(Labelled::Record(bytes))
}

/// An unfinished run's records: `OUT.partial` holds the records of input positions
/// `0..done` in input order, and the run's journal `OUT.partial.json` ([`resume::Journal`])
/// says how far that is and with which settings (positions file, limit, format, engine), so
/// only the same command resumes it. The data is appended and synced before the journal is
/// replaced (atomically), and a resume first cuts the data back to the records the journal
/// counts: a crash between the two loses nothing twice.
struct Journal {
    data: PathBuf,
    out: PathBuf,
    kept: resume::Journal,
    /// Bytes per record of the output format.
    record_size: u64,
    records: usize,
    skipped: usize,
}

impl Journal {
    /// `OUT.partial` and `OUT.partial.json`.
    fn paths(out: &Path) -> Result<(PathBuf, PathBuf), LabelError> {
        let name = out
            .file_name()
            .ok_or_else(|| LabelError::BadOut(out.display().to_string()))?
            .to_string_lossy()
            .into_owned();
        Ok((
            out.with_file_name(format!("{name}.partial")),
            out.with_file_name(format!("{name}.partial.json")),
        ))
    }

    /// Input positions done (labelled or skipped), a prefix of the input.
    fn done(&self) -> usize {
        self.records + self.skipped
    }

    fn bytes(&self) -> u64 {
        self.records as u64 * self.record_size
    }

    fn open(out: &Path, record_size: usize, settings: Manifest) -> Result<Journal, LabelError> {
        let (data, meta) = Journal::paths(out)?;
        let advice = format!(
            "run that command again to finish it, or delete {} and {} to start over",
            data.display(),
            meta.display()
        );
        let mut journal = Journal {
            kept: resume::Journal::new(meta, settings, "an unfinished labelling run", &advice),
            data,
            out: out.to_path_buf(),
            record_size: record_size as u64,
            records: 0,
            skipped: 0,
        };
        match journal.kept.load(&COUNTERS)? {
            Some(counts) => {
                journal.records = counts[0] as usize;
                journal.skipped = counts[1] as usize;
                let file = OpenOptions::new()
                    .write(true)
                    .open(&journal.data)
                    .map_err(io("opening", &journal.data))?;
                let len = file.metadata().map_err(io("reading", &journal.data))?.len();
                if len < journal.bytes() {
                    return Err(LabelError::Data {
                        path: journal.data.display().to_string(),
                        reason: format!(
                            "shorter ({len} bytes) than the {} records of {} ({} bytes); delete both partial files to start over",
                            journal.records,
                            journal.kept.path().display(),
                            journal.bytes()
                        ),
                    });
                }
                file.set_len(journal.bytes())
                    .map_err(io("truncating", &journal.data))?;
            }
            None => {
                File::create(&journal.data).map_err(io("creating", &journal.data))?;
            }
        }
        Ok(journal)
    }

    /// Appends the finished prefix of `results` after `done` and records the new state.
    fn save(&mut self, results: &Mutex<Vec<Option<Labelled>>>) -> Result<(), LabelError> {
        let mut bytes = Vec::new();
        let (mut records, mut skipped) = (0, 0);
        {
            let mut results = results.lock().map_err(|_| LabelError::Panicked)?;
            while let Some(slot) = results.get_mut(self.done() + records + skipped) {
                match slot.take() {
                    Some(Labelled::Record(r)) => bytes.extend_from_slice(&r),
                    Some(Labelled::Skipped) => {
                        skipped += 1;
                        continue;
                    }
                    None => break,
                }
                records += 1;
            }
        }
        if records + skipped == 0 {
            return Ok(());
        }
        let mut file = OpenOptions::new()
            .append(true)
            .open(&self.data)
            .map_err(io("appending to", &self.data))?;
        file.write_all(&bytes)
            .and_then(|()| file.sync_data())
            .map_err(io("appending to", &self.data))?;
        self.records += records;
        self.skipped += skipped;
        Ok(self.kept.save(&[
            (COUNTERS[0], self.records as u64),
            (COUNTERS[1], self.skipped as u64),
        ])?)
    }

    /// Leaves nothing behind: for a run that failed before it kept anything.
    fn discard(&self) {
        let _ = std::fs::remove_file(&self.data);
        let _ = self.kept.remove();
    }

    /// Moves the complete data into place as OUT and removes the journal.
    fn finish(self) -> Result<(), LabelError> {
        std::fs::rename(&self.data, &self.out).map_err(io("moving into place", &self.data))?;
        Ok(self.kept.remove()?)
    }
}
