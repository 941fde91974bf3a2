//! Shogi rules: the board, legal moves, SFEN and USI text, hashing, repetition,
//! entering-king declaration and mate-in-one. This module knows nothing of networks: a
//! move's [`MoveEffect`] says what changed, and token spaces turn that into token deltas.

mod attacks;
mod bitboard;
mod movegen;
mod moves;
mod perft;
mod position;
mod rules;
mod sfen;
mod types;
mod usi;
mod zobrist;

pub use attacks::{
    between, bishop_attacks, gold_attacks, king_attacks, knight_attacks, lance_attacks,
    pawn_attacks, piece_attacks, rook_attacks, silver_attacks,
};
pub use bitboard::Bitboard;
pub use movegen::{MAX_MOVES, MoveSink, generate, generate_until};
pub use moves::Move;
pub use position::{MoveEffect, Position};
pub use rules::{EnteringKingRule, Repetition};
pub use sfen::{STARTPOS_SFEN, SfenError};
pub use types::{Color, Hand, HandKind, Piece, PieceKind, Square};
pub use usi::MoveError;

#[cfg(test)]
mod tests;
