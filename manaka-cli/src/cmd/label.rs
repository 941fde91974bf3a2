//! `manaka label`: teacher data from any USI engine's score and best move.

use anyhow::{Context, Result, anyhow, bail};
use manaka_runtime::data::io::write_atomic;
use manaka_runtime::data::records::{GameResult, HcpeRecord, PsvRecord, Record};
use manaka_runtime::data::shard::Shard;
use manaka_runtime::data::sources::{
    SourceFormat, SourcePosition, read_positions, result_for_side,
};
use manaka_runtime::data::usi_client::{BestMove, Limit, UsiClient};
use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Label positions with a USI engine's score and best move, as HCPE or PackedSfenValue.
///
/// Every position is sent alone (`position sfen …`, no game history) and searched with
/// `go depth D` or `go nodes N`. Scores are the engine's, from the side to move: centipawns
/// clamped to ±30000; a mate in n plies is stored as 32000 − n, being mated in n as
/// −(32000 − n). Positions without a legal move, and positions where the engine resigns or
/// declares a win (no move to store), are skipped and counted. The game result field is
/// the result of the game the position came from where the input records one (HCPE3, HCPE,
/// PSV), else a draw / 0.
///
/// Long runs survive interruption: finished records go, in input order, to `OUT.partial`
/// (with `OUT.partial.json` saying how far it got) every few thousand positions, and the
/// same command run again resumes from there. OUT itself appears only when every position
/// is done; run again once OUT exists, the command says the run is finished and does
/// nothing (`--force` labels again).
///
/// Several machines: --shard i/n labels only the i-th of n equal contiguous ranges of the
/// positions. Records stay in input order, so the shards' outputs, concatenated in shard
/// order, are byte for byte the output of one unsharded run; the trainer also takes them
/// as they are (`train --data out-*.hcpe`). docs/training.md shows Slurm and Kubernetes
/// job arrays.
///
/// Example: `manaka label --engine /usr/games/fairy-stockfish --depth 10 --positions
/// pos.sfen --out pos.hcpe --threads 2`
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("limit").required(true).args(["depth", "nodes"])))]
pub struct Args {
    /// The engine command: a program and its arguments, separated by spaces.
    #[arg(long, value_name = "CMD")]
    engine: String,
    /// Engine option, sent as `setoption name NAME value VALUE` (repeatable).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// Search depth per position (`go depth D`).
    #[arg(long, value_name = "D")]
    depth: Option<u32>,
    /// Search nodes per position (`go nodes N`).
    #[arg(long, value_name = "N")]
    nodes: Option<u64>,
    /// Positions: SFEN lines (`manaka positions`), HCPE3 games, HCPE or PSV records.
    #[arg(long, value_name = "FILE")]
    positions: PathBuf,
    /// How to read --positions (auto: by extension .hcpe3, .hcpe, .psv/.bin, else SFEN lines).
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    positions_format: InputFormat,
    /// Output file (appears, complete, when the run ends; see the resume note above).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Output format: HCPE (cshogi, 38-byte records) or YaneuraOu PackedSfenValue (40 bytes).
    #[arg(long, value_enum, default_value_t = OutFormat::Hcpe)]
    format: OutFormat,
    /// Engines run side by side, one process each.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: u32,
    /// Seconds the engine may take to start, set options and answer isready.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    timeout: f64,
    /// Seconds one search may take before the engine is told to stop.
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    search_timeout: f64,
    /// Label again even though OUT exists (a finished run), replacing it when done.
    #[arg(long)]
    force: bool,
    /// Label only part i of n (0 <= i < n): positions [i·N/n, (i+1)·N/n) of the N in the file.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<Shard>,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    Shard::parse(text)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum InputFormat {
    Auto,
    Sfen,
    Hcpe3,
    Hcpe,
    Psv,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum OutFormat {
    Hcpe,
    Psv,
}

enum Labelled {
    Hcpe(HcpeRecord),
    Psv(PsvRecord),
    Skipped,
}

pub fn run(args: Args) -> Result<()> {
    let mut words = args.engine.split_whitespace().map(str::to_string);
    let program = words.next().ok_or_else(|| anyhow!("--engine is empty"))?;
    let engine_args: Vec<String> = words.collect();
    let options = args
        .options
        .iter()
        .map(|o| match o.split_once('=') {
            Some((n, v)) if !n.trim().is_empty() => {
                Ok((n.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(anyhow!("--option '{o}' is not NAME=VALUE")),
        })
        .collect::<Result<Vec<_>>>()?;
    let limit = match (args.depth, args.nodes) {
        (Some(d), _) => Limit::Depth(d),
        (None, Some(n)) => Limit::Nodes(n),
        (None, None) => bail!("give --depth or --nodes"),
    };
    for (name, secs) in [
        ("--timeout", args.timeout),
        ("--search-timeout", args.search_timeout),
    ] {
        if !(secs.is_finite() && secs > 0.0) {
            bail!("{name} must be a positive number of seconds");
        }
    }
    let format = match args.positions_format {
        InputFormat::Auto => SourceFormat::from_path(&args.positions),
        InputFormat::Sfen => SourceFormat::Sfen,
        InputFormat::Hcpe3 => SourceFormat::Hcpe3,
        InputFormat::Hcpe => SourceFormat::Hcpe,
        InputFormat::Psv => SourceFormat::Psv,
    };
    let record_size = match args.format {
        OutFormat::Hcpe => HcpeRecord::SIZE,
        OutFormat::Psv => PsvRecord::SIZE,
    };
    if let Some(records) = finished_run(&args.out, record_size, args.force) {
        eprintln!(
            "label: {} exists: that run is finished ({records} records); nothing to do (pass \
             --force to label again and replace it)",
            args.out.display()
        );
        return Ok(());
    }
    let mut positions = read_positions(&args.positions, format).context("reading --positions")?;
    if positions.is_empty() {
        bail!("{} holds no positions", args.positions.display());
    }
    // A shard is a contiguous range, so the shards' outputs in order are the whole run's.
    let shard = args.shard.unwrap_or_default();
    let first = shard.range_start(positions.len() as u64) as usize;
    let end = shard.range_start_of(shard.index + 1, positions.len() as u64) as usize;
    positions.truncate(end);
    positions.drain(..first);
    if positions.is_empty() {
        bail!(
            "shard {shard} of {}'s positions is empty: use fewer shards",
            args.positions.display()
        );
    }

    let total = positions.len();
    // What makes two runs the same run (docs/data.md, "Resuming a labelling run").
    let settings = serde_json::json!({
        "positions": std::path::absolute(&args.positions).unwrap_or(args.positions.clone()),
        "positions_bytes": std::fs::metadata(&args.positions).map(|m| m.len()).unwrap_or(0),
        "total": total,
        "format": match args.format { OutFormat::Hcpe => "hcpe", OutFormat::Psv => "psv" },
        "limit": match limit {
            Limit::Depth(d) => format!("depth {d}"),
            Limit::Nodes(n) => format!("nodes {n}"),
        },
        "engine": args.engine,
        "options": args.options,
    });
    // Only for a sharded run, so that journals written before shards existed still resume.
    let mut settings = settings;
    if shard.count > 1 {
        settings["shard"] = serde_json::json!(shard.to_string());
    }
    let mut journal = Journal::open(&args.out, record_size, settings)?;
    let resumed = journal.done();
    if resumed > 0 {
        eprintln!(
            "label: resuming at position {resumed}/{total} from {}",
            journal.data.display()
        );
    }
    let threads = (args.threads as usize).min(total - resumed).max(1);
    let next = AtomicUsize::new(resumed);
    let done = AtomicUsize::new(resumed);
    let abort = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Labelled>>> = Mutex::new((0..total).map(|_| None).collect());
    let first_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let timeout = Duration::from_secs_f64(args.timeout);
    let search_timeout = Duration::from_secs_f64(args.search_timeout);
    let start = Instant::now();
    let mut engine_name = String::new();
    let names: Mutex<Vec<String>> = Mutex::new(Vec::new());

    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let work = || -> Result<()> {
                    let mut engine = UsiClient::start(&program, &engine_args, &options, timeout)?;
                    engine.new_game()?;
                    if let Ok(mut n) = names.lock() {
                        n.push(engine.name().to_string());
                    }
                    while !abort.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(src) = positions.get(i) else { break };
                        let labelled =
                            label_one(&mut engine, src, limit, search_timeout, args.format)
                                .with_context(|| {
                                    format!(
                                        "position {} ({})",
                                        first + i + 1,
                                        src.position.to_sfen()
                                    )
                                })?;
                        if let Ok(mut r) = results.lock() {
                            r[i] = Some(labelled);
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    engine.quit();
                    Ok(())
                };
                if let Err(e) = work() {
                    abort.store(true, Ordering::Relaxed);
                    if let Ok(mut f) = first_error.lock() {
                        f.get_or_insert(e);
                    }
                }
            });
        }
        // Progress on stderr while the workers run.
        let tty = std::io::stderr().is_terminal();
        let every = if tty {
            Duration::from_millis(500)
        } else {
            Duration::from_secs(10)
        };
        let mut last = Instant::now();
        let mut saved = Instant::now();
        loop {
            let d = done.load(Ordering::Relaxed);
            if d >= total
                || abort.load(Ordering::Relaxed)
                || next.load(Ordering::Relaxed) >= total + threads
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
            if saved.elapsed() >= SAVE_EVERY || d >= journal.done() + SAVE_RECORDS {
                saved = Instant::now();
                if let Err(e) = journal.save(&results) {
                    abort.store(true, Ordering::Relaxed);
                    if let Ok(mut f) = first_error.lock() {
                        f.get_or_insert(e);
                    }
                }
            }
            if last.elapsed() >= every {
                last = Instant::now();
                let rate = (d - resumed) as f64 / start.elapsed().as_secs_f64().max(1e-9);
                if tty {
                    eprint!("\rlabel: {d}/{total} positions, {rate:.1}/s   ");
                } else {
                    eprintln!("label: {d}/{total} positions, {rate:.1}/s");
                }
            }
        }
    });
    // What finished is kept even when the run fails, so the next run resumes after it.
    let saved = journal.save(&results);
    if let Some(e) = first_error.into_inner().unwrap_or(None) {
        if std::io::stderr().is_terminal() {
            eprintln!();
        }
        if journal.done() == 0 {
            // Nothing to keep: leave no journal behind.
            let _ = std::fs::remove_file(&journal.data);
            let _ = std::fs::remove_file(&journal.meta);
        } else {
            eprintln!(
                "label: {} of {total} positions kept in {}; run the same command again to resume",
                journal.done(),
                journal.data.display()
            );
        }
        return Err(e);
    }
    saved?;
    if let Some(n) = names.into_inner().unwrap_or_default().first() {
        engine_name = n.clone();
    }

