//! The two 256-bit Huffman packings of a position: Apery's `HuffmanCodedPos` (HCP, the
//! position of cshogi's and dlshogi's HCPE/HCPE3 files) and YaneuraOu's `PackedSfen` (the
//! position of its PackedSfenValue training records). Both are laid out as
//!
//! ```text
//! bit 0          side to move (0 Black, 1 White)
//! bits 1..8      Black's king square (7 bits, square index as SPEC §1)
//! bits 8..15     White's king square
//! then           every square 1a, 1b, …, 9i in index order, kings skipped: a board code
//! then           pieces in hand, Black's first, one hand code per piece, up to bit 256
//! ```
//!
//! with every field written least-significant bit first (`data::bits`). The codes differ:
//!
//! - HCP uses Apery's tables (`HuffmanCodedPos::boardCodeTable` / `handCodeTable` in Apery's
//!   and cshogi's `position.cpp`), copied below as facts: a 0 bit for an empty square, 4 bits
//!   for a pawn, 6 for lance/knight/silver/gold, 8 for bishop/rook, with colour and promotion
//!   folded into the code. Hands are written Black then White, each in the order
//!   P L N S G B R.
//! - PackedSfen uses YaneuraOu's scheme (`source/extra/sfen_packer.cpp`): a piece-type code
//!   (P `01`, L `0011`, N `1011`, S `0111`, G `01111`, B `011111`, R `111111`, read
//!   right to left), then a promotion bit (not for gold), then a colour bit. A hand piece
//!   drops the type code's last bit and writes an unpromoted promotion bit (not for gold)
//!   and the colour bit. Hands are written Black then White, each in YaneuraOu's piece
//!   order P L N S B R G (cshogi writes P L N S G B R; readers accept either, since every
//!   hand code names its piece).
//!
//! Every code on the board is one bit longer than the same piece's hand code and an empty
//! square is one bit, so a position holding the standard 40 pieces takes exactly 256 bits,
//! wherever they are. Positions without that set (handicap, tsume) cannot be packed; the
//! encoders refuse them instead of writing bits a reader would misread as extra hand pawns.

use super::bits::{BitReader, BitWriter};
use crate::shogi::{Color, HandKind, Piece, PieceKind, Position, SfenError, Square};
use std::sync::OnceLock;
use thiserror::Error;

/// Which 256-bit packing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Packing {
    /// Apery's / cshogi's `HuffmanCodedPos`.
    Hcp,
    /// YaneuraOu's `PackedSfen`.
    PackedSfen,
}

/// Why a position could not be packed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    #[error("{0:?} has no king; a packed position stores both kings")]
    NoKing(Color),
    #[error(
        "the position holds {count} {kind} on the board and in hand together, but a packed \
         position stores exactly the standard set ({expected}); handicap and tsume positions \
         cannot be packed"
    )]
    PieceSet {
        kind: &'static str,
        count: u32,
        expected: u32,
    },
}

/// Why 32 bytes are not a packed position.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("{color:?} king square field is {value}; squares are 0..=80")]
    KingSquare { color: Color, value: u32 },
    #[error("both kings are on {0}")]
    KingsTogether(Square),
    #[error("no board code matches the bits at bit {bit} (square {square})")]
    BoardCode { square: Square, bit: usize },
    #[error("the board runs past bit 256 at square {square}")]
    BoardOverrun { square: Square },
    #[error("no hand code matches the bits at bit {bit}")]
    HandCode { bit: usize },
    #[error("the hand piece starting at bit {bit} runs past bit 256")]
    HandOverrun { bit: usize },
    #[error("{color:?} holds more than {max} of hand kind {kind}")]
    HandCount { color: Color, kind: char, max: u8 },
    #[error("the decoded position is impossible: {0}")]
    Position(#[from] SfenError),
}

/// A code: `len` bits of `code`, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Code {
    code: u32,
    len: u32,
}

const fn c(code: u32, len: u32) -> Code {
    Code { code, len }
}

