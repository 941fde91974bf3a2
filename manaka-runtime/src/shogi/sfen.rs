//! SFEN text (the USI protocol's position notation), both ways, with validation that
//! refuses impossible positions with an error naming the problem.

use super::bitboard::Bitboard;
use super::position::Position;
use super::types::{Color, Hand, HandKind, Piece, PieceKind, Square};
use thiserror::Error;

/// The start position (SPEC §1).
pub const STARTPOS_SFEN: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";

/// Why an SFEN string was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SfenError {
    #[error("empty SFEN")]
    Empty,
    #[error(
        "SFEN has {found} fields; expected board, side to move, hands and an optional move number"
    )]
    FieldCount { found: usize },
    #[error("SFEN board has {found} ranks separated by '/'; expected 9")]
    RankCount { found: usize },
    #[error("SFEN rank {rank} covers {files} files; expected 9")]
    RankLength { rank: u8, files: usize },
    #[error("unknown piece letter '{letter}' in SFEN rank {rank}")]
    PieceLetter { letter: char, rank: u8 },
    #[error("'+' in SFEN rank {rank} is not followed by a piece that can promote")]
    Promotion { rank: u8 },
    #[error("side to move is '{0}'; expected 'b' or 'w'")]
    SideToMove(String),
    #[error("bad SFEN hand '{0}': {1}")]
    Hand(String, &'static str),
    #[error("bad SFEN move number '{0}'; expected a positive integer")]
    MoveNumber(String),
    #[error("too many {kind} pieces: {count} on the board and in hand, at most {max} exist")]
    TooManyPieces {
        kind: &'static str,
        count: u32,
        max: u32,
    },
    #[error("{0:?} has two kings")]
    TwoKings(Color),
    #[error("{piece} on {square} can never move again (no piece may stand where it has no move)")]
    DeadPiece { piece: String, square: Square },
    #[error("{color:?} has two unpromoted pawns on file {file} (nifu)")]
    Nifu { color: Color, file: u8 },
    #[error("the side not to move ({0:?}) is in check: its king could be captured")]
    OpponentInCheck(Color),
}

impl Position {
    /// The start position.
    pub fn startpos() -> Position {
        Position::from_sfen(STARTPOS_SFEN).expect("the start position is valid")
    }

    /// Parses an SFEN string (`startpos` is accepted too). The move number may be omitted
    /// (it is then 1). The position starts a fresh history.
    pub fn from_sfen(text: &str) -> Result<Position, SfenError> {
        let text = text.trim();
        let text = if text == "startpos" {
            STARTPOS_SFEN
        } else {
            text
        };
        let text = text.strip_prefix("sfen ").unwrap_or(text);
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.is_empty() {
            return Err(SfenError::Empty);
        }
        if !(3..=4).contains(&fields.len()) {
            return Err(SfenError::FieldCount {
                found: fields.len(),
            });
        }
        let mut pos = Position::empty();
        parse_board(&mut pos, fields[0])?;
        let side = match fields[1] {
            "b" => Color::Black,
            "w" => Color::White,
            other => return Err(SfenError::SideToMove(other.to_string())),
        };
        let [black, white] = parse_hands(fields[2])?;
        pos.setup_hand(Color::Black, black);
        pos.setup_hand(Color::White, white);
        let ply = match fields.get(3) {
            None => 1,
            Some(s) => match s.parse::<u32>() {
                Ok(n) if (1..1_000_000).contains(&n) => n,
                _ => return Err(SfenError::MoveNumber(s.to_string())),
            },
        };
        pos.setup_side(side, ply);
        validate(&pos)?;
        pos.finish_setup();
        if pos.compute_checkers(side.flip()).is_nonempty() {
            return Err(SfenError::OpponentInCheck(side.flip()));
        }
        Ok(pos)
    }

