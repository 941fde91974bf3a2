//! The engine's output lines: `info` from search results, `bestmove`, and the ASCII-only
//! guarantee for everything written.

use crate::search::{Outcome, SearchResult};
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
    pub fn info_string(&self, text: &str) {
        self.line(&format!("info string {text}"));
    }
}

/// The `info` line for a result or a snapshot: depth (PV length), seldepth, nodes
/// (simulations), nps, time, hashfull, score and the PV. `None` when there is no move to
/// show (mated, declaration): every line with a score carries a PV.
pub fn info_line(r: &SearchResult, hashfull: u32) -> Option<String> {
    if r.pv.is_empty() {
        return None;
    }
    // A proven win or loss is `mate N` in plies, negative when the engine is mated (the
    // USI protocol's convention); anything else a centipawn score.
    let score = match r.mate_plies() {
        Some(n) => format!("mate {n}"),
        None => format!("cp {}", r.score_cp()),
    };
    let pv: Vec<String> = r.pv.iter().map(|m| m.to_usi()).collect();
    let depth = r.pv.len();
    let seldepth = (r.stats.max_depth as usize).max(depth);
    Some(format!(
        "info depth {depth} seldepth {seldepth} nodes {} nps {} time {} hashfull {} score {score} pv {}",
        r.stats.simulations,
        r.nps().round() as u64,
        r.elapsed.as_millis(),
        hashfull.min(1000),
        pv.join(" ")
    ))
}

/// The `bestmove` line: `resign` when mated, `win` for a declaration, else the move (with
/// `ponder` and the expected reply when asked for and known).
pub fn bestmove_line(r: &SearchResult, with_ponder: bool) -> String {
    if r.outcome == Outcome::DeclareWin {
        return "bestmove win".to_string();
    }
    match (r.best_move, r.pv.get(1)) {
        (None, _) => "bestmove resign".to_string(),
        (Some(m), Some(reply)) if with_ponder => {
            format!("bestmove {} ponder {}", m.to_usi(), reply.to_usi())
        }
        (Some(m), _) => format!("bestmove {}", m.to_usi()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_only() {
        assert_eq!(ascii("ok: 7g7f"), "ok: 7g7f");
        assert_eq!(ascii("将棋\r\n\tx"), "?????x");
    }
}
