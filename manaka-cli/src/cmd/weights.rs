//! `manaka weights`: make, inspect and verify MNW1 weight files (SPEC §7); convert NNUE
//! networks to and from YaneuraOu's nn.bin (`nnue`).

mod nnue;

use super::shape::{group, human, parse_shape};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use manaka_runtime::weights::{self, TensorSource, WeightFile, format::VERSION, init};
use manaka_shapes::Shape;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Files (or weights) larger than this get a progress bar on stderr (when it is a terminal).
const PROGRESS_THRESHOLD: u64 = 100_000_000;

/// Make, inspect and verify MNW1 weight files; convert NNUE networks to and from
/// YaneuraOu's nn.bin.
///
/// A weight file holds one network's tensors for one shape, in the order the shape defines,
/// with an xxh64 checksum (layout and checks: docs/weights.md). Engines refuse a file that is
/// damaged or of another shape.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: WeightsCommand,
}

#[derive(clap::Subcommand)]
enum WeightsCommand {
    Init(InitArgs),
    Inspect(InspectArgs),
    Verify(VerifyArgs),
    Widen(WidenArgs),
    ExportNnue(nnue::ExportArgs),
    ImportNnue(nnue::ImportArgs),
}

/// Write reproducible random weights for a shape.
///
/// The same shape and seed give the same file, bit for bit, on every machine. The
/// distributions (docs/weights.md) give finite, non-degenerate values and policies, so an
/// engine can play (badly) before trained weights exist. The file is written to a temporary
/// name beside FILE and renamed into place, so FILE is never left half-written.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka weights init --shape pair16_d128_o3_h512 --seed 1 -o baseline.mnw\n  \
    manaka weights init --shape pair0_d256_o1_h32_h232_halfkp_nnue --seed 7 -o nnue.mnw --force")]
struct InitArgs {
    /// The network shape, e.g. pair16_d128_o3_h512.
    #[arg(long)]
    shape: String,
    /// Random seed (any u64).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    out: OutputFile,
    /// Print one JSON object: {path, shape, seed, params, file_bytes, checksum, seconds}.
    #[arg(long)]
    json: bool,
}

/// Verify a weight file and describe its tensors.
///
/// Prints the shape, sizes and checksum, and every tensor with its dims, offset and value
/// statistics (min, max, mean, std).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka weights inspect baseline.mnw\n  \
    manaka weights inspect baseline.mnw --json | jq '.tensors[] | {name, std}'\n\n\
    JSON keys: path, version, shape, params, file_bytes, checksum (hex string), tensors \
    [{name, dims, offset, bytes, min, max, mean, std}]. A file that fails verification is \
    refused as by `manaka weights verify`.")]
struct InspectArgs {
    /// The weight file.
    file: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Check a weight file completely (exit 0: good, 2: refused).
///
/// Checks the magic, version, shape name, every tensor record against the shape's table (name,
/// order, dtype, rank, dims, length), 64-byte alignment, bounds, overlaps, and the xxh64
/// checksum of every byte.
///
/// Prints one line and exits 0 if the file is good; otherwise prints which check failed and
/// where (byte offset, tensor) on stderr and exits 2.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka weights verify baseline.mnw\n  \
    manaka weights verify baseline.mnw --shape pair16_d128_o3_h512   # also require this shape")]
struct VerifyArgs {
    /// The weight file.
    file: PathBuf,
    /// Also require the file to be of this shape (as an engine of that shape would).
    #[arg(long)]
    shape: Option<String>,
    /// Print one JSON object: {ok, path, shape, file_bytes, checksum}.
    #[arg(long)]
    json: bool,
}

/// Grow a trained network into wider hidden layers, computing exactly what it computed.
///
/// The wider shape may differ from the file's only in its hidden widths (`hN`, `h2N`), each
/// the same or larger. The new hidden units get the wider shape's random initialisation
/// (`--seed`, as `manaka weights init`) for their incoming weights, and every weight that
/// reads them starts at zero, so the widened network evaluates as the original (function-
/// preserving widening, Net2Net) until training — `manaka train --shape WIDE --init OUT` —
/// puts the new units to use. A way to give a trained lineage a larger head without starting
/// from random weights (docs/training.md, "A wider head").
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka weights widen gen14.mnw --shape pair0_d128_o2_h512_kp -o wide.mnw\n  \
    manaka train --shape pair0_d128_o2_h512_kp --init wide.mnw --data … --out wide-ft.mnw")]
struct WidenArgs {
    /// The trained weight file.
    file: PathBuf,
    /// The wider shape, e.g. pair0_d128_o2_h512_kp for a pair0_d128_o2_h256_kp file.
    #[arg(long)]
    shape: String,
    /// Seed of the new units' incoming weights (any u64).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    out: OutputFile,
    /// Print one JSON object: {path, from, shape, seed, params, file_bytes, checksum}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        WeightsCommand::Init(args) => init_file(args),
        WeightsCommand::Inspect(args) => inspect(args),
        WeightsCommand::Verify(args) => verify(args),
        WeightsCommand::Widen(args) => widen_file(args),
        WeightsCommand::ExportNnue(args) => nnue::export(args),
        WeightsCommand::ImportNnue(args) => nnue::import(args),
    }
}

