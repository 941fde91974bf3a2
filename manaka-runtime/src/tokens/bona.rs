//! YaneuraOu's BonaPiece numbering and the `kp` / `halfkp` token spaces built on it
//! (SPEC §3). The constants are those of YaneuraOu's `evaluate.h` (BONA_PIECE_ZERO = 0,
//! f_hand_pawn = 1 … fe_hand_end = 90, f_pawn = 90 … fe_end = 1548); docs/tokens.md lists
//! them with their source.
//!
//! `f_` is the perspective's own ("friend") piece, `e_` the opponent's ("enemy"). White's
//! view rotates the square (`80 − sq`) and swaps friend and enemy. Promoted pawn, lance,
//! knight and silver count as gold; horse and dragon have their own ranges; kings are not
//! BonaPieces. Hand pieces are count-indexed: holding `n` of a kind activates
//! `base + 0 … base + n − 1`.

use super::{ActiveTokens, TokenDelta};
use crate::shogi::{Color, HandKind, MoveEffect, PieceKind, Position, Square};

/// End of the hand range; board pieces start here.
pub const FE_HAND_END: u32 = 90;
/// Number of BonaPieces (`fe_end`).
pub const FE_END: u32 = 1548;
/// KP token count: 1548 BonaPieces, then 81 own-king and 81 opponent-king squares.
pub const KP_TOKEN_COUNT: u32 = FE_END + 162;
/// HalfKP token count: own king square × BonaPiece.
pub const HALFKP_TOKEN_COUNT: u32 = 81 * FE_END;
/// Non-king pieces in a standard set: a piece list always has this many entries.
pub const PIECE_LIST_LEN: usize = 38;

/// `f_hand_*` for P L N S G B R.
const HAND_FRIEND: [u32; 7] = [1, 39, 49, 59, 69, 79, 85];
/// `e_hand_*` for P L N S G B R.
const HAND_ENEMY: [u32; 7] = [20, 44, 54, 64, 74, 82, 88];

/// `f_*` board base per piece kind (SPEC §1 order); `e_*` is 81 higher. The king has none.
const BOARD_FRIEND: [u32; 14] = [
    90,   // pawn
    252,  // lance
    414,  // knight
    576,  // silver
    738,  // gold
    900,  // bishop
    1224, // rook
    0,    // king: not a BonaPiece
    738,  // +P counts as gold
    738,  // +L
    738,  // +N
    738,  // +S
    1062, // horse
    1386, // dragon
];

/// The BonaPiece of `owner`'s `kind` (not a king) on `sq`, seen from `perspective`.
#[inline(always)]
pub fn board_piece(owner: Color, kind: PieceKind, sq: Square, perspective: Color) -> u32 {
    debug_assert!(kind != PieceKind::King);
    BOARD_FRIEND[kind as usize]
        + if owner == perspective { 0 } else { 81 }
        + sq.relative(perspective).index() as u32
}

/// The BonaPiece of `owner`'s `i`-th (1-based) hand piece of `kind`, seen from `perspective`.
#[inline(always)]
pub fn hand_piece(owner: Color, kind: HandKind, i: u8, perspective: Color) -> u32 {
    debug_assert!(i >= 1);
    let base = if owner == perspective {
        HAND_FRIEND
    } else {
        HAND_ENEMY
    };
    base[kind as usize] + i as u32 - 1
}

/// The 38-entry BonaPiece list of `pos` from `perspective`, missing pieces as 0.
fn piece_list(pos: &Position, perspective: Color, mut emit: impl FnMut(u32)) {
    let mut n = 0;
    for sq in pos.occupied() {
        let p = pos.piece_at(sq).expect("occupied square");
        if p.kind != PieceKind::King {
            emit(board_piece(p.color, p.kind, sq, perspective));
            n += 1;
        }
    }
    for owner in Color::ALL {
        let hand = pos.hand(owner);
        for k in HandKind::ALL {
            for i in 1..=hand.count(k) {
                emit(hand_piece(owner, k, i, perspective));
                n += 1;
            }
        }
    }
    // YaneuraOu parks every piece absent from the position at BONA_PIECE_ZERO.
    for _ in n..PIECE_LIST_LEN {
        emit(0);
    }
}

/// KP id of a king on `sq` (own king first, then the opponent's), seen from `perspective`.
#[inline(always)]
fn kp_king(owner: Color, sq: Square, perspective: Color) -> u32 {
    FE_END + if owner == perspective { 0 } else { 81 } + sq.relative(perspective).index() as u32
}

pub fn active_kp(pos: &Position, perspective: Color) -> ActiveTokens {
    let mut t = ActiveTokens::new();
    piece_list(pos, perspective, |id| t.push(id));
    for owner in Color::ALL {
        if let Some(k) = pos.king_square(owner) {
            t.push(kp_king(owner, k, perspective));
        }
    }
    t
}

/// HalfKP ids are `own_king_sq × 1548 + BonaPiece`, the king square in the perspective's
/// view. A perspective without a king (tsume positions) has no HalfKP tokens.
pub fn active_halfkp(pos: &Position, perspective: Color) -> ActiveTokens {
    let mut t = ActiveTokens::new();
    if let Some(k) = pos.king_square(perspective) {
        let base = k.relative(perspective).index() as u32 * FE_END;
        piece_list(pos, perspective, |id| t.push(base + id));
    }
    t
}

/// BonaPiece changes of a move, the king excluded: `(removed, added)` through `push`.
fn piece_delta(e: &MoveEffect, perspective: Color, d: &mut TokenDelta, offset: u32) {
    if e.kind != PieceKind::King {
        match e.from {
            Some(from) => d
                .removed
                .push(offset + board_piece(e.color, e.kind, from, perspective)),
            None => {
                let (hk, before, _) = e.hand_change.expect("a drop changes the hand");
                d.removed
                    .push(offset + hand_piece(e.color, hk, before, perspective));
            }
        }
    }
    if let Some(cap) = e.captured {
        d.removed
            .push(offset + board_piece(cap.color, cap.kind, e.to, perspective));
    }
    if e.kind != PieceKind::King {
        d.added
            .push(offset + board_piece(e.color, e.kind_after, e.to, perspective));
    }
    if e.captured.is_some() {
        let (hk, _, after) = e.hand_change.expect("a capture changes the hand");
        d.added
            .push(offset + hand_piece(e.color, hk, after, perspective));
    }
}

pub fn delta_kp(e: &MoveEffect, _after: &Position, perspective: Color) -> TokenDelta {
    let mut d = TokenDelta::default();
    if e.kind == PieceKind::King {
        let from = e.from.expect("kings are never dropped");
        d.removed.push(kp_king(e.color, from, perspective));
    }
    piece_delta(e, perspective, &mut d, 0);
    if e.kind == PieceKind::King {
        d.added.push(kp_king(e.color, e.to, perspective));
    }
    d
}

pub fn delta_halfkp(e: &MoveEffect, after: &Position, perspective: Color) -> TokenDelta {
    let mut d = TokenDelta::default();
    let Some(k) = after.king_square(perspective) else {
        return d;
    };
    if e.kind == PieceKind::King && e.color == perspective {
        d.refresh = true;
        return d;
    }
    piece_delta(
        e,
        perspective,
        &mut d,
        k.relative(perspective).index() as u32 * FE_END,
    );
    d
}
