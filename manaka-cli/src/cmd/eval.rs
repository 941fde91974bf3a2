//! `manaka eval`: evaluate one position with a weight file.

use crate::engines;
use anyhow::{Context, Result, anyhow};
use manaka::runtime::loader::{self, Backend, LoadError, Precision, Weights};
use manaka::runtime::shogi::Position;
use std::path::PathBuf;

/// Evaluate a position: value (logit, win probability, centipawns) and the policy over the
/// legal moves.
///
/// The moves given with --moves are played from the SFEN with incremental accumulator
/// updates, exactly as a search would, before the head runs.
///
/// Example: `manaka eval --weights net.mnw --sfen startpos --moves 7g7f 3c3d --json`
#[derive(clap::Args)]
#[command(
    after_help = "Scores: win probability = 1/(1+e^-l), cp = round(600 l) clamped to +-30000, \
    where l is the value logit from the side to move's point of view."
)]
pub struct Args {
    /// MNW1 weight file or YaneuraOu nn.bin, or `builtin:material` (default: the network
    /// embedded in the binary, as `manaka usi` with no EvalFile).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Position as SFEN, or `startpos`.
    #[arg(long, default_value = "startpos")]
    sfen: String,
    /// Moves (USI) to play from the SFEN first.
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    /// Which evaluator computes the result.
    #[arg(long, default_value = "auto", value_parser = backend_parser(&BACKENDS))]
    backend: Backend,
    /// Number format of the compiled engine's hidden-layer weights (W1, W2), as the USI
    /// option `Precision`: f32 (the file's), bf16 or int8 (per-row scales), copies made at
    /// load. Only compiled engines of float shapes take one (docs/evaluator.md, "Precision"
    /// gives each one's tested error bound).
    #[arg(long, default_value = "f32", value_parser = precision_parser())]
    precision: Precision,
    /// Show only the N most likely moves (default: all).
    #[arg(long)]
    top: Option<usize>,
    /// Print one JSON object: {"shape", "backend", "precision", "sfen", "value_logit",
    /// "win_prob", "cp", "policy": [{usi, label, logit, prob}]}.
    #[arg(long)]
    json: bool,
}

/// The backends `manaka eval` offers, with their help lines.
const BACKENDS: [Backend; 4] = [
    Backend::Auto,
    Backend::Compiled,
    Backend::Reference,
    Backend::Integer,
];

/// A `--backend` argument offering `backends` (each with its help line); `manaka selfplay`
/// offers its own subset.
pub(crate) fn backend_parser(
    backends: &'static [Backend],
) -> impl clap::builder::TypedValueParser<Value = Backend> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        backends
            .iter()
            .map(|b| PossibleValue::new(b.name()).help(b.summary())),
    )
    .try_map(|s| s.parse::<Backend>())
}

/// A `--precision` argument: f32, bf16 or int8 (`manaka go` and `selfplay` take it too).
pub(crate) fn precision_parser() -> impl clap::builder::TypedValueParser<Value = Precision> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(Precision::ALL.map(|p| p.name())).try_map(|s| s.parse::<Precision>())
}

/// The network for `weights` on `backend` at `precision`: refused when the backend asked for
/// cannot take the precision (the reference and integer evaluators), and a note on stderr
/// when the weights' evaluator cannot (a shape not compiled in, an `nnue` shape, the material
/// evaluator).
pub(crate) fn load_at(
    weights: &Weights,
    backend: Backend,
    precision: Precision,
) -> Result<loader::LoadedNetwork> {
    if precision != Precision::F32 && matches!(backend, Backend::Reference | Backend::Integer) {
        return Err(anyhow!(
            "--precision {precision} applies to the compiled engines of float shapes, not to \
             the {backend} backend; drop --precision or use --backend auto or compiled"
        ));
    }
    let net = engines::loader()
        .with_precision(precision)
        .load(weights, backend)
        .map_err(refusal)?;
    if let Some(note) = net.precision_note(precision) {
        eprintln!("note: {note}");
    }
    Ok(net)
}

/// The loader's refusal, with what to do next on this command line.
fn refusal(e: LoadError) -> anyhow::Error {
    match e {
        LoadError::NotCompiled { shape } => anyhow!(
            "shape {shape} is not compiled into this binary (see `manaka shape list`); use --backend reference or `manaka build-engine {shape}`"
        ),
        LoadError::NoIntegerEngine { shape } => anyhow!(
            "shape {shape} has no integer engine in this binary (the compiled-in `nnue` shapes have: {})",
            engines::COMPILED_INT.join(", ")
        ),
        e => e.into(),
    }
}

pub fn run(args: Args) -> Result<()> {
    let weights = Weights::from_path(args.weights.as_deref());
    let net = load_at(&weights, args.backend, args.precision)?;
    let start =
        Position::from_sfen(&args.sfen).with_context(|| format!("bad --sfen '{}'", args.sfen))?;
    // Check every move before any engine work, so a bad move is reported the same way
    // whatever the backend.
    let mut replay = start.clone();
    let mut played = Vec::with_capacity(args.moves.len());
    for text in &args.moves {
        let m = replay.parse_usi_move(text).context("bad --moves")?;
        replay.do_move(m);
        played.push(m);
    }
    let shape = net.shape.as_deref().unwrap_or(loader::BUILTIN_MATERIAL);
    if args.backend == Backend::Auto && net.reference.is_some() {
        eprintln!("note: shape {shape} is not compiled in; using the reference evaluator");
    }
    let line = loader::evaluate_line(&net, &start, &played);
    let mut rows = line.policy;
    if let Some(n) = args.top {
        rows.truncate(n);
    }
    let (value, prob, cp) = (line.value_logit, line.win_prob, line.cp);
    let (backend, sfen) = (line.evaluator, line.position.to_sfen());
    let legal = line.position.legal_moves().len();
    if args.json {
        let policy: Vec<_> = rows
            .iter()
            .map(|m| serde_json::json!({ "usi": m.usi, "label": m.label, "logit": m.logit, "prob": m.prob }))
            .collect();
        let v = serde_json::json!({
            "shape": shape,
            "backend": backend,
            "precision": net.precision.name(),
            "sfen": sfen,
            "value_logit": value,
            "win_prob": prob,
            "cp": cp,
            "policy": policy,
        });
        println!("{v}");
    } else {
        println!("shape      {shape}");
        println!("backend    {backend}");
        println!("precision  {}", net.precision);
        println!("sfen       {sfen}");
        println!("value      logit {value:.6}  win_prob {prob:.4}  cp {cp}");
        println!("policy     {legal} legal moves");
        for m in &rows {
            println!(
                "  {:<7} label {:>4}  logit {:>9.4}  prob {:.4}",
                m.usi, m.label, m.logit, m.prob
            );
        }
    }
    Ok(())
}
