//! `manaka weights export-nnue` / `import-nnue`: YaneuraOu's nn.bin both ways (docs/nnue.md).

use super::super::shape::{group, human};
use anyhow::{Context, Result};
use manaka_runtime::nnue;
use manaka_runtime::weights::{self, TensorSource, WeightFile};
use std::path::PathBuf;

/// Write an NNUE network as YaneuraOu's nn.bin.
///
/// Shapes YaneuraOu can represent: `pair0_d256_o1_h32_h232_halfkp_nnue` (its default
/// halfkp_256x2-32-32), `pair0_d256_o1_h32_h232_kp_nnue` (kp_256x2-32-32), and the other
/// HalfKP sizes it ships (512x2-16-32, 1024x2-8-32, 1024x2-8-64). The weights are quantised
/// as YaneuraOu expects (int16 feature transformer ×127, int8 hidden weights ×64, int32
/// biases, output ×600·16 for FV_SCALE 16). Values beyond their integer type are refused,
/// naming each tensor, the count and the worst value (`manaka train` keeps `nnue` shapes
/// within range); with --allow-saturation they are written as the type's nearest value, with
/// a warning per tensor. The policy tensors are dropped: an nn.bin has none. Any other shape
/// is refused with the property that prevents it. FILE is never left half-written.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka weights export-nnue nnue.mnw -o nn.bin\n  \
    manaka weights export-nnue nnue.mnw -o eval/nn.bin --force --json\n\n\
    JSON keys: path, source, shape, architecture, hash (hex string), bytes, saturated \
    [{tensor, count, worst, limit}] (only with --allow-saturation), dropped [tensor names].")]
#[command(mut_arg("path", |a| a.help("The nn.bin to write (atomically: FILE is never left half-written)")))]
pub struct ExportArgs {
    /// The MNW1 weight file (an `nnue` shape).
    file: PathBuf,
    #[command(flatten)]
    out: super::OutputFile,
    /// Write values beyond their integer type as its nearest value (a warning per tensor)
    /// instead of refusing; the integer engine then evaluates unlike the float net.
    #[arg(long)]
    allow_saturation: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Read YaneuraOu's nn.bin into an MNW1 weight file.
///
/// The architecture is recognised from the file's hash (halfkp_256x2-32-32, kp_256x2-32-32,
/// halfkp_512x2-16-32, halfkp_1024x2-8-32, halfkp_1024x2-8-64) and becomes the matching
/// `nnue` shape; the integers are dequantised into float tensors that quantise back to them
/// exactly (a value that could not is refused). NNUE files have no policy: the policy
/// tensors are zero, i.e. uniform over the legal moves. A damaged or foreign file is refused
/// with what is wrong and its byte offset.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka weights import-nnue nn.bin -o suisho.mnw\n  \
    manaka eval --weights suisho.mnw --sfen startpos        # cp = YaneuraOu's evaluation\n  \
    manaka bench --shapes pair0_d256_o1_h32_h232_halfkp_nnue\n\n\
    JSON keys: path, source, shape, architecture, hash (hex string), architecture_string, \
    file_bytes, checksum (hex string).")]
#[command(mut_arg("path", |a| a.help("The MNW1 file to write (atomically: FILE is never left half-written)")))]
pub struct ImportArgs {
    /// The nn.bin to read.
    file: PathBuf,
    #[command(flatten)]
    out: super::OutputFile,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn export(args: ExportArgs) -> Result<()> {
    let file = WeightFile::open(&args.file)
        .with_context(|| format!("`{}` refused", args.file.display()))?;
    let shape = *file.shape();
    // Check the shape before touching the output, so that a refusal leaves it alone.
    nnue::Architecture::of_shape(&shape).map_err(|reason| {
        anyhow::anyhow!("shape {shape} cannot be exported to YaneuraOu's NNUE: {reason}")
    })?;
    let output = args.out.writable()?;
    let saturation = if args.allow_saturation {
        nnue::Saturation::Allow
    } else {
        nnue::Saturation::Refuse
    };
    let report = nnue::export(&file, output, saturation)
        .with_context(|| format!("cannot export `{}`", args.file.display()))?;
    let arch = report.architecture;
    if args.json {
        let saturated: Vec<_> = report
            .saturated
            .iter()
            .map(|s| {
                serde_json::json!({
                    "tensor": s.tensor, "count": s.count, "worst": s.worst, "limit": s.limit,
                })
            })
            .collect();
        let v = serde_json::json!({
            "path": output.display().to_string(),
            "source": args.file.display().to_string(),
            "shape": shape.to_string(),
            "architecture": arch.name(),
            "hash": format!("{:08x}", arch.hash()),
            "bytes": report.bytes,
            "saturated": saturated,
            "dropped": report.dropped,
        });
        println!("{v}");
        return Ok(());
    }
    println!(
        "wrote {}: {} (hash {:08x}), {} bytes ({})",
        output.display(),
        arch.name(),
        arch.hash(),
        group(report.bytes),
        human(report.bytes)
    );
    for s in &report.saturated {
        eprintln!(
            "warning: {} values of {} saturated at the integer type's range (worst {}, limit ±{:.4}); \
             the integer engine will not evaluate as the float net does",
            group(s.count),
            s.tensor,
            s.worst,
            s.limit
        );
    }
    if !report.dropped.is_empty() {
        eprintln!(
            "note: dropped {} (an nn.bin has no policy)",
            report.dropped.join(", ")
        );
    }
    Ok(())
}

pub fn import(args: ImportArgs) -> Result<()> {
    let output = args.out.writable()?;
    let imported =
        nnue::import(&args.file).with_context(|| format!("`{}` refused", args.file.display()))?;
    let arch = imported.file.architecture;
    let shape = imported.weights.shape().to_string();
    weights::write_file(output, &imported.weights)
        .with_context(|| format!("cannot write `{}`", output.display()))?;
    let written = WeightFile::open(output)
        .with_context(|| format!("cannot read back `{}`", output.display()))?;
    if args.json {
        let v = serde_json::json!({
            "path": output.display().to_string(),
            "source": args.file.display().to_string(),
            "shape": shape,
            "architecture": arch.name(),
            "hash": format!("{:08x}", arch.hash()),
            "architecture_string": imported.file.string,
            "file_bytes": written.file_len(),
            "checksum": format!("{:016x}", written.checksum()),
        });
        println!("{v}");
        return Ok(());
    }
    println!(
        "wrote {}: shape {shape} from {} (hash {:08x}), {}, xxh64 {:016x}; policy zero (an nn.bin has none)",
        output.display(),
        arch.name(),
        arch.hash(),
        human(written.file_len()),
        written.checksum()
    );
    Ok(())
}
