//! One module per subcommand, plus the error reporting they share.

pub mod bench;
pub mod build_engine;
pub mod eval;
pub mod go;
pub mod gpu_check;
pub mod label;
pub mod mate;
pub mod moves;
pub mod perft;
pub mod positions;
pub mod selfplay;
pub mod shape;
pub mod train;
pub mod usi;
pub mod weights;

use anyhow::{Context, Result};
use manaka_runtime::data::io::shorten_echoes;
use manaka_runtime::shogi::Position;
use std::process::ExitCode;

/// Parses `sfen` (or `startpos`) and plays `moves` on it; errors name the bad part.
pub fn position_from(sfen: &str, moves: &[String]) -> Result<Position> {
    let mut pos = Position::from_sfen(sfen).with_context(|| format!("bad --sfen '{sfen}'"))?;
    pos.play_usi_moves(moves.iter().map(String::as_str))
        .context("bad --moves")?;
    Ok(pos)
}

/// Exit status for input the command refused (bad flag, SFEN, shape, file).
pub const EXIT_USER_ERROR: u8 = 2;

/// Prints an error as one line on stderr (`error: outer context: inner cause`, echoed input
/// cut to an excerpt) and returns the user-error exit status.
pub fn report_error(e: &anyhow::Error) -> ExitCode {
    let line = shorten_echoes(&format!("{e:#}").replace('\n', " "));
    eprintln!("error: {line}");
    ExitCode::from(EXIT_USER_ERROR)
}

/// `--help` and `--version` print normally and succeed; any other parse error becomes one
/// line on stderr (clap's first line, which names the bad flag) and exit status 2.
pub fn report_clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(EXIT_USER_ERROR)
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            let rendered = e.render().to_string();
            let first = rendered
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("error: invalid arguments");
            eprintln!("{} (see `manaka --help`)", shorten_echoes(first.trim_end()));
            ExitCode::from(EXIT_USER_ERROR)
        }
    }
}
