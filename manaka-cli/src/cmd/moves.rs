//! `manaka moves`: list the legal moves of a position.

use anyhow::Result;
use manaka_runtime::labels::move_label;

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
    /// Print one JSON object: {"sfen", "in_check", "moves": [{"usi", "label"}, ...]} (label:
    /// the dlshogi policy label, 0..2187).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let pos = super::position_from(&args.sfen, &args.moves)?;
    let side = pos.side_to_move();
    let mut labelled: Vec<(String, u16)> = pos
        .legal_moves()
        .iter()
        .map(|&m| (m.to_usi(), move_label(m, side)))
        .collect();
    labelled.sort();
    let moves: Vec<String> = labelled.iter().map(|(m, _)| m.clone()).collect();
    if args.json {
        let list: Vec<_> = labelled
            .iter()
            .map(|(m, label)| serde_json::json!({ "usi": m, "label": label }))
            .collect();
        let v =
            serde_json::json!({ "sfen": pos.to_sfen(), "in_check": pos.in_check(), "moves": list });
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
