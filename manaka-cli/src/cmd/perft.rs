//! `manaka perft`: count the leaves of the legal-move tree, the standard move-generator check.

use anyhow::Result;
use std::time::Instant;

/// Count the positions reachable in exactly N plies (perft), optionally per first move.
///
/// Example: `manaka perft --sfen startpos --depth 5` prints 19861490 nodes.
#[derive(clap::Args)]
#[command(
    after_help = "Known values: startpos 30 / 900 / 25470 / 719731 / 19861490 for depths 1-5.\n\
    The last ply is counted without being played (bulk counting), as other engines' perft does."
)]
pub struct Args {
    /// Position as SFEN, or `startpos`.
    #[arg(long, default_value = "startpos")]
    sfen: String,
    /// Moves (USI) to play from the SFEN before counting.
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    /// Depth in plies (0..=12).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=12))]
    depth: u32,
    /// Also print the count below each legal first move.
    #[arg(long)]
    divide: bool,
    /// Print one JSON object: {"nodes", "seconds", "nps"} (+ "divide": {move: nodes}).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let mut pos = super::position_from(&args.sfen, &args.moves)?;
    let start = Instant::now();
    let divide = if args.divide && args.depth > 0 {
        Some(pos.perft_divide(args.depth))
    } else {
        None
    };
    let nodes = match &divide {
        Some(d) => d.iter().map(|(_, n)| n).sum(),
        None => pos.perft(args.depth),
    };
    let seconds = start.elapsed().as_secs_f64();
    let nps = if seconds > 0.0 {
        (nodes as f64 / seconds) as u64
    } else {
        0
    };
    if args.json {
        let mut v = serde_json::json!({ "nodes": nodes, "seconds": seconds, "nps": nps });
        if let Some(d) = &divide {
            let map: serde_json::Map<String, serde_json::Value> = d
                .iter()
                .map(|(m, n)| (m.to_usi(), serde_json::json!(n)))
                .collect();
            v["divide"] = serde_json::Value::Object(map);
        }
        println!("{v}");
    } else {
        if let Some(d) = &divide {
            for (m, n) in d {
                println!("{m}: {n}");
            }
            println!();
        }
        println!("nodes {nodes}");
        println!("seconds {seconds:.3}");
        println!("nps {nps}");
    }
    Ok(())
}
