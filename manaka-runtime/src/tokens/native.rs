//! Manaka's native token space (SPEC §3), T = 2344.
//!
//! Board token `(owner_rel · 14 + kind) · 81 + sq_rel` for every piece, kings included
//! (ids 0..2268). Hand token, unary: owner `o` holding `n` of hand kind `k` activates
//! `2268 + o · 38 + base[k] + (i − 1)` for `i = 1..=n`, `base = 0 18 22 26 30 34 36`.
//! `owner_rel` is 0 for the perspective's own pieces, 1 for the opponent's; `sq_rel` is the
//! square as the perspective sees it (White's view rotated, `80 − sq`).

use super::{ActiveTokens, TokenDelta};
use crate::shogi::{Color, HandKind, MoveEffect, PieceKind, Position, Square};

pub const TOKEN_COUNT: u32 = 2344;
/// First hand token id.
pub const HAND_BASE: u32 = 2268;
/// Offset of each hand kind within one owner's 38 hand tokens.
pub const HAND_KIND_BASE: [u32; 7] = [0, 18, 22, 26, 30, 34, 36];

#[inline(always)]
fn owner_rel(owner: Color, perspective: Color) -> u32 {
    (owner != perspective) as u32
}

/// The token of `owner`'s piece `kind` on `sq`, seen from `perspective`.
#[inline(always)]
pub fn board_token(owner: Color, kind: PieceKind, sq: Square, perspective: Color) -> u32 {
    (owner_rel(owner, perspective) * 14 + kind as u32) * 81
        + sq.relative(perspective).index() as u32
}

/// The token of `owner`'s `i`-th piece (1-based) of hand kind `kind`, seen from `perspective`.
#[inline(always)]
pub fn hand_token(owner: Color, kind: HandKind, i: u8, perspective: Color) -> u32 {
    debug_assert!(i >= 1);
    HAND_BASE + owner_rel(owner, perspective) * 38 + HAND_KIND_BASE[kind as usize] + (i as u32 - 1)
}

/// Whether a token is one of the perspective's own pieces (for `split`).
#[inline(always)]
pub fn is_own(id: u32) -> bool {
    if id < HAND_BASE {
        id / (14 * 81) == 0
    } else {
        (id - HAND_BASE) < 38
    }
}

pub fn active(pos: &Position, perspective: Color) -> ActiveTokens {
    let mut t = ActiveTokens::new();
    for sq in pos.occupied() {
        let p = pos.piece_at(sq).expect("occupied square");
        t.push(board_token(p.color, p.kind, sq, perspective));
    }
    for owner in Color::ALL {
        let hand = pos.hand(owner);
        for k in HandKind::ALL {
            for i in 1..=hand.count(k) {
                t.push(hand_token(owner, k, i, perspective));
            }
        }
    }
    t
}

pub fn delta(e: &MoveEffect, perspective: Color) -> TokenDelta {
    let mut d = TokenDelta::default();
    match e.from {
        Some(from) => d
            .removed
            .push(board_token(e.color, e.kind, from, perspective)),
        None => {
            // A drop removes the highest hand token of its kind (SPEC §3).
            let (hk, before, _) = e.hand_change.expect("a drop changes the hand");
            d.removed.push(hand_token(e.color, hk, before, perspective));
        }
    }
    if let Some(cap) = e.captured {
        d.removed
            .push(board_token(cap.color, cap.kind, e.to, perspective));
    }
    d.added
        .push(board_token(e.color, e.kind_after, e.to, perspective));
    if e.captured.is_some() {
        let (hk, _, after) = e.hand_change.expect("a capture changes the hand");
        d.added.push(hand_token(e.color, hk, after, perspective));
    }
    d
}
