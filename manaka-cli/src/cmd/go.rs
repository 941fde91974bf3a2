//! `manaka go`: one Gumbel search from the command line.

use anyhow::{Result, anyhow};
use manaka_runtime::loader::{Backend, LoadError, Precision, Weights};
use manaka_runtime::search::cache::available_memory_bytes;
use manaka_runtime::search::{
    GumbelSearch, InteriorRule, Outcome, Proof, RootNoise, SearchConfig, SearchControl,
    SearchLimits, SearchResult,
};
use manaka_runtime::usi::options::{DEFAULT_BATCH_SIZE, EngineOptions, affordable_hash_mb};

/// Search one position and print the best move, the principal variation, the root value and
/// the top moves with their visits and improved-policy probabilities.
///
/// Example: `manaka go --sfen startpos --moves 7g7f 3c3d --simulations 800 --json`.
#[derive(clap::Args)]
pub struct Args {
    /// Position as SFEN, or `startpos`.
    #[arg(long, default_value = "startpos")]
    sfen: String,
    /// Moves (USI) to play from the SFEN first; their history counts for repetition.
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    /// Simulation budget (the Sequential Halving schedule's length).
    #[arg(long, default_value_t = 800, value_parser = clap::value_parser!(u32).range(1..))]
    simulations: u32,
    /// MNW1 weight file or YaneuraOu nn.bin, or `builtin:material`; the embedded default
    /// network without it.
    #[arg(long, value_name = "FILE")]
    weights: Option<String>,
    /// Number format of the compiled engine's hidden-layer weights: f32, bf16 or int8 (as
    /// `manaka eval --precision`; docs/evaluator.md, "Precision").
    #[arg(long, default_value = "f32", value_parser = super::eval::precision_parser())]
    precision: Precision,
    /// Moves Sequential Halving starts with.
    #[arg(long, default_value_t = EngineOptions::default().max_considered, value_parser = clap::value_parser!(u32).range(1..=600))]
    max_considered: u32,
    /// Leaves per evaluator call, spread over the tree by virtual losses; the default is the
    /// USI engine's `BatchSize` (8), so `go` searches as the engine plays. 1 = the sequential
    /// search (the one the mctx parity tests pin; docs/search.md, "Sequential and batched
    /// search").
    #[arg(long, default_value_t = DEFAULT_BATCH_SIZE as u64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    batch_size: u64,
    /// Search threads on one shared tree, each with its own evaluator and batches of
    /// `--batch-size` leaves (1 = the deterministic single-thread search).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: u32,
    /// Scale of the root's Gumbel noise (0 = none, as in play).
    #[arg(long, default_value_t = 0.0)]
    gumbel_scale: f64,
    /// Seed for the Gumbel noise (fresh each run without it).
    #[arg(long)]
    seed: Option<u64>,
    /// Leaf mate check: the longest mate (plies: 0 off, 1, 3, …) looked for at every new
    /// node; a node whose side to move mates is proven won without an evaluation.
    #[arg(long, default_value_t = EngineOptions::default().leaf_mate_plies, value_parser = clap::value_parser!(u32).range(0..=7))]
    leaf_mate_plies: u32,
    /// PUCT's exploration constant below the root (USI `PuctC`; docs/search.md, "Below the
    /// root").
    #[arg(long, default_value_t = InteriorRule::PLAY_PUCT.0)]
    puct_c: f64,
    /// First-play urgency below the root: an untried move is valued at the mixed value less
    /// this times √(prior of the visited moves) (USI `FpuReduction`; 0 = the mixed value).
    #[arg(long, default_value_t = InteriorRule::PLAY_PUCT.1)]
    fpu_reduction: f64,
    /// PUCT's prior below the root is the softmax of the logits divided by this (USI
    /// `PolicyTemperature`; 1 = the network's own, larger flattens it).
    #[arg(long, default_value_t = InteriorRule::PLAY_PUCT.2)]
    policy_temperature: f64,
    /// Search memory in MiB, as the engine's `USI_Hash`: half bounds the tree, a quarter
    /// caches evaluations (docs/usi.md).
    #[arg(long, default_value_t = EngineOptions::default().hash_mb as u64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    hash: u64,
    /// Root mate search (df-pn) before the tree search: at most this many nodes (0 = off).
    /// A mate found is the answer (outcome `mate_search`, the PV the whole mate).
    #[arg(long, default_value_t = EngineOptions::default().root_mate_nodes)]
    root_mate_nodes: u64,
    /// How many root moves to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    if !args.gumbel_scale.is_finite() || args.gumbel_scale < 0.0 {
        return Err(anyhow!(
            "--gumbel-scale must be a finite number >= 0, not {}",
            args.gumbel_scale
        ));
    }
    for (flag, value, (least, most)) in [
        ("--puct-c", args.puct_c, InteriorRule::C_RANGE),
        (
            "--fpu-reduction",
            args.fpu_reduction,
            InteriorRule::FPU_REDUCTION_RANGE,
        ),
        (
            "--policy-temperature",
            args.policy_temperature,
            InteriorRule::POLICY_TEMPERATURE_RANGE,
        ),
    ] {
        if !(least..=most).contains(&value) {
            return Err(anyhow!(
                "{flag} must be a number from {least} to {most}, not {value}"
            ));
        }
    }
    let position = super::position_from(&args.sfen, &args.moves)?;
    let weights = args.weights.clone().unwrap_or_default();
    let net = crate::engines::loader()
        .with_precision(args.precision)
        .load(&Weights::parse(&weights), Backend::Auto)
        .map_err(|e| match e {
            // These name the file already.
            LoadError::Mnw1 { .. } | LoadError::NnBin { .. } => anyhow::Error::from(e),
            e => anyhow::Error::from(e).context(format!("cannot load --weights '{weights}'")),
        })?;
    if let Some(note) = net.precision_note(args.precision) {
        eprintln!("note: {note}");
    }
    let mut evaluators: Vec<_> = (0..args.threads).map(|_| net.factory.create()).collect();
    // The engine's own settings at its defaults (cache and tree sized by `--hash` as by
    // `USI_Hash`), with the flags given: `go` searches as the engine plays.
    let (hash_mb, note) = affordable_hash_mb(
        usize::try_from(args.hash).unwrap_or(usize::MAX),
        available_memory_bytes(),
    );
    if let Some(note) = note {
        eprintln!("note: --hash: {note}");
    }
    let engine = EngineOptions {
        hash_mb,
        max_considered: args.max_considered,
        batch_size: args.batch_size as usize,
        leaf_mate_plies: args.leaf_mate_plies,
        root_mate_nodes: args.root_mate_nodes,
        puct_c: args.puct_c,
        fpu_reduction: args.fpu_reduction,
        policy_temperature: args.policy_temperature,
        gumbel_scale: args.gumbel_scale,
        ..EngineOptions::default()
    };
    // The engine draws fresh noise each search; `--seed` makes `go`'s repeatable.
    let config = SearchConfig {
        noise: RootNoise::Sampled {
            scale: args.gumbel_scale,
            seed: args.seed,
        },
        ..engine.search_config()
    };
    let mut search = GumbelSearch::new(config);
    let limits = SearchLimits::simulations(args.simulations);
    let control = SearchControl::new(&limits);
    let r = search.run_threads(&position, &mut evaluators, &limits, &control, &mut |_| {});
    if args.json {
        println!(
            "{}",
            to_json(
                &position.to_sfen(),
                &net.description,
                &r,
                args.batch_size,
                args.top
            )
        );
    } else {
        print_text(&position.to_sfen(), &net.description, &r, args.top);
    }
    Ok(())
}

