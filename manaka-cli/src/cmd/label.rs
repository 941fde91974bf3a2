//! `manaka label`: teacher data from any USI engine's score and best move.

use anyhow::{Context, Result, anyhow, bail};
use manaka_runtime::data::sources::{SourceFormat, read_positions};
use manaka_runtime::runs::label::{self, LabelConfig, LabelFormat, Teacher, finished_run, sampled};
use manaka_runtime::runs::resume::Manifest;
use manaka_runtime::runs::shard::Shard;
use manaka_runtime::runs::usi_client::Limit;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

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
/// Positions from many games: --sample K labels about one position in K (by a hash of its
/// index, the same every run), so a set of the same size comes from K times as many games —
/// whose positions are less alike than one game's (docs/history.md, "Positions from more
/// games").
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
    /// Label only part i of n (0 <= i < n): positions [i·N/n, (i+1)·N/n) of the N in the file
    /// (of those --sample keeps, when it is given).
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<Shard>,
    /// Label about one position in K, chosen by a hash of its index in the file (the same
    /// ones every run). Positions of one game are alike, so a sparse sample of K times as many
    /// self-play games teaches more than the same number of positions from fewer games; self-play
    /// is cheap next to the teacher. Default 1: every position.
    #[arg(long, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    sample: u64,
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
    let label_format = match args.format {
        OutFormat::Hcpe => LabelFormat::Hcpe,
        OutFormat::Psv => LabelFormat::Psv,
    };
    if !args.force
        && let Some(finished) = finished_run(&args.out, label_format)
    {
        eprintln!("label: {finished}");
        return Ok(());
    }
    let mut positions = read_positions(&args.positions, format).context("reading --positions")?;
    if positions.is_empty() {
        bail!("{} holds no positions", args.positions.display());
    }
    if args.sample > 1 {
        let read = positions.len();
        positions = positions
            .into_iter()
            .enumerate()
            .filter(|&(i, _)| sampled(args.sample, i as u64))
            .map(|(_, p)| p)
            .collect();
        eprintln!(
            "label: sampling {} of {read} positions (about one in {})",
            positions.len(),
            args.sample
        );
        if positions.is_empty() {
            bail!(
                "--sample {} keeps none of {}'s {read} positions: sample fewer",
                args.sample,
                args.positions.display()
            );
        }
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
    // What makes two runs the same run (docs/data.md, "Resuming a labelling run"). The
    // values are written as the journals of earlier versions hold them (the options as a
    // JSON list), so that their runs still resume.
    let mut settings = Manifest::new()
        .with(
            "positions",
            std::path::absolute(&args.positions)
                .unwrap_or(args.positions.clone())
                .display(),
        )
        .with(
            "positions_bytes",
            std::fs::metadata(&args.positions).map_or(0, |m| m.len()),
        )
        .with("total", total)
        .with("format", label_format.name())
        .with(
            "limit",
            match limit {
                Limit::Depth(d) => format!("depth {d}"),
                Limit::Nodes(n) => format!("nodes {n}"),
            },
        )
        .with("engine", &args.engine)
        .with("options", serde_json::json!(args.options));
    // Only for a sharded run, so that journals written before shards existed still resume.
    if shard.count > 1 {
        settings = settings.with("shard", shard);
    }
    if args.sample > 1 {
        settings = settings.with("sample", args.sample);
    }
    let config = LabelConfig {
        teacher: Teacher {
            program,
            args: engine_args,
            options,
            timeout: Duration::from_secs_f64(args.timeout),
            search_timeout: Duration::from_secs_f64(args.search_timeout),
        },
        limit,
        format: label_format,
        threads: args.threads as usize,
        settings,
        first_index: first,
    };
    let tty = std::io::stderr().is_terminal();
    let every = if tty {
        Duration::from_millis(500)
    } else {
        Duration::from_secs(10)
    };
    let mut printed = false;
    let result = label::label(
        &positions,
        &args.out,
        &config,
        every,
        &mut |resumed, partial| {
            eprintln!(
                "label: resuming at position {resumed}/{total} from {}",
                partial.display()
            )
        },
        &mut |p| {
            let line = format!("label: {}/{} positions, {:.1}/s", p.done, p.total, p.rate());
            if tty {
                eprint!("\r{line}   ");
                printed = true;
            } else if p.done < p.total {
                eprintln!("{line}");
            }
        },
    );
    if printed {
        eprintln!();
    }
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            // Stopped during the run (not refused before it): say what the journal keeps.
            let during = matches!(
                e,
                label::LabelError::Engine(_)
                    | label::LabelError::Position { .. }
                    | label::LabelError::Panicked
            );
            if let Some((kept, partial)) = label::unfinished_run(&args.out).filter(|_| during) {
                eprintln!(
                    "label: {kept} of {total} positions kept in {}; run the same command again to resume",
                    partial.display()
                );
            }
            return Err(e.into());
        }
    };
    let secs = summary.elapsed.as_secs_f64();
    eprintln!(
        "label: {} positions labelled by {} in {secs:.1} s ({:.1}/s), {} skipped, written to {}",
        summary.records,
        summary.engine,
        (total - summary.resumed) as f64 / secs.max(1e-9),
        summary.skipped,
        args.out.display()
    );
    Ok(())
}
