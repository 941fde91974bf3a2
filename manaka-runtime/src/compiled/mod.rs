//! The compiled engine: a network shape as a composition of fixed-size layer types.
//!
//! In the manner of Stockfish's `NetworkArchitecture`, an engine is a type built from small
//! layer types whose sizes are constants, and `manaka_net!` writes the composition for a shape
//! (docs/evaluator.md, "The engine as types"). The baseline `pair16_d128_o3_h512` is
//!
//! ```text
//! Net<Native,
//!     Manaka<Powers<128, 3, 1>, Pairs<16, 0>, NoMoments, NoField, false, 400, 800>,
//!     Head<Dense<Affine<800, 512>, Relu>, Value<512>, Policy<512, 0>>>
//! ```
//!
//! - the token space ([`Native`], [`Kp`], [`HalfKp`]): which tokens a position has and how a
//!   move changes them (SPEC §3);
//! - the accumulator ([`accumulator`]): [`Manaka`] with its block slots, or [`Nnue`];
//! - the head ([`head`]): hidden layers ([`Dense`], [`Then`] for a second one), each an
//!   [`Affine`] map and an activation ([`Relu`], [`ClippedRelu`]), then [`Value`] and
//!   [`Policy`].
//!
//! What a shape decides — the feature space, NNUE or Manaka arithmetic, `ks`, `lse`, `split`,
//! the second hidden layer, the field term — is decided by the types, so no evaluation or
//! update branches on the shape. Accumulators are plain arrays, loops have constant trip
//! counts, and the `manaka-kernels` building blocks are called with constant sizes. The
//! constants are checked once, at load, against the shape's one [`manaka_shapes::Dims`]
//! (`Net::check_dims`), and the accumulator's widths against each other at compile time.
//!
//! The arithmetic is SPEC §4–6 in f32 (Newton's identities, and the RMS's square root and log, in f64), and is
//! tested against the reference evaluator for every compiled-in shape and SIMD level.

pub mod accumulator;
pub mod head;
mod tensors;

pub use accumulator::{
    Accumulator, Block, Field, Manaka, Moments, Nnue, NoField, NoMoments, NoPairs, Pairs, Powers,
};
pub use head::{
    Activation, Affine, ClippedRelu, Dense, Head, Layers, Policy, PolicyOut, Relu, Then, Value,
    ValueOut,
};
pub use tensors::Source;

use crate::eval::Evaluation;
use crate::network::{Network, StateLeaf};
use crate::shogi::{Color, MoveEffect, Position};
use crate::tokens::{self, ActiveTokens};
use accumulator::{DimList, Row};
use manaka_kernels::{self as k, Simd};
use manaka_shapes::{FeatureSpace, Shape};
use std::marker::PhantomData;
use std::sync::Mutex;

/// Why weights cannot drive a fixed-size engine.
#[derive(Debug, thiserror::Error)]
pub enum FixedNetError {
    #[error(transparent)]
    Weights(#[from] crate::weights::WeightsError),
    #[error("this engine is compiled for shape {engine}, but the weights are for {weights}")]
    ShapeMismatch { engine: String, weights: String },
    #[error("engine constants do not match shape {shape}: {what} (a bug in manaka_net!)")]
    Dims { shape: String, what: String },
    #[error("tensor '{name}' has {found} values, shape {shape} needs {expected}")]
    TensorLength {
        name: String,
        shape: String,
        expected: usize,
        found: usize,
    },
    #[error("weights lack tensor '{0}'")]
    MissingTensor(String),
}

/// The number format of the hidden layers' weights (W1, W2) an engine computes with
/// (issue 17 item 3; docs/evaluator.md, "Precision"). Low-precision copies are made once, at
/// load; activations, sums, the value and policy rows stay f32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The file's f32 weights (the default, and what the equality tests check).
    #[default]
    F32,
    /// bfloat16 copies: half the bytes; each weight within 2^-8 of its value.
    Bf16,
    /// int8 copies with one f32 scale per row: a quarter of the bytes; each weight within
    /// half a step (its row's largest magnitude / 254).
    Int8,
}

