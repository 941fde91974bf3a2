//! Legal-move sets compared with fairy-stockfish (Debian's package, a second implementation
//! independent of cshogi's Apery lineage), through its USI `go perft 1`, which lists every
//! legal move with a count of 1.
//!
//! Debian's fairy-stockfish (11.1) generates pawn-drop mates, which shogi forbids. So the
//! comparison is restricted to positions where no pawn drop can give check: the side to move
//! has no pawn in hand, or the square in front of the enemy king is occupied, or its file
//! already holds one of the mover's pawns. That test is made here from the board alone, not
//! from Manaka's move generator.

mod support;

use manaka::runtime::shogi::{Color, HandKind, PieceKind, Position, Square};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout};

const TEST: &str = "rules_oracle_fairy";

struct Engine {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Engine {
    fn start() -> Result<Engine, String> {
        let mut child = support::spawn_fairy_stockfish()?;
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut e = Engine {
            child,
            stdin,
            stdout,
        };
        e.send("usi");
        e.read_until(|l| l == "usiok");
        e.send("setoption name UCI_Variant value shogi");
        e.send("isready");
        e.read_until(|l| l == "readyok");
        Ok(e)
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to fairy-stockfish");
        self.stdin.flush().unwrap();
    }

    /// Reads lines until `done` accepts one; returns the lines before it.
    fn read_until(&mut self, done: impl Fn(&str) -> bool) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .expect("read from fairy-stockfish");
            assert!(
                n > 0,
                "fairy-stockfish exited; last lines: {:?}",
                lines.iter().rev().take(5).collect::<Vec<_>>()
            );
            let line = line.trim_end().to_string();
            if done(&line) {
                return lines;
            }
            lines.push(line);
        }
    }

    /// The legal moves fairy-stockfish lists for `sfen` (USI notation).
    fn legal_moves(&mut self, sfen: &str) -> BTreeSet<String> {
        self.send(&format!("position sfen {sfen}"));
        self.send("go perft 1");
        let lines = self.read_until(|l| l.starts_with("Nodes searched"));
        lines
            .iter()
            .filter_map(|l| l.strip_suffix(": 1"))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.child.wait();
    }
}

/// Whether the side to move could drop a pawn giving check (ignoring whether it mates):
/// a pawn in hand, and the square in front of the enemy king empty and on a file free of
/// the mover's unpromoted pawns.
fn pawn_drop_can_check(pos: &Position) -> bool {
    let us = pos.side_to_move();
    if pos.hand(us).count(HandKind::Pawn) == 0 {
        return false;
    }
    let Some(k) = pos.king_square(us.flip()) else {
        return false;
    };
    let rank = match us {
        Color::Black => k.rank() + 1,
        Color::White => k.rank().wrapping_sub(1),
    };
    let Some(front) = Square::from_file_rank(k.file(), rank) else {
        return false;
    };
    if pos.piece_at(front).is_some() {
        return false;
    }
    !(1..=9).any(|r| {
        pos.piece_at(Square::from_file_rank(k.file(), r).unwrap())
            .is_some_and(|p| p.kind == PieceKind::Pawn && p.color == us)
    })
}

#[test]
fn fairy_stockfish_legal_moves() {
    let mut engine = match Engine::start() {
        Ok(e) => e,
        Err(why) => {
            support::missing_oracle(TEST, &why);
            return;
        }
    };
    let games: usize = support::env_or("MANAKA_FAIRY_GAMES", 40);
    let mut rng = support::rng(0xfa1);
    let positions = support::random_positions(&mut rng, support::EXTRA_STARTS, games, 150);
    let (mut compared, mut skipped, mut mismatches) = (0, 0, Vec::new());
    for pos in &positions {
        if pawn_drop_can_check(pos) {
            skipped += 1;
            continue;
        }
        compared += 1;
        let sfen = pos.to_sfen();
        let ours: BTreeSet<String> = pos.legal_moves().iter().map(|m| m.to_usi()).collect();
        let theirs = engine.legal_moves(&sfen);
        if ours != theirs {
            mismatches.push(format!(
                "{sfen}: Manaka only {:?}, fairy-stockfish only {:?}",
                ours.difference(&theirs).collect::<Vec<_>>(),
                theirs.difference(&ours).collect::<Vec<_>>()
            ));
        }
    }
    eprintln!("{TEST}: {compared} positions compared, {skipped} skipped (a pawn drop could check)");
    assert!(
        mismatches.is_empty(),
        "{} mismatches; first ones:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(8)].join("\n")
    );
    assert!(compared >= 2000, "too few positions compared: {compared}");
}
