//! Colours, squares, pieces and hands (SPEC §1).

use std::fmt;

/// A player. Black (sente) moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Color {
    Black = 0,
    White = 1,
}

impl Color {
    pub const ALL: [Color; 2] = [Color::Black, Color::White];

    #[inline(always)]
    pub const fn flip(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A board square, `(file - 1) * 9 + (rank - 1)` (SPEC §1): `1a` = 0, `1i` = 8, `9i` = 80.
/// This is YaneuraOu's and cshogi's numbering, so ids line up with theirs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    pub const NUM: usize = 81;

    /// The square with this index, if it is on the board.
    #[inline(always)]
    pub const fn new(index: u8) -> Option<Square> {
        if index < 81 {
            Some(Square(index))
        } else {
            None
        }
    }

    /// # Safety-free contract
    /// `index` must be below 81; callers derive it from a bitboard or a table.
    #[inline(always)]
    pub(crate) const fn from_index_unchecked(index: u8) -> Square {
        debug_assert!(index < 81);
        Square(index)
    }

    /// The square on `file` 1..=9 and `rank` 1..=9 (rank 1 = `a`).
    #[inline]
    pub const fn from_file_rank(file: u8, rank: u8) -> Option<Square> {
        if file >= 1 && file <= 9 && rank >= 1 && rank <= 9 {
            Some(Square((file - 1) * 9 + (rank - 1)))
        } else {
            None
        }
    }

    /// Iterates over all 81 squares in index order.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..81u8).map(Square)
    }

    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// File 1..=9.
    #[inline(always)]
    pub const fn file(self) -> u8 {
        self.0 / 9 + 1
    }

    /// Rank 1..=9 (1 = `a`, Black's far side).
    #[inline(always)]
    pub const fn rank(self) -> u8 {
        self.0 % 9 + 1
    }

    /// The square seen from the other side of the board: `80 - sq` (SPEC §1, White's view).
    #[inline(always)]
    pub const fn flip(self) -> Square {
        Square(80 - self.0)
    }

    /// The square reflected left to right: file `f` becomes file `10 − f`, the rank stays.
    /// Shogi's rules are symmetric under this reflection, so a mirrored position is as good a
    /// training example as the original (`Position::mirrored`).
    #[inline(always)]
    pub const fn mirror(self) -> Square {
        Square((8 - self.0 / 9) * 9 + self.0 % 9)
    }

    /// This square as seen by `perspective`: unchanged for Black, rotated for White.
    #[inline(always)]
    pub const fn relative(self, perspective: Color) -> Square {
        match perspective {
            Color::Black => self,
            Color::White => self.flip(),
        }
    }

    /// Rank counted from `color`'s far side: 1 is the rank its pawns promote on first.
    #[inline(always)]
    pub const fn relative_rank(self, color: Color) -> u8 {
        self.relative(color).rank()
    }

    /// Parses a USI square such as `7g`.
    pub fn from_usi(s: &str) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let file = b[0].checked_sub(b'0')?;
        let rank = b[1].checked_sub(b'a')? + 1;
        Square::from_file_rank(file, rank)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file(), (b'a' + self.rank() - 1) as char)
    }
}

/// The fourteen piece kinds, in SPEC §1's order `P L N S G B R K +P +L +N +S +B +R`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PieceKind {
    Pawn = 0,
    Lance,
    Knight,
    Silver,
    Gold,
    Bishop,
    Rook,
    King,
    ProPawn,
    ProLance,
    ProKnight,
    ProSilver,
    Horse,
    Dragon,
}

impl PieceKind {
    pub const NUM: usize = 14;
    pub const ALL: [PieceKind; 14] = [
        PieceKind::Pawn,
        PieceKind::Lance,
        PieceKind::Knight,
        PieceKind::Silver,
        PieceKind::Gold,
        PieceKind::Bishop,
        PieceKind::Rook,
        PieceKind::King,
        PieceKind::ProPawn,
        PieceKind::ProLance,
        PieceKind::ProKnight,
        PieceKind::ProSilver,
        PieceKind::Horse,
        PieceKind::Dragon,
    ];

    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    #[inline(always)]
    pub const fn from_index(i: usize) -> Option<PieceKind> {
        if i < 14 { Some(Self::ALL[i]) } else { None }
    }