impl Precision {
    /// Every precision, default first.
    pub const ALL: [Precision; 3] = [Precision::F32, Precision::Bf16, Precision::Int8];

    /// `f32`, `bf16` or `int8`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::Int8 => "int8",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Precision, String> {
        Precision::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown precision '{s}' (expected f32, bf16 or int8)"))
    }
}

/// A token space as a type (SPEC §3): the engine's tokens and deltas are those of
/// [`TokenSpace::SPACE`], fixed at compile time.
pub trait TokenSpace: Send + Sync + 'static {
    const SPACE: FeatureSpace;
}

/// Manaka's own tokens (piece × owner × square, unary hand tokens).
pub struct Native;
/// YaneuraOu-compatible KP (`kp`).
pub struct Kp;
/// YaneuraOu-compatible HalfKP (`halfkp`).
pub struct HalfKp;

impl TokenSpace for Native {
    const SPACE: FeatureSpace = FeatureSpace::Native;
}
impl TokenSpace for Kp {
    const SPACE: FeatureSpace = FeatureSpace::Kp;
}
impl TokenSpace for HalfKp {
    const SPACE: FeatureSpace = FeatureSpace::HalfKp;
}

/// One perspective: its active tokens and the accumulator's sums over them (SPEC §4).
#[derive(Clone, Debug)]
pub struct Side<S> {
    /// Active token ids (a multiset; see `tokens`).
    pub tokens: ActiveTokens,
    pub sums: S,
}

/// Both perspectives, indexed by colour.
#[derive(Clone, Debug)]
pub struct State<S> {
    pub sides: [Side<S>; 2],
}

/// A compiled engine: token space `Tok`, accumulator `Acc`, head `H` (a [`Head`]). See the
/// module doc for the composition `manaka_net!` writes.
pub struct Net<Tok, Acc: Accumulator, H: HeadRows> {
    shape: Shape,
    simd: Simd,
    precision: Precision,
    acc: Acc,
    head: H,
    /// Head rows of finished `evaluate_batch` calls, reused by the next ones so that an
    /// evaluation allocates nothing once the engine has seen its largest batch (issue 17).
    /// One per concurrent caller; the lock is held only to take or return one.
    scratch: Mutex<Vec<Scratch<H>>>,
    _tokens: PhantomData<fn() -> Tok>,
}

/// The row types of a head, named for the scratch it needs.
pub trait HeadRows: Send + Sync + 'static {
    type In: Row;
    type Out: Row;
    type Layers: Default + Send;
}

impl<Hid: Layers, Val, Pol> HeadRows for Head<Hid, Val, Pol>
where
    Val: Send + Sync + 'static,
    Pol: Send + Sync + 'static,
{
    type In = Hid::In;
    type Out = Hid::Out;
    type Layers = Hid::Scratch;
}

/// One batch's head rows: inputs, what the layers keep between them, the last hidden rows.
struct Scratch<H: HeadRows> {
    input: Vec<H::In>,
    layers: H::Layers,
    last: Vec<H::Out>,
}

