//! Checking moves: the legal moves of the side to move that give check.
//!
//! The fast path filters the rules core's legal generator as it emits destinations, so no
//! illegal move can appear. A move gives check when
//! - *directly*: the piece standing on the destination afterwards (promoted or not) attacks
//!   the enemy king. Those destinations are the king's "check squares" for that kind, the
//!   squares a piece of that kind attacks from the king's square with the king's colour
//!   (attacks are symmetric that way). The current occupancy is exact for sliders: the
//!   origin, which the move empties, never lies between a checking destination and the
//!   king (the piece would have been giving check already);
//! - *by discovery*: the piece leaves the one square between the enemy king and one of our
//!   sliders, for a destination off that line. Drops never discover.
//!
//! [`checks_slow`] is the twin that plays every legal move and asks whether the opponent
//! is then in check; the unit tests compare them on random positions.

use crate::shogi::{
    Bitboard, HandKind, Move, MoveSink, PieceKind, Position, Square, between, bishop_attacks,
    generate, lance_attacks, piece_attacks, rook_attacks,
};
use std::ops::ControlFlow;

/// Per position: where each kind checks from, and which of our pieces may discover check.
struct CheckSquares {
    /// `direct[kind]`: destinations from which a piece of `kind` (of the side to move)
    /// attacks the enemy king.
    direct: [Bitboard; PieceKind::NUM],
    /// Our pieces alone between the enemy king and one of our sliders.
    discoverers: Bitboard,
    /// For each discoverer, the squares between the king and its slider: moving there
    /// keeps the line closed.
    lines: [(Square, Bitboard); 8],
    n_lines: usize,
}

impl CheckSquares {
    fn new(pos: &Position, king: Square) -> CheckSquares {
        let us = pos.side_to_move();
        let them = us.flip();
        let occ = pos.occupied();
        let mut direct = [Bitboard::EMPTY; PieceKind::NUM];
        for kind in PieceKind::ALL {
            if kind != PieceKind::King {
                direct[kind.index()] = piece_attacks(kind, them, king, occ);
            }
        }
        let ours = pos.pieces(us);
        let of = |k: PieceKind| pos.pieces_of(k, us);
        // Sliders that would reach the king on an empty board: its rays, by kind.
        let empty = Bitboard::EMPTY;
        let snipers = (lance_attacks(them, king, empty) & of(PieceKind::Lance))
            | (bishop_attacks(king, empty) & (of(PieceKind::Bishop) | of(PieceKind::Horse)))
            | (rook_attacks(king, empty) & (of(PieceKind::Rook) | of(PieceKind::Dragon)));
        let mut discoverers = Bitboard::EMPTY;
        let mut lines = [(king, Bitboard::EMPTY); 8];
        let mut n_lines = 0;
        for s in snipers {
            let line = between(king, s);
            let b = line & occ;
            if b.is_nonempty() && !b.has_more_than_one() && (b & ours).is_nonempty() {
                discoverers |= b;
                // A square lies on one line through the king, so at most eight of these.
                let blocker = b.first().expect("one blocker");
                lines[n_lines] = (blocker, line);
                n_lines += 1;
            }
        }
        CheckSquares {
            direct,
            discoverers,
            lines,
            n_lines,
        }
    }
}

/// A sink that keeps the checking moves among the legal ones it is handed.
struct CheckSink<'a> {
    squares: &'a CheckSquares,
    out: &'a mut Vec<Move>,
}

impl MoveSink for CheckSink<'_> {
    #[inline]
    fn board(
        &mut self,
        kind: PieceKind,
        from: Square,
        promote: Bitboard,
        plain: Bitboard,
    ) -> ControlFlow<()> {
        let sq = self.squares;
        let mut pro = if promote.is_nonempty() {
            promote & sq.direct[kind.promote().index()]
        } else {
            Bitboard::EMPTY
        };
        let mut pl = plain & sq.direct[kind.index()];
        if sq.discoverers.contains(from) {
            let line = sq.lines[..sq.n_lines]
                .iter()
                .find(|(b, _)| *b == from)
                .map_or(Bitboard::EMPTY, |(_, l)| *l);
            let off_line = !line;
            pro |= promote & off_line;
            pl |= plain & off_line;
        }
        for to in pro {
            self.out.push(Move::normal(from, to, true));
        }
        for to in pl {
            self.out.push(Move::normal(from, to, false));
        }
        ControlFlow::Continue(())
    }

    #[inline]
    fn drops(&mut self, kind: HandKind, to: Bitboard) -> ControlFlow<()> {
        for t in to & self.squares.direct[kind.piece_kind().index()] {
            self.out.push(Move::drop(kind, t));
        }
        ControlFlow::Continue(())
    }
}

/// Appends to `out` every legal move of the side to move that gives check. Nothing when the
/// opponent has no king.
pub fn checks(pos: &Position, out: &mut Vec<Move>) {
    let them = pos.side_to_move().flip();
    let Some(king) = pos.king_square(them) else {
        return;
    };
    let squares = CheckSquares::new(pos, king);
    generate(
        pos,
        &mut CheckSink {
            squares: &squares,
            out,
        },
    );
}

/// The slow twin of [`checks`]: every legal move, played, kept when the opponent is then in
/// check: the same set of moves.
pub fn checks_slow(pos: &Position) -> Vec<Move> {
    let mut p = pos.clone();
    let mut out = Vec::new();
    for m in pos.legal_moves() {
        p.do_move(m);
        if p.in_check() {
            out.push(m);
        }
        p.undo_move(m);
    }
    out
}