    /// Whether this kind has a promoted form (P L N S B R).
    #[inline(always)]
    pub const fn can_promote(self) -> bool {
        matches!(
            self,
            PieceKind::Pawn
                | PieceKind::Lance
                | PieceKind::Knight
                | PieceKind::Silver
                | PieceKind::Bishop
                | PieceKind::Rook
        )
    }

    #[inline(always)]
    pub const fn is_promoted(self) -> bool {
        self as u8 >= PieceKind::ProPawn as u8
    }

    /// The promoted form; kinds that cannot promote are returned unchanged.
    #[inline(always)]
    pub const fn promote(self) -> PieceKind {
        match self {
            PieceKind::Pawn => PieceKind::ProPawn,
            PieceKind::Lance => PieceKind::ProLance,
            PieceKind::Knight => PieceKind::ProKnight,
            PieceKind::Silver => PieceKind::ProSilver,
            PieceKind::Bishop => PieceKind::Horse,
            PieceKind::Rook => PieceKind::Dragon,
            k => k,
        }
    }

    /// The unpromoted form (what a captured piece becomes in hand).
    #[inline(always)]
    pub const fn unpromote(self) -> PieceKind {
        match self {
            PieceKind::ProPawn => PieceKind::Pawn,
            PieceKind::ProLance => PieceKind::Lance,
            PieceKind::ProKnight => PieceKind::Knight,
            PieceKind::ProSilver => PieceKind::Silver,
            PieceKind::Horse => PieceKind::Bishop,
            PieceKind::Dragon => PieceKind::Rook,
            k => k,
        }
    }

    /// The hand kind this piece becomes when captured; `None` for the king.
    #[inline(always)]
    pub const fn hand_kind(self) -> Option<HandKind> {
        match self.unpromote() {
            PieceKind::Pawn => Some(HandKind::Pawn),
            PieceKind::Lance => Some(HandKind::Lance),
            PieceKind::Knight => Some(HandKind::Knight),
            PieceKind::Silver => Some(HandKind::Silver),
            PieceKind::Gold => Some(HandKind::Gold),
            PieceKind::Bishop => Some(HandKind::Bishop),
            PieceKind::Rook => Some(HandKind::Rook),
            _ => None,
        }
    }

    /// USI/SFEN letter of Black's piece (`P`, `+R`, ...).
    pub const fn sfen(self) -> &'static str {
        [
            "P", "L", "N", "S", "G", "B", "R", "K", "+P", "+L", "+N", "+S", "+B", "+R",
        ][self as usize]
    }
}

/// The seven kinds a hand can hold, in SPEC §1's order `P L N S G B R`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum HandKind {
    Pawn = 0,
    Lance,
    Knight,
    Silver,
    Gold,
    Bishop,
    Rook,
}

impl HandKind {
    pub const NUM: usize = 7;
    pub const ALL: [HandKind; 7] = [
        HandKind::Pawn,
        HandKind::Lance,
        HandKind::Knight,
        HandKind::Silver,
        HandKind::Gold,
        HandKind::Bishop,
        HandKind::Rook,
    ];
    /// How many of each kind exist in a standard set: `18 4 4 4 4 2 2` (SPEC §1).
    pub const MAX: [u8; 7] = [18, 4, 4, 4, 4, 2, 2];

    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    #[inline(always)]
    pub const fn from_index(i: usize) -> Option<HandKind> {
        if i < 7 { Some(Self::ALL[i]) } else { None }
    }

    #[inline(always)]
    pub const fn piece_kind(self) -> PieceKind {
        match self {
            HandKind::Pawn => PieceKind::Pawn,
            HandKind::Lance => PieceKind::Lance,
            HandKind::Knight => PieceKind::Knight,
            HandKind::Silver => PieceKind::Silver,
            HandKind::Gold => PieceKind::Gold,
            HandKind::Bishop => PieceKind::Bishop,
            HandKind::Rook => PieceKind::Rook,
        }
    }

    /// The USI letter (uppercase) used in drops (`P*5e`) and SFEN hands.
    pub const fn letter(self) -> char {
        ['P', 'L', 'N', 'S', 'G', 'B', 'R'][self as usize]
    }

    pub fn from_letter(c: char) -> Option<HandKind> {
        Self::ALL
            .into_iter()
            .find(|k| k.letter() == c.to_ascii_uppercase())
    }
}

/// A piece: a kind and an owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub kind: PieceKind,
    pub color: Color,
}

