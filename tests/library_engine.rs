//! A user's own engine (examples/custom_engine.rs: a shape the `manaka` binary does not
//! compile in, run by `App::run_usi`) plays one short game against fairy-stockfish over USI,
//! refereed here: every move the engine sends is legal, every `go` is answered, and the game
//! ends by the rules or at the ply limit. The engine speaks over OS pipes from a thread of
//! this test (the example's `app()`, compiled into the test); fairy-stockfish is a process.
//!
//! Skips with a message when fairy-stockfish is missing, unless MANAKA_REQUIRE_ORACLES=1
//! (scripts/test sets it), which turns that into a failure.

#[path = "../examples/custom_engine.rs"]
#[allow(dead_code)]
mod custom_engine;
mod support;

use manaka::runtime::runs::selfplay::judge;
use manaka::runtime::shogi::{Color, Position};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::Child;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

const TEST: &str = "library_engine";
/// The game is adjudicated a draw after this many plies (a few seconds at 30 ms a move).
const MAX_PLIES: usize = 80;
/// How long any answer may take before the test fails (a hung engine, not a slow one).
const PATIENCE: Duration = Duration::from_secs(30);

/// One side of the game: commands in, lines out (read by a thread, so that a silent engine
/// fails the test after [`PATIENCE`] instead of hanging it).
struct Player {
    name: &'static str,
    input: Box<dyn Write + Send>,
    lines: Receiver<String>,
    child: Option<Child>,
}

impl Player {
    fn new(
        name: &'static str,
        input: Box<dyn Write + Send>,
        output: impl Read + Send + 'static,
    ) -> Player {
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines() {
                let Ok(line) = line else { break };
                if tx.send(line.trim_end().to_string()).is_err() {
                    break;
                }
            }
        });
        Player {
            name,
            input,
            lines,
            child: None,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.input, "{line}")
            .unwrap_or_else(|e| panic!("{}: write failed: {e}", self.name));
        self.input.flush().unwrap();
    }

    /// Lines until one `done` accepts, which is returned.
    fn wait_for(&mut self, done: impl Fn(&str) -> bool) -> (String, Vec<String>) {
        let mut before = Vec::new();
        loop {
            match self.lines.recv_timeout(PATIENCE) {
                Ok(line) if done(&line) => return (line, before),
                Ok(line) => before.push(line),
                Err(e) => panic!(
                    "{}: no answer ({e}); last lines: {:?}",
                    self.name,
                    before.iter().rev().take(5).collect::<Vec<_>>()
                ),
            }
        }
    }

    /// `usi` … `isready`, with `options` in between.
    fn start(&mut self, options: &[&str]) -> Vec<String> {
        self.send("usi");
        self.wait_for(|l| l == "usiok");
        for o in options {
            self.send(o);
        }
        self.send("isready");
        let (_, info) = self.wait_for(|l| l == "readyok");
        self.send("usinewgame");
        info
    }

    /// The move it chooses in `position`.
    fn best_move(&mut self, position: &str, go: &str) -> String {
        self.send(position);
        self.send(go);
        let (line, _) = self.wait_for(|l| l.starts_with("bestmove"));
        line.split_whitespace().nth(1).unwrap_or("").to_string()
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "quit");
        let _ = self.input.flush();
        if let Some(child) = &mut self.child {
            let _ = child.wait();
        }
    }
}

fn fairy_stockfish() -> Result<Player, String> {
    let mut child = support::spawn_fairy_stockfish()?;
    let input = Box::new(child.stdin.take().unwrap());
    let output = child.stdout.take().unwrap();
    let mut p = Player::new("fairy-stockfish", input, output);
    p.child = Some(child);
    Ok(p)
}

/// The example's engine on a thread of this process, over two OS pipes.
fn custom_engine() -> (Player, std::thread::JoinHandle<std::io::Result<()>>) {
    let (commands, engine_in) = {
        let (r, w) = std::io::pipe().expect("a pipe");
        (w, r)
    };
    let (engine_out, answers) = {
        let (r, w) = std::io::pipe().expect("a pipe");
        (w, r)
    };
    let app = custom_engine::app();
    let thread =
        std::thread::spawn(move || app.run_usi_on(BufReader::new(engine_in), Box::new(engine_out)));
    (
        Player::new("custom engine", Box::new(commands), answers),
        thread,
    )
}

#[test]
fn custom_shape_plays_a_game_against_fairy_stockfish() {
    let mut fairy = match fairy_stockfish() {
        Ok(p) => p,
        Err(why) => return support::missing_oracle(TEST, &why),
    };
    let (mut ours, thread) = custom_engine();
    let info = ours.start(&["setoption name USI_Hash value 16"]);
    // The example's own engine runs, compiled (not the reference evaluator or a fallback).
    assert!(
        info.iter()
            .any(|l| l.contains("pair0_d32_o2_h64_kp") && l.contains("compiled")),
        "{info:?}"
    );
    fairy.start(&["setoption name UCI_Variant value shogi"]);

    let settings = manaka::app::selfplay_config(1, 1).settings;
    let mut pos = Position::startpos();
    let mut moves: Vec<String> = Vec::new();
    let ending = loop {
        if let Some((ending, result)) = judge(&pos, moves.len(), &settings) {
            break format!("{ending:?}, {result:?}");
        }
        if moves.len() >= MAX_PLIES {
            break "ply limit".to_string();
        }
        let ours_to_move = pos.side_to_move() == Color::Black;
        let position = if moves.is_empty() {
            "position startpos".to_string()
        } else {
            format!("position startpos moves {}", moves.join(" "))
        };
        let go = "go btime 0 wtime 0 byoyomi 30";
        let player = if ours_to_move { &mut ours } else { &mut fairy };
        let text = player.best_move(&position, go);
        if text == "resign" || text == "win" {
            break format!("{} says {text}", player.name);
        }
        match pos.parse_usi_move(&text) {
            Ok(m) => {
                pos.do_move(m);
                moves.push(text);
            }
            Err(e) if ours_to_move => {
                panic!("the custom engine played '{text}' after {moves:?}: {e}")
            }
            // Debian's fairy-stockfish may drop a pawn with mate, which shogi forbids
            // (tests/rules_oracle_fairy.rs): that ends the game, it is not our engine's fault.
            Err(e) => break format!("fairy-stockfish played '{text}': {e}"),
        }
    };
    eprintln!(
        "{TEST}: {} plies, {ending}: {}",
        moves.len(),
        moves.join(" ")
    );
    assert!(!moves.is_empty(), "{ending}");
    drop(ours);
    thread
        .join()
        .expect("the engine thread does not panic")
        .expect("the engine's USI input/output works");
}
