//! `manaka train`: train MNW1 weights for any shape on the CPU (docs/training.md).

use anyhow::{Context, Result, bail};
use manaka_runtime::train::{self, DataFormat, Dataset, Event, Stop, TrainConfig};
use manaka_shapes::Shape;
use serde_json::json;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Train a network's weights on HCPE, HCPE3 or PackedSfenValue data.
///
/// The forward pass is the reference evaluator's (SPEC sections 4-6), so the file written
/// evaluates in `manaka eval`, `manaka usi` and compiled engines exactly as it did in training.
/// Every block of every valid shape has a hand-derived backward pass; the optimiser is Adam
/// (lazy on the token tables: only the rows a batch touched are updated). For `nnue` shapes
/// every updated value is clamped to what YaneuraOu's nn.bin integers can hold (docs/nnue.md),
/// so `manaka weights export-nnue` never saturates; --init weights beyond those limits are
/// brought inside at the first update.
///
/// Loss: value = cross-entropy of sigmoid(value logit) against
/// lambda * teacher + (1 - lambda) * game result, where teacher = sigmoid(eval / scale)
/// (scale 600 for HCPE and PackedSfenValue scores, 756.0864962951762 for HCPE3 evals);
/// policy = cross-entropy of the softmax over the legal moves against the stored move
/// (HCPE, PackedSfenValue) or the candidates' visit distribution (HCPE3).
///
/// Checkpoints: --out and OUT.state (the optimiser and the position in the data) are written
/// atomically every --checkpoint-every, after every epoch and at the end; the validation loss
/// is computed at each. `--resume` continues the run from them, e.g. with a larger --epochs or
/// another --time-limit; an interrupted and resumed run gives the same weights as an
/// uninterrupted one with the same --threads, wherever it was killed (a checkpoint is one step:
/// OUT.state.next stands in for OUT.state after a kill between the two renames). A run that has
/// completed its --epochs says it is finished and writes nothing.
///
/// Progress goes to stderr (every --report-every), and with --log as JSON lines; the final
/// summary goes to stdout (--json: one JSON object).
///
/// Example: `manaka train --shape pair4_d16_o2_h32 --data teacher.hcpe --val val.hcpe --out net.mnw --epochs 4`
#[derive(clap::Args)]
pub struct Args {
    /// Network shape to train (`manaka shape info` explains one).
    #[arg(long, value_name = "SHAPE")]
    shape: String,
    /// Training data files, or directories of them (every .hcpe, .hcpe3, .psv, .bin inside).
    #[arg(long, required_unless_present = "teacher_only", num_args = 1.., value_name = "FILE")]
    data: Vec<PathBuf>,
    /// More training data whose game results are not real (positions labelled from SFEN
    /// lines, e.g. `manaka positions --children-of` then `manaka label`): their value target
    /// is the teacher's alone, whatever --lambda, instead of being pulled towards a draw.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    teacher_only: Vec<PathBuf>,
    /// Validation data (same formats), evaluated at every checkpoint.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    val: Vec<PathBuf>,
    /// Data format of every file, instead of telling it by extension (.hcpe, .hcpe3,
    /// .psv/.bin).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Weights to start from (default: `manaka weights init` random weights from --seed).
    #[arg(long, value_name = "FILE.mnw")]
    init: Option<PathBuf>,
    /// Output weight file, rewritten at every checkpoint; the optimiser state goes beside
    /// it as OUT.state.
    #[arg(long, value_name = "FILE.mnw")]
    out: PathBuf,
    /// Continue the run checkpointed in --out (and OUT.state).
    #[arg(long, conflicts_with = "init")]
    resume: bool,
    /// Start a new run even if --out exists.
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    /// Train until this many epochs are complete (a resumed run counts its earlier ones).
    #[arg(long, default_value_t = 1, value_name = "E")]
    epochs: u32,
    /// Positions per optimiser step.
    #[arg(long, default_value_t = 256, value_name = "B", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    batch: u64,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 1e-3, value_name = "L")]
    lr: f64,
    /// Multiply the learning rate by this after every epoch.
    #[arg(long, default_value_t = 1.0, value_name = "G")]
    lr_decay: f64,
    /// Warm the learning rate up linearly over this many steps.
    #[arg(long, default_value_t = 100, value_name = "N")]
    warmup: u64,
    /// Worker threads (default: every CPU).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Weight of the teacher's eval in the value target; 1 - lambda goes to the game result.
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    lambda: f64,
    /// Weight of the policy loss beside the value loss.
    #[arg(long, default_value_t = 1.0, value_name = "W")]
    policy_weight: f64,
    /// Reflect about half the training positions left to right each epoch (a different
    /// half each epoch): shogi's rules are symmetric under the reflection, so the network
    /// sees twice as many distinct positions for the same labelling. Validation is not
    /// reflected.
    #[arg(long)]
    mirror: bool,
    /// Score scale of the data's evals: teacher = sigmoid(eval / scale) (default: 600 for
    /// HCPE and PackedSfenValue, 756.0864962951762 for HCPE3).
    #[arg(long, value_name = "S")]
    eval_scale: Option<f64>,
    /// Seed of the random initial weights and the shuffling (default 1; a resumed run keeps
    /// its own).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Stop (with a checkpoint) once this many optimiser steps are done in all.
    #[arg(long, value_name = "N")]
    max_steps: Option<u64>,
    /// Stop (with a checkpoint) after this long: 90s, 45m, 1.5h (a bare number is seconds).
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    time_limit: Option<Duration>,
    /// Checkpoint (and validate) this often.
    #[arg(long, default_value = "10m", value_name = "TIME", value_parser = parse_duration)]
    checkpoint_every: Duration,
    /// Print progress this often.
    #[arg(long, default_value = "10s", value_name = "TIME", value_parser = parse_duration)]
    report_every: Duration,
    /// Validate on at most this many positions of --val (0: all).
    #[arg(long, default_value_t = 0, value_name = "N")]
    val_limit: usize,
    /// Append every progress report, validation and checkpoint as a JSON line to FILE.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Print the final summary as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// cshogi HCPE (38-byte records).
    Hcpe,
    /// dlshogi HCPE3 games with candidate visit counts.
    Hcpe3,
    /// YaneuraOu PackedSfenValue (40-byte records).
    Psv,
}

