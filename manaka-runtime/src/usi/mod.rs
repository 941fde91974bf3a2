//! The USI protocol: the loop GUIs (ShogiHome, ShogiGUI, Shogidokoro) and match runners
//! (cshogi) talk to. See docs/usi.md for the supported commands, the options and the time
//! management.
//!
//! The loop is generic over where the network comes from: [`run`] takes a [`Loader`] that
//! turns the `EvalFile` option into an evaluator factory. [`network_loader`] makes one from the
//! runtime's one loader ([`crate::loader::NetworkLoader`], with the compiled engines a binary
//! has); [`default_loader`] runs every shape on the reference evaluator; a library may pass its
//! own (`app::App` does). Weights are loaded at `isready`, never at start-up.
//!
//! ```
//! use manaka_runtime::usi;
//! let input = "usi\nsetoption name EvalFile value builtin:material\nisready\n\
//!              position startpos moves 7g7f\ngo nodes 32\nquit\n";
//! let mut out = Vec::new();
//! usi::run_to_string(input.as_bytes(), &mut out, usi::default_loader()).unwrap();
//! let text = String::from_utf8(out).unwrap();
//! assert!(text.contains("readyok") && text.contains("bestmove "));
//! ```

pub mod bench;
pub mod command;
pub mod engine;
pub mod eval_file;
pub mod game;
pub mod info;
mod job;
pub mod options;
pub mod plan;
pub mod time;

#[cfg(test)]
mod tests;

pub use engine::{
    Engine, Loader, default_loader, integer_loader_with, loader_with, network_loader,
};
pub use eval_file::{
    CompiledHook, LoadError, LoadedNetwork, load_network, resolve_backend, resolve_integer,
    resolve_with,
};
pub use info::Output;
pub use options::{Backend, EngineOptions};

use std::io::{self, BufRead, Write};
use std::sync::{Arc, Mutex};

/// Runs the protocol until `quit` or the end of `input`, writing to `output`.
pub fn run(input: impl BufRead, output: Box<dyn Write + Send>, loader: Loader) -> io::Result<()> {
    run_engine(input, Engine::new(Output::new(output), loader))
}

/// Runs the protocol with stdin and stdout, with a loader for `Backend integer` too
/// (`manaka usi`).
pub fn run_stdio_with_integer(loader: Loader, integer: Loader) -> io::Result<()> {
    let output = Output::new(Box::new(io::stdout()));
    run_engine(
        io::stdin().lock(),
        Engine::new(output, loader).with_integer_loader(integer),
    )
}

/// Runs `engine` until `quit` or the end of `input`.
pub fn run_engine(mut input: impl BufRead, mut engine: Engine) -> io::Result<()> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            engine.end_of_input();
            return Ok(());
        }
        // Not UTF-8 (a Shift-JIS path, say): replaced characters, never a panic.
        let line = String::from_utf8_lossy(&buf);
        if !engine.handle(&line) {
            return Ok(());
        }
    }
}

/// Runs the protocol with stdin and stdout (`manaka usi`).
pub fn run_stdio(loader: Loader) -> io::Result<()> {
    run(io::stdin().lock(), Box::new(io::stdout()), loader)
}

/// Runs the protocol on `input` and appends everything the engine wrote to `out` (tests,
/// doc examples): the engine's output handle is shared with its search thread, so it is
/// collected in a buffer and copied at the end.
pub fn run_to_string(input: impl BufRead, out: &mut Vec<u8>, loader: Loader) -> io::Result<()> {
    let buffer = SharedBuffer::default();
    run(input, Box::new(buffer.clone()), loader)?;
    out.extend_from_slice(&buffer.0.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(())
}

/// A `Write` into a shared byte vector.
#[derive(Clone, Default)]
pub struct SharedBuffer(pub Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuffer {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
