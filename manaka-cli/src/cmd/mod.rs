//! One module per subcommand, plus the error reporting they share.

pub mod bench;
pub mod build_engine;
pub mod eval;
pub mod go;
pub mod gpu_check;
pub mod lab;
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
/// Exit status for an internal failure: a panic, or an error marked [`Internal`] (a bug).
pub const EXIT_INTERNAL: u8 = 1;

/// An error that is the program's fault, not the input's: a broken invariant. Its exit
/// status is [`EXIT_INTERNAL`] wherever it sits in an error's chain.
#[derive(Debug)]
pub struct Internal(pub String);

impl std::fmt::Display for Internal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "internal error: {} (a bug; please report it)", self.0)
    }
}

impl std::error::Error for Internal {}

/// The exit status for `e`: [`EXIT_INTERNAL`] when an [`Internal`] error is in its chain,
/// else [`EXIT_USER_ERROR`].
pub fn exit_status(e: &anyhow::Error) -> u8 {
    if e.chain().any(|c| c.is::<Internal>()) {
        EXIT_INTERNAL
    } else {
        EXIT_USER_ERROR
    }
}

/// Prints an error as one line on stderr (`error: outer context: inner cause`, echoed input
/// cut to an excerpt) and returns its exit status ([`exit_status`]).
pub fn report_error(e: &anyhow::Error) -> ExitCode {
    let line = shorten_echoes(&format!("{e:#}").replace('\n', " "));
    eprintln!("error: {line}");
    ExitCode::from(exit_status(e))
}

/// Whether a panic is Rust's `println!` meeting a closed pipe (`manaka eval … | head`): the
/// reader has all it wanted, so the command ends quietly.
pub fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    text.starts_with("failed printing to std") && text.contains("Broken pipe")
}

/// The panic hook of the `manaka` binary: a closed output pipe exits quietly with status 0;
/// any other panic is an internal error, reported as one line on stderr (and, with
/// `RUST_BACKTRACE` set, Rust's usual report), after which `main` exits with
/// [`EXIT_INTERNAL`].
pub fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_broken_pipe(info.payload()) {
            std::process::exit(0);
        }
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let line = shorten_echoes(&format!("{message}{at}").replace('\n', " "));
        eprintln!("error: {}", Internal(line));
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            default(info);
        }
    }));
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
            eprintln!(
                "{} (see `manaka --help`)",
                shorten_echoes(&first_clap_line(&rendered))
            );
            ExitCode::from(EXIT_USER_ERROR)
        }
    }
}

/// Clap's first line, with the indented lines under it when it ends in a colon: a missing
/// argument is named on the lines after "the following required arguments were not provided:".
fn first_clap_line(rendered: &str) -> String {
    let mut lines = rendered.lines().skip_while(|l| l.trim().is_empty());
    let first = lines
        .next()
        .unwrap_or("error: invalid arguments")
        .trim_end()
        .to_string();
    if !first.ends_with(':') {
        return first;
    }
    let named: Vec<&str> = lines
        .take_while(|l| l.starts_with(' ') && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    format!("{first} {}", named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_argument_is_named() {
        let rendered = "error: the following required arguments were not provided:\n  --engine <CMD>\n  \
                        --out <FILE>\n\nUsage: manaka label --engine <CMD>\n";
        assert_eq!(
            first_clap_line(rendered),
            "error: the following required arguments were not provided: --engine <CMD>, --out <FILE>"
        );
        assert_eq!(
            first_clap_line("error: unexpected argument '--x' found\n\n  tip: …\n"),
            "error: unexpected argument '--x' found"
        );
    }

    /// Issue 16, item 6: `--help` promises exit status 1 for internal errors, 2 for refused
    /// input; every error exited 2.
    #[test]
    fn internal_errors_exit_1_and_refusals_2() {
        let refused = anyhow::anyhow!("bad --sfen 'x'");
        assert_eq!(exit_status(&refused), EXIT_USER_ERROR);
        let bug =
            anyhow::Error::new(Internal("a position was not labelled".into())).context("labelling");
        assert_eq!(exit_status(&bug), EXIT_INTERNAL);
        assert_eq!(
            format!("{bug:#}"),
            "labelling: internal error: a position was not labelled (a bug; please report it)"
        );
        assert!(is_broken_pipe(
            &"failed printing to stdout: Broken pipe (os error 32)".to_string()
        ));
        assert!(!is_broken_pipe(&"index out of bounds"));
    }
}