/// Apery's board codes, indexed by [`PieceKind`] (P L N S G B R K +P +L +N +S +B +R); the
/// king's entry is unused (kings are stored by square).
const HCP_BOARD: [[Code; 14]; 2] = [
    [
        c(0b1, 4),
        c(0b11, 6),
        c(0b111, 6),
        c(0b1011, 6),
        c(0b1111, 6),
        c(0b11111, 8),
        c(0b111111, 8),
        c(0, 0),
        c(0b1001, 4),
        c(0b100011, 6),
        c(0b100111, 6),
        c(0b101011, 6),
        c(0b10011111, 8),
        c(0b10111111, 8),
    ],
    [
        c(0b101, 4),
        c(0b10011, 6),
        c(0b10111, 6),
        c(0b11011, 6),
        c(0b101111, 6),
        c(0b1011111, 8),
        c(0b1111111, 8),
        c(0, 0),
        c(0b1101, 4),
        c(0b110011, 6),
        c(0b110111, 6),
        c(0b111011, 6),
        c(0b11011111, 8),
        c(0b11111111, 8),
    ],
];

/// Apery's hand codes, indexed by [`HandKind`] (P L N S G B R).
const HCP_HAND: [[Code; 7]; 2] = [
    [
        c(0, 3),
        c(0b1, 5),
        c(0b11, 5),
        c(0b101, 5),
        c(0b111, 5),
        c(0b11111, 7),
        c(0b111111, 7),
    ],
    [
        c(0b100, 3),
        c(0b10001, 5),
        c(0b10011, 5),
        c(0b10101, 5),
        c(0b10111, 5),
        c(0b1011111, 7),
        c(0b1111111, 7),
    ],
];

/// YaneuraOu's piece-type codes (`huffman_table` in `sfen_packer.cpp`), indexed by
/// [`HandKind`] (P L N S G B R).
const PSFEN_TYPE: [Code; 7] = [
    c(0x01, 2),
    c(0x03, 4),
    c(0x0b, 4),
    c(0x07, 4),
    c(0x0f, 5),
    c(0x1f, 6),
    c(0x3f, 6),
];

const EMPTY: Code = c(0, 1);

/// Hand write order of YaneuraOu's packer: its piece order P L N S B R G.
const PSFEN_HAND_ORDER: [HandKind; 7] = [
    HandKind::Pawn,
    HandKind::Lance,
    HandKind::Knight,
    HandKind::Silver,
    HandKind::Bishop,
    HandKind::Rook,
    HandKind::Gold,
];

fn base_kind(kind: PieceKind) -> HandKind {
    // Every kind but the king has a hand kind; the king is never coded as a piece.
    kind.unpromote().hand_kind().unwrap_or(HandKind::Pawn)
}

fn board_code(packing: Packing, piece: Piece) -> Code {
    match packing {
        Packing::Hcp => HCP_BOARD[piece.color.index()][piece.kind.index()],
        Packing::PackedSfen => {
            let base = base_kind(piece.kind);
            let t = PSFEN_TYPE[base.index()];
            let (mut code, mut len) = (t.code, t.len);
            if base != HandKind::Gold {
                code |= u32::from(piece.kind.is_promoted()) << len;
                len += 1;
            }
            code |= (piece.color.index() as u32) << len;
            c(code, len + 1)
        }
    }
}

fn hand_code(packing: Packing, color: Color, kind: HandKind) -> Code {
    match packing {
        Packing::Hcp => HCP_HAND[color.index()][kind.index()],
        Packing::PackedSfen => {
            let t = PSFEN_TYPE[kind.index()];
            let (code, mut len) = (t.code >> 1, t.len - 1);
            if kind != HandKind::Gold {
                len += 1; // the unpromoted flag, a 0 bit
            }
            c(code | (color.index() as u32) << len, len + 1)
        }
    }
}

const HCP_HAND_ORDER: [HandKind; 7] = HandKind::ALL;

