//! The Manaka runtime: everything a compiled network engine needs around it.
//!
//! - [`shogi`]: rules — bitboards, legal move generation, SFEN/USI, hashing, repetition,
//!   entering-king declaration, mate-in-one. Knows nothing of networks.
//! - [`eval`]: the [`eval::Evaluator`] trait, the only thing search knows about networks.

pub mod eval;
pub mod shogi;