    if journal.done() < total {
        return Err(super::Internal("a position was not labelled".into()).into());
    }
    let (written, skipped) = (journal.records, journal.skipped);
    journal.finish()?;
    let secs = start.elapsed().as_secs_f64();
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    eprintln!(
        "label: {written} positions labelled by {engine_name} in {secs:.1} s ({:.1}/s), {skipped} skipped, written to {}",
        (total - resumed) as f64 / secs.max(1e-9),
        args.out.display()
    );
    Ok(())
}

/// The records in `out` when it is a finished run's output: it exists and no journal of an
/// unfinished run (`OUT.partial.json`, which resumes) lies beside it; `None` with `force`.
fn finished_run(out: &Path, record_size: usize, force: bool) -> Option<u64> {
    let name = out.file_name()?.to_string_lossy().into_owned();
    let journal = out.with_file_name(format!("{name}.partial.json"));
    if force || journal.exists() {
        return None;
    }
    let meta = std::fs::metadata(out).ok()?;
    meta.is_file().then(|| meta.len() / record_size as u64)
}

/// Seconds and positions between two saves of the journal.
const SAVE_EVERY: Duration = Duration::from_secs(60);
const SAVE_RECORDS: usize = 4096;

/// An unfinished run's records: `OUT.partial` holds the records of input positions
/// `0..done` in input order, `OUT.partial.json` says how far that is and with which settings
/// (positions file, limit, format, engine), so only the same command resumes it. The data is
/// appended and synced before the JSON is replaced (atomically), and a resume first cuts the
/// data back to the records the JSON counts: a crash between the two loses nothing twice.
struct Journal {
    data: PathBuf,
    meta: PathBuf,
    out: PathBuf,
    settings: serde_json::Value,
    /// Bytes per record of the output format.
    record_size: u64,
    records: usize,
    skipped: usize,
}

