//! The Manaka runtime: everything a compiled network engine needs around it.
//!
//! - [`shogi`]: rules — bitboards, legal move generation, SFEN/USI, hashing, repetition,
//!   entering-king declaration, mate-in-one. Knows nothing of networks.
//! - [`tokens`]: token spaces (native, KP, HalfKP) and move deltas (SPEC §3).
//! - [`labels`]: dlshogi's policy move labels (SPEC §5).
//! - [`reference`](mod@reference): the reference evaluator, the oracle for every fast path (SPEC §4–6).
//! - [`weights`]: MNW1 version 5 weight files (SPEC §7): mapped reader, atomic streaming
//!   writer, reproducible random initialisation; [`weights::TensorSource`] for every reader.
//! - [`network`]: the [`network::Network`] trait compiled engines implement, and its
//!   [`eval::Evaluator`] adapter.
//! - [`fixed`]: the fixed-size engine every `manaka_net!` expansion instantiates.
//! - [`nnue`]: YaneuraOu's nn.bin both ways, and the integer engine of `nnue` shapes.
//! - [`eval`]: the [`eval::Evaluator`] trait, the only thing search knows about networks.
//! - [`search`]: Gumbel AlphaZero search (SPEC §8), sequential and batched.
//! - [`mate`]: the df-pn mate solver (forced mates by continuous checks) and a small
//!   fixed-depth mate check for search leaves (docs/mate.md).
//! - [`usi`]: the USI protocol loop, generic over an evaluator factory.
//! - [`train`]: the trainer — hand-derived backward pass for every block, lazy Adam, data
//!   loading, checkpoints and resumption (`manaka train`).
//! - `cuda` (feature `cuda`): the CUDA batch evaluator — shape-specialised kernels compiled
//!   by NVRTC, weights uploaded once, whole batches of leaves per call (docs/gpu.md).
//! - [`app`]: a compiled engine as a program — USI engine, search, self-play, benchmark in
//!   one call each ([`app::App`]; docs/library.md).
//! - [`data`]: training data — HCP/HCPE, HCPE3, YaneuraOu PackedSfenValue — readers,
//!   writers, a USI client for labelling, random positions.

pub mod app;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod data;
pub mod eval;
pub mod fixed;
pub mod labels;
pub mod mate;
pub mod network;
pub mod nnue;
pub mod reference;
pub mod search;
pub mod shogi;
pub mod tokens;
pub mod train;
pub mod usi;
pub mod weights;
