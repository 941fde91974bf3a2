//! The integer engine: any `nnue` shape evaluated in YaneuraOu's integer arithmetic.
//!
//! Per perspective an int16 accumulator `b + Σ E[z]` (wrapping), refreshed from the position
//! or moved along a game by the same token deltas as the float engine — which are
//! YaneuraOu's (SPEC §3; a HalfKP king move rebuilds that perspective, as its
//! `kFriendKingMoved` trigger does). At the head: both accumulators clipped to bytes
//! 0..=127 (side to move first), `u8 × i8` affine layers summed in int32, clipped ReLUs
//! `clamp(y >> 6, 0, 127)`, the output layer's int32 sum divided by `FV_SCALE` = 16 with
//! C++'s truncating division: YaneuraOu's evaluation `v`, and Manaka's value logit
//! `ℓ = v / 600` (so `score cp` = `v`).
//!
//! The policy, which NNUE files do not have, stays float: SPEC §5's policy head reads the
//! last hidden layer as `byte / 127` (what its integers stand for).

use super::NnueError;
use super::quant::{FV_SCALE, IntWeights, PONANZA};
use crate::eval::Evaluation;
use crate::labels::{move_feature, move_label};
use crate::network::{Network, StateLeaf};
use crate::shogi::{Color, MoveEffect, Position};
use crate::tokens::{self, MAX_ACTIVE};
use crate::weights::TensorSource;
use manaka_kernels::cpu::int::{self as ik, AffineI8, IntSimd};
use manaka_kernels::{self as k, Simd};
use manaka_shapes::Shape;
use std::sync::Arc;

/// Both perspectives' int16 accumulators, indexed by colour.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct IntState<const D: usize> {
    pub acc: [[i16; D]; 2],
}

/// The float policy head of an integer engine (SPEC §5 without the field term, which
/// `nnue` shapes do not have).
struct Policy<const HL: usize> {
    w: Vec<[f32; HL]>,
    b: Vec<f32>,
    from: Vec<f32>,
    /// Every tensor is zero (an imported nn.bin): every logit is 0, nothing to compute.
    zero: bool,
}

/// The integer engine of an `nnue` shape: `D` accumulator width, `IN = 2·D`, `H` first
/// hidden width, `H2` second (0: none), `HL` the last hidden width.
pub struct IntNet<const D: usize, const IN: usize, const H: usize, const H2: usize, const HL: usize>
{
    shape: Shape,
    simd: IntSimd,
    ft_biases: [i16; D],
    ft_weights: Vec<[i16; D]>,
    l1: AffineI8<IN, H>,
    l2: Option<AffineI8<H, H2>>,
    out_w: [i8; HL],
    out_b: i32,
    policy: Policy<HL>,
}