/// A byte-count progress bar on stderr for work over [`PROGRESS_THRESHOLD`]; hidden otherwise
/// (and by indicatif itself when stderr is not a terminal).
fn progress_bar(total: u64, verb: &str) -> ProgressBar {
    if total < PROGRESS_THRESHOLD {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let template = format!("{verb} {{bar:40}} {{bytes}}/{{total_bytes}} ({{eta}})");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}

/// Opens and verifies `path`, with a progress bar for large files.
fn open(path: &Path, expected: Option<&Shape>) -> Result<WeightFile> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("cannot read `{}`", path.display()))?
        .len();
    let bar = progress_bar(len, "verifying");
    let file =
        WeightFile::open_with_progress(path, expected, &mut |done, _| bar.set_position(done));
    bar.finish_and_clear();
    file.with_context(|| format!("`{}` refused", path.display()))
}

/// The file a command writes (`-o FILE`, atomically: never half-written) and whether an
/// existing one may be replaced (`--force`); every writing subcommand flattens it in.
#[derive(clap::Args)]
pub(super) struct OutputFile {
    /// The file to write (atomically: FILE is never left half-written).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    path: PathBuf,
    /// Replace FILE if it exists.
    #[arg(long)]
    force: bool,
}

impl OutputFile {
    /// The path to write, refused while a file is there and --force was not given.
    pub(super) fn writable(&self) -> Result<&Path> {
        if self.path.exists() && !self.force {
            bail!(
                "`{}` exists; pass --force to replace it",
                self.path.display()
            );
        }
        Ok(&self.path)
    }

    /// The written file's size (0 if it cannot be read back).
    fn bytes(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }
}

