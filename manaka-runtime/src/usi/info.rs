//! The engine's output lines: `info` from search results, `bestmove`, and the ASCII-only
//! guarantee for everything written.

use crate::search::{Outcome, Proof, SearchResult, cp_from_value};
use crate::shogi::Move;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Replaces anything that is not printable ASCII (and line breaks) so a GUI reading
/// Shift-JIS or ASCII never sees a stray byte.
pub fn ascii(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// The engine's standard output, shared by the protocol thread and the search thread: each
/// line is written whole and flushed at once. Write errors (a GUI gone away) are ignored;
/// the input side notices the end.
#[derive(Clone)]
pub struct Output(Arc<Mutex<Box<dyn Write + Send>>>);

impl Output {
    pub fn new(w: Box<dyn Write + Send>) -> Output {
        Output(Arc::new(Mutex::new(w)))
    }

    pub fn line(&self, text: &str) {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(w, "{}", ascii(text));
        let _ = w.flush();
    }

    /// `info string …`.
    /// An `info string` line; input it repeats (a refused SFEN, an unknown command) is cut
    /// to an excerpt, so that a hostile 100 KB line is not echoed whole.
    pub fn info_string(&self, text: &str) {
        self.line(&crate::data::io::shorten_echoes(&format!(
            "info string {text}"
        )));
    }
}

/// How a result's scores are written: what a draw is worth to the engine
/// (`DrawValueBlack`/`DrawValueWhite`), and what `MaxMovesToDraw` settles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scoring {
    /// The score of a draw, in centipawns from the engine's side (0 for an even draw).
    pub draw_cp: i32,
    /// Plies the game has left before `MaxMovesToDraw` draws it (counting the move being
    /// chosen); `None` without the rule.
    pub plies_left: Option<u32>,
    /// Every move allowed leads to a draw by the move limit (the last plies, game.rs).
    pub settled_draw: bool,
    /// `MultiPV`: with more than one, every line carries `multipv k`.
    pub multipv: usize,
}

impl Default for Scoring {
    fn default() -> Self {
        Scoring {
            draw_cp: 0,
            plies_left: None,
            settled_draw: false,
            multipv: 1,
        }
    }
}

impl Scoring {
    /// The USI score of a line: `mate N` for a proven win or loss that comes before the
    /// move limit; the draw's score for a proven draw, a mate beyond the limit or a settled
    /// draw; else the centipawns of `value`.
    pub fn score(&self, mate: Option<i32>, value: f64, proven_draw: bool) -> String {
        let beyond_limit = |n: i32| self.plies_left.is_some_and(|k| n.unsigned_abs() > k);
        match mate {
            _ if self.settled_draw || proven_draw => format!("cp {}", self.draw_cp),
            Some(n) if beyond_limit(n) => format!("cp {}", self.draw_cp),
            Some(n) => format!("mate {n}"),
            None => format!("cp {}", cp_from_value(value)),
        }
    }
}

/// The `info` lines for a result or a snapshot: depth (PV length), seldepth, nodes
/// (simulations), nps, time, hashfull, score and the PV; with `MultiPV` above 1 one line per
/// candidate, best first, each with `multipv k` (an exact answer — a mate found before the
/// search — has a single line, `multipv 1`). Empty when there is no move to show (mated,
/// declaration): every line with a score carries a PV.
pub fn info_lines(r: &SearchResult, hashfull: u32, scoring: &Scoring) -> Vec<String> {
    if r.pv.is_empty() {
        return Vec::new();
    }
    let head = |pv: &[Move]| {
        let depth = pv.len();
        let seldepth = (r.stats.max_depth as usize).max(depth);
        format!(
            "info depth {depth} seldepth {seldepth} nodes {} nps {} time {} hashfull {}",
            r.stats.simulations,
            r.nps().round() as u64,
            r.elapsed.as_millis(),
            hashfull.min(1000),
        )
    };
    let moves = |pv: &[Move]| pv.iter().map(|m| m.to_usi()).collect::<Vec<_>>().join(" ");
    // A proven win or loss is `mate N` in plies, negative when the engine is mated (the
    // USI protocol's convention); anything else a centipawn score.
    let main_score = scoring.score(r.mate_plies(), r.root_value, r.proof == Some(Proof::Draw));
    if scoring.multipv <= 1 {
        return vec![format!(
            "{} score {main_score} pv {}",
            head(&r.pv),
            moves(&r.pv)
        )];
    }
    if r.lines.is_empty() {
        return vec![format!(
            "{} multipv 1 score {main_score} pv {}",
            head(&r.pv),
            moves(&r.pv)
        )];
    }
    r.lines
        .iter()
        .enumerate()
        .map(|(k, line)| {
            format!(
                "{} multipv {} score {} pv {}",
                head(&line.pv),
                k + 1,
                scoring.score(line.mate, line.value, false),
                moves(&line.pv)
            )
        })
        .collect()
}

/// The `bestmove` line: `resign` when mated, `win` for a declaration, else the move (with
/// `ponder` and the expected reply when asked for and known).
///
/// With `ponder_from` (the searched position, when `USI_Ponder` is on) the line names a
/// ponder move whenever the opponent has a reply: the PV's, or else the reply's first legal
/// move (a short search's PV can end at the best move). Match runners that pair every
/// `bestmove` with a ponder search (cshogi's) lose track without one, and pondering on the
/// opponent's position does not depend on the guess.
pub fn bestmove_line(r: &SearchResult, ponder_from: Option<&crate::shogi::Position>) -> String {
    if r.outcome == Outcome::DeclareWin {
        return "bestmove win".to_string();
    }
    let Some(m) = r.best_move else {
        return "bestmove resign".to_string();
    };
    let reply = ponder_from.and_then(|p| {
        r.pv.get(1).copied().or_else(|| {
            let mut after = p.clone();
            after.do_move(m);
            after.legal_moves().first().copied()
        })
    });
    match reply {
        Some(reply) => format!("bestmove {} ponder {}", m.to_usi(), reply.to_usi()),
        None => format!("bestmove {}", m.to_usi()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_respect_the_draw_value_and_the_move_limit() {
        let s = Scoring {
            draw_cp: -120,
            plies_left: Some(5),
            ..Scoring::default()
        };
        assert_eq!(s.score(None, 0.0, false), "cp 0");
        assert_eq!(s.score(None, 0.0, true), "cp -120");
        assert_eq!(s.score(Some(5), 1.0, false), "mate 5");
        assert_eq!(s.score(Some(-4), -1.0, false), "mate -4");
        // A mate after the game's last move is the draw the game ends in.
        assert_eq!(s.score(Some(7), 1.0, false), "cp -120");
        assert_eq!(s.score(Some(-6), -1.0, false), "cp -120");
        let settled = Scoring {
            settled_draw: true,
            ..s
        };
        assert_eq!(settled.score(None, 0.8, false), "cp -120");
        assert_eq!(Scoring::default().score(Some(-9), -1.0, false), "mate -9");
    }

    #[test]
    fn ascii_only() {
        assert_eq!(ascii("ok: 7g7f"), "ok: 7g7f");
        assert_eq!(ascii("将棋\r\n\tx"), "?????x");
    }
}
