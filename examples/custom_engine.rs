//! A USI engine of your own: a shape the `manaka` binary does not compile in
//! (`pair0_d32_o2_h64_kp`: KP tokens, 32-wide power sums of order 2, one hidden layer of 64),
//! declared here and run by the library's one-call program (docs/library.md).
//!
//! ```sh
//! cargo run --release --example custom_engine            # then speak USI: usi, isready, go …
//! manaka weights init --shape pair0_d32_o2_h64_kp --seed 7 -o custom.mnw
//! # setoption name EvalFile value custom.mnw             # a file of this shape
//! ```
//!
//! With no `EvalFile` it plays random weights of its shape (seed 1); `builtin:material` is
//! the material evaluator; a file of another shape runs on the reference evaluator, as in
//! `manaka usi`. tests/library_engine.rs plays it against fairy-stockfish.

use manaka::prelude::*;

manaka_net!(Custom = "pair0_d32_o2_h64_kp");

/// The engine as this program runs it (the tests play exactly this).
pub fn app() -> App<Custom::Engine> {
    Custom::app().random_weights(1)
}

fn main() -> std::process::ExitCode {
    app().run_usi()
}
