//! Fixed-size engines: the body of every `manaka_net!` expansion.
//!
//! [`FixedNet`] is generic over every dimension of a shape as a `const` parameter, so each
//! shape the macro instantiates is its own monomorphized engine: accumulators are plain
//! arrays, loops have constant trip counts, and the SIMD building blocks of `manaka-kernels`
//! are called with constant sizes. The macro computes the constants from the shape (via
//! `manaka-shapes`) and checks them again here when weights are attached.
//!
//! The arithmetic is SPEC §4–6 in f32 (Newton's identities and RMS statistics in f64), and is
//! tested against the reference evaluator for every compiled-in shape and SIMD level.

mod tensors;

use crate::eval::Evaluation;
use crate::labels::{move_class, move_feature, move_label};
use crate::network::{Network, StateLeaf};
use crate::shogi::{Color, MoveEffect, Position};
use crate::tokens::{self, ActiveTokens, MAX_ACTIVE};
use crate::weights::TensorSource;
use manaka_kernels::{self as k, Bf16, Simd};
use manaka_shapes::formula::{LSE_FLOOR, RMS_EPS, pair_index_unordered};
use manaka_shapes::{BlockKind, PowerGroup, Shape};
use std::sync::{Arc, Mutex};
use tensors::Tensors;

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

/// The hidden layers' low-precision weight copies, row-major like the file's (`H × IN`, then
/// `HL × H` when there is a second layer).
enum LowWeights {
    None,
    Bf16 {
        w1: Vec<Bf16>,
        w2: Vec<Bf16>,
    },
    Int8 {
        w1: Vec<i8>,
        s1: Vec<f32>,
        w2: Vec<i8>,
        s2: Vec<f32>,
    },
}

/// One perspective's accumulators (SPEC §4).
#[derive(Clone, Debug)]
pub struct Side<
    const D: usize,
    const O: usize,
    const G: usize,
    const P: usize,
    const MT: usize,
    const FF: usize,
> {
    /// Active token ids (a multiset; see `tokens`).
    pub tokens: ActiveTokens,
    /// Power sums per group (1, or own/opp with `split`), `power[g][k][c] = Σ E[z][c]^(k+1)`.
    /// Under `nnue` (o = 1) `power[0][0]` is `Σ E[z]`; the bias is added at the head.
    pub power: [[[f32; D]; O]; G],
    /// Pair sums (the last `lse` channels sum exp-baked rows).
    pub pair: [f32; P],
    /// Second moments, upper triangle row-major.
    pub moments: [f32; MT],
    /// Square field, square-major.
    pub field: [f32; FF],
}

/// Both perspectives, indexed by colour.
#[derive(Clone, Debug)]
pub struct State<
    const D: usize,
    const O: usize,
    const G: usize,
    const P: usize,
    const MT: usize,
    const FF: usize,
> {
    pub sides: [Side<D, O, G, P, MT, FF>; 2],
}

/// A network engine with every dimension a constant:
/// `D` embedding width, `O` order, `G` power groups (2 with `split`), `P` pair width, `MT`
/// moment triangle `m(m+1)/2`, `FF` field width `81·f`, `INP` one perspective's head input,
/// `IN = 2·INP`, `H` first hidden, `H2` second hidden (0: none), `HL` the last hidden width.
pub struct FixedNet<
    const D: usize,
    const O: usize,
    const G: usize,
    const P: usize,
    const MT: usize,
    const FF: usize,
    const INP: usize,
    const IN: usize,
    const H: usize,
    const H2: usize,
    const HL: usize,
> {
    shape: Shape,
    simd: Simd,
    /// The weights, and the source they are read from.
    t: Tensors,
    precision: Precision,
    low: LowWeights,
    /// Head buffers of finished `evaluate_batch` calls, reused by the next ones so that an
    /// evaluation allocates nothing once the engine has seen its largest batch (issue 17).
    /// One per concurrent caller; the lock is held only to take or return one.
    scratch: Mutex<Vec<Scratch<IN, H, HL>>>,
}

/// The head's intermediate rows for one batch: inputs `u`, the first hidden layer when there
/// is a second, and the last hidden layer.
struct Scratch<const IN: usize, const H: usize, const HL: usize> {
    u: Vec<[f32; IN]>,
    h1: Vec<[f32; H]>,
    last: Vec<[f32; HL]>,
}

