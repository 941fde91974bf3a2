//! dlshogi's 2,187 policy move labels (SPEC §5): `label = 81 · class + to`, `to` in the side
//! to move's view (White rotated). Classes 0..9 are the direction from origin to destination —
//! UP, UP_LEFT, UP_RIGHT, LEFT, RIGHT, DOWN, DOWN_LEFT, DOWN_RIGHT, UP2_LEFT, UP2_RIGHT (the
//! last two are a knight's jumps) — 10..19 the same with promotion, and 20..26 drops of
//! P, L, N, S, B, R, G (gold last, as in cshogi's hand-piece order). Must equal
//! `cshogi.dlshogi.make_move_label`; the oracle test checks it.

use crate::shogi::{Color, HandKind, Move};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shogi::Position;

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
