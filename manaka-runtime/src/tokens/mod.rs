//! Token spaces (SPEC §3): a position, seen from one perspective, as a list of active token
//! ids, and a move as the ids it removes and adds.
//!
//! - [`native`]: Manaka's own tokens (T = 2344): every piece on the board, kings included,
//!   and unary hand tokens.
//! - [`bona`]: YaneuraOu's BonaPiece numbering, for the `kp` (T = 1710) and `halfkp`
//!   (T = 125,388) spaces, so that ids equal YaneuraOu's for the same position.
//!
//! A token list may hold one id more than once in exactly one case: YaneuraOu keeps a piece
//! missing from the position (handicap, tsume) at BonaPiece 0, so under `kp`/`halfkp` each
//! missing piece is an active entry with id 0 (or `king·1548 + 0`). Sums over tokens then
//! count it once per missing piece, as YaneuraOu's accumulator does; the pair block skips
//! pairs of equal ids (the diagonal is never a row).

pub mod bona;
pub mod native;

use crate::shogi::{Color, MoveEffect, Position};
use manaka_shapes::FeatureSpace;

/// The most tokens a perspective can have active: 40 pieces (native, kp), 38 (halfkp).
pub const MAX_ACTIVE: usize = 40;

/// A short list of token ids with a fixed capacity (no allocation on the hot path).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenList<const N: usize> {
    ids: [u32; N],
    len: u8,
}

impl<const N: usize> TokenList<N> {
    pub const fn new() -> Self {
        TokenList {
            ids: [0; N],
            len: 0,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, id: u32) {
        self.ids[self.len as usize] = id;
        self.len += 1;
    }

    #[inline(always)]
    pub fn as_slice(&self) -> &[u32] {
        &self.ids[..self.len as usize]
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes the first occurrence of `id`; returns whether it was present.
    pub fn remove(&mut self, id: u32) -> bool {
        match self.as_slice().iter().position(|&x| x == id) {
            Some(i) => {
                self.ids.copy_within(i + 1..self.len as usize, i);
                self.len -= 1;
                true
            }
            None => false,
        }
    }
}

impl<const N: usize> Default for TokenList<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> std::fmt::Debug for TokenList<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// The tokens active in one perspective.
pub type ActiveTokens = TokenList<MAX_ACTIVE>;

/// How one move changes one perspective's tokens: remove `removed`, then add `added`, one
/// token at a time (SPEC §4) — or, when `refresh` is set, rebuild from the new position
/// (HalfKP when the perspective's own king moved: every id contains its square).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenDelta {
    pub removed: TokenList<2>,
    pub added: TokenList<2>,
    pub refresh: bool,
}

/// The active tokens of `pos` from `perspective` in `space`.
pub fn active_tokens(space: FeatureSpace, pos: &Position, perspective: Color) -> ActiveTokens {
    match space {
        FeatureSpace::Native => native::active(pos, perspective),
        FeatureSpace::Kp => bona::active_kp(pos, perspective),
        FeatureSpace::HalfKp => bona::active_halfkp(pos, perspective),
    }
}

/// The token delta of the move described by `effect` for `perspective`. `after` is the
/// position after the move (only HalfKP/KP read it, for king squares).
pub fn delta(
    space: FeatureSpace,
    effect: &MoveEffect,
    after: &Position,
    perspective: Color,
) -> TokenDelta {
    match space {
        FeatureSpace::Native => native::delta(effect, perspective),
        FeatureSpace::Kp => bona::delta_kp(effect, after, perspective),
        FeatureSpace::HalfKp => bona::delta_halfkp(effect, after, perspective),
    }
}

/// Whether a token of `space` belongs to the perspective's own side (for `split`, native
/// only: the owner is part of the id).
pub fn is_own(space: FeatureSpace, id: u32) -> bool {
    match space {
        FeatureSpace::Native => native::is_own(id),
        // `split` is refused for kp/halfkp by the shape grammar.
        FeatureSpace::Kp | FeatureSpace::HalfKp => true,
    }
}

#[cfg(test)]
mod tests;