impl Journal {
    /// Input positions done (labelled or skipped), a prefix of the input.
    fn done(&self) -> usize {
        self.records + self.skipped
    }

    fn bytes(&self) -> u64 {
        self.records as u64 * self.record_size
    }

    fn open(out: &Path, record_size: usize, settings: serde_json::Value) -> Result<Journal> {
        let name = out
            .file_name()
            .ok_or_else(|| anyhow!("--out {} is not a file name", out.display()))?
            .to_string_lossy()
            .into_owned();
        let data = out.with_file_name(format!("{name}.partial"));
        let meta = out.with_file_name(format!("{name}.partial.json"));
        let mut journal = Journal {
            data,
            meta,
            out: out.to_path_buf(),
            settings,
            record_size: record_size as u64,
            records: 0,
            skipped: 0,
        };
        match std::fs::read_to_string(&journal.meta) {
            Ok(text) => {
                let saved: serde_json::Value = serde_json::from_str(&text)
                    .with_context(|| format!("{} is not valid JSON", journal.meta.display()))?;
                if saved.get("settings") != Some(&journal.settings) {
                    bail!(
                        "{} belongs to an unfinished run with other settings ({}); run that \
                         command again to finish it, or delete {} and {} to start over",
                        journal.meta.display(),
                        saved
                            .get("settings")
                            .map(|s| s.to_string())
                            .unwrap_or_default(),
                        journal.data.display(),
                        journal.meta.display()
                    );
                }
                let field = |k: &str| {
                    saved
                        .get(k)
                        .and_then(|v| v.as_u64())
                        .ok_or_else(|| anyhow!("{} has no number '{k}'", journal.meta.display()))
                };
                journal.records = field("records")? as usize;
                journal.skipped = field("skipped")? as usize;
                let file = OpenOptions::new()
                    .write(true)
                    .open(&journal.data)
                    .with_context(|| format!("opening {}", journal.data.display()))?;
                let len = file.metadata()?.len();
                if len < journal.bytes() {
                    bail!(
                        "{} is shorter ({len} bytes) than {} records ({} bytes); delete both \
                         partial files to start over",
                        journal.data.display(),
                        journal.meta.display(),
                        journal.bytes()
                    );
                }
                file.set_len(journal.bytes())?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                File::create(&journal.data)
                    .with_context(|| format!("creating {}", journal.data.display()))?;
            }
            Err(e) => return Err(e).context(format!("reading {}", journal.meta.display())),
        }
        Ok(journal)
    }