impl<const IN: usize, const H: usize, const HL: usize> Scratch<IN, H, HL> {
    /// `n` rows of each (contents unspecified: every row is written before it is read).
    fn resize(&mut self, n: usize, two_layers: bool) {
        self.u.resize(n, [0.0; IN]);
        if two_layers {
            self.h1.resize(n, [0.0; H]);
        }
        self.last.resize(n, [0.0; HL]);
    }
}

type SideOf<
    const D: usize,
    const O: usize,
    const G: usize,
    const P: usize,
    const MT: usize,
    const FF: usize,
> = Side<D, O, G, P, MT, FF>;

impl<
    const D: usize,
    const O: usize,
    const G: usize,
    const P: usize,
    const MT: usize,
    const FF: usize,
    const INP: usize,
    const IN: usize,
    const H: usize,
    const H2: usize,
    const HL: usize,
> FixedNet<D, O, G, P, MT, FF, INP, IN, H, H2, HL>
{
    /// Attaches weights to the engine compiled for `canonical` (the shape name the macro saw),
    /// using the SIMD level detected on this CPU (or forced by `MANAKA_SIMD`).
    pub fn new(
        canonical: &str,
        source: Arc<dyn TensorSource + Send + Sync>,
    ) -> Result<Self, FixedNetError> {
        Self::with_simd(canonical, source, Simd::detect())
    }

    /// Opens (memory-maps and verifies) an MNW1 file and attaches it, refusing a file of
    /// another shape with an error naming both.
    pub fn open(canonical: &str, path: &std::path::Path) -> Result<Self, FixedNetError> {
        let file = crate::weights::WeightFile::open(path)?;
        Self::new(canonical, Arc::new(file))
    }

    /// As [`FixedNet::new`] with an explicit SIMD level (tests and benchmarks run every
    /// level this CPU has).
    pub fn with_simd(
        canonical: &str,
        source: Arc<dyn TensorSource + Send + Sync>,
        simd: Simd,
    ) -> Result<Self, FixedNetError> {
        Self::with_precision(canonical, source, simd, Precision::F32)
    }

    /// As [`FixedNet::with_simd`], computing the hidden layers with `precision` weights
    /// (copies made here).
    pub fn with_precision(
        canonical: &str,
        source: Arc<dyn TensorSource + Send + Sync>,
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
        let t = Tensors::resolve(&shape, source)?;
        let low = Self::low_weights(&t, precision);
        Ok(FixedNet {
            shape,
            simd,
            t,
            precision,
            low,
            scratch: Mutex::new(Vec::new()),
        })
    }

    fn low_weights(t: &Tensors, precision: Precision) -> LowWeights {
        let w1 = t.w1::<IN, H>().as_flattened();
        let w2 = if H2 > 0 {
            t.w2::<H, HL>().as_flattened()
        } else {
            &[]
        };
        match precision {
            Precision::F32 => LowWeights::None,
            Precision::Bf16 => {
                let conv = |w: &[f32]| w.iter().map(|&x| Bf16::from_f32(x)).collect();
                LowWeights::Bf16 {
                    w1: conv(w1),
                    w2: conv(w2),
                }
            }
            Precision::Int8 => {
                fn rows<const N: usize>(w: &[f32]) -> (Vec<i8>, Vec<f32>) {
                    let (rows, rest) = w.as_chunks::<N>();
                    debug_assert!(rest.is_empty());
                    let (q, s): (Vec<[i8; N]>, Vec<f32>) = rows.iter().map(k::quantize_i8).unzip();
                    (q.into_flattened(), s)
                }
                let (w1, s1) = rows::<IN>(w1);
                let (w2, s2) = rows::<H>(w2);
                LowWeights::Int8 { w1, s1, w2, s2 }
            }
        }
    }

    /// The precision of the hidden layers' weights.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Hidden layer `layer` (0: W1, `A` = IN; 1: W2, `A` = H) of a batch, before its
    /// activation, at the engine's precision.
    fn hidden<const A: usize, const B: usize>(
        &self,
        layer: usize,
        xs: &[[f32; A]],
        out: &mut [[f32; B]],
    ) {
        let simd = self.simd;
        let (w, b) = if layer == 0 {
            (self.t.w1::<A, B>(), self.t.b1::<B>())
        } else {
            (self.t.w2::<A, B>(), self.t.b2::<B>())
        };
        // A flat copy as B rows of A (the lengths were made from the same tensor).
        fn exact<T, const A: usize, const B: usize>(v: &[T]) -> &[[T; A]; B] {
            v.as_chunks::<A>().0.try_into().expect("B rows of A")
        }
        match &self.low {
            LowWeights::None => k::affine_batch::<A, B>(simd, w, b, xs, out),
            LowWeights::Bf16 { w1, w2 } => {
                let w = exact::<_, A, B>(if layer == 0 { w1 } else { w2 });
                k::affine_batch_bf16::<A, B>(simd, w, b, xs, out)
            }
            LowWeights::Int8 { w1, s1, w2, s2 } => {
                let (w, s) = if layer == 0 { (w1, s1) } else { (w2, s2) };
                let s: &[f32; B] = s.as_slice().try_into().expect("a scale per row");
                k::affine_batch_i8::<A, B>(simd, exact::<_, A, B>(w), s, b, xs, out)
            }
        }
    }

    /// The engine's constants against the one [`manaka_shapes::Dims`] of the shape (the macro
    /// derived them from the same value).
    fn check_dims(s: &Shape) -> Result<(), FixedNetError> {
        let dims = s.dims();
        let checks = [
            ("D", D, dims.d),
            ("O", O, dims.o),
            ("G", G, dims.g),
            ("P", P, dims.pair),
            ("MT", MT, dims.mt),
            ("FF", FF, dims.ff),
            ("INP", INP, dims.inp),
            ("IN", IN, dims.input),
            ("H", H, dims.h),
            ("H2", H2, dims.h2),
            ("HL", HL, dims.hl),
        ];
        for (name, have, want) in checks {
            if have != want {
                return Err(FixedNetError::Dims {
                    shape: s.to_string(),
                    what: format!("{name} = {have}, expected {want}"),
                });
            }
        }
        Ok(())
    }

    /// The SIMD level the kernels run at.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    fn empty_side(&self) -> SideOf<D, O, G, P, MT, FF> {
        Side {
            tokens: ActiveTokens::new(),
            power: [[[0.0; D]; O]; G],
            pair: [0.0; P],
            moments: [0.0; MT],
            field: [0.0; FF],
        }
    }

    /// Builds one perspective from scratch. The pair block is summed in one pass over all
    /// active pairs with software prefetching a few rows ahead: the rows are scattered over
    /// a table far larger than the caches, so overlapping their loads is what makes a
    /// refresh cheap.
    fn build_side(
        &self,
        pos: &Position,
        perspective: Color,
        side: &mut SideOf<D, O, G, P, MT, FF>,
    ) {
        *side = self.empty_side();
        let active = tokens::active_tokens(self.shape.features, pos, perspective);
        for &t in active.as_slice() {
            self.accumulate_token(side, t, 1.0);
            side.tokens.push(t);
        }
        if P > 0 {
            const AHEAD: usize = 12;
            let rows = self.t.pair::<P>();
            let ids = active.as_slice();
            let mut idx = [0usize; MAX_ACTIVE * (MAX_ACTIVE - 1) / 2];
            let mut n = 0;
            for (i, &b) in ids.iter().enumerate() {
                for &a in &ids[..i] {
                    if a != b {
                        idx[n] = pair_index_unordered(a, b);
                        n += 1;
                    }
                }
            }
            for &i in &idx[..n.min(AHEAD)] {
                k::prefetch(rows[i].as_ptr());
            }
            for j in 0..n {
                if j + AHEAD < n {
                    k::prefetch(rows[idx[j + AHEAD]].as_ptr());
                }
                k::add_assign(self.simd, &mut side.pair, &rows[idx[j]]);
            }
        }
    }

    /// Adds token `t`: its embedding powers, the pair rows with every other active token
    /// (prefetched before they are summed), its moment outer product and field rows.
    fn add_token(&self, side: &mut SideOf<D, O, G, P, MT, FF>, t: u32) {
        self.accumulate(side, t, 1.0);
        side.tokens.push(t);
    }

    fn remove_token(&self, side: &mut SideOf<D, O, G, P, MT, FF>, t: u32) {
        let present = side.tokens.remove(t);
        debug_assert!(present, "removed token {t} is active");
        self.accumulate(side, t, -1.0);
    }

    #[inline]
    fn accumulate(&self, side: &mut SideOf<D, O, G, P, MT, FF>, t: u32, sign: f32) {
        self.accumulate_token(side, t, sign);
        let simd = self.simd;
        if P > 0 {
            let rows = self.t.pair::<P>();
            let mut idx = [0usize; MAX_ACTIVE];
            let mut n = 0;
            for &w in side.tokens.as_slice() {
                if w != t {
                    idx[n] = pair_index_unordered(t, w);
                    n += 1;
                }
            }
            for &i in &idx[..n] {
                k::prefetch(rows[i].as_ptr());
            }
            for &i in &idx[..n] {
                if sign > 0.0 {
                    k::add_assign(simd, &mut side.pair, &rows[i]);
                } else {
                    k::sub_assign(simd, &mut side.pair, &rows[i]);
                }
            }
        }
    }

    /// Token `t`'s own contributions: embedding powers, moment outer product, field rows.
    #[inline]
    fn accumulate_token(&self, side: &mut SideOf<D, O, G, P, MT, FF>, t: u32, sign: f32) {
        let simd = self.simd;
        let ti = t as usize;
        let g = if G == 2 && !tokens::is_own(self.shape.features, t) {
            1
        } else {
            0
        };
        k::power_update(simd, &mut side.power[g], &self.t.embed::<D>()[ti], sign);
        if MT > 0 {
            let v = self.t.moment_row(ti);
            let mut j = 0;
            for a in 0..v.len() {
                for b in a..v.len() {
                    side.moments[j] += sign * v[a] * v[b];
                    j += 1;
                }
            }
        }
        if FF > 0 {
            let row = &self.t.field::<FF>()[ti];
            if sign > 0.0 {
                k::add_assign(simd, &mut side.field, row);
            } else {
                k::sub_assign(simd, &mut side.field, row);
            }
        }
    }

    /// One perspective's head input (SPEC §5, or §6's clipped accumulator for `nnue`).
    fn side_input(&self, side: &SideOf<D, O, G, P, MT, FF>, out: &mut [f32]) {
        debug_assert_eq!(out.len(), INP);
        if self.shape.nnue {
            let bias = self.t.embed_bias();
            for c in 0..D {
                out[c] = (bias[c] + side.power[0][0][c]).clamp(0.0, 1.0);
            }
            return;
        }
        let lse = self.shape.lse.unwrap_or(0) as usize;
        let elementary = elementary_polynomials(&side.power);
        let mut off = 0;
        let mut log_rms = [0.0f64; 32];
        for (bi, block) in self.t.blocks.iter().enumerate() {
            let w = block.width;
            let x = &mut out[off..off + w];
            match block.kind {
                BlockKind::Power { group, k } => {
                    let g = if group == PowerGroup::Opp { 1 } else { 0 };
                    x.copy_from_slice(&elementary[g][k as usize - 1]);
                }
                BlockKind::PairLinear => x.copy_from_slice(&side.pair[..P - lse]),
                BlockKind::PairLse => {
                    for (o, &s) in x.iter_mut().zip(&side.pair[P - lse..]) {
                        *o = s.max(LSE_FLOOR).ln();
                    }
                }
                BlockKind::Moment => x.copy_from_slice(&side.moments),
                BlockKind::Field => x.copy_from_slice(&side.field),
            }
            let ms = x.iter().map(|&v| v as f64 * v as f64).sum::<f64>() / w as f64;
            let rms = (ms + RMS_EPS).sqrt();
            let gains = self.t.norm(bi);
            for (v, &g) in x.iter_mut().zip(gains) {
                *v = (g as f64 * *v as f64 / rms) as f32;
            }
            log_rms[bi] = rms.ln();
            off += w;
        }
        if self.shape.ks {
            for (bi, o) in out[off..].iter_mut().enumerate() {
                *o = log_rms[bi] as f32;
            }
        }
    }

    #[inline]
    fn activate(&self, v: &mut [f32]) {
        if self.shape.nnue {
            v.iter_mut().for_each(|x| *x = x.clamp(0.0, 1.0));
        } else {
            v.iter_mut().for_each(|x| *x = x.max(0.0));
        }
    }
}