impl Piece {
    #[inline(always)]
    pub const fn new(kind: PieceKind, color: Color) -> Piece {
        Piece { kind, color }
    }

    /// Dense index `color * 14 + kind`, 0..28.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.color as usize * 14 + self.kind as usize
    }

    /// SFEN text: uppercase for Black, lowercase for White, `+` for promoted.
    pub fn sfen(self) -> String {
        let s = self.kind.sfen();
        match self.color {
            Color::Black => s.to_string(),
            Color::White => s.to_ascii_lowercase(),
        }
    }
}

/// The pieces one player holds, packed in a `u32` with a guard bit above each count, so that
/// "every count of `a` is at least that of `b`" is one subtraction (used by the
/// superior/inferior repetition classification).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Hand(u32);

/// Bit offset of each hand kind's count (P uses 5 bits, B and R 2, the rest 3).
const HAND_SHIFT: [u32; 7] = [0, 8, 12, 16, 20, 24, 28];
const HAND_MASK: [u32; 7] = [0x1f, 0x7, 0x7, 0x7, 0x7, 0x3, 0x3];
/// The bits directly above each field; set after `a - b` exactly when some count of `a` is
/// below `b`'s.
const HAND_BORROW: u32 =
    0xe0 | (1 << 11) | (1 << 15) | (1 << 19) | (1 << 23) | (0x3 << 26) | (0x3 << 30);

impl Hand {
    pub const EMPTY: Hand = Hand(0);

    #[inline(always)]
    pub const fn count(self, kind: HandKind) -> u8 {
        ((self.0 >> HAND_SHIFT[kind as usize]) & HAND_MASK[kind as usize]) as u8
    }

    /// Sets a count; `n` must not exceed [`HandKind::MAX`].
    #[inline(always)]
    pub fn set(&mut self, kind: HandKind, n: u8) {
        debug_assert!(n <= HandKind::MAX[kind as usize]);
        let sh = HAND_SHIFT[kind as usize];
        self.0 = (self.0 & !(HAND_MASK[kind as usize] << sh)) | ((n as u32) << sh);
    }

    #[inline(always)]
    pub fn add(&mut self, kind: HandKind) {
        self.0 += 1 << HAND_SHIFT[kind as usize];
    }

    #[inline(always)]
    pub fn remove(&mut self, kind: HandKind) {
        self.0 -= 1 << HAND_SHIFT[kind as usize];
    }

    #[inline(always)]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every count here is at least the corresponding count in `other`.
    #[inline(always)]
    pub const fn dominates(self, other: Hand) -> bool {
        self.0.wrapping_sub(other.0) & HAND_BORROW == 0
    }

    /// Total number of pieces held.
    pub fn total(self) -> u32 {
        HandKind::ALL.iter().map(|&k| self.count(k) as u32).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_numbering_matches_spec() {
        assert_eq!(Square::from_usi("1a").unwrap().index(), 0);
        assert_eq!(Square::from_usi("1i").unwrap().index(), 8);
        assert_eq!(Square::from_usi("2a").unwrap().index(), 9);
        assert_eq!(Square::from_usi("9i").unwrap().index(), 80);
        assert_eq!(Square::from_usi("7g").unwrap().to_string(), "7g");
        assert_eq!(
            Square::from_usi("5e").unwrap().flip(),
            Square::from_usi("5e").unwrap()
        );
        assert!(Square::from_usi("0a").is_none());
        assert!(Square::from_usi("1j").is_none());
        assert!(Square::from_usi("1").is_none());
    }

    #[test]
    fn hand_counts_and_dominance() {
        let mut a = Hand::EMPTY;
        for k in HandKind::ALL {
            for _ in 0..HandKind::MAX[k.index()] {
                a.add(k);
            }
            assert_eq!(a.count(k), HandKind::MAX[k.index()]);
        }
        let mut b = a;
        assert!(a.dominates(b) && b.dominates(a));
        for k in HandKind::ALL {
            b.remove(k);
            assert!(a.dominates(b), "{k:?}");
            assert!(!b.dominates(a), "{k:?}");
            b.add(k);
        }
        let mut c = Hand::EMPTY;
        c.add(HandKind::Rook);
        let mut d = Hand::EMPTY;
        d.set(HandKind::Pawn, 18);
        assert!(!c.dominates(d) && !d.dominates(c));
    }
}
