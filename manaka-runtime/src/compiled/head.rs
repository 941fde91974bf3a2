//! The head of the compiled engine as layer types (SPEC §5–6).
//!
//! A head is [`Head`]`<Hidden, Value, Policy>`: the hidden layers — one [`Dense`] (an
//! [`Affine`] map and an [`Activation`]) or two chained by [`Then`] — then the value row and
//! the policy. Every size is a constant of a type, linked by the traits' associated row types
//! (the first layer's input is the accumulator's `Input`, the value's input the last layer's
//! output), so a mismatch is a type error; the weights' sizes are checked once, at load.
//!
//! The baseline's head is `Head<Dense<Affine<800, 512>, Relu>, Value<512>, Policy<512, 0>>`;
//! an NNUE shape's is `Head<Then<Dense<Affine<512, 32>, ClippedRelu>, Dense<Affine<32, 32>,
//! ClippedRelu>>, Value<32>, Policy<32, 0>>`.

use super::accumulator::{DimList, Row};
use super::tensors::{Source, View};
use super::{FixedNetError, Precision};
use crate::labels::{move_class, move_feature, move_label};
use crate::shogi::{Move, Position};
use manaka_kernels::cpu::int::{IntSimd, QuantizedAffine, QuantizedScratch};
use manaka_kernels::{self as k, Bf16Matrix, Simd};
use std::marker::PhantomData;

/// An element-wise activation after a hidden layer.
pub trait Activation: Send + Sync + 'static {
    /// `clip` (NNUE, SPEC §6) rather than ReLU (SPEC §5).
    const CLIPPED: bool;
    fn apply<const N: usize>(v: &mut [f32; N]);
}

/// `max(x, 0)` (SPEC §5).
pub struct Relu;

impl Activation for Relu {
    const CLIPPED: bool = false;
    #[inline]
    fn apply<const N: usize>(v: &mut [f32; N]) {
        v.iter_mut().for_each(|x| *x = x.max(0.0));
    }
}

/// `min(max(x, 0), 1)` (SPEC §6).
pub struct ClippedRelu;

impl Activation for ClippedRelu {
    const CLIPPED: bool = true;
    #[inline]
    fn apply<const N: usize>(v: &mut [f32; N]) {
        v.iter_mut().for_each(|x| *x = x.clamp(0.0, 1.0));
    }
}

/// `y = W x + b`, `W` row-major `OUT × IN` (the file's f32, or a copy at another
/// [`Precision`] made at load).
pub struct Affine<const IN: usize, const OUT: usize> {
    w: View<[[f32; IN]; OUT]>,
    b: View<[f32; OUT]>,
    low: LowWeights<IN, OUT>,
}

/// An affine map's low-precision weight copy, if any.
enum LowWeights<const IN: usize, const OUT: usize> {
    None,
    /// W rounded to bfloat16 in register-block tiles; each input is rounded too, the
    /// products summed in f32 (`vdpbf16ps` where the CPU has AVX-512 BF16).
    Bf16(Bf16Matrix<IN, OUT>),
    /// Rows of int8 steps, one f32 scale per row; each input row is quantised too (two 7-bit
    /// planes) and the products summed in integers (`kernels::cpu::int::quantized`).
    Int8(QuantizedAffine<IN, OUT>),
}

impl<const IN: usize, const OUT: usize> Affine<IN, OUT> {
    /// `w<n>` and `b<n>` of `source`, with a copy of the weights at `precision`.
    pub fn load(source: &Source, n: usize, precision: Precision) -> Result<Self, FixedNetError> {
        let w = View::<[[f32; IN]; OUT]>::matrix(source, &format!("w{n}"))?;
        let b = View::array(source, &format!("b{n}"))?;
        let low = match precision {
            Precision::F32 => LowWeights::None,
            Precision::Bf16 => LowWeights::Bf16(Bf16Matrix::new(&w)),
            Precision::Int8 => LowWeights::Int8(QuantizedAffine::new(&w)),
        };
        Ok(Affine { w, b, low })
    }