/// Packs `pos` (side to move, kings, board, hands) into 32 bytes.
pub fn encode(packing: Packing, pos: &Position) -> Result<[u8; 32], EncodeError> {
    let mut counts = [0u32; 7];
    for sq in Square::all() {
        if let Some(p) = pos.piece_at(sq).filter(|p| p.kind != PieceKind::King) {
            counts[base_kind(p.kind).index()] += 1;
        }
    }
    for color in Color::ALL {
        for k in HandKind::ALL {
            counts[k.index()] += u32::from(pos.hand(color).count(k));
        }
    }
    for k in HandKind::ALL {
        let expected = u32::from(HandKind::MAX[k.index()]);
        if counts[k.index()] != expected {
            return Err(EncodeError::PieceSet {
                kind: kind_name(k),
                count: counts[k.index()],
                expected,
            });
        }
    }
    let kings = [Color::Black, Color::White].map(|col| pos.king_square(col));
    let mut w = BitWriter::new();
    w.put(pos.side_to_move().index() as u32, 1);
    for (i, k) in kings.iter().enumerate() {
        let sq = k.ok_or(EncodeError::NoKing(Color::ALL[i]))?;
        w.put(sq.index() as u32, 7);
    }
    for sq in Square::all() {
        let code = match pos.piece_at(sq) {
            None => EMPTY,
            Some(p) if p.kind == PieceKind::King => continue,
            Some(p) => board_code(packing, p),
        };
        w.put(code.code, code.len);
    }
    let order = match packing {
        Packing::Hcp => HCP_HAND_ORDER,
        Packing::PackedSfen => PSFEN_HAND_ORDER,
    };
    for color in Color::ALL {
        for k in order {
            let code = hand_code(packing, color, k);
            for _ in 0..pos.hand(color).count(k) {
                w.put(code.code, code.len);
            }
        }
    }
    // The standard set takes exactly 256 bits (checked above), so this always holds.
    debug_assert_eq!(w.cursor(), 256);
    Ok(w.finish())
}

fn kind_name(k: HandKind) -> &'static str {
    [
        "pawns", "lances", "knights", "silvers", "golds", "bishops", "rooks",
    ][k.index()]
}

/// Decoding tables: for each code length 1..=8, which board piece (or empty square) and
/// which hand piece each code value stands for.
struct DecodeTables {
    /// `board[len][code]`: 0 = no match, 1 = empty square, 2 + piece index (color*14+kind).
    board: [[u8; 256]; 9],
    /// `hand[len][code]`: 0 = no match, 1 + color*7 + hand kind.
    hand: [[u8; 256]; 9],
}

fn tables(packing: Packing) -> &'static DecodeTables {
    static HCP: OnceLock<DecodeTables> = OnceLock::new();
    static PSFEN: OnceLock<DecodeTables> = OnceLock::new();
    let cell = match packing {
        Packing::Hcp => &HCP,
        Packing::PackedSfen => &PSFEN,
    };
    cell.get_or_init(|| {
        let mut t = DecodeTables {
            board: [[0; 256]; 9],
            hand: [[0; 256]; 9],
        };
        t.board[1][0] = 1;
        for color in Color::ALL {
            for kind in PieceKind::ALL {
                if kind == PieceKind::King {
                    continue;
                }
                let p = Piece::new(kind, color);
                let code = board_code(packing, p);
                t.board[code.len as usize][code.code as usize] = 2 + p.index() as u8;
            }
            for k in HandKind::ALL {
                let code = hand_code(packing, color, k);
                t.hand[code.len as usize][code.code as usize] =
                    1 + (color.index() * 7 + k.index()) as u8;
            }
        }
        t
    })
}