fn bestmove(r: &SearchResult) -> String {
    match (r.outcome, r.best_move) {
        (Outcome::DeclareWin, _) => "win".to_string(),
        (_, None) => "resign".to_string(),
        (_, Some(m)) => m.to_usi(),
    }
}

fn proof_name(p: Proof) -> &'static str {
    match p {
        Proof::Win { .. } => "win",
        Proof::Loss { .. } => "loss",
        Proof::Draw => "draw",
    }
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Searched => "searched",
        Outcome::PolicyOnly => "policy_only",
        Outcome::MateInOne => "mate_in_one",
        Outcome::MateFound => "mate_search",
        Outcome::DeclareWin => "declare_win",
        Outcome::NoLegalMoves => "no_legal_moves",
    }
}

fn to_json(
    sfen: &str,
    network: &str,
    r: &SearchResult,
    batch_size: u64,
    top: usize,
) -> serde_json::Value {
    let moves: Vec<_> = r
        .ranked_moves()
        .into_iter()
        .take(top)
        .map(|m| {
            serde_json::json!({
                "usi": m.mv.to_usi(),
                "visits": m.visits,
                "improved_policy": m.improved_policy,
                "prior": m.prior,
                "logit": m.logit,
                "q": m.q,
                "completed_q": m.completed_q,
            })
        })
        .collect();
    serde_json::json!({
        "sfen": sfen,
        "network": network,
        "bestmove": bestmove(r),
        "outcome": outcome_name(r.outcome),
        "pv": r.pv.iter().map(|m| m.to_usi()).collect::<Vec<_>>(),
        "root_value": r.root_value,
        "root_v_hat": r.root_v_hat,
        "score_cp": r.score_cp(),
        "mate": r.mate_plies(),
        "proven": r.proof.map(proof_name),
        "simulations": r.stats.simulations,
        "evaluations": r.stats.evaluations,
        "nodes": r.stats.nodes,
        "new_nodes": r.stats.new_nodes,
        "growth": r.growth(),
        "proven_hits": r.stats.proven_hits,
        "capped_hits": r.stats.capped_hits,
        "max_depth": r.stats.max_depth,
        "elapsed_ms": r.elapsed.as_secs_f64() * 1000.0,
        "nps": r.nps(),
        "bytes_per_node": r.bytes_per_node(),
        "threads": r.stats.parallel.threads.max(1),
        "batch_size": batch_size,
        "lock_held_ms": r.stats.parallel.locked.as_secs_f64() * 1000.0,
        "lock_wait_ms": r.stats.parallel.lock_wait.as_secs_f64() * 1000.0,
        "collisions": r.stats.collisions,
        "unusable_evaluations": r.stats.unusable_evaluations,
        "moves": moves,
    })
}