fn init_file(args: InitArgs) -> Result<()> {
    let shape = parse_shape(&args.shape)?;
    let output = args.out.writable()?;
    let start = Instant::now();
    let bar = progress_bar(shape.bytes(), "writing");
    let written = init::write_random(output, &shape, args.seed, &mut |done, _| {
        bar.set_position(done)
    });
    bar.finish_and_clear();
    let checksum = written.with_context(|| format!("cannot write `{}`", output.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    let file_bytes = args.out.bytes();
    if args.json {
        let v = serde_json::json!({
            "path": output.display().to_string(),
            "shape": shape.to_string(),
            "seed": args.seed,
            "params": shape.param_count(),
            "file_bytes": file_bytes,
            "checksum": format!("{checksum:016x}"),
            "seconds": seconds,
        });
        println!("{v}");
    } else {
        println!(
            "wrote {}: shape {shape}, seed {}, {} params, {}, xxh64 {checksum:016x}, {seconds:.2} s",
            output.display(),
            args.seed,
            group(shape.param_count()),
            human(file_bytes),
        );
    }
    Ok(())
}

fn widen_file(args: WidenArgs) -> Result<()> {
    let shape = parse_shape(&args.shape)?;
    let output = args.out.writable()?;
    let source = open(&args.file, None)?;
    let widened = weights::widen(&source, &shape, args.seed)?;
    let checksum = weights::write_file(output, &widened)
        .with_context(|| format!("cannot write `{}`", output.display()))?;
    let file_bytes = args.out.bytes();
    let from = source.shape().to_string();
    if args.json {
        let v = serde_json::json!({
            "path": output.display().to_string(),
            "from": from,
            "shape": shape.to_string(),
            "seed": args.seed,
            "params": shape.param_count(),
            "file_bytes": file_bytes,
            "checksum": format!("{checksum:016x}"),
        });
        println!("{v}");
    } else {
        println!(
            "wrote {}: {from} widened to {shape} ({} params, {}), new units seeded {}, xxh64 {checksum:016x}",
            output.display(),
            group(shape.param_count()),
            human(file_bytes),
            args.seed,
        );
    }
    Ok(())
}

/// Min, max, mean and standard deviation of a tensor (f64 sums; NaN if any value is).
fn stats(values: &[f32]) -> [f64; 4] {
    let (mut min, mut max, mut sum, mut squares) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0);
    for &v in values {
        let v = f64::from(v);
        min = min.min(v);
        max = max.max(v);
        sum += v;
        squares += v * v;
    }
    let n = values.len().max(1) as f64;
    let mean = sum / n;
    [min, max, mean, (squares / n - mean * mean).max(0.0).sqrt()]
}

fn inspect(args: InspectArgs) -> Result<()> {
    let file = open(&args.file, None)?;
    let shape = *manaka_runtime::weights::TensorSource::shape(&file);
    let rows: Vec<_> = file
        .entries()
        .iter()
        .zip(file.iter())
        .map(|(placed, (_, values))| (placed, stats(values)))
        .collect();
    if args.json {
        let tensors: Vec<_> = rows
            .iter()
            .map(|(p, [min, max, mean, std])| {
                serde_json::json!({
                    "name": p.spec.name,
                    "dims": p.spec.dims,
                    "offset": p.offset,
                    "bytes": p.byte_len,
                    "min": min, "max": max, "mean": mean, "std": std,
                })
            })
            .collect();
        let v = serde_json::json!({
            "path": args.file.display().to_string(),
            "version": VERSION,
            "shape": shape.to_string(),
            "params": shape.param_count(),
            "file_bytes": file.file_len(),
            "checksum": format!("{:016x}", file.checksum()),
            "tensors": tensors,
        });
        println!("{v}");
        return Ok(());
    }
    println!("file      {}", args.file.display());
    println!("format    MNW1 version {VERSION}, verified");
    println!("shape     {shape}");
    println!("params    {}", group(shape.param_count()));
    println!(
        "size      {} ({})",
        group(file.file_len()),
        human(file.file_len())
    );
    println!("xxh64     {:016x}", file.checksum());
    println!();
    let width = rows
        .iter()
        .map(|(p, _)| p.spec.name.len())
        .max()
        .unwrap_or(0);
    println!(
        "{:width$}  {:>18}  {:>11}  {:>10}  {:>10}  {:>10}  {:>10}",
        "tensor", "dims", "offset", "min", "max", "mean", "std"
    );
    for (p, [min, max, mean, std]) in &rows {
        let dims: Vec<String> = p.spec.dims.iter().map(u64::to_string).collect();
        println!(
            "{:width$}  {:>18}  {:>11}  {min:>10.4}  {max:>10.4}  {mean:>10.4}  {std:>10.4}",
            p.spec.name,
            dims.join(" × "),
            p.offset,
        );
    }
    Ok(())
}

fn verify(args: VerifyArgs) -> Result<()> {
    let expected = args.shape.as_deref().map(parse_shape).transpose()?;
    let file = open(&args.file, expected.as_ref())?;
    let shape = manaka_runtime::weights::TensorSource::shape(&file).to_string();
    if args.json {
        let v = serde_json::json!({
            "ok": true,
            "path": args.file.display().to_string(),
            "shape": shape,
            "file_bytes": file.file_len(),
            "checksum": format!("{:016x}", file.checksum()),
        });
        println!("{v}");
    } else {
        println!(
            "ok {}: shape {shape}, {} tensors, {}, xxh64 {:016x}",
            args.file.display(),
            file.entries().len(),
            human(file.file_len()),
            file.checksum()
        );
    }
    Ok(())
}
