//! Training data in the formats shogi trainers read: readers, writers, atomic files.
//! The long runs that write them (self-play, labelling) are [`crate::runs`].
//!
//! - [`packed`]: the two 256-bit position packings, Apery/cshogi's `HuffmanCodedPos` (HCP)
//!   and YaneuraOu's `PackedSfen`.
//! - [`records`]: fixed-size records — cshogi's HCPE (38 bytes) and YaneuraOu's
//!   PackedSfenValue (40 bytes) — and both 16-bit move layouts.
//! - [`hcpe3`]: dlshogi's HCPE3 game records (start position, moves, evals, candidates with
//!   visit counts).
//! - [`io`]: atomic file writes and the errors that name the record and byte offset.
//! - [`sources`]: positions to label from SFEN lines, HCPE3 games, HCPE or PSV records.
//!
//! Every reader validates what it reads (positions decode to legal positions, moves are
//! legal) and refuses bad input with an error, never a panic. Every writer writes a
//! temporary file and renames it into place. `docs/data.md` describes each layout with its
//! source.

mod bits;
pub mod hcpe3;
pub mod io;
pub mod packed;
pub mod records;
pub mod sources;

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
