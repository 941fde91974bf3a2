//! `manaka usi`: the USI engine on stdin/stdout.

use anyhow::{Context, Result};

/// Run as a USI engine: read commands on stdin, answer on stdout.
///
/// Register `manaka usi` (a one-line script or a shortcut that runs it) as an engine in a
/// shogi GUI (ShogiHome, ShogiGUI, Shogidokoro) or a match runner (cshogi). Weights are
/// loaded at `isready` from the `EvalFile` option; without one the embedded default network
/// plays. See docs/usi.md for the options and the time management.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<()> {
    manaka_runtime::usi::run_stdio(manaka_runtime::usi::loader_with(
        crate::engines::compiled_hook(),
    ))
    .context("USI input/output failed")
}