    /// The SFEN string of this position, hands in the usual order (R B G S N L P, Black then
    /// White).
    pub fn to_sfen(&self) -> String {
        let mut s = String::with_capacity(96);
        for rank in 1..=9u8 {
            let mut empty = 0;
            for file in (1..=9u8).rev() {
                let sq = Square::from_file_rank(file, rank).expect("on board");
                match self.piece_at(sq) {
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
        s.push_str(match self.side_to_move() {
            Color::Black => " b ",
            Color::White => " w ",
        });
        let mut hands = String::new();
        for c in Color::ALL {
            let h = self.hand(c);
            for k in HAND_ORDER {
                let n = h.count(k);
                if n == 0 {
                    continue;
                }
                if n > 1 {
                    hands.push_str(&n.to_string());
                }
                let l = k.letter();
                hands.push(if c == Color::Black {
                    l
                } else {
                    l.to_ascii_lowercase()
                });
            }
        }
        if hands.is_empty() {
            hands.push('-');
        }
        s.push_str(&hands);
        s.push(' ');
        s.push_str(&self.ply().to_string());
        s
    }
}

/// Hand order in SFEN output: rook, bishop, gold, silver, knight, lance, pawn.
const HAND_ORDER: [HandKind; 7] = [
    HandKind::Rook,
    HandKind::Bishop,
    HandKind::Gold,
    HandKind::Silver,
    HandKind::Knight,
    HandKind::Lance,
    HandKind::Pawn,
];

fn piece_kind_from_letter(c: char) -> Option<PieceKind> {
    Some(match c.to_ascii_uppercase() {
        'P' => PieceKind::Pawn,
        'L' => PieceKind::Lance,
        'N' => PieceKind::Knight,
        'S' => PieceKind::Silver,
        'G' => PieceKind::Gold,
        'B' => PieceKind::Bishop,
        'R' => PieceKind::Rook,
        'K' => PieceKind::King,
        _ => return None,
    })
}

fn parse_board(pos: &mut Position, board: &str) -> Result<(), SfenError> {
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != 9 {
        return Err(SfenError::RankCount { found: ranks.len() });
    }
    for (i, text) in ranks.iter().enumerate() {
        let rank = i as u8 + 1;
        let mut file: usize = 9; // next file to fill, counting down
        let mut placed = 0usize;
        let mut promote = false;
        for c in text.chars() {
            if c == '+' {
                if promote {
                    return Err(SfenError::Promotion { rank });
                }
                promote = true;
                continue;
            }
            if let Some(d) = c.to_digit(10) {
                if promote || d == 0 {
                    return Err(if promote {
                        SfenError::Promotion { rank }
                    } else {
                        SfenError::PieceLetter { letter: c, rank }
                    });
                }
                placed += d as usize;
                file = file.saturating_sub(d as usize);
                continue;
            }
            let Some(mut kind) = piece_kind_from_letter(c) else {
                return Err(SfenError::PieceLetter { letter: c, rank });
            };
            if promote {
                if !kind.can_promote() {
                    return Err(SfenError::Promotion { rank });
                }
                kind = kind.promote();
                promote = false;
            }
            placed += 1;
            if placed > 9 {
                return Err(SfenError::RankLength {
                    rank,
                    files: placed,
                });
            }
            let color = if c.is_ascii_uppercase() {
                Color::Black
            } else {
                Color::White
            };
            let sq = Square::from_file_rank(file as u8, rank).expect("file in 1..=9");
            pos.setup_put(sq, Piece::new(kind, color));
            file -= 1;
        }
        if promote {
            return Err(SfenError::Promotion { rank });
        }
        if placed != 9 {
            return Err(SfenError::RankLength {
                rank,
                files: placed,
            });
        }
    }
    Ok(())
}

fn parse_hands(text: &str) -> Result<[Hand; 2], SfenError> {
    let mut hands = [Hand::EMPTY; 2];
    if text == "-" {
        return Ok(hands);
    }
    let bad = |why| SfenError::Hand(text.to_string(), why);
    let mut count: Option<u32> = None;
    let mut seen = [[false; 7]; 2];
    for c in text.chars() {
        if let Some(d) = c.to_digit(10) {
            let n = count.unwrap_or(0) * 10 + d;
            if n > 18 || (count.is_none() && d == 0) {
                return Err(bad("a count is out of range"));
            }
            count = Some(n);
            continue;
        }
        let kind = HandKind::from_letter(c)
            .ok_or_else(|| bad("unknown piece letter (hands hold P L N S G B R)"))?;
        if !c.is_ascii_alphabetic() {
            return Err(bad("unknown piece letter (hands hold P L N S G B R)"));
        }
        let color = if c.is_ascii_uppercase() {
            Color::Black
        } else {
            Color::White
        };
        if seen[color.index()][kind.index()] {
            return Err(bad("a piece kind is listed twice"));
        }
        seen[color.index()][kind.index()] = true;
        let n = count.take().unwrap_or(1);
        if n < 1 || n > HandKind::MAX[kind.index()] as u32 {
            return Err(bad("more pieces of a kind than exist"));
        }
        hands[color.index()].set(kind, n as u8);
    }
    if count.is_some() {
        return Err(bad("a count is not followed by a piece letter"));
    }
    Ok(hands)
}

fn validate(pos: &Position) -> Result<(), SfenError> {
    for c in Color::ALL {
        if pos.pieces_of(PieceKind::King, c).has_more_than_one() {
            return Err(SfenError::TwoKings(c));
        }
    }
    // Material: per base kind, board + hands must not exceed a standard set.
    const NAMES: [&str; 8] = [
        "pawn", "lance", "knight", "silver", "gold", "bishop", "rook", "king",
    ];
    const MAX: [u32; 8] = [18, 4, 4, 4, 4, 2, 2, 2];
    let mut counts = [0u32; 8];
    for sq in Square::all() {
        if let Some(p) = pos.piece_at(sq) {
            counts[p.kind.unpromote().index()] += 1;
        }
    }
    for c in Color::ALL {
        for k in HandKind::ALL {
            counts[k.piece_kind().index()] += pos.hand(c).count(k) as u32;
        }
    }
    for i in 0..8 {
        if counts[i] > MAX[i] {
            return Err(SfenError::TooManyPieces {
                kind: NAMES[i],
                count: counts[i],
                max: MAX[i],
            });
        }
    }
    for c in Color::ALL {
        // Pieces with no future move: pawn or lance on the last rank, knight on the last two.
        let dead = (pos.pieces_of(PieceKind::Pawn, c) | pos.pieces_of(PieceKind::Lance, c))
            & Bitboard::far_ranks(c, 1)
            | pos.pieces_of(PieceKind::Knight, c) & Bitboard::far_ranks(c, 2);
        if let Some(sq) = dead.first() {
            let piece = pos.piece_at(sq).expect("piece on a set square").sfen();
            return Err(SfenError::DeadPiece { piece, square: sq });
        }
        for file in 1..=9u8 {
            if (pos.pieces_of(PieceKind::Pawn, c) & Bitboard::file_mask(file)).has_more_than_one() {
                return Err(SfenError::Nifu { color: c, file });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            STARTPOS_SFEN,
            "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1",
            "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
            "8k/6G2/9/7N1/9/9/9/9/K8 b P 1",
            "4k4/9/9/9/9/9/9/9/9 b 2r2b4g4s4n4l18p 1",
        ] {
            let p = Position::from_sfen(s).unwrap();
            assert_eq!(p.to_sfen(), s);
        }
        assert_eq!(
            Position::from_sfen("startpos").unwrap().to_sfen(),
            STARTPOS_SFEN
        );
    }

    #[test]
    fn refusals_name_the_problem() {
        type Check = fn(&SfenError) -> bool;
        let cases: &[(&str, Check)] = &[
            ("", |e| matches!(e, SfenError::Empty)),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1 b - 1",
                |e| matches!(e, SfenError::RankCount { .. }),
            ),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSN b - 1",
                |e| matches!(e, SfenError::RankLength { .. }),
            ),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNLL b - 1",
                |e| matches!(e, SfenError::RankLength { .. }),
            ),
            (
                "lnsgkgsnx/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
                |e| matches!(e, SfenError::PieceLetter { letter: 'x', .. }),
            ),
            (
                "lnsgkgsnl/1r5+g1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
                |e| matches!(e, SfenError::Promotion { .. }),
            ),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL x - 1",
                |e| matches!(e, SfenError::SideToMove(_)),
            ),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b Q 1",
                |e| matches!(e, SfenError::Hand(..)),
            ),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 3 1",
                |e| matches!(e, SfenError::Hand(..)),
            ),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 0",
                |e| matches!(e, SfenError::MoveNumber(_)),
            ),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1",
                |e| matches!(e, SfenError::TooManyPieces { kind: "rook", .. }),
            ),
            (
                "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKKSNL b - 1",
                |e| matches!(e, SfenError::TwoKings(Color::Black)),
            ),
            ("P3k4/9/9/9/9/9/9/9/4K4 b - 1", |e| {
                matches!(e, SfenError::DeadPiece { .. })
            }),
            ("4k4/N8/9/9/9/9/9/9/4K4 b - 1", |e| {
                matches!(e, SfenError::DeadPiece { .. })
            }),
            ("4k4/9/9/9/9/9/P8/P8/4K4 b - 1", |e| {
                matches!(e, SfenError::Nifu { file: 9, .. })
            }),
            ("4k4/4R4/9/9/9/9/9/9/4K4 b - 1", |e| {
                matches!(e, SfenError::OpponentInCheck(Color::White))
            }),
            ("a b c d e", |e| {
                matches!(e, SfenError::FieldCount { found: 5 })
            }),
        ];
        for (s, ok) in cases {
            let e = Position::from_sfen(s).unwrap_err();
            assert!(ok(&e), "{s}: got {e:?}");
            assert!(!e.to_string().is_empty());
        }
        // A tokin does not count for nifu; a missing king (tsume) is fine.
        Position::from_sfen("4k4/9/9/9/9/9/+P8/P8/9 b - 1").unwrap();
    }
}