impl Format {
    fn data_format(self) -> DataFormat {
        match self {
            Format::Hcpe => DataFormat::Hcpe,
            Format::Hcpe3 => DataFormat::Hcpe3,
            Format::Psv => DataFormat::Psv,
        }
    }
}

/// `90`, `90s`, `45m`, `1.5h`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c),
        _ => (t, 's'),
    };
    let scale = match unit {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3600.0,
        _ => return Err(format!("'{text}': the unit must be s, m or h")),
    };
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale < 1e9 => {
            Ok(Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!("'{text}' is not a duration like 90s, 45m or 1.5h")),
    }
}

/// The data files named by `paths`: files as given, directories expanded to their data files
/// (sorted, so the order — and the shuffle — is the same every run).
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("cannot list {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && DataFormat::from_path(f).is_some())
                .collect();
            found.sort();
            if found.is_empty() {
                bail!("{} holds no .hcpe, .hcpe3, .psv or .bin files", p.display());
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn load(
    paths: &[PathBuf],
    teacher_only: &[PathBuf],
    format: Option<Format>,
    eval_scale: Option<f64>,
    what: &str,
) -> Result<Dataset> {
    let mut data = Dataset::new();
    let files = expand(paths)?.into_iter().map(|p| (p, false));
    for (path, no_results) in files.chain(expand(teacher_only)?.into_iter().map(|p| (p, true))) {
        let t = Instant::now();
        let format = format.map(Format::data_format);
        let n = if no_results {
            data.load_teacher_only(&path, format, eval_scale)
        } else {
            data.load(&path, format, eval_scale)
        }
        .with_context(|| format!("cannot read {what} data"))?;
        eprintln!(
            "{what}: {} positions from {}{} ({:.1}s)",
            thousands(n as u64),
            path.display(),
            if no_results { " (teacher only)" } else { "" },
            t.elapsed().as_secs_f64()
        );
    }
    Ok(data)
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Appends JSON lines to the --log file.
struct Log(Option<File>);

impl Log {
    fn open(path: Option<&Path>) -> Result<Log> {
        Ok(Log(match path {
            Some(p) => Some(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .with_context(|| format!("cannot open --log {}", p.display()))?,
            ),
            None => None,
        }))
    }

    fn write(&mut self, v: serde_json::Value) {
        if let Some(f) = &mut self.0 {
            // A full disk must not stop training: the log is a convenience.
            let _ = writeln!(f, "{v}");
        }
    }
}

pub fn run(args: Args) -> Result<()> {
    let shape =
        Shape::parse(&args.shape).with_context(|| format!("bad --shape '{}'", args.shape))?;
    let config = config(&args, shape.clone())?;
    // Refuse bad settings and a clobbered --out before minutes of loading.
    config.preflight().context("cannot train")?;
    let train_data = load(
        &args.data,
        &args.teacher_only,
        args.format,
        args.eval_scale,
        "training",
    )?;
    let val_data = if args.val.is_empty() {
        None
    } else {
        Some(load(
            &args.val,
            &[],
            args.format,
            args.eval_scale,
            "validation",
        )?)
    };
    let mut log = Log::open(args.log.as_deref())?;
    if args.resume
        && let Some(s) = args.seed
    {
        eprintln!(
            "note: a resumed run keeps the seed it started with; --seed {s} only matters for new runs"
        );
    }
    let summary = train::train(&config, &train_data, val_data.as_ref(), &mut |event| {
        show(&args, &shape, &mut log, event)
    })
    .context("training failed")?;
    print_summary(&args, &shape, &summary);
    Ok(())
}

/// The trainer's settings from the flags (checked by `TrainConfig::preflight`, beside the
/// ones only the CLI has).
fn config(args: &Args, shape: Shape) -> Result<TrainConfig> {
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let mut config = TrainConfig::new(shape, args.out.clone());
    config.init = args.init.clone();
    config.resume = args.resume;
    config.force = args.force;
    config.epochs = args.epochs;
    config.batch = args.batch as usize;
    config.lr = args.lr;
    config.lr_decay = args.lr_decay;
    config.warmup = args.warmup;
    config.threads = threads;
    config.lambda = args.lambda;
    config.policy_weight = args.policy_weight;
    config.mirror = args.mirror;
    config.seed = args.seed.unwrap_or(1);
    config.max_steps = args.max_steps;
    config.time_limit = args.time_limit;
    config.checkpoint_every = args.checkpoint_every;
    config.report_every = args.report_every;
    config.val_limit = args.val_limit;
    if let Some(s) = args.eval_scale
        && !(s.is_finite() && s > 0.0)
    {
        bail!("--eval-scale {s} must be a positive number");
    }
    Ok(config)
}

/// One event of the run: a line on stderr and, with --log, a JSON line.
fn show(args: &Args, shape: &Shape, log: &mut Log, event: Event<'_>) {
    match event {
        Event::Started {
            resumed,
            step,
            epoch,
            params,
            train,
            val,
            threads,
        } => {
            let how = if resumed {
                format!("resuming at step {step} (epoch {})", epoch + 1)
            } else {
                "starting".to_string()
            };
            eprintln!(
                "train: {shape}, {} parameters, {} training and {} validation positions, {threads} threads; {how}",
                thousands(params as u64),
                thousands(train as u64),
                thousands(val as u64)
            );
            log.write(json!({"event": "start", "shape": shape.to_string(), "resumed": resumed, "step": step, "epoch": epoch,
                "params": params, "train": train, "val": val, "threads": threads, "batch": args.batch, "lr": args.lr,
                "lambda": args.lambda, "policy_weight": args.policy_weight, "mirror": args.mirror}));
        }
        Event::Note(text) => eprintln!("note: {text}"),
        Event::Report(r) => {
            eprintln!(
                "epoch {} ({:>3.0}%)  step {}  {} samples  {:.0}/s  loss value {:.4} policy {:.4} (top-1 {:.1}%)  lr {:.2e}  {}",
                r.epoch,
                100.0 * r.epoch_fraction,
                r.step,
                thousands(r.samples),
                r.samples_per_sec,
                r.loss.value_mean(),
                r.loss.policy_mean(),
                100.0 * r.loss.policy_accuracy(),
                r.lr,
                clock(r.elapsed)
            );
            log.write(json!({"event": "report", "epoch": r.epoch, "epoch_fraction": r.epoch_fraction, "step": r.step,
                "samples": r.samples, "samples_per_sec": r.samples_per_sec, "value_loss": r.loss.value_mean(),
                "policy_loss": r.loss.policy_mean(), "policy_accuracy": r.loss.policy_accuracy(), "lr": r.lr,
                "elapsed_s": r.elapsed.as_secs_f64()}));
        }
        Event::Validation(v) => {
            eprintln!(
                "validation  step {}  value {:.4}  policy {:.4} (top-1 {:.1}%)  on {} positions",
                v.step,
                v.loss.value_mean(),
                v.loss.policy_mean(),
                100.0 * v.loss.policy_accuracy(),
                thousands(v.loss.examples)
            );
            log.write(json!({"event": "validation", "epoch": v.epoch, "step": v.step, "value_loss": v.loss.value_mean(),
                "policy_loss": v.loss.policy_mean(), "policy_accuracy": v.loss.policy_accuracy(), "positions": v.loss.examples}));
        }
        Event::Checkpoint { step, path } => {
            eprintln!("checkpoint  step {step}  {}", path.display());
            log.write(
                json!({"event": "checkpoint", "step": step, "path": path.display().to_string()}),
            );
        }
    }
}

/// How the run ended, on stdout: one line, or one JSON object with --json.
fn print_summary(args: &Args, shape: &Shape, summary: &train::Summary) {
    if let Some(finished) = summary.finished(&args.out).filter(|_| !args.json) {
        println!("{finished}");
        return;
    }
    let stop = match summary.stop {
        Stop::Finished => "finished",
        Stop::AlreadyFinished => "already finished",
        Stop::StepLimit => "step limit",
        Stop::TimeLimit => "time limit",
    };
    let val = summary.validation.as_ref();
    if args.json {
        let v = json!({
            "out": args.out.display().to_string(),
            "shape": shape.to_string(),
            "stop": stop,
            "steps": summary.steps,
            "epochs": summary.epochs,
            "samples": summary.samples,
            "train_value_loss": summary.train.value_mean(),
            "train_policy_loss": summary.train.policy_mean(),
            "val_value_loss": val.map(|v| v.loss.value_mean()),
            "val_policy_loss": val.map(|v| v.loss.policy_mean()),
            "val_policy_accuracy": val.map(|v| v.loss.policy_accuracy()),
        });
        println!("{v}");
    } else {
        let mut line = format!(
            "{}: {stop} after {} steps, {} epochs, {} samples; train loss value {:.4} policy {:.4}",
            args.out.display(),
            summary.steps,
            summary.epochs,
            thousands(summary.samples),
            summary.train.value_mean(),
            summary.train.policy_mean()
        );
        if let Some(v) = val {
            line += &format!(
                "; validation value {:.4} policy {:.4}",
                v.loss.value_mean(),
                v.loss.policy_mean()
            );
        }
        println!("{line}");
    }
}
