//! dlshogi's 2,187 policy move labels (SPEC §5): `label = 81 · class + to`, `to` in the side
//! to move's view (White rotated). Classes 0..9 are the direction from origin to destination —
//! UP, UP_LEFT, UP_RIGHT, LEFT, RIGHT, DOWN, DOWN_LEFT, DOWN_RIGHT, UP2_LEFT, UP2_RIGHT (the
//! last two are a knight's jumps) — 10..19 the same with promotion, and 20..26 drops of
//! P, L, N, S, B, R, G (gold last, as in cshogi's hand-piece order). Must equal
//! `cshogi.dlshogi.make_move_label`; the oracle test checks it.

use crate::shogi::{Color, HandKind, Move, Position};
use manaka_shapes::formula;

pub const LABEL_COUNT: usize = 2187;
/// First drop class.
pub const DROP_CLASS_BASE: u16 = 20;

/// Direction classes (SPEC §5 order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Direction {
    Up = 0,
    UpLeft,
    UpRight,
    Left,
    Right,
    Down,
    DownLeft,
    DownRight,
    Up2Left,
    Up2Right,
}

/// Drop class offset of each hand kind (P L N S G B R → P L N S B R G order).
const DROP_CLASS: [u16; 7] = [0, 1, 2, 3, 6, 4, 5];

/// The move class (0..27) of `m` played by `side`.
pub fn move_class(m: Move, side: Color) -> u16 {
    match m.from() {
        None => {
            let k: HandKind = m.drop_kind().expect("a move without origin is a drop");
            DROP_CLASS_BASE + DROP_CLASS[k as usize]
        }
        Some(from) => {
            let (from, to) = (from.relative(side), m.to().relative(side));
            // Files grow to the left as Black sees the board; ranks grow downwards.
            let dx = from.file() as i32 - to.file() as i32; // > 0: moving right
            let dy = to.rank() as i32 - from.rank() as i32; // < 0: moving up
            let dir = match (dx, dy) {
                (0, y) if y < 0 => Direction::Up,
                (-1, -2) => Direction::Up2Left,
                (1, -2) => Direction::Up2Right,
                (x, y) if y < 0 && x < 0 => Direction::UpLeft,
                (_, y) if y < 0 => Direction::UpRight,
                (x, 0) if x < 0 => Direction::Left,
                (_, 0) => Direction::Right,
                (0, _) => Direction::Down,
                (x, _) if x < 0 => Direction::DownLeft,
                _ => Direction::DownRight,
            };
            dir as u16 + if m.is_promotion() { 10 } else { 0 }
        }
    }
}

/// The policy label (0..2187) of `m` played by `side`.
pub fn move_label(m: Move, side: Color) -> u16 {
    81 * move_class(m, side) + m.to().relative(side).index() as u16
}

/// The `policy.from` entry (SPEC §5, [`formula::move_feature`]) of `m` in `pos`: the kind of
/// the moving or dropped piece before promotion, and its origin relative to the side to move
/// (81 for a drop). `None` when `m` has no piece at its origin, so it is no move of `pos`; the
/// one policy for that case (issue 17): every evaluator — reference, compiled, integer, CUDA —
/// then adds no `policy.from` term, and the trainer refuses the example.
pub fn move_feature(pos: &Position, m: Move) -> Option<usize> {
    let side = pos.side_to_move();
    Some(match m.from() {
        Some(from) => formula::move_feature(
            pos.piece_at(from)?.kind as usize,
            from.relative(side).index(),
        ),
        None => formula::move_feature(m.drop_kind()?.piece_kind() as usize, formula::DROP_ORIGIN),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_features_by_hand() {
        let p = Position::from_sfen("startpos").unwrap();
        // 7g7f: a pawn (kind 0) from 7g, square 60 for Black.
        let m = p.parse_usi_move("7g7f").unwrap();
        assert_eq!(move_feature(&p, m), Some(60));
        // An empty origin: no feature (5e is empty at the start).
        let m = Move::normal(
            crate::shogi::Square::from_usi("5e").unwrap(),
            crate::shogi::Square::from_usi("5d").unwrap(),
            false,
        );
        assert_eq!(move_feature(&p, m), None);
        // White drops a rook (kind 6, SPEC §1): origin 81 whoever drops.
        let p = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 w r 1").unwrap();
        let m = p.parse_usi_move("R*5e").unwrap();
        assert_eq!(move_feature(&p, m), Some(6 * 82 + 81));
    }

    fn label(sfen: &str, usi: &str) -> u16 {
        let p = Position::from_sfen(sfen).unwrap();
        let m = p.parse_usi_move(usi).unwrap();
        move_label(m, p.side_to_move())
    }

    #[test]
    fn spec_examples() {
        assert_eq!(label("startpos", "7g7f"), 59);
        let drops = "4k4/9/9/9/9/9/9/9/4K4 b BG 1";
        assert_eq!(label(drops, "B*5e"), 1984);
        assert_eq!(label(drops, "G*5e"), 2146);
        // White's 3c3d is its "7g7f": same label once rotated.
        assert_eq!(
            label(
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2",
                "3c3d"
            ),
            59
        );
    }
}
