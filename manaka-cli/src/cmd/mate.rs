//! `manaka mate`: look for a forced mate by continuous checks (tsume) with the df-pn solver.

use anyhow::Result;
use manaka_runtime::mate::{MAX_PLY, MateLimits, MateOutcome, MateResult, MateSolver};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Look for a forced mate by the side to move, every attacking move a check (tsume), with
/// the df-pn mate solver; print the mate line, or say that there is none.
///
/// The line is the shortest mate the limits let the solver establish, each defence the one
/// that resists longest; the output says when the limits ended the shortening first. "no
/// mate" is a proof: no mate by continuous checks exists within --max-plies plies (511
/// without it). "unknown (limit reached)" means a limit ended the search first. Without
/// --time or --nodes the search runs until it has an answer.
///
/// Example: `manaka mate --sfen "8k/9/7pp/9/9/9/9/9/K8 b BG 1"` prints the mate in 3
/// B*3c 1a1b G*1a.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    manaka mate --sfen \"8k/9/7pp/9/9/9/9/9/K8 b BG 1\"\n  \
    manaka mate --sfen startpos --moves 7g7f 3c3d --time 1000 --json\n  \
    manaka mate --sfen \"4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1\" --max-plies 3\n\n\
    Tsume problems are written with the defender holding every piece not on the board \
    (lower-case letters in the hand field), as is conventional; the attacker's king may be \
    absent. Pawn-drop mate is illegal and never part of a line. A position repeated along \
    a line never counts as mate for the attacker (perpetual check loses). Useless \
    interpositions count as defences, so a problem whose published solution omits them \
    reads longer here (docs/mate.md).\n\n\
    Exit status: 0 for any answer (mate, no mate, unknown); 2 when the input is refused.")]
pub struct Args {
    /// Position as SFEN, or `startpos`. The side to move attacks.
    #[arg(long)]
    sfen: String,
    /// Moves (USI) to play from the SFEN first.
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    /// Time limit in milliseconds.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    time: Option<u64>,
    /// Node limit (positions expanded, shortening the mate included).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    nodes: Option<u64>,
    /// Longest mate to look for, in plies (odd: 1, 3, 5...; at most 511). "no mate" then
    /// means no mate within that many plies.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_PLY as i64))]
    max_plies: Option<u32>,
    /// Transposition table size in MiB (its pages are taken as the search fills them).
    #[arg(long, value_name = "MB", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    hash: u64,
    /// Print one JSON object: {"sfen", "outcome": "mate"|"nomate"|"unknown", "mate": [USI
    /// moves], "plies" (null without a mate), "shortest" (the length is proven shortest),
    /// "nodes", "elapsed_ms", "nps"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let position = super::position_from(&args.sfen, &args.moves)?;
    let limits = MateLimits {
        max_nodes: args.nodes,
        time: args.time.map(Duration::from_millis),
        max_plies: args.max_plies,
    };
    let bytes = usize::try_from(args.hash << 20).unwrap_or(usize::MAX);
    let mut solver = MateSolver::new(bytes);
    let r = solver.search(&position, &limits, &AtomicBool::new(false));
    if args.json {
        println!("{}", to_json(&position.to_sfen(), &r));
    } else {
        print_text(&position.to_sfen(), &r);
    }
    Ok(())
}

fn outcome_name(o: &MateOutcome) -> &'static str {
    match o {
        MateOutcome::Mate(_) => "mate",
        MateOutcome::NoMate => "nomate",
        MateOutcome::Unknown => "unknown",
    }
}

fn to_json(sfen: &str, r: &MateResult) -> serde_json::Value {
    let line: Vec<String> = r.mate().unwrap_or(&[]).iter().map(|m| m.to_usi()).collect();
    serde_json::json!({
        "sfen": sfen,
        "outcome": outcome_name(&r.outcome),
        "plies": r.mate().map(|l| l.len()),
        "shortest": r.shortest,
        "mate": line,
        "nodes": r.nodes,
        "elapsed_ms": r.elapsed.as_secs_f64() * 1000.0,
        "nps": r.nps().round() as u64,
    })
}

fn print_text(sfen: &str, r: &MateResult) {
    println!("position  {sfen}");
    match &r.outcome {
        MateOutcome::Mate(line) => {
            let moves: Vec<String> = line.iter().map(|m| m.to_usi()).collect();
            let unit = if line.len() == 1 { "ply" } else { "plies" };
            println!("mate      in {} {unit}: {}", line.len(), moves.join(" "));
            if !r.shortest {
                println!("          (a shorter mate may exist: the limits ended the shortening)");
            }
        }
        MateOutcome::NoMate => println!("no mate"),
        MateOutcome::Unknown => println!("unknown (limit reached)"),
    }
    println!("nodes     {}", r.nodes);
    println!("time      {:.1} ms", r.elapsed.as_secs_f64() * 1000.0);
    println!("nps       {:.0}", r.nps());
}
