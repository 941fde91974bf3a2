//! The compact move type and its USI text form.

use super::types::{HandKind, Square};
use std::fmt;
use std::num::NonZeroU16;

/// A move in 16 bits: destination in bits 0–6, origin in bits 7–13 (81 + hand kind for a
/// drop), promotion in bit 14. This is the layout of cshogi's `move16`, which the HCPE
/// formats store, and it carries exactly what a dlshogi policy label needs
/// (origin/destination or dropped kind, promotion). Never zero, so `Option<Move>` is 2 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(NonZeroU16);

const PROMOTE_BIT: u16 = 1 << 14;
const DROP_BASE: u16 = 81;
/// A drop's origin field is `DROP_BASE + code`, where the code follows cshogi's (and
/// YaneuraOu's) piece-type order P L N S B R G, not `HandKind`'s P L N S G B R.
const DROP_CODE: [u16; 7] = [0, 1, 2, 3, 6, 4, 5];
const DROP_KIND: [HandKind; 7] = [
    HandKind::Pawn,
    HandKind::Lance,
    HandKind::Knight,
    HandKind::Silver,
    HandKind::Bishop,
    HandKind::Rook,
    HandKind::Gold,
];

impl Move {
    #[inline(always)]
    pub fn normal(from: Square, to: Square, promote: bool) -> Move {
        debug_assert!(from != to);
        let v =
            to.index() as u16 | (from.index() as u16) << 7 | if promote { PROMOTE_BIT } else { 0 };
        // from != to, so at least one of the two fields is non-zero.
        Move(NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN))
    }

    #[inline(always)]
    pub fn drop(kind: HandKind, to: Square) -> Move {
        let v = to.index() as u16 | (DROP_BASE + DROP_CODE[kind as usize]) << 7;
        Move(NonZeroU16::new(v).expect("drop origin field is non-zero"))
    }

    /// The raw 16-bit encoding (cshogi's `move16`).
    #[inline(always)]
    pub const fn to_u16(self) -> u16 {
        self.0.get()
    }

    /// Decodes a raw 16-bit move; `None` if a field is out of range. The move is not
    /// checked for legality in any position.
    pub fn from_u16(v: u16) -> Option<Move> {
        let to = v & 0x7f;
        let from = (v >> 7) & 0x7f;
        if v >> 15 != 0 || to >= 81 || from >= DROP_BASE + 7 || from == to {
            return None;
        }
        if from >= DROP_BASE && v & PROMOTE_BIT != 0 {
            return None;
        }
        NonZeroU16::new(v).map(Move)
    }

    #[inline(always)]
    pub fn to(self) -> Square {
        Square::from_index_unchecked((self.0.get() & 0x7f) as u8)
    }

    #[inline(always)]
    fn origin_field(self) -> u16 {
        (self.0.get() >> 7) & 0x7f
    }

    /// The origin square, or `None` for a drop.
    #[inline(always)]
    pub fn from(self) -> Option<Square> {
        let f = self.origin_field();
        if f < DROP_BASE {
            Some(Square::from_index_unchecked(f as u8))
        } else {
            None
        }
    }

    #[inline(always)]
    pub fn is_drop(self) -> bool {
        self.origin_field() >= DROP_BASE
    }

    /// The kind dropped, or `None` for a board move.
    #[inline(always)]
    pub fn drop_kind(self) -> Option<HandKind> {
        let f = self.origin_field();
        if f >= DROP_BASE {
            DROP_KIND.get((f - DROP_BASE) as usize).copied()
        } else {
            None
        }
    }

    #[inline(always)]
    pub fn is_promotion(self) -> bool {
        self.0.get() & PROMOTE_BIT != 0
    }

    /// The move reflected left to right ([`Square::mirror`]): the same move in the
    /// mirrored position.
    pub fn mirror(self) -> Move {
        let to = self.to().mirror();
        match (self.from(), self.drop_kind()) {
            (Some(from), _) => Move::normal(from.mirror(), to, self.is_promotion()),
            (None, Some(kind)) => Move::drop(kind, to),
            (None, None) => unreachable!("a move is a board move or a drop"),
        }
    }

    /// USI text: `7g7f`, `8h2b+`, `P*5e`.
    pub fn to_usi(self) -> String {
        self.to_string()
    }

    /// Parses USI move text without reference to a position (see
    /// `Position::parse_usi_move` for the legality check). `None` if the text is malformed.
    pub fn parse_usi_syntax(s: &str) -> Option<Move> {
        let b = s.as_bytes();
        if b.len() == 4 && b[1] == b'*' {
            let kind = HandKind::from_letter(b[0] as char).filter(|_| b[0].is_ascii_uppercase())?;
            let to = Square::from_usi(&s[2..4])?;
            return Some(Move::drop(kind, to));
        }
        let promote = match b.len() {
            4 => false,
            5 if b[4] == b'+' => true,
            _ => return None,
        };
        if !s.is_char_boundary(2) || !s.is_char_boundary(4) {
            return None;
        }
        let from = Square::from_usi(&s[0..2])?;
        let to = Square::from_usi(&s[2..4])?;
        if from == to {
            return None;
        }
        Some(Move::normal(from, to, promote))
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.from(), self.drop_kind()) {
            (Some(from), _) => {
                write!(
                    f,
                    "{}{}{}",
                    from,
                    self.to(),
                    if self.is_promotion() { "+" } else { "" }
                )
            }
            (None, Some(kind)) => write!(f, "{}*{}", kind.letter(), self.to()),
            (None, None) => write!(f, "????"),
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Move({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usi_round_trip_and_encoding() {
        for s in ["7g7f", "8h2b+", "P*5e", "G*1a", "1a1b", "9i9h+"] {
            let m = Move::parse_usi_syntax(s).unwrap();
            assert_eq!(m.to_usi(), s);
            assert_eq!(Move::from_u16(m.to_u16()), Some(m));
        }
        // cshogi move16 layout: to | from << 7 | promote << 14; 7g = 60, 7f = 59.
        assert_eq!(
            Move::parse_usi_syntax("7g7f").unwrap().to_u16(),
            59 | 60 << 7
        );
        // Drops: origin 81 + cshogi's piece type - 1 (P L N S B R G); 5e = 40.
        for (s, code) in [
            ("P*5e", 0),
            ("S*5e", 3),
            ("B*5e", 4),
            ("R*5e", 5),
            ("G*5e", 6),
        ] {
            assert_eq!(
                Move::parse_usi_syntax(s).unwrap().to_u16(),
                40 | (81 + code) << 7,
                "{s}"
            );
        }
        for bad in [
            "", "7g7", "7g7f+x", "0a1a", "7g7g", "p*5e", "K*5e", "P*5", "7g7f-", "7gé",
        ] {
            assert!(Move::parse_usi_syntax(bad).is_none(), "{bad}");
        }
    }
}
