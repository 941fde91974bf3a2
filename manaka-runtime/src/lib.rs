//! The Manaka runtime: everything a compiled network engine needs around it — rules, token
//! spaces, weight files, the evaluator boundary, search, USI, self-play and training.
//!
//! One idea runs through it: a network shape is a type. `manaka_net!` turns a shape string
//! into an engine whose every dimension is a constant ([`compiled::Net`], a composition of
//! layer types); everything here drives any such engine through one trait
//! ([`network::Network`]), and the search sees even less: an [`eval::Evaluator`] that
//! answers a batch of leaves with values and policy logits.
//! The slow, shape-generic [`reference`](mod@reference) evaluator is the oracle every fast
//! path is tested against.
//!
//! # Data flow
//!
//! ```text
//! SFEN / USI moves ─▶ Position ──do_move──▶ MoveEffect ─▶ token deltas per perspective
//!                      (shogi)                             (tokens)
//!                         Network::update: accumulators  (compiled | reference | nnue)
//!                         Network head: value, policy logits
//!                         Evaluator (CPU incremental | CPU batch | CUDA batch)   (eval, network)
//!                         Gumbel search ─▶ best move, improved policy           (search, mate)
//!                         USI loop / self-play / bench / training               (usi, runs, train)
//! ```
//!
//! Rules know nothing of networks, the search nothing of shapes or devices, and the tensor
//! table lives once, in `manaka-shapes`.
//!
//! # Modules
//!
//! - [`shogi`]: rules — bitboards, legal move generation, SFEN/USI, hashing, repetition,
//!   entering-king declaration, mate-in-one. Knows nothing of networks.
//! - [`tokens`]: token spaces (native, KP, HalfKP) and move deltas (SPEC §3).
//! - [`labels`]: dlshogi's policy move labels (SPEC §5).
//! - [`reference`](mod@reference): the reference evaluator, the oracle for every fast path
//!   (SPEC §4–6).
//! - [`inspect`]: the reference evaluator's intermediate values, named (tokens, deltas,
//!   blocks, hidden layers), for `manaka lab`'s inspector (docs/lab.md).
//! - [`weights`]: MNW1 version 5 weight files (SPEC §7): mapped reader, atomic streaming
//!   writer, reproducible random initialisation; [`weights::TensorSource`] for every reader.
//! - [`network`]: the [`network::Network`] trait compiled engines implement, and its
//!   [`eval::Evaluator`] adapter.
//! - [`compiled`]: the fixed-size engine every `manaka_net!` expansion instantiates.
//! - [`nnue`]: YaneuraOu's nn.bin both ways, and the integer engine of `nnue` shapes.
//! - [`eval`]: the [`eval::Evaluator`] trait, the only thing search knows about networks.
//! - [`loader`]: the one network loader — a weights argument and a backend to an evaluator
//!   factory, for every command — and `manaka eval`'s line evaluation.
//! - [`search`]: Gumbel AlphaZero search (SPEC §8), sequential, batched and multithreaded.
//! - [`mate`]: the df-pn mate solver (forced mates by continuous checks) and a small
//!   fixed-depth mate check for search leaves (docs/mate.md).
//! - [`usi`]: the USI protocol loop, generic over an evaluator factory.
//! - [`app`]: a compiled engine as a program — USI engine, search, self-play, benchmark in
//!   one call each ([`app::App`]; docs/library.md).
//! - [`train`]: the trainer — hand-derived backward pass for every block, lazy Adam, data
//!   loading, checkpoints and resumption (`manaka train`).
//! - `cuda` (feature `cuda`): the CUDA batch evaluator — shape-specialised kernels compiled
//!   by NVRTC, weights uploaded once, whole batches of leaves per call (docs/gpu.md).
//! - [`data`]: training data formats — HCP/HCPE, HCPE3, YaneuraOu PackedSfenValue —
//!   readers and atomic writers.
//! - [`runs`]: the long runs that write them — self-play, labelling (with a USI client for
//!   the teacher engine), shards.
//! - [`random`]: the one seeded generator (SplitMix64) and random positions from playouts.
//!
//! ```
//! use manaka_runtime::eval::MaterialEvaluator;
//! use manaka_runtime::search::{GumbelSearch, SearchConfig, SearchLimits};
//! use manaka_runtime::shogi::Position;
//!
//! let mut pos = Position::startpos();
//! pos.do_move(pos.parse_usi_move("7g7f").unwrap());
//! let mut search = GumbelSearch::new(SearchConfig::default());
//! let result = search.run(&pos, &mut MaterialEvaluator, &SearchLimits::simulations(32));
//! assert!(pos.is_legal(result.best_move.unwrap()));
//! ```

pub mod app;
pub mod compiled;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod data;
pub mod eval;
pub mod inspect;
pub mod labels;
pub mod loader;
pub mod mate;
pub mod network;
pub mod nnue;
pub mod random;
pub mod reference;
pub mod runs;
pub mod search;
pub mod shogi;
pub mod tokens;
pub mod train;
pub mod usi;
pub mod weights;