    /// Appends the finished prefix of `results` after `done` and records the new state.
    fn save(&mut self, results: &Mutex<Vec<Option<Labelled>>>) -> Result<()> {
        let mut bytes = Vec::new();
        let (mut records, mut skipped) = (0, 0);
        {
            let mut results = results
                .lock()
                .map_err(|_| anyhow!("a labelling thread panicked"))?;
            while let Some(slot) = results.get_mut(self.done() + records + skipped) {
                match slot.take() {
                    Some(Labelled::Hcpe(h)) => h.write_bytes(&mut bytes),
                    Some(Labelled::Psv(p)) => p.write_bytes(&mut bytes),
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
        let context = || format!("appending to {}", self.data.display());
        let mut file = OpenOptions::new()
            .append(true)
            .open(&self.data)
            .with_context(context)?;
        file.write_all(&bytes).with_context(context)?;
        file.sync_data().with_context(context)?;
        self.records += records;
        self.skipped += skipped;
        let state = serde_json::json!({
            "settings": self.settings,
            "records": self.records,
            "skipped": self.skipped,
        });
        write_atomic(&self.meta, state.to_string().as_bytes())
            .with_context(|| format!("writing {}", self.meta.display()))
    }

    /// Moves the complete data into place as OUT and removes the journal.
    fn finish(self) -> Result<()> {
        std::fs::rename(&self.data, &self.out)
            .with_context(|| format!("moving {} to {}", self.data.display(), self.out.display()))?;
        std::fs::remove_file(&self.meta)
            .with_context(|| format!("removing {}", self.meta.display()))
    }
}

fn label_one(
    engine: &mut UsiClient,
    src: &SourcePosition,
    limit: Limit,
    search_timeout: Duration,
    format: OutFormat,
) -> Result<Labelled> {
    let pos = &src.position;
    if !pos.has_legal_moves() {
        return Ok(Labelled::Skipped);
    }
    let analysis = engine.analyse(pos, limit, search_timeout)?;
    let BestMove::Move(best) = analysis.best_move else {
        return Ok(Labelled::Skipped);
    };
    let score = analysis
        .score
        .ok_or_else(|| anyhow!("{} sent bestmove without any score", engine.name()))?;
    let eval = score.to_eval();
    Ok(match format {
        OutFormat::Hcpe => Labelled::Hcpe(HcpeRecord::new(
            pos,
            eval,
            Some(best),
            src.result.unwrap_or(GameResult::Draw),
        )?),
        OutFormat::Psv => Labelled::Psv(PsvRecord::new(
            pos,
            eval,
            Some(best),
            result_for_side(src.result, pos.side_to_move()),
        )?),
    })
}