    /// `out_j = W xs_j + b` for a batch, at the precision chosen at load.
    #[inline]
    pub fn forward(&self, simd: Simd, xs: &[[f32; IN]], out: &mut [[f32; OUT]]) {
        match &self.low {
            LowWeights::None => k::affine_batch(simd, &self.w, &self.b, xs, out),
            LowWeights::Bf16(w) => k::affine_batch_bf16(simd, w, &self.b, xs, out),
            LowWeights::Int8(q) => {
                let s = IntSimd::new(simd);
                // One row at a time (each row has its own input steps); the planes and sums
                // live on the stack.
                let mut scratch = QuantizedScratch::default();
                for (x, y) in xs.iter().zip(out.iter_mut()) {
                    q.forward(s, &self.b, x, &mut scratch, y);
                }
            }
        }
    }
}

/// The hidden layers: rows `In` to rows `Out`.
pub trait Layers: Sized + Send + Sync + 'static {
    type In: Row;
    type Out: Row;
    /// The intermediate rows between the layers (none for one layer).
    type Scratch: Default + Send;
    /// Number of affine layers.
    const DEPTH: usize;
    /// Every activation is `clip` (NNUE).
    const CLIPPED: bool;

    /// The layers' constants, the first being hidden layer `first` (0: W1).
    fn dims(first: usize, out: &mut DimList);
    fn load(source: &Source, first: usize, precision: Precision) -> Result<Self, FixedNetError>;
    /// The batch `xs` through every layer into `out` (as many rows).
    fn forward(
        &self,
        simd: Simd,
        xs: &[Self::In],
        scratch: &mut Self::Scratch,
        out: &mut [Self::Out],
    );
}

/// One hidden layer: an affine map `L`, then activation `A`.
pub struct Dense<L, A> {
    affine: L,
    _activation: PhantomData<fn() -> A>,
}

impl<const IN: usize, const OUT: usize, A: Activation> Layers for Dense<Affine<IN, OUT>, A> {
    type In = [f32; IN];
    type Out = [f32; OUT];
    type Scratch = ();
    const DEPTH: usize = 1;
    const CLIPPED: bool = A::CLIPPED;

    fn dims(first: usize, out: &mut DimList) {
        // Hidden layer 0 maps the head input to h; layer 1 maps h to h2 (SPEC §2).
        match first {
            0 => out.extend([("IN", IN), ("H", OUT)]),
            1 => out.extend([("H", IN), ("H2", OUT)]),
            _ => out.push(("a third hidden layer", 1)),
        }
    }

    fn load(source: &Source, first: usize, precision: Precision) -> Result<Self, FixedNetError> {
        Ok(Dense {
            affine: Affine::load(source, first + 1, precision)?,
            _activation: PhantomData,
        })
    }

    #[inline]
    fn forward(&self, simd: Simd, xs: &[[f32; IN]], _: &mut (), out: &mut [[f32; OUT]]) {
        self.affine.forward(simd, xs, out);
        out.iter_mut().for_each(A::apply);
    }
}

/// Layers `First`, then layers `Next` on its output.
pub struct Then<First, Next> {
    first: First,
    next: Next,
}

impl<First: Layers, Next: Layers<In = First::Out>> Layers for Then<First, Next> {
    type In = First::In;
    type Out = Next::Out;
    /// `First`'s output rows, then each part's own.
    type Scratch = (Vec<First::Out>, First::Scratch, Next::Scratch);
    const DEPTH: usize = First::DEPTH + Next::DEPTH;
    const CLIPPED: bool = First::CLIPPED && Next::CLIPPED;

    fn dims(first: usize, out: &mut DimList) {
        First::dims(first, out);
        Next::dims(first + First::DEPTH, out);
    }

    fn load(source: &Source, first: usize, precision: Precision) -> Result<Self, FixedNetError> {
        Ok(Then {
            first: First::load(source, first, precision)?,
            next: Next::load(source, first + First::DEPTH, precision)?,
        })
    }

    #[inline]
    fn forward(
        &self,
        simd: Simd,
        xs: &[Self::In],
        (mid, s1, s2): &mut Self::Scratch,
        out: &mut [Self::Out],
    ) {
        // Grows only past the largest batch seen (the scratch is reused; issue 17).
        mid.resize(xs.len(), First::Out::ZERO);
        let mid = &mut mid[..xs.len()];
        self.first.forward(simd, xs, s1, mid);
        self.next.forward(simd, mid, s2, out);
    }
}

/// The value output: `ℓ = w · h + b` (SPEC §5).
pub trait ValueOut: Sized + Send + Sync + 'static {
    type In: Row;
    fn dims(out: &mut DimList);
    fn load(source: &Source) -> Result<Self, FixedNetError>;
    fn value(&self, simd: Simd, h: &Self::In) -> f32;
}