/// The position in 32 packed bytes. The move number is `ply` (packings store none).
pub fn decode(packing: Packing, data: &[u8; 32], ply: u32) -> Result<Position, DecodeError> {
    let t = tables(packing);
    let mut r = BitReader::new(data);
    // 15 bits always exist in 256.
    let side = if r.bit() == Some(1) {
        Color::White
    } else {
        Color::Black
    };
    let mut board: [Option<Piece>; 81] = [None; 81];
    let mut kings = [0usize; 2];
    for color in Color::ALL {
        let v = r.bits(7).unwrap_or(127);
        let sq = Square::new(v as u8)
            .filter(|_| v < 81)
            .ok_or(DecodeError::KingSquare { color, value: v })?;
        if board[sq.index()].is_some() {
            return Err(DecodeError::KingsTogether(sq));
        }
        board[sq.index()] = Some(Piece::new(PieceKind::King, color));
        kings[color.index()] = sq.index();
    }
    for sq in Square::all() {
        if kings.contains(&sq.index()) {
            continue;
        }
        let start = r.cursor();
        let (mut code, mut len) = (0u32, 0u32);
        let entry = loop {
            let bit = r.bit().ok_or(DecodeError::BoardOverrun { square: sq })?;
            code |= bit << len;
            len += 1;
            let e = t.board[len as usize][code as usize];
            if e != 0 {
                break e;
            }
            if len == 8 {
                return Err(DecodeError::BoardCode {
                    square: sq,
                    bit: start,
                });
            }
        };
        if entry >= 2 {
            let i = usize::from(entry - 2);
            let kind = PieceKind::from_index(i % 14).unwrap_or(PieceKind::Pawn);
            board[sq.index()] = Some(Piece::new(kind, Color::ALL[i / 14]));
        }
    }
    let mut hands = [[0u8; 7]; 2];
    while r.cursor() < 256 {
        let start = r.cursor();
        let (mut code, mut len) = (0u32, 0u32);
        let entry = loop {
            let bit = r.bit().ok_or(DecodeError::HandOverrun { bit: start })?;
            code |= bit << len;
            len += 1;
            let e = t.hand[len as usize][code as usize];
            if e != 0 {
                break e;
            }
            if len == 8 {
                return Err(DecodeError::HandCode { bit: start });
            }
        };
        let i = usize::from(entry - 1);
        let (color, kind) = (Color::ALL[i / 7], HandKind::ALL[i % 7]);
        let n = &mut hands[color.index()][kind.index()];
        *n += 1;
        if *n > HandKind::MAX[kind.index()] {
            return Err(DecodeError::HandCount {
                color,
                kind: kind.letter(),
                max: HandKind::MAX[kind.index()],
            });
        }
    }
    Ok(Position::from_sfen(&sfen_from_parts(
        &board,
        &hands,
        side,
        ply.max(1),
    ))?)
}

