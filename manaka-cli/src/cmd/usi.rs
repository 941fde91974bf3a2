//! `manaka usi`: the USI engine on stdin/stdout.

use anyhow::{Context, Result};

/// Run as a USI engine: read commands on stdin, answer on stdout.
///
/// Register `manaka usi` (a one-line script or a shortcut that runs it) as an engine in a
/// shogi GUI (ShogiHome, ShogiGUI, Shogidokoro) or a match runner (cshogi). Weights are
/// loaded at `isready` from the `EvalFile` option (an MNW1 file or a YaneuraOu nn.bin); without
/// one the embedded default network plays, and a file that fails to load makes every `go`
/// answer `bestmove resign` rather than play another network. See docs/usi.md for the options,
/// the commands (`bench` included) and the time management.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<()> {
    use manaka_runtime::loader::Backend;
    use manaka_runtime::usi::{network_loader, run_stdio_with_integer};
    let loader = crate::engines::loader();
    run_stdio_with_integer(
        network_loader(loader.clone(), Backend::Auto),
        network_loader(loader, Backend::Integer),
    )
    .context("USI input/output failed")
}
