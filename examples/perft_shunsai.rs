//! Times shunsai 0.1.2's perft on a position, for `scripts/perft-vs.sh`, which puts it beside
//! `manaka perft` and fairy-stockfish's `go perft` in one table.
//!
//! `cargo run --release --example perft_shunsai -- SFEN DEPTH` prints one JSON object,
//! `{"nodes", "seconds", "nps"}`, like `manaka perft --json` (the time covers the count only).

#[path = "../benches/common/shunsai.rs"]
mod shunsai_adapter;

use manaka::runtime::shogi::Position;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(sfen), Some(Ok(depth))) = (args.first(), args.get(1).map(|d| d.parse::<u32>()))
    else {
        eprintln!("usage: perft_shunsai SFEN DEPTH");
        return ExitCode::from(2);
    };
    let pos = match Position::from_sfen(sfen) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: bad SFEN '{sfen}': {e}");
            return ExitCode::from(2);
        }
    };
    let mut s = shunsai_adapter::to_shunsai(&pos);
    let start = Instant::now();
    let nodes = shunsai_adapter::perft(&mut s, depth);
    let seconds = start.elapsed().as_secs_f64();
    let nps = if seconds > 0.0 {
        (nodes as f64 / seconds) as u64
    } else {
        0
    };
    println!("{{\"nodes\":{nodes},\"seconds\":{seconds},\"nps\":{nps}}}");
    ExitCode::SUCCESS
}