/// SFEN text for a board, hands (counts by colour and [`HandKind`]), side and move number.
fn sfen_from_parts(
    board: &[Option<Piece>; 81],
    hands: &[[u8; 7]; 2],
    side: Color,
    ply: u32,
) -> String {
    let mut s = String::with_capacity(100);
    for rank in 1..=9u8 {
        let mut empty = 0u8;
        for file in (1..=9u8).rev() {
            let idx = usize::from(file - 1) * 9 + usize::from(rank - 1);
            match board[idx] {
                None => empty += 1,
                Some(p) => {
                    if empty > 0 {
                        s.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    s.push_str(&p.sfen());
                }
            }
        }
        if empty > 0 {
            s.push(char::from(b'0' + empty));
        }
        if rank < 9 {
            s.push('/');
        }
    }
    s.push_str(if side == Color::Black { " b " } else { " w " });
    let mut any = false;
    for color in Color::ALL {
        for k in HandKind::ALL {
            let n = hands[color.index()][k.index()];
            if n == 0 {
                continue;
            }
            any = true;
            if n > 1 {
                s.push_str(&n.to_string());
            }
            let l = k.letter();
            s.push(if color == Color::Black {
                l
            } else {
                l.to_ascii_lowercase()
            });
        }
    }
    if !any {
        s.push('-');
    }
    s.push(' ');
    s.push_str(&ply.to_string());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cshogi's own test vectors (`test/test_board.cpp`, `to_hcp_issue17` and
    /// `to_psfen_issue17`) pack `lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1`,
    /// a position without White's rook and bishop. Its board section is 242 bits: 15 for
    /// side and kings, 43 empty squares, 18 pawns × 4, 16 minor pieces × 6, 2 major × 8.
    /// With the missing pieces put in White's hand (which we need, to pack at all), the
    /// board section is unchanged, so the first 30 bytes must agree.
    #[test]
    fn first_bytes_match_cshogi_vectors() {
        let pos =
            Position::from_sfen("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w rb 1")
                .unwrap();
        let hcp = encode(Packing::Hcp, &pos).unwrap();
        let cshogi_hcp: [u8; 32] = [
            89, 164, 73, 33, 12, 151, 66, 252, 28, 155, 66, 88, 94, 133, 240, 40, 132, 87, 33, 60,
            155, 66, 88, 46, 133, 248, 56, 38, 133, 48, 60, 94,
        ];
        assert_eq!(hcp[..30], cshogi_hcp[..30]);
        let psfen = encode(Packing::PackedSfen, &pos).unwrap();
        let cshogi_psfen: [u8; 32] = [
            89, 164, 81, 34, 12, 171, 68, 252, 44, 167, 68, 56, 94, 137, 240, 72, 132, 87, 34, 60,
            167, 68, 56, 86, 137, 248, 88, 70, 137, 48, 188, 126,
        ];
        assert_eq!(psfen[..30], cshogi_psfen[..30]);
        for packing in [Packing::Hcp, Packing::PackedSfen] {
            let bytes = encode(packing, &pos).unwrap();
            assert_eq!(decode(packing, &bytes, 1).unwrap().to_sfen(), pos.to_sfen());
        }
    }

    #[test]
    fn psfen_codes_equal_cshogi_table() {
        // cshogi's `PackedSfen::boardCodeTable` lists the same codes as plain values; two
        // spot checks per colour guard the generative construction above.
        let b = |k, col| board_code(Packing::PackedSfen, Piece::new(k, col));
        assert_eq!(b(PieceKind::Knight, Color::Black), c(0b1011, 6));
        assert_eq!(b(PieceKind::ProSilver, Color::Black), c(0b10111, 6));
        assert_eq!(b(PieceKind::Horse, Color::Black), c(0b1011111, 8));
        assert_eq!(b(PieceKind::Gold, Color::White), c(0b101111, 6));
        assert_eq!(b(PieceKind::Bishop, Color::White), c(0b10011111, 8));
        assert_eq!(b(PieceKind::ProPawn, Color::White), c(0b1101, 4));
        let h = |col, k| hand_code(Packing::PackedSfen, col, k);
        assert_eq!(h(Color::Black, HandKind::Knight), c(0b101, 5));
        assert_eq!(h(Color::White, HandKind::Silver), c(0b10011, 5));
        assert_eq!(h(Color::White, HandKind::Bishop), c(0b1001111, 7));
        assert_eq!(h(Color::White, HandKind::Gold), c(0b10111, 5));
    }

    /// Arbitrary bytes (and single-bit corruptions of a valid packing) decode to a position
    /// or an error, never a panic; whatever decodes can be packed again.
    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut rng = crate::random::SplitMix64::new(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.next_u64();
        let start = Position::startpos();
        for packing in [Packing::Hcp, Packing::PackedSfen] {
            let good = encode(packing, &start).unwrap();
            for bit in 0..256 {
                let mut b = good;
                b[bit / 8] ^= 1 << (bit % 8);
                if let Ok(p) = decode(packing, &b, 1) {
                    assert_eq!(
                        encode(packing, &p).map(|e| decode(packing, &e, 1).is_ok()),
                        Ok(true)
                    );
                }
            }
            for _ in 0..20_000 {
                let mut b = [0u8; 32];
                for chunk in b.chunks_mut(8) {
                    chunk.copy_from_slice(&next().to_le_bytes());
                }
                let _ = decode(packing, &b, 1);
            }
        }
    }

    #[test]
    fn refuses_incomplete_sets_and_bad_bytes() {
        let tsume = Position::from_sfen("8k/9/8P/9/9/9/9/9/K8 b G 1").unwrap();
        assert!(matches!(
            encode(Packing::Hcp, &tsume),
            Err(EncodeError::PieceSet { .. })
        ));
        // King field 127: off the board.
        let mut bad = [0xffu8; 32];
        assert!(matches!(
            decode(Packing::Hcp, &bad, 1),
            Err(DecodeError::KingSquare { .. })
        ));
        // Both kings on 1a.
        bad = [0; 32];
        assert!(matches!(
            decode(Packing::Hcp, &bad, 1),
            Err(DecodeError::KingsTogether(_))
        ));
    }
}