impl<Tok, Acc, Hid, Val, Pol> Net<Tok, Acc, Head<Hid, Val, Pol>>
where
    Tok: TokenSpace,
    Acc: Accumulator,
    Hid: Layers<In = Acc::Input>,
    Val: ValueOut<In = Hid::Out>,
    Pol: PolicyOut<In = Hid::Out>,
{
    /// Attaches weights to the engine compiled for `canonical` (the shape name the macro saw),
    /// using the SIMD level detected on this CPU (or forced by `MANAKA_SIMD`).
    pub fn new(canonical: &str, source: Source) -> Result<Self, FixedNetError> {
        Self::with_simd(canonical, source, Simd::detect())
    }

    /// Opens (memory-maps and verifies) an MNW1 file and attaches it, refusing a file of
    /// another shape with an error naming both.
    pub fn open(canonical: &str, path: &std::path::Path) -> Result<Self, FixedNetError> {
        let file = crate::weights::WeightFile::open(path)?;
        Self::new(canonical, std::sync::Arc::new(file))
    }

    /// As [`Net::new`] with an explicit SIMD level (tests and benchmarks run every level
    /// this CPU has).
    pub fn with_simd(canonical: &str, source: Source, simd: Simd) -> Result<Self, FixedNetError> {
        Self::with_precision(canonical, source, simd, Precision::F32)
    }

    /// As [`Net::with_simd`], computing the hidden layers with `precision` weights (copies
    /// made here).
    pub fn with_precision(
        canonical: &str,
        source: Source,
        simd: Simd,
        precision: Precision,
    ) -> Result<Self, FixedNetError> {
        let shape = *source.shape();
        if shape.to_string() != canonical {
            return Err(FixedNetError::ShapeMismatch {
                engine: canonical.to_string(),
                weights: shape.to_string(),
            });
        }
        Self::check_dims(&shape)?;
        Ok(Net {
            shape,
            simd,
            precision,
            acc: Acc::load(&source)?,
            head: Head::load(&source, precision)?,
            scratch: Mutex::new(Vec::new()),
            _tokens: PhantomData,
        })
    }

    /// Every constant of the composition against the one [`manaka_shapes::Dims`] of the
    /// shape (the macro derived them from the same value), and the decisions the types make
    /// against the shape's flags.
    fn check_dims(s: &Shape) -> Result<(), FixedNetError> {
        let flags = [
            ("features", Tok::SPACE == s.features),
            ("nnue", Acc::NNUE == s.nnue && Hid::CLIPPED == s.nnue),
            ("ks", Acc::KS == s.ks),
        ];
        let mut have = DimList::new();
        Acc::dims(&mut have);
        Head::<Hid, Val, Pol>::dims(&mut have);
        let wrong_flag = flags
            .iter()
            .find(|(_, ok)| !ok)
            .map(|(name, _)| format!("the engine's {name} differ from the shape's"));
        match wrong_flag.map_or_else(|| s.dims().check(&have), Err) {
            Ok(()) => Ok(()),
            Err(what) => Err(FixedNetError::Dims {
                shape: s.to_string(),
                what,
            }),
        }
    }

    /// The precision of the hidden layers' weights.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The SIMD level the kernels run at.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    fn empty_side(&self) -> Side<Acc::Sums> {
        Side {
            tokens: ActiveTokens::new(),
            sums: self.acc.zero(),
        }
    }

    /// The head input of every leaf of `batch` into `input` (as many rows). Always inlined,
    /// so that under [`k::at_level`] it is compiled for the engine's SIMD level.
    #[inline(always)]
    fn head_inputs(&self, batch: &[StateLeaf<'_, State<Acc::Sums>>], input: &mut [Acc::Input]) {
        for (item, row) in batch.iter().zip(input.iter_mut()) {
            let stm = item.leaf.position.side_to_move();
            let sides = &item.state.sides;
            self.acc.input(
                &sides[stm.index()].sums,
                &sides[stm.flip().index()].sums,
                row,
            );
        }
    }

    /// Builds one perspective from scratch: every token's own contribution, then every pair.
    fn build_side(&self, pos: &Position, perspective: Color, side: &mut Side<Acc::Sums>) {
        *side = self.empty_side();
        let active = tokens::active_tokens(Tok::SPACE, pos, perspective);
        for &t in active.as_slice() {
            self.acc
                .token(self.simd, &mut side.sums, t, Self::own(t), 1.0);
            side.tokens.push(t);
        }
        self.acc
            .all_pairs(self.simd, &mut side.sums, active.as_slice());
    }

    /// Whether `t` is one of the perspective's own tokens, worked out only for an
    /// accumulator that sums them apart (`split`; false otherwise, and unread).
    #[inline(always)]
    fn own(t: u32) -> bool {
        Acc::SPLIT && tokens::is_own(Tok::SPACE, t)
    }

    /// Adds token `t`: its own contributions, then its pairs with every other active token.
    fn add_token(&self, side: &mut Side<Acc::Sums>, t: u32) {
        self.acc
            .token(self.simd, &mut side.sums, t, Self::own(t), 1.0);
        self.acc
            .pairs(self.simd, &mut side.sums, t, side.tokens.as_slice(), 1.0);
        side.tokens.push(t);
    }

    fn remove_token(&self, side: &mut Side<Acc::Sums>, t: u32) {
        let present = side.tokens.remove(t);
        debug_assert!(present, "removed token {t} is active");
        self.acc
            .token(self.simd, &mut side.sums, t, Self::own(t), -1.0);
        self.acc
            .pairs(self.simd, &mut side.sums, t, side.tokens.as_slice(), -1.0);
    }
}

