//! Training data in the formats shogi trainers read, and the tools that make it.
//!
//! - [`packed`]: the two 256-bit position packings, Apery/cshogi's `HuffmanCodedPos` (HCP)
//!   and YaneuraOu's `PackedSfen`.
//! - [`records`]: fixed-size records — cshogi's HCPE (38 bytes) and YaneuraOu's
//!   PackedSfenValue (40 bytes) — and both 16-bit move layouts.
//! - [`hcpe3`]: dlshogi's HCPE3 game records (start position, moves, evals, candidates with
//!   visit counts).
//! - [`io`]: atomic file writes and the errors that name the record and byte offset.
//! - [`usi_client`]: a USI engine client (handshake, options, timed searches) for
//!   labelling positions with another engine's score and best move.
//! - [`label`]: a resumable labelling run over many engine processes (`manaka label`).
//! - [`random`]: a seeded SplitMix64 and random positions from playouts.
//! - [`sources`]: positions to label from SFEN lines, HCPE3 games, HCPE or PSV records.
//! - [`selfplay`]: Gumbel self-play across many games batched into one network call,
//!   written as HCPE3, resumable, from openings with random plies, with resignation.
//! - [`shard`]: one machine's part of a long self-play or labelling run (`--shard i/n`).
//!
//! Every reader validates what it reads (positions decode to legal positions, moves are
//! legal) and refuses bad input with an error, never a panic. Every writer writes a
//! temporary file and renames it into place. `docs/data.md` describes each layout with its
//! source.

mod bits;
pub mod hcpe3;
pub mod io;
pub mod label;
pub mod packed;
pub mod random;
pub mod records;
pub mod selfplay;
pub mod shard;
pub mod sources;
pub mod usi_client;

pub use hcpe3::{
    Candidate, GameOutcome, Hcpe3Game, Hcpe3Move, eval_from_value, eval_from_win_probability,
    parse_hcpe3, read_hcpe3, write_hcpe3,
};
pub use io::{AtomicFile, DataError, FormatError, write_atomic};
pub use packed::{DecodeError, EncodeError, Packing};
pub use records::{
    GameResult, HcpeRecord, PsvRecord, Record, move_from_cshogi16, move_from_psv16,
    move_to_cshogi16, move_to_psv16, parse_records, read_records, write_records,
};