impl<
    const D: usize,
    const O: usize,
    const G: usize,
    const P: usize,
    const MT: usize,
    const FF: usize,
    const INP: usize,
    const IN: usize,
    const H: usize,
    const H2: usize,
    const HL: usize,
> Network for FixedNet<D, O, G, P, MT, FF, INP, IN, H, H2, HL>
{
    type State = State<D, O, G, P, MT, FF>;

    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn describe(&self) -> String {
        match self.precision {
            Precision::F32 => format!("{} (compiled, {})", self.shape, self.simd),
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
            let d = tokens::delta(self.shape.features, effect, after, c);
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
            .unwrap_or(Scratch {
                u: Vec::new(),
                h1: Vec::new(),
                last: Vec::new(),
            });
        scratch.resize(n, H2 > 0);
        let Scratch { u, h1, last } = &mut scratch;
        let (u, last) = (&mut u[..n], &mut last[..n]);
        // Head inputs of every leaf, then the hidden layers as small GEMMs: each weight row is
        // read once for the whole batch.
        for (item, row) in batch.iter().zip(u.iter_mut()) {
            let stm = item.leaf.position.side_to_move();
            let (first, second) = row.split_at_mut(INP);
            self.side_input(&item.state.sides[stm.index()], first);
            self.side_input(&item.state.sides[stm.flip().index()], second);
        }
        // The last hidden layer is W1's output (HL = H) or W2's (HL = H2): `check_dims` made
        // sure, and the tensor accessors check the lengths again.
        if H2 > 0 {
            let h1 = &mut h1[..n];
            self.hidden::<IN, H>(0, u, h1);
            h1.iter_mut().for_each(|h| self.activate(h));
            self.hidden::<H, HL>(1, h1, last);
        } else {
            self.hidden::<IN, HL>(0, u, last);
        }
        last.iter_mut().for_each(|h| self.activate(h));
        let f = FF / 81;
        // Reuse the caller's evaluations and their policy vectors (no allocation when `out`
        // comes back with room enough).
        out.truncate(n);
        out.resize_with(n, || Evaluation {
            value_logit: 0.0,
            policy_logits: Vec::new(),
        });
        let policy_w = self.t.policy_w::<HL>();
        let policy_b = self.t.policy_b();
        let policy_from = self.t.policy_from();
        for ((item, h), e) in batch.iter().zip(last.iter()).zip(out.iter_mut()) {
            let pos = item.leaf.position;
            let side = pos.side_to_move();
            let stm_side = &item.state.sides[side.index()];
            e.value_logit = k::dot::<HL>(simd, self.t.value_w::<HL>(), h) + self.t.value_b;
            e.policy_logits.clear();
            e.policy_logits.extend(item.leaf.moves.iter().map(|&m| {
                let label = move_label(m, side) as usize;
                let mut logit = k::dot::<HL>(simd, &policy_w[label], h) + policy_b[label];
                // No piece at the origin: no policy.from term (labels::move_feature).
                if let Some(feature) = move_feature(pos, m) {
                    logit += policy_from[feature];
                }
                if f > 0 {
                    let to = m.to().relative(side).index();
                    let u = self.t.policy_field_row(move_class(m, side) as usize, f);
                    logit += (0..f)
                        .map(|j| stm_side.field[to * f + j] * u[j])
                        .sum::<f32>();
                }
                logit
            }));
        }
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(scratch);
    }
}

/// e_1..e_O of every channel of every group from the power sums, by Newton's identities in
/// f64 (SPEC §4): e_0 = 1, k·e_k = Σ_{i=1..k} (−1)^(i−1) e_(k−i) p_i.
fn elementary_polynomials<const D: usize, const O: usize, const G: usize>(
    power: &[[[f32; D]; O]; G],
) -> [[[f32; D]; O]; G] {
    let mut out = [[[0.0f32; D]; O]; G];
    for g in 0..G {
        for c in 0..D {
            let mut e = [0.0f64; 9];
            e[0] = 1.0;
            for kk in 1..=O {
                let mut s = 0.0;
                for i in 1..=kk {
                    let term = e[kk - i] * power[g][i - 1][c] as f64;
                    s += if i % 2 == 1 { term } else { -term };
                }
                e[kk] = s / kk as f64;
                out[g][kk - 1][c] = e[kk] as f32;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