impl<const D: usize, const IN: usize, const H: usize, const H2: usize, const HL: usize>
    IntNet<D, IN, H, H2, HL>
{
    /// Quantises float weights of the engine's shape (`canonical`) and builds the engine at
    /// the best integer level this CPU has. On weights imported from an nn.bin the integers
    /// are the file's exactly.
    pub fn new(
        canonical: &str,
        source: Arc<dyn TensorSource + Send + Sync>,
    ) -> Result<Self, NnueError> {
        Self::with_simd(canonical, source.as_ref(), IntSimd::detect())
    }

    /// Opens (maps and verifies) an MNW1 file and builds the engine.
    pub fn open(canonical: &str, path: &std::path::Path) -> Result<Self, NnueError> {
        let file = crate::weights::WeightFile::open(path)?;
        Self::with_simd(canonical, &file, IntSimd::detect())
    }

    /// As [`IntNet::new`] at an explicit integer level (tests and benchmarks run them all).
    pub fn with_simd(
        canonical: &str,
        source: &dyn TensorSource,
        simd: IntSimd,
    ) -> Result<Self, NnueError> {
        let shape = *source.shape();
        if shape.to_string() != canonical {
            return Err(NnueError::ShapeMismatch {
                engine: canonical.to_string(),
                weights: shape.to_string(),
            });
        }
        Self::check_dims(&shape)?;
        let (ints, _) = IntWeights::quantise(source)?;
        let copy = |name: &str| source.require(name).map(<[f32]>::to_vec);
        let w = copy("policy.w")?;
        let b = copy("policy.b")?;
        let from = copy("policy.from")?;
        let zero = w.iter().chain(&b).chain(&from).all(|&v| v == 0.0);
        let w = w
            .chunks_exact(HL)
            .map(|r| r.try_into().expect("rows of HL"))
            .collect();
        let policy = Policy { w, b, from, zero };
        Ok(Self::from_ints(&ints, policy, simd))
    }

    fn check_dims(s: &Shape) -> Result<(), NnueError> {
        // The constants against the one `Dims` of the shape (the macro derived them from it),
        // compared where the float engines compare theirs (`Dims::check`).
        let checked = if s.nnue {
            s.dims()
                .check(&[("D", D), ("IN", IN), ("H", H), ("H2", H2), ("HL", HL)])
        } else {
            Err("the integer engine needs an nnue shape".to_string())
        };
        checked.map_err(|what| NnueError::Dims {
            shape: s.to_string(),
            what,
        })
    }

    fn from_ints(ints: &IntWeights, policy: Policy<HL>, simd: IntSimd) -> Self {
        let l1 = &ints.hidden[0];
        let l2 = ints
            .hidden
            .get(1)
            .map(|l| AffineI8::new(l.inputs, l.outputs, &l.weights, &l.biases));
        IntNet {
            shape: ints.shape,
            simd,
            ft_biases: ints.ft_biases.as_slice().try_into().expect("d biases"),
            ft_weights: ints
                .ft_weights
                .chunks_exact(D)
                .map(|r| r.try_into().expect("rows of d"))
                .collect(),
            l1: AffineI8::new(l1.inputs, l1.outputs, &l1.weights, &l1.biases),
            l2,
            out_w: ints
                .output
                .weights
                .as_slice()
                .try_into()
                .expect("HL output weights"),
            out_b: ints.output.biases[0],
            policy,
        }
    }

    /// The integer level the kernels run at.
    pub fn simd(&self) -> IntSimd {
        self.simd
    }

    fn build(&self, pos: &Position, perspective: Color, acc: &mut [i16; D]) {
        let active = tokens::active_tokens(self.shape.features, pos, perspective);
        let mut rows = [&self.ft_biases; MAX_ACTIVE];
        for (r, &t) in rows.iter_mut().zip(active.as_slice()) {
            *r = &self.ft_weights[t as usize];
        }
        ik::refresh_i16(self.simd, acc, &self.ft_biases, &rows[..active.len()]);
    }

    /// The output layer's int32 sum for the side to move of `pos` (YaneuraOu's
    /// `output[0]`), and the last hidden layer's bytes.
    pub fn forward(&self, state: &IntState<D>, pos: &Position) -> (i32, [u8; HL]) {
        let s = self.simd;
        let stm = pos.side_to_move();
        let mut x = [0u8; IN];
        let (first, second) = x.split_at_mut(D);
        ik::clip_i16(
            s,
            &state.acc[stm.index()],
            first.try_into().expect("D bytes"),
        );
        ik::clip_i16(
            s,
            &state.acc[stm.flip().index()],
            second.try_into().expect("D bytes"),
        );
        let mut y1 = [0i32; H];
        ik::affine(s, &self.l1, &x, &mut y1);
        let mut h1 = [0u8; H];
        ik::crelu_i32(s, &y1, &mut h1);
        let mut last = [0u8; HL];
        match &self.l2 {
            Some(l2) => {
                let mut y2 = [0i32; H2];
                ik::affine(s, l2, &h1, &mut y2);
                let mut h2 = [0u8; H2];
                ik::crelu_i32(s, &y2, &mut h2);
                last.copy_from_slice(&h2);
            }
            None => last.copy_from_slice(&h1),
        }
        (
            self.out_b.wrapping_add(ik::dot_u8i8(s, &last, &self.out_w)),
            last,
        )
    }

    /// YaneuraOu's evaluation of `pos` from the side to move: the output divided by
    /// `FV_SCALE`, truncating as C++ does (before YaneuraOu's search clamps it to its
    /// `VALUE_MAX_EVAL`).
    pub fn value(&self, state: &IntState<D>, pos: &Position) -> i32 {
        self.forward(state, pos).0 / FV_SCALE
    }
}

impl<const D: usize, const IN: usize, const H: usize, const H2: usize, const HL: usize> Network
    for IntNet<D, IN, H, H2, HL>
{
    type State = IntState<D>;

    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn describe(&self) -> String {
        format!("{} (integer, {})", self.shape, self.simd)
    }

    fn new_state(&self, pos: &Position) -> IntState<D> {
        let mut s = IntState { acc: [[0; D]; 2] };
        self.refresh(&mut s, pos);
        s
    }

    fn refresh(&self, state: &mut IntState<D>, pos: &Position) {
        for c in Color::ALL {
            self.build(pos, c, &mut state.acc[c.index()]);
        }
    }

    fn update(&self, state: &mut IntState<D>, effect: &MoveEffect, after: &Position) {
        for c in Color::ALL {
            let d = tokens::delta(self.shape.features, effect, after, c);
            let acc = &mut state.acc[c.index()];
            if d.refresh {
                self.build(after, c, acc);
                continue;
            }
            let row = |t: &u32| &self.ft_weights[*t as usize];
            let mut sub = [&self.ft_biases; 2];
            let mut add = [&self.ft_biases; 2];
            for (s, t) in sub.iter_mut().zip(d.removed.as_slice()) {
                *s = row(t);
            }
            for (a, t) in add.iter_mut().zip(d.added.as_slice()) {
                *a = row(t);
            }
            ik::update_i16(
                self.simd,
                acc,
                &sub[..d.removed.len()],
                &add[..d.added.len()],
            );
        }
    }

    fn evaluate_batch(&self, batch: &[StateLeaf<'_, IntState<D>>], out: &mut Vec<Evaluation>) {
        out.clear();
        let simd: Simd = self.simd.simd();
        for item in batch {
            let pos = item.leaf.position;
            let (raw, last) = self.forward(item.state, pos);
            let value_logit = ((raw / FV_SCALE) as f64 / PONANZA) as f32;
            let p = &self.policy;
            let policy_logits = if p.zero {
                vec![0.0; item.leaf.moves.len()]
            } else {
                let h: [f32; HL] = std::array::from_fn(|i| f32::from(last[i]) / 127.0);
                let side = pos.side_to_move();
                item.leaf
                    .moves
                    .iter()
                    .map(|&m| {
                        let label = move_label(m, side) as usize;
                        // No piece at the origin: no policy.from term (labels::move_feature).
                        let from = move_feature(pos, m).map_or(0.0, |f| p.from[f]);
                        k::dot::<HL>(simd, &p.w[label], &h) + p.b[label] + from
                    })
                    .collect()
            };
            out.push(Evaluation {
                value_logit,
                policy_logits,
            });
        }
    }
}
