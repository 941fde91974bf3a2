//! `manaka`: the command-line front end of the Manaka runtime.
//!
//! Every subcommand lives in its own module under `cmd/`. Errors are `anyhow` errors with
//! context; `main` prints them as one line on stderr and exits with status 2 (user error:
//! bad flag, bad SFEN, bad shape, bad file). Scripts can trust: 0 = success, 2 = the input
//! was refused, 1 = an internal failure (a bug — please report it): a panic, or an error
//! marked `cmd::Internal`. Output cut short by its reader (`manaka eval … | head`) ends
//! quietly with 0.

mod cmd;
use manaka_cli::engines;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "manaka",
    version,
    about = "Manaka: a shogi engine framework with shape-typed neural evaluators",
    long_about = "Manaka: a shogi engine framework with shape-typed neural evaluators.\n\n\
        Positions are given as SFEN strings (`startpos` is accepted wherever an SFEN is), moves \
        as USI strings (7g7f, 8h2b+, P*5e). Every command that prints results accepts --json \
        for scripts. Exit status: 0 success, 2 the input was refused (the reason is printed on \
        one line on stderr), 1 internal error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Perft(cmd::perft::Args),
    Moves(cmd::moves::Args),
    Shape(cmd::shape::Args),
    Weights(cmd::weights::Args),
    Eval(cmd::eval::Args),
    Bench(cmd::bench::Args),
    BuildEngine(cmd::build_engine::Args),
    Label(cmd::label::Args),
    Lab(cmd::lab::Args),
    Positions(cmd::positions::Args),
    Selfplay(cmd::selfplay::Args),
    Train(cmd::train::Args),
    Usi(cmd::usi::Args),
    Go(cmd::go::Args),
    Mate(cmd::mate::Args),
    GpuCheck(cmd::gpu_check::Args),
}

/// Whether this binary was started under a name ending in `-usi` (e.g. a `manaka-usi`
/// symlink or copy): shogi GUIs launch engines without arguments, so that name alone makes
/// it the USI engine.
fn started_as_usi_engine() -> bool {
    let Some(arg0) = std::env::args_os().next() else {
        return false;
    };
    let stem = std::path::Path::new(&arg0)
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase());
    stem.is_some_and(|s| s.ends_with("-usi"))
}

fn main() -> ExitCode {
    cmd::install_panic_hook();
    // A panic anywhere below is an internal error (the hook has said which).
    std::panic::catch_unwind(run).unwrap_or(ExitCode::from(cmd::EXIT_INTERNAL))
}

fn run() -> ExitCode {
    if started_as_usi_engine() && std::env::args_os().len() == 1 {
        return match cmd::usi::run(cmd::usi::Args {}) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => cmd::report_error(&e),
        };
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return cmd::report_clap_error(e),
    };
    let result = match cli.command {
        Command::Perft(args) => cmd::perft::run(args),
        Command::Moves(args) => cmd::moves::run(args),
        Command::Shape(args) => cmd::shape::run(args),
        Command::Weights(args) => cmd::weights::run(args),
        Command::Eval(args) => cmd::eval::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::BuildEngine(args) => cmd::build_engine::run(args),
        Command::Label(args) => cmd::label::run(args),
        Command::Lab(args) => cmd::lab::run(args),
        Command::Positions(args) => cmd::positions::run(args),
        Command::Selfplay(args) => cmd::selfplay::run(args),
        Command::Train(args) => cmd::train::run(args),
        Command::Usi(args) => cmd::usi::run(args),
        Command::Go(args) => cmd::go::run(args),
        Command::Mate(args) => cmd::mate::run(args),
        Command::GpuCheck(args) => cmd::gpu_check::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => cmd::report_error(&e),
    }
}
