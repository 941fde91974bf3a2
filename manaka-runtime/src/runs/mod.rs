//! The long runs that make training data: self-play and labelling, each resumable and
//! split over machines by [`shard`]. They write the formats of [`crate::data`].
//!
//! - [`selfplay`]: Gumbel self-play across many games batched into one network call,
//!   written as HCPE3, resumable, from openings with random plies, with resignation.
//! - [`label`]: a resumable labelling run over many engine processes (`manaka label`).
//! - [`usi_client`]: a USI engine client (handshake, options, timed searches) for
//!   labelling positions with another engine's score and best move.
//! - [`resume`]: what the three long runs (label, self-play, train) share about resuming —
//!   the manifest of a run's parameters and its refusal, the progress journal, "finished".
//! - [`shard`]: one machine's part of a long self-play or labelling run (`--shard i/n`).

pub mod label;
pub mod resume;
pub mod selfplay;
pub mod shard;
pub mod usi_client;
