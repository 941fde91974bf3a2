//! `manaka eval`: evaluate one position with a weight file.

use crate::engines::{self, EngineVisitor};
use anyhow::{Context, Result, bail};
use manaka::kernels::cpu::int::IntSimd;
use manaka::runtime::eval::{Leaf, cp_from_logit, win_probability};
use manaka::runtime::labels::move_label;
use manaka::runtime::network::Network;
use manaka::runtime::reference::ReferenceNet;
use manaka::runtime::shogi::{Move, Position};
use manaka::runtime::usi::network::default_weights;
use manaka::runtime::weights::{TensorSource, WeightFile};
use std::path::PathBuf;
use std::sync::Arc;

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
    /// MNW1 weight file (default: the network embedded in the binary, as `manaka usi` with
    /// no EvalFile).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Position as SFEN, or `startpos`.
    #[arg(long, default_value = "startpos")]
    sfen: String,
    /// Moves (USI) to play from the SFEN first.
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    /// Which evaluator computes the result.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Show only the N most likely moves (default: all).
    #[arg(long)]
    top: Option<usize>,
    /// Print one JSON object: {"value_logit", "win_prob", "cp", "policy": [{usi, label, logit, prob}]}.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The compiled engine if the file's shape is compiled in, else the reference evaluator
    /// (with a note on stderr).
    Auto,
    /// The fixed-size engine compiled for the file's shape (`manaka shape list` shows which
    /// are compiled in); an error if there is none.
    Compiled,
    /// The shape-generic f64 reference evaluator (the oracle; slow but exact).
    Reference,
    /// The integer engine of an `nnue` shape: YaneuraOu's arithmetic, so on an imported
    /// nn.bin cp is YaneuraOu's evaluation exactly (docs/nnue.md).
    Integer,
}

/// Plays the moves on a compiled engine with incremental updates and evaluates.
struct CompiledEval<'a> {
    pos: &'a Position,
    moves: &'a [Move],
}

impl EngineVisitor for CompiledEval<'_> {
    type Out = Result<(Position, Vec<Move>, f64, Vec<f64>, String)>;
    fn visit<N: Network>(self, net: N) -> Self::Out {
        let mut pos = self.pos.clone();
        let mut state = net.new_state(&pos);
        for &m in self.moves {
            let effect = pos.do_move(m);
            net.update(&mut state, &effect, &pos);
        }
        let legal = pos.legal_moves();
        let e = net.evaluate(
            &state,
            Leaf {
                position: &pos,
                moves: &legal,
            },
        );
        let policy = e.policy_logits.iter().map(|&x| x as f64).collect();
        Ok((pos, legal, e.value_logit as f64, policy, net.describe()))
    }
}

pub fn run(args: Args) -> Result<()> {
    let file: Arc<dyn TensorSource + Send + Sync> = match &args.weights {
        Some(path) => Arc::new(
            WeightFile::open(path)
                .with_context(|| format!("cannot load --weights {}", path.display()))?,
        ),
        None => default_weights().map_err(anyhow::Error::msg)?,
    };
    let shape = file.shape().to_string();
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
    let visitor = CompiledEval {
        pos: &start,
        moves: &played,
    };
    let compiled = match args.backend {
        Backend::Reference => None,
        Backend::Integer => {
            match engines::with_int_engine(file.as_ref(), IntSimd::detect(), visitor) {
                Some(r) => Some(r.map_err(anyhow::Error::from)),
                None => bail!(
                    "shape {shape} has no integer engine in this binary (the compiled-in `nnue` shapes have: {})",
                    engines::COMPILED_INT.join(", ")
                ),
            }
        }
        _ => engines::with_engine(file.clone(), visitor).map(|r| r.map_err(anyhow::Error::from)),
    };
    let (pos, moves, value_logit, policy, backend) = match compiled {
        Some(r) => r.context("cannot build the compiled engine")??,
        None => {
            if args.backend == Backend::Compiled {
                bail!(
                    "shape {shape} is not compiled into this binary (see `manaka shape list`); use --backend reference or `manaka build-engine {shape}`"
                );
            }
            if args.backend == Backend::Auto {
                eprintln!("note: shape {shape} is not compiled in; using the reference evaluator");
            }
            let net = ReferenceNet::new(file).map_err(anyhow::Error::msg)?;
            let mut pos = start;
            let mut state = net.refresh(&pos);
            for &m in &played {
                let effect = pos.do_move(m);
                net.update(&mut state, &effect, &pos);
            }
            let moves = pos.legal_moves();
            let out = net.evaluate(&state, &pos, &moves);
            (
                pos,
                moves,
                out.value_logit,
                out.policy,
                format!("{shape} (reference)"),
            )
        }
    };
    let out = manaka::runtime::reference::Output {
        value_logit,
        policy,
    };
    // Softmax over the legal moves alone (SPEC §5).
    let max = out.policy.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = out.policy.iter().map(|&l| (l - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    let side = pos.side_to_move();
    let mut rows: Vec<(String, u16, f64, f64)> = moves
        .iter()
        .zip(out.policy.iter().zip(&exps))
        .map(|(m, (&logit, &e))| (m.to_usi(), move_label(*m, side), logit, e / total))
        .collect();
    rows.sort_by(|a, b| b.3.total_cmp(&a.3).then_with(|| a.0.cmp(&b.0)));
    if let Some(n) = args.top {
        rows.truncate(n);
    }
    let (value, prob, cp) = (
        out.value_logit,
        win_probability(out.value_logit),
        cp_from_logit(out.value_logit),
    );
    if args.json {
        let policy: Vec<_> = rows
            .iter()
            .map(|(usi, label, logit, p)| serde_json::json!({ "usi": usi, "label": label, "logit": logit, "prob": p }))
            .collect();
        let v = serde_json::json!({
            "shape": shape,
            "backend": backend,
            "sfen": pos.to_sfen(),
            "value_logit": value,
            "win_prob": prob,
            "cp": cp,
            "policy": policy,
        });
        println!("{v}");
    } else {
        println!("shape      {shape}");
        println!("backend    {backend}");
        println!("sfen       {}", pos.to_sfen());
        println!("value      logit {value:.6}  win_prob {prob:.4}  cp {cp}");
        println!("policy     {} legal moves", moves.len());
        for (usi, label, logit, p) in &rows {
            println!("  {usi:<7} label {label:>4}  logit {logit:>9.4}  prob {p:.4}");
        }
    }
    Ok(())
}
