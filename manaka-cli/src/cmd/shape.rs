//! `manaka shape`: what a shape name means — its tensors, sizes and cost (SPEC §2, §7) — and
//! which shapes this binary has compiled in (`shape list`).

use anyhow::{Context, Result};
use manaka_runtime::weights::format::Layout;
use manaka_shapes::Shape;

/// Explain network shape names.
///
/// A shape name such as `pair16_d128_o3_h512` is the whole description of a network: the
/// grammar is in docs/shapes.md (tokens pairN dN oN hN, then optional h2N mN fN lseN ks split,
/// kp or halfkp, nnue, in that order).
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: ShapeCommand,
}

#[derive(clap::Subcommand)]
enum ShapeCommand {
    Info(InfoArgs),
    List(ListArgs),
}

/// List the shapes compiled into this binary.
///
/// A weight file of one of these shapes runs on its fixed-size compiled engine (`eval`, `go`,
/// `selfplay`, `usi`); any other valid shape runs on the reference evaluator (slow), or gets
/// its own engine with `manaka build-engine SHAPE`. Shapes marked `integer` also have the
/// integer engine of YaneuraOu's arithmetic (`--backend integer`, USI `Backend integer`).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka shape list\n  \
    manaka shape list --json | jq -r '.shapes[].name'\n\n\
    JSON keys: shapes [{name, params, file_bytes, integer}].")]
struct ListArgs {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Explain a shape: its sizes, cost and weight-file tensors.
///
/// Prints the canonical name, parameter count, bytes, head input width, a FLOP estimate, the
/// blocks of the head input and the weight-file tensors (name, dims, order).
///
/// A name that is not valid is refused with the rule it breaks and, where there is one, the
/// spelling probably meant (exit status 2).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka shape info pair16_d128_o3_h512\n  \
    manaka shape info pair0_d256_o1_h32_h232_halfkp_nnue --json | jq .params\n\n\
    JSON keys: canonical, params, bytes, file_bytes, input_width, flops_per_eval, features, \
    token_count, blocks [{name, width}], tensors [{name, dims}].\n\
    `bytes` counts the f32 parameters; `file_bytes` is the MNW1 file (header, alignment, \
    trailer). `flops_per_eval` estimates one evaluation after a typical quiet move, \
    accumulator update included (docs/shapes.md says how).")]
struct InfoArgs {
    /// The shape name, e.g. pair16_d128_o3_h512.
    shape: String,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Parses a shape given on the command line; the error names the bad token.
pub fn parse_shape(name: &str) -> Result<Shape> {
    Shape::parse(name).with_context(|| format!("bad shape `{name}`"))
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        ShapeCommand::Info(args) => info(args),
        ShapeCommand::List(args) => list(args),
    }
}

fn list(args: ListArgs) -> Result<()> {
    let rows = crate::engines::COMPILED
        .iter()
        .map(|name| {
            let shape = parse_shape(name)?;
            let integer = crate::engines::COMPILED_INT.contains(name);
            Ok((shape, integer))
        })
        .collect::<Result<Vec<_>>>()?;
    if args.json {
        let shapes: Vec<_> = rows
            .iter()
            .map(|(shape, integer)| {
                serde_json::json!({
                    "name": shape.to_string(),
                    "params": shape.param_count(),
                    "file_bytes": Layout::new(shape).file_len(),
                    "integer": integer,
                })
            })
            .collect();
        println!("{}", serde_json::json!({ "shapes": shapes }));
        return Ok(());
    }
    let width = rows
        .iter()
        .map(|(s, _)| s.to_string().len())
        .max()
        .unwrap_or(0);
    println!(
        "{:width$}  {:>13}  {:>9}  engines",
        "shape", "params", "file"
    );
    for (shape, integer) in &rows {
        println!(
            "{:width$}  {:>13}  {:>9}  {}",
            shape.to_string(),
            group(shape.param_count()),
            human(Layout::new(shape).file_len()),
            if *integer { "float, integer" } else { "float" }
        );
    }
    Ok(())
}

fn info(args: InfoArgs) -> Result<()> {
    let shape = parse_shape(&args.shape)?;
    let tensors = shape.tensors();
    let blocks = shape.blocks();
    let file_bytes = Layout::new(&shape).file_len();
    if args.json {
        let v = serde_json::json!({
            "canonical": shape.to_string(),
            "params": shape.param_count(),
            "bytes": shape.bytes(),
            "file_bytes": file_bytes,
            "input_width": shape.input_width(),
            "flops_per_eval": shape.flops_per_eval(),
            "features": shape.features.name(),
            "token_count": shape.token_count(),
            "blocks": blocks
                .iter()
                .map(|b| serde_json::json!({ "name": b.name(), "width": b.width }))
                .collect::<Vec<_>>(),
            "tensors": tensors
                .iter()
                .map(|t| serde_json::json!({ "name": t.name, "dims": t.dims }))
                .collect::<Vec<_>>(),
        });
        println!("{v}");
        return Ok(());
    }
    let arithmetic = if shape.nnue {
        "NNUE (SPEC §6)"
    } else {
        "Manaka (SPEC §5)"
    };
    println!("shape        {shape}");
    println!(
        "features     {} ({} tokens)",
        shape.features,
        group(shape.token_count())
    );
    println!("arithmetic   {arithmetic}");
    println!("params       {}", group(shape.param_count()));
    println!(
        "bytes        {} ({}); file {}",
        group(shape.bytes()),
        human(shape.bytes()),
        group(file_bytes)
    );
    println!("input width  {}", group(shape.input_width()));
    println!(
        "flops/eval   {} (estimate: docs/shapes.md)",
        group(shape.flops_per_eval())
    );
    if !blocks.is_empty() {
        let list: Vec<String> = blocks
            .iter()
            .map(|b| format!("{} {}", b.name(), b.width))
            .collect();
        let ks = if shape.ks {
            format!(", then {} ks scalars", blocks.len())
        } else {
            String::new()
        };
        println!("blocks       {}{ks} (per perspective)", list.join(", "));
    }
    println!();
    let width = tensors.iter().map(|t| t.name.len()).max().unwrap_or(0);
    println!("{:width$}  {:>20}  {:>12}", "tensor", "dims", "params");
    for t in &tensors {
        let dims: Vec<String> = t.dims.iter().map(u64::to_string).collect();
        println!(
            "{:width$}  {:>20}  {:>12}",
            t.name,
            dims.join(" × "),
            group(t.numel())
        );
    }
    Ok(())
}

/// `45770072` → `45,770,072`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in binary units: `183080288` → `174.6 MiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
