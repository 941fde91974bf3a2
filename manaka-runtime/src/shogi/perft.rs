//! Perft: the number of leaf nodes of the legal-move tree, the standard check of a move
//! generator. The last ply is counted without playing it ("bulk counting").

use super::moves::Move;
use super::position::Position;

impl Position {
    /// Leaf count of the legal-move tree `depth` plies deep.
    pub fn perft(&mut self, depth: u32) -> u64 {
        match depth {
            0 => 1,
            1 => self.count_legal_moves(),
            _ => {
                let mut n = 0;
                for m in self.legal_moves() {
                    self.do_move(m);
                    n += self.perft(depth - 1);
                    self.undo_move(m);
                }
                n
            }
        }
    }

    /// Perft split by first move.
    pub fn perft_divide(&mut self, depth: u32) -> Vec<(Move, u64)> {
        let mut out = Vec::new();
        for m in self.legal_moves() {
            self.do_move(m);
            let n = if depth <= 1 { 1 } else { self.perft(depth - 1) };
            self.undo_move(m);
            out.push((m, n));
        }
        out
    }
}
