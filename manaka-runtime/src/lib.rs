//! The Manaka runtime: everything a compiled network engine needs around it.
//!
//! - [`shogi`]: rules — bitboards, legal move generation, SFEN/USI, hashing, repetition,
//!   entering-king declaration, mate-in-one. Knows nothing of networks.

pub mod shogi;
