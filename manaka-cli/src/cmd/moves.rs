//! `manaka moves`: list the legal moves of a position.

use anyhow::Result;

/// List the legal moves of a position, in USI notation.
///
/// Example: `manaka moves --sfen startpos --json`.
#[derive(clap::Args)]
pub struct Args {
    /// Position as SFEN, or `startpos`.
    #[arg(long, default_value = "startpos")]
    sfen: String,
    /// Moves (USI) to play from the SFEN first.
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    /// Print one JSON object: {"sfen", "in_check", "moves": [{"usi"}, ...]}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let pos = super::position_from(&args.sfen, &args.moves)?;
    let mut moves: Vec<String> = pos.legal_moves().iter().map(|m| m.to_usi()).collect();
    moves.sort();
    if args.json {
        let list: Vec<_> = moves.iter().map(|m| serde_json::json!({ "usi": m })).collect();
        let v = serde_json::json!({ "sfen": pos.to_sfen(), "in_check": pos.in_check(), "moves": list });
        println!("{v}");
    } else {
        println!("{}", pos.to_sfen());
        if pos.in_check() {
            println!("in check");
        }
        println!("{} legal moves", moves.len());
        for chunk in moves.chunks(10) {
            println!("{}", chunk.join(" "));
        }
    }
    Ok(())
}