impl<Tok, Acc, Hid, Val, Pol> Network for Net<Tok, Acc, Head<Hid, Val, Pol>>
where
    Tok: TokenSpace,
    Acc: Accumulator,
    Hid: Layers<In = Acc::Input>,
    Val: ValueOut<In = Hid::Out>,
    Pol: PolicyOut<In = Hid::Out>,
{
    type State = State<Acc::Sums>;

    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn describe(&self) -> String {
        match self.precision {
            Precision::F32 => format!("{} (compiled, {})", self.shape, self.simd),
            // The bf16 path that runs (docs/evaluator.md, "Precision").
            Precision::Bf16 if k::bf16_dot(self.simd) => {
                format!(
                    "{} (compiled, {}, bf16 W1/W2 by vdpbf16ps)",
                    self.shape, self.simd
                )
            }
            p => format!("{} (compiled, {}, {p} W1/W2)", self.shape, self.simd),
        }
    }

    fn new_state(&self, pos: &Position) -> Self::State {
        let mut s = State {
            sides: [self.empty_side(), self.empty_side()],
        };
        self.refresh(&mut s, pos);
        s
    }

    fn refresh(&self, state: &mut Self::State, pos: &Position) {
        for c in Color::ALL {
            self.build_side(pos, c, &mut state.sides[c.index()]);
        }
    }

    fn update(&self, state: &mut Self::State, effect: &MoveEffect, after: &Position) {
        for c in Color::ALL {
            let d = tokens::delta(Tok::SPACE, effect, after, c);
            let side = &mut state.sides[c.index()];
            if d.refresh {
                self.build_side(after, c, side);
                continue;
            }
            for &r in d.removed.as_slice() {
                self.remove_token(side, r);
            }
            for &a in d.added.as_slice() {
                self.add_token(side, a);
            }
        }
    }

    fn evaluate_batch(&self, batch: &[StateLeaf<'_, Self::State>], out: &mut Vec<Evaluation>) {
        let n = batch.len();
        let simd = self.simd;
        let mut scratch = self
            .scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_else(|| Scratch {
                input: Vec::new(),
                layers: Default::default(),
                last: Vec::new(),
            });
        let Scratch {
            input,
            layers,
            last,
        } = &mut scratch;
        // Vectors grow only past the largest batch seen; every row is written before read.
        input.resize(n, Row::ZERO);
        last.resize(n, Row::ZERO);
        let (input, last) = (&mut input[..n], &mut last[..n]);
        // Head inputs of every leaf, then the hidden layers as small GEMMs: each weight row is
        // read once for the whole batch.
        // Compiled at the engine's SIMD level, so the normalisation's loops vectorise.
        k::at_level(
            simd,
            #[inline(always)]
            || self.head_inputs(batch, input),
        );
        self.head.hidden.forward(simd, input, layers, last);
        // Reuse the caller's evaluations and their policy vectors (no allocation when `out`
        // comes back with room enough).
        out.truncate(n);
        out.resize_with(n, || Evaluation {
            value_logit: 0.0,
            policy_logits: Vec::new(),
        });
        for ((item, h), e) in batch.iter().zip(last.iter()).zip(out.iter_mut()) {
            let pos = item.leaf.position;
            let stm = &item.state.sides[pos.side_to_move().index()].sums;
            e.value_logit = self.head.value.value(simd, h);
            let field = Acc::field(stm);
            self.head
                .policy
                .logits(simd, pos, item.leaf.moves, h, field, &mut e.policy_logits);
        }
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(scratch);
    }
}

#[cfg(test)]
mod tests;