/// The value row over the last hidden layer, `HL` wide.
pub struct Value<const HL: usize> {
    w: View<[f32; HL]>,
    b: f32,
}

impl<const HL: usize> ValueOut for Value<HL> {
    type In = [f32; HL];

    fn dims(out: &mut DimList) {
        out.push(("HL", HL));
    }

    fn load(source: &Source) -> Result<Self, FixedNetError> {
        Ok(Value {
            w: View::array(source, "value.w")?,
            b: View::<[f32; 1]>::array(source, "value.b")?[0],
        })
    }

    #[inline]
    fn value(&self, simd: Simd, h: &[f32; HL]) -> f32 {
        k::dot(simd, &self.w, h) + self.b
    }
}

/// The policy output: one logit per legal move.
pub trait PolicyOut: Sized + Send + Sync + 'static {
    type In: Row;
    fn dims(out: &mut DimList);
    fn load(source: &Source) -> Result<Self, FixedNetError>;
    /// The logits of `moves` of `pos` into `out` (cleared first), from the last hidden layer
    /// `h` and the side to move's raw field sums `field`.
    fn logits(
        &self,
        simd: Simd,
        pos: &Position,
        moves: &[Move],
        h: &Self::In,
        field: &[f32],
        out: &mut Vec<f32>,
    );
}

/// `W_p[label]·h + b_p[label] + PF[kind][from] + Σ_j F_stm[to][j]·U[class][j]` (SPEC §5),
/// `HL` the last hidden width, `F` the field channels per square (0: no field term).
pub struct Policy<const HL: usize, const F: usize> {
    w: View<[[f32; HL]]>,
    b: View<[f32]>,
    from: View<[f32]>,
    /// `policy.field`, one row of `F` per move class (none when `F` = 0).
    field: Option<View<[[f32; F]]>>,
}

impl<const HL: usize, const F: usize> PolicyOut for Policy<HL, F> {
    type In = [f32; HL];

    fn dims(out: &mut DimList) {
        out.extend([("HL", HL), ("F", F)]);
    }

    fn load(source: &Source) -> Result<Self, FixedNetError> {
        Ok(Policy {
            w: View::rows(source, "policy.w")?,
            b: View::flat(source, "policy.b")?,
            from: View::flat(source, "policy.from")?,
            field: if F > 0 {
                Some(View::rows(source, "policy.field")?)
            } else {
                None
            },
        })
    }

    #[inline]
    fn logits(
        &self,
        simd: Simd,
        pos: &Position,
        moves: &[Move],
        h: &[f32; HL],
        field: &[f32],
        out: &mut Vec<f32>,
    ) {
        let side = pos.side_to_move();
        out.clear();
        out.extend(moves.iter().map(|&m| {
            let label = move_label(m, side) as usize;
            let mut logit = k::dot(simd, &self.w[label], h) + self.b[label];
            // No piece at the origin: no policy.from term (labels::move_feature).
            if let Some(feature) = move_feature(pos, m) {
                logit += self.from[feature];
            }
            if let Some(u) = &self.field {
                let to = m.to().relative(side).index();
                let u = &u[move_class(m, side) as usize];
                let f = &field[to * F..(to + 1) * F];
                logit += f.iter().zip(u).map(|(a, b)| a * b).sum::<f32>();
            }
            logit
        }));
    }
}

/// The head: hidden layers `Hid`, value `Val` and policy `Pol` over the last hidden row.
pub struct Head<Hid: Layers, Val, Pol> {
    pub(super) hidden: Hid,
    pub(super) value: Val,
    pub(super) policy: Pol,
}

impl<Hid: Layers, Val: ValueOut<In = Hid::Out>, Pol: PolicyOut<In = Hid::Out>> Head<Hid, Val, Pol> {
    /// The head's constants (`H2` = 0 with one hidden layer).
    pub(super) fn dims(out: &mut DimList) {
        Hid::dims(0, out);
        if Hid::DEPTH == 1 {
            out.push(("H2", 0));
        }
        Val::dims(out);
        Pol::dims(out);
    }

    pub(super) fn load(source: &Source, precision: Precision) -> Result<Self, FixedNetError> {
        Ok(Head {
            hidden: Hid::load(source, 0, precision)?,
            value: Val::load(source)?,
            policy: Pol::load(source)?,
        })
    }
}