fn print_text(sfen: &str, network: &str, r: &SearchResult, top: usize) {
    println!("position   {sfen}");
    println!("network    {network}");
    println!("bestmove   {} ({})", bestmove(r), outcome_name(r.outcome));
    let pv: Vec<String> = r.pv.iter().map(|m| m.to_usi()).collect();
    println!("pv         {}", pv.join(" "));
    let score = match r.mate_plies() {
        Some(n) => format!("score mate {n}"),
        None => format!("score cp {}", r.score_cp()),
    };
    println!(
        "value      {:+.4} ({score}{}), network's own {:+.4}",
        r.root_value,
        if r.proof == Some(Proof::Draw) {
            ", proven draw"
        } else {
            ""
        },
        r.root_v_hat
    );
    println!(
        "search     {} simulations, {} evaluations, {} nodes ({:.3} new per simulation), depth {}, {:.1} ms, {:.0} nps, {:.0} bytes/node",
        r.stats.simulations,
        r.stats.evaluations,
        r.stats.nodes,
        r.growth(),
        r.stats.max_depth,
        r.elapsed.as_secs_f64() * 1000.0,
        r.nps(),
        r.bytes_per_node()
    );
    if r.root_moves.is_empty() {
        return;
    }
    println!(
        "{:<8} {:>7} {:>9} {:>9} {:>8}",
        "move", "visits", "improved", "prior", "q"
    );
    for m in r.ranked_moves().into_iter().take(top) {
        let q = m.q.map_or_else(|| "-".to_string(), |q| format!("{q:+.4}"));
        println!(
            "{:<8} {:>7} {:>9.4} {:>9.4} {:>8}",
            m.mv.to_usi(),
            m.visits,
            m.improved_policy,
            m.prior,
            q
        );
    }
}
