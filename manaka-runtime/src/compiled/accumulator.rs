//! The accumulator families of the compiled engine, as types (SPEC §4–6).
//!
//! An [`Accumulator`] keeps one perspective's sums over its active tokens and turns the two
//! perspectives' sums into the head's input row. There are two families:
//!
//! - [`Manaka`] (SPEC §4–5): four block slots in the spec's order — [`Powers`], then
//!   [`Pairs`] or [`NoPairs`], [`Moments`] or [`NoMoments`], [`Field`] or [`NoField`] — each a
//!   [`Block`] type with its sizes as constants, RMS-normalised when read, with the log-RMS of
//!   each normalised block appended when `KS` is true;
//! - [`Nnue`] (SPEC §6): `acc = b_ft + Σ E`, read as `clip(acc)`.
//!
//! So a shape's accumulator is a type (`Manaka<Powers<128, 3, 1>, Pairs<16, 0>, NoMoments,
//! NoField, false, 400, 800>` for the baseline), the blocks it lacks cost nothing, and no flag
//! of the shape is looked at while updating or reading it. The widths the type's constants
//! imply are checked against its declared input widths when it is instantiated
//! ([`Manaka::WIDTHS_AGREE`], a compile-time assertion).

use super::FixedNetError;
use super::tensors::{Source, View};
use crate::tokens::MAX_ACTIVE;
use manaka_kernels::{self as k, Simd};
use manaka_shapes::formula::{LSE_FLOOR, RMS_EPS, pair_index_unordered};
use manaka_shapes::{Block as BlockSpec, BlockKind, PowerGroup};
use std::fmt::Debug;

/// An engine's constants by the names of [`manaka_shapes::Dims::fields`], compared with the
/// shape's `Dims` once, at load.
pub type DimList = Vec<(&'static str, usize)>;

/// A row of the head: a fixed-size f32 array.
pub trait Row: Copy + Send + Sync + 'static {
    /// All zeros.
    const ZERO: Self;
}

impl<const N: usize> Row for [f32; N] {
    const ZERO: Self = [0.0; N];
}

/// One accumulator family: per-perspective sums over the active tokens, and the head input
/// they make (both perspectives, side to move first).
pub trait Accumulator: Sized + Send + Sync + 'static {
    /// One perspective's sums.
    type Sums: Clone + Debug + Send + Sync;
    /// The head's input row, both perspectives.
    type Input: Row;
    /// NNUE arithmetic (SPEC §6).
    const NNUE: bool;
    /// Log-RMS of each block appended (`ks`).
    const KS: bool;
    /// Own and opponent tokens summed apart (`split`): only then does [`Accumulator::token`]
    /// read its `own` argument, and only then need the caller work it out.
    const SPLIT: bool;

    /// The family's constants, for the check at load.
    fn dims(out: &mut DimList);
    /// Resolves the family's tensors in `source`.
    fn load(source: &Source) -> Result<Self, FixedNetError>;
    /// The sums of no token.
    fn zero(&self) -> Self::Sums;
    /// Adds (`sign` = 1) or removes (−1) token `t`'s own contributions (`own`: a token of
    /// the perspective's side, which `split` sums apart).
    fn token(&self, simd: Simd, sums: &mut Self::Sums, t: u32, own: bool, sign: f32);
    /// Adds or removes the pair rows of `t` with every token of `others` that is not `t`.
    #[inline(always)]
    fn pairs(&self, simd: Simd, sums: &mut Self::Sums, t: u32, others: &[u32], sign: f32) {
        let _ = (simd, sums, t, others, sign);
    }
    /// Adds the pair rows of every unordered pair of distinct tokens of `active`.
    #[inline(always)]
    fn all_pairs(&self, simd: Simd, sums: &mut Self::Sums, active: &[u32]) {
        let _ = (simd, sums, active);
    }
    /// The head input: `stm`'s perspective, then `other`'s.
    fn input(&self, stm: &Self::Sums, other: &Self::Sums, out: &mut Self::Input);
    /// The raw (un-normalised) square field, square-major; empty without one.
    fn field(sums: &Self::Sums) -> &[f32];
}

/// RMS-normalises `x` with `gains` (SPEC §5: `x̂ = g·x / sqrt(mean(x²) + ε)`) and returns
/// `ln rms`. The mean square is summed in f32 in 16 independent lanes (the f64 sum it
/// replaced cost about a tenth of the batch-1 head, in conversions; a sum of squares has no
/// cancellation, so f32 keeps it within ~1e-6 relative, far inside the reference tests'
/// 1e-4); `sqrt` and `ln` of that one number in f64; the products in f32.
#[inline(always)]
fn normalise(x: &mut [f32], gains: &[f32]) -> f64 {
    debug_assert_eq!(x.len(), gains.len());
    let mut part = [0.0f32; 16];
    let chunks = x.chunks_exact(16);
    for (j, &v) in chunks.remainder().iter().enumerate() {
        part[j] += v * v;
    }
    for c in chunks {
        for (p, &v) in part.iter_mut().zip(c) {
            *p += v * v;
        }
    }
    let ms = part.iter().map(|&p| p as f64).sum::<f64>() / x.len() as f64;
    let rms = (ms + RMS_EPS).sqrt();
    let inv = (1.0 / rms) as f32;
    for (v, &g) in x.iter_mut().zip(gains) {
        *v = g * *v * inv;
    }
    rms.ln()
}

/// The gains tensor of a block of kind `kind`: `norm.<name>` (SPEC §7).
fn norm_name(kind: BlockKind) -> String {
    format!("norm.{}", BlockSpec { kind, width: 0 }.name())
}

/// `norm.<name>` copied into an array (gains are small and read on every evaluation).
fn gains<const N: usize>(source: &Source, kind: BlockKind) -> Result<[f32; N], FixedNetError> {
    Ok(*View::<[f32; N]>::array(source, &norm_name(kind))?)
}

/// One block slot of a [`Manaka`] accumulator.
pub trait Block: Sized + Send + Sync + 'static {
    /// The block's sums in one perspective.
    type Sums: Clone + Debug + Send + Sync;
    /// Head-input values it writes (per perspective).
    const WIDTH: usize;
    /// RMS-normalised blocks among them (each gets a log-RMS with `ks`).
    const NORMS: usize;
    /// Reads `own` (see [`Accumulator::SPLIT`]).
    const SPLIT: bool = false;

    fn dims(out: &mut DimList);
    fn load(source: &Source) -> Result<Self, FixedNetError>;
    fn zero() -> Self::Sums;
    /// Token `t`'s own contribution (see [`Accumulator::token`]).
    #[inline(always)]
    fn token(&self, simd: Simd, sums: &mut Self::Sums, t: usize, own: bool, sign: f32) {
        let _ = (simd, sums, t, own, sign);
    }
    /// See [`Accumulator::pairs`].
    #[inline(always)]
    fn pairs(&self, simd: Simd, sums: &mut Self::Sums, t: u32, others: &[u32], sign: f32) {
        let _ = (simd, sums, t, others, sign);
    }
    /// See [`Accumulator::all_pairs`].
    #[inline(always)]
    fn all_pairs(&self, simd: Simd, sums: &mut Self::Sums, active: &[u32]) {
        let _ = (simd, sums, active);
    }
    /// Writes the block's `WIDTH` normalised values into `out` and the `NORMS` log-RMS into
    /// `log_rms`.
    fn read(&self, sums: &Self::Sums, out: &mut [f32], log_rms: &mut [f64]);
    /// The raw sums a policy reads (the field only).
    #[inline(always)]
    fn raw(sums: &Self::Sums) -> &[f32] {
        let _ = sums;
        &[]
    }
}

/// Power sums `p_k = Σ E[z]^k` (k = 1..`O`) of `D` channels, in `G` groups (2 with `split`:
/// own and opponent tokens), read as elementary symmetric polynomials (SPEC §4).
pub struct Powers<const D: usize, const O: usize, const G: usize> {
    embed: View<[[f32; D]]>,
    /// `norm.e<k>` (or `own.e<k>`, `opp.e<k>`) per group and order.
    gains: Box<[[[f32; D]; O]; G]>,
}

impl<const D: usize, const O: usize, const G: usize> Block for Powers<D, O, G> {
    /// `sums[g][k][c] = Σ E[z][c]^(k+1)` over group `g`'s tokens.
    type Sums = [[[f32; D]; O]; G];
    const WIDTH: usize = G * O * D;
    const NORMS: usize = G * O;
    const SPLIT: bool = G == 2;

    fn dims(out: &mut DimList) {
        out.extend([("D", D), ("O", O), ("G", G)]);
    }

    fn load(source: &Source) -> Result<Self, FixedNetError> {
        let groups: &[PowerGroup] = if G == 2 {
            &[PowerGroup::Own, PowerGroup::Opp]
        } else {
            &[PowerGroup::All]
        };
        let mut all = Box::new([[[0.0; D]; O]; G]);
        for (g, &group) in groups.iter().enumerate() {
            for kk in 0..O {
                let kind = BlockKind::Power {
                    group,
                    k: kk as u32 + 1,
                };
                all[g][kk] = gains::<D>(source, kind)?;
            }
        }
        Ok(Powers {
            embed: View::rows(source, "embed")?,
            gains: all,
        })
    }

    fn zero() -> Self::Sums {
        [[[0.0; D]; O]; G]
    }

    #[inline(always)]
    fn token(&self, simd: Simd, sums: &mut Self::Sums, t: usize, own: bool, sign: f32) {
        let g = if G == 2 && !own { 1 } else { 0 };
        k::power_update(simd, &mut sums[g], &self.embed[t], sign);
    }

    #[inline(always)]
    fn read(&self, sums: &Self::Sums, out: &mut [f32], log_rms: &mut [f64]) {
        let e = elementary_polynomials(sums);
        for (g, (e, gains)) in e.iter().zip(self.gains.iter()).enumerate() {
            for (kk, (e, gains)) in e.iter().zip(gains).enumerate() {
                let i = g * O + kk;
                let x = &mut out[i * D..(i + 1) * D];
                x.copy_from_slice(e);
                log_rms[i] = normalise(x, gains);
            }
        }
    }
}

/// e_1..e_O of every channel of every group from the power sums, by Newton's identities in
/// f64 (SPEC §4): e_0 = 1, k·e_k = Σ_{i=1..k} (−1)^(i−1) e_(k−i) p_i.
#[inline(always)]
fn elementary_polynomials<const D: usize, const O: usize, const G: usize>(
    power: &[[[f32; D]; O]; G],
) -> [[[f32; D]; O]; G] {
    let mut out = [[[0.0f32; D]; O]; G];
    // Order by order, every channel at once (channels are independent lanes, so the loops
    // over `c` vectorise): e[k − 1][c] = e_k of channel c; the e_0 = 1 term is p_k itself.
    let mut e = [[0.0f64; D]; O];
    for g in 0..G {
        for kk in 1..=O {
            let mut s = [0.0f64; D];
            for i in 1..=kk {
                let sign = if i % 2 == 1 { 1.0 } else { -1.0 };
                let p = &power[g][i - 1];
                match (kk - i).checked_sub(1) {
                    Some(prev) => {
                        for c in 0..D {
                            s[c] += sign * (e[prev][c] * p[c] as f64);
                        }
                    }
                    None => {
                        for c in 0..D {
                            s[c] += sign * p[c] as f64;
                        }
                    }
                }
            }
            let inv = 1.0 / kk as f64;
            for c in 0..D {
                e[kk - 1][c] = s[c] * inv;
                out[g][kk - 1][c] = e[kk - 1][c] as f32;
            }
        }
    }
    out
}

/// The pair table, `P` channels: the sum of the rows of every unordered pair of active
/// tokens (row `b(b−1)/2 + a`, SPEC §4), read linearly except the last `LSE` channels, which
/// hold `exp`-baked rows and are read as `ln(max(sum, floor))`.
pub struct Pairs<const P: usize, const LSE: usize> {
    rows: View<[[f32; P]]>,
    /// `norm.pair` then `norm.lse`.
    gains: [f32; P],
}

impl<const P: usize, const LSE: usize> Pairs<P, LSE> {
    /// Rows summed ahead of the one being added in a from-scratch build: they are scattered
    /// over a table far larger than the caches, so overlapping their loads is what makes a
    /// refresh cheap.
    const AHEAD: usize = 12;
    const LINEAR: usize = P - LSE;
}

impl<const P: usize, const LSE: usize> Block for Pairs<P, LSE> {
    type Sums = [f32; P];
    const WIDTH: usize = P;
    const NORMS: usize = (P > LSE) as usize + (LSE > 0) as usize;

    fn dims(out: &mut DimList) {
        out.extend([("PAIR", P), ("LSE", LSE)]);
    }

    fn load(source: &Source) -> Result<Self, FixedNetError> {
        let mut g = [0.0; P];
        let lin = Self::LINEAR;
        if lin > 0 {
            View::flat_into(source, &norm_name(BlockKind::PairLinear), &mut g[..lin])?;
        }
        if LSE > 0 {
            View::flat_into(source, &norm_name(BlockKind::PairLse), &mut g[lin..])?;
        }
        Ok(Pairs {
            rows: View::rows(source, "pair")?,
            gains: g,
        })
    }

    fn zero() -> Self::Sums {
        [0.0; P]
    }

    #[inline(always)]
    fn pairs(&self, simd: Simd, sums: &mut Self::Sums, t: u32, others: &[u32], sign: f32) {
        let rows = &*self.rows;
        let mut idx = [0usize; MAX_ACTIVE];
        let mut n = 0;
        for &w in others {
            if w != t {
                idx[n] = pair_index_unordered(t, w);
                n += 1;
            }
        }
        // Every row is prefetched before the first is summed (39 rows for a 40-token
        // position, each a cache miss).
        for &i in &idx[..n] {
            k::prefetch(rows[i].as_ptr());
        }
        for &i in &idx[..n] {
            if sign > 0.0 {
                k::add_assign(simd, sums, &rows[i]);
            } else {
                k::sub_assign(simd, sums, &rows[i]);
            }
        }
    }

    fn all_pairs(&self, simd: Simd, sums: &mut Self::Sums, active: &[u32]) {
        let rows = &*self.rows;
        let mut idx = [0usize; MAX_ACTIVE * (MAX_ACTIVE - 1) / 2];
        let mut n = 0;
        for (i, &b) in active.iter().enumerate() {
            for &a in &active[..i] {
                if a != b {
                    idx[n] = pair_index_unordered(a, b);
                    n += 1;
                }
            }
        }
        for &i in &idx[..n.min(Self::AHEAD)] {
            k::prefetch(rows[i].as_ptr());
        }
        for j in 0..n {
            if j + Self::AHEAD < n {
                k::prefetch(rows[idx[j + Self::AHEAD]].as_ptr());
            }
            k::add_assign(simd, sums, &rows[idx[j]]);
        }
    }

    #[inline(always)]
    fn read(&self, sums: &Self::Sums, out: &mut [f32], log_rms: &mut [f64]) {
        let lin = Self::LINEAR;
        let mut n = 0;
        if lin > 0 {
            out[..lin].copy_from_slice(&sums[..lin]);
            log_rms[n] = normalise(&mut out[..lin], &self.gains[..lin]);
            n += 1;
        }
        if LSE > 0 {
            for (o, &s) in out[lin..P].iter_mut().zip(&sums[lin..]) {
                *o = s.max(LSE_FLOOR).ln();
            }
            log_rms[n] = normalise(&mut out[lin..P], &self.gains[lin..]);
        }
    }
}

/// Second moments `Σ v vᵀ` of an `M`-wide projection `v = V[z]`, the upper triangle
/// row-major (`MT = M(M+1)/2` values).
pub struct Moments<const M: usize, const MT: usize> {
    proj: View<[[f32; M]]>,
    gains: [f32; MT],
}

impl<const M: usize, const MT: usize> Block for Moments<M, MT> {
    type Sums = [f32; MT];
    const WIDTH: usize = MT;
    const NORMS: usize = 1;

    fn dims(out: &mut DimList) {
        out.extend([("M", M), ("MT", MT)]);
    }

    fn load(source: &Source) -> Result<Self, FixedNetError> {
        Ok(Moments {
            proj: View::rows(source, "moment.proj")?,
            gains: gains::<MT>(source, BlockKind::Moment)?,
        })
    }

    fn zero() -> Self::Sums {
        [0.0; MT]
    }

    #[inline(always)]
    fn token(&self, _simd: Simd, sums: &mut Self::Sums, t: usize, _own: bool, sign: f32) {
        let v = &self.proj[t];
        let mut j = 0;
        for a in 0..M {
            for b in a..M {
                sums[j] += sign * v[a] * v[b];
                j += 1;
            }
        }
    }

    #[inline(always)]
    fn read(&self, sums: &Self::Sums, out: &mut [f32], log_rms: &mut [f64]) {
        out.copy_from_slice(sums);
        log_rms[0] = normalise(out, &self.gains);
    }
}

/// The square field `Σ K[z]`, `F` channels on each of the 81 squares, square-major
/// (`FF = 81·F` values). The policy reads the side to move's raw sums too.
pub struct Field<const F: usize, const FF: usize> {
    rows: View<[[f32; FF]]>,
    gains: Box<[f32; FF]>,
}

impl<const F: usize, const FF: usize> Block for Field<F, FF> {
    type Sums = [f32; FF];
    const WIDTH: usize = FF;
    const NORMS: usize = 1;

    fn dims(out: &mut DimList) {
        out.extend([("F", F), ("FF", FF)]);
    }

    fn load(source: &Source) -> Result<Self, FixedNetError> {
        Ok(Field {
            rows: View::rows(source, "field")?,
            gains: Box::new(gains::<FF>(source, BlockKind::Field)?),
        })
    }

    fn zero() -> Self::Sums {
        [0.0; FF]
    }

    #[inline(always)]
    fn token(&self, simd: Simd, sums: &mut Self::Sums, t: usize, _own: bool, sign: f32) {
        if sign > 0.0 {
            k::add_assign(simd, sums, &self.rows[t]);
        } else {
            k::sub_assign(simd, sums, &self.rows[t]);
        }
    }

    #[inline(always)]
    fn read(&self, sums: &Self::Sums, out: &mut [f32], log_rms: &mut [f64]) {
        out.copy_from_slice(sums);
        log_rms[0] = normalise(out, &*self.gains);
    }

    #[inline(always)]
    fn raw(sums: &Self::Sums) -> &[f32] {
        sums
    }
}

/// The empty slots: a block the shape does not have, of no size and no work.
macro_rules! absent_block {
    ($(#[$doc:meta])* $name:ident, $($dim:literal),*) => {
        $(#[$doc])*
        pub struct $name;

        impl Block for $name {
            type Sums = ();
            const WIDTH: usize = 0;
            const NORMS: usize = 0;

            fn dims(out: &mut DimList) {
                out.extend([$(($dim, 0)),*]);
            }

            fn load(_: &Source) -> Result<Self, FixedNetError> {
                Ok($name)
            }

            fn zero() {}

            fn read(&self, _: &(), _: &mut [f32], _: &mut [f64]) {}
        }
    };
}

absent_block!(
    /// No pair table (`pair0`).
    NoPairs, "PAIR", "LSE"
);
absent_block!(
    /// No second moments (no `mN`).
    NoMoments, "M", "MT"
);
absent_block!(
    /// No square field (no `fN`).
    NoField, "F", "FF"
);

/// Every block slot's sums of one perspective.
#[derive(Clone, Debug)]
pub struct BlockSums<Pw, Pa, Mo, Fi> {
    pub power: Pw,
    pub pair: Pa,
    pub moments: Mo,
    pub field: Fi,
}

/// The Manaka accumulator (SPEC §4–5): power sums, pair table, moments and field, each read
/// as RMS-normalised blocks in that order, then (`KS`) each block's log-RMS; `INP` values
/// per perspective, `IN = 2·INP` for both.
pub struct Manaka<Pw, Pa, Mo, Fi, const KS: bool, const INP: usize, const IN: usize> {
    power: Pw,
    pair: Pa,
    moments: Mo,
    field: Fi,
}

impl<Pw: Block, Pa: Block, Mo: Block, Fi: Block, const KS: bool, const INP: usize, const IN: usize>
    Manaka<Pw, Pa, Mo, Fi, KS, INP, IN>
{
    /// Normalised blocks per perspective.
    const NORMS: usize = Pw::NORMS + Pa::NORMS + Mo::NORMS + Fi::NORMS;

    /// The input widths the type declares equal the blocks' (a compile-time assertion,
    /// evaluated when an engine of this type is built: a wrong type does not compile).
    pub const WIDTHS_AGREE: () = assert!(
        INP == Pw::WIDTH + Pa::WIDTH + Mo::WIDTH + Fi::WIDTH + if KS { Self::NORMS } else { 0 }
            && IN == 2 * INP
            && Self::NORMS <= MAX_NORMS,
        "a Manaka accumulator's INP must be its blocks' widths (plus one per block with KS) and IN = 2·INP"
    );

    /// One perspective's head input (SPEC §5).
    #[inline(always)]
    fn side(&self, s: &BlockSums<Pw::Sums, Pa::Sums, Mo::Sums, Fi::Sums>, out: &mut [f32; INP]) {
        let mut log_rms = [0.0f64; MAX_NORMS];
        let (x, rest) = out.split_at_mut(Pw::WIDTH);
        let (l, log) = log_rms.split_at_mut(Pw::NORMS);
        self.power.read(&s.power, x, l);
        let (x, rest) = rest.split_at_mut(Pa::WIDTH);
        let (l, log) = log.split_at_mut(Pa::NORMS);
        self.pair.read(&s.pair, x, l);
        let (x, rest) = rest.split_at_mut(Mo::WIDTH);
        let (l, log) = log.split_at_mut(Mo::NORMS);
        self.moments.read(&s.moments, x, l);
        let (x, rest) = rest.split_at_mut(Fi::WIDTH);
        self.field.read(&s.field, x, &mut log[..Fi::NORMS]);
        if KS {
            for (o, &l) in rest.iter_mut().zip(&log_rms) {
                *o = l as f32;
            }
        }
    }
}

/// Most normalised blocks one perspective can have: 2 groups × order 8, pair, lse, moment,
/// field.
const MAX_NORMS: usize = 20;

impl<Pw: Block, Pa: Block, Mo: Block, Fi: Block, const KS: bool, const INP: usize, const IN: usize>
    Accumulator for Manaka<Pw, Pa, Mo, Fi, KS, INP, IN>
{
    type Sums = BlockSums<Pw::Sums, Pa::Sums, Mo::Sums, Fi::Sums>;
    type Input = [f32; IN];
    const NNUE: bool = false;
    const KS: bool = KS;
    const SPLIT: bool = Pw::SPLIT || Pa::SPLIT || Mo::SPLIT || Fi::SPLIT;

    fn dims(out: &mut DimList) {
        Pw::dims(out);
        Pa::dims(out);
        Mo::dims(out);
        Fi::dims(out);
        out.extend([("INP", INP), ("IN", IN)]);
    }

    fn load(source: &Source) -> Result<Self, FixedNetError> {
        #[allow(clippy::let_unit_value)]
        let () = Self::WIDTHS_AGREE;
        Ok(Manaka {
            power: Pw::load(source)?,
            pair: Pa::load(source)?,
            moments: Mo::load(source)?,
            field: Fi::load(source)?,
        })
    }

    fn zero(&self) -> Self::Sums {
        BlockSums {
            power: Pw::zero(),
            pair: Pa::zero(),
            moments: Mo::zero(),
            field: Fi::zero(),
        }
    }

    #[inline(always)]
    fn token(&self, simd: Simd, s: &mut Self::Sums, t: u32, own: bool, sign: f32) {
        let t = t as usize;
        self.power.token(simd, &mut s.power, t, own, sign);
        self.moments.token(simd, &mut s.moments, t, own, sign);
        self.field.token(simd, &mut s.field, t, own, sign);
    }

    #[inline(always)]
    fn pairs(&self, simd: Simd, s: &mut Self::Sums, t: u32, others: &[u32], sign: f32) {
        self.pair.pairs(simd, &mut s.pair, t, others, sign);
    }

    #[inline(always)]
    fn all_pairs(&self, simd: Simd, s: &mut Self::Sums, active: &[u32]) {
        self.pair.all_pairs(simd, &mut s.pair, active);
    }

    #[inline(always)]
    fn input(&self, stm: &Self::Sums, other: &Self::Sums, out: &mut [f32; IN]) {
        let (first, second) = out.split_at_mut(INP);
        self.side(stm, first.try_into().expect("IN = 2·INP"));
        self.side(other, second.try_into().expect("IN = 2·INP"));
    }

    #[inline(always)]
    fn field(s: &Self::Sums) -> &[f32] {
        Fi::raw(&s.field)
    }
}

/// The NNUE accumulator (SPEC §6): `acc = b_ft + Σ E[z]`, `D` channels, read as
/// `clip(acc) = min(max(acc, 0), 1)`; `IN = 2·D`.
pub struct Nnue<const D: usize, const IN: usize> {
    embed: View<[[f32; D]]>,
    bias: View<[f32; D]>,
}

impl<const D: usize, const IN: usize> Nnue<D, IN> {
    /// See [`Manaka::WIDTHS_AGREE`].
    pub const WIDTHS_AGREE: () = assert!(IN == 2 * D, "an NNUE accumulator's IN must be 2·D");

    #[inline(always)]
    fn side(&self, s: &[f32; D], out: &mut [f32]) {
        for ((o, &b), &x) in out.iter_mut().zip(&*self.bias).zip(s) {
            *o = (b + x).clamp(0.0, 1.0);
        }
    }
}

impl<const D: usize, const IN: usize> Accumulator for Nnue<D, IN> {
    /// `Σ E[z]` (the bias is added when read).
    type Sums = [f32; D];
    type Input = [f32; IN];
    const NNUE: bool = true;
    const KS: bool = false;
    const SPLIT: bool = false;

    fn dims(out: &mut DimList) {
        out.extend([
            ("D", D),
            ("O", 1),
            ("G", 1),
            ("PAIR", 0),
            ("M", 0),
            ("F", 0),
            ("INP", D),
            ("IN", IN),
        ]);
    }

    fn load(source: &Source) -> Result<Self, FixedNetError> {
        #[allow(clippy::let_unit_value)]
        let () = Self::WIDTHS_AGREE;
        Ok(Nnue {
            embed: View::rows(source, "embed")?,
            bias: View::array(source, "embed.bias")?,
        })
    }

    fn zero(&self) -> Self::Sums {
        [0.0; D]
    }

    #[inline(always)]
    fn token(&self, simd: Simd, s: &mut Self::Sums, t: u32, _own: bool, sign: f32) {
        let row = &self.embed[t as usize];
        if sign > 0.0 {
            k::add_assign(simd, s, row);
        } else {
            k::sub_assign(simd, s, row);
        }
    }

    #[inline(always)]
    fn input(&self, stm: &Self::Sums, other: &Self::Sums, out: &mut [f32; IN]) {
        let (first, second) = out.split_at_mut(D);
        self.side(stm, first);
        self.side(other, second);
    }

    #[inline(always)]
    fn field(_: &Self::Sums) -> &[f32] {
        &[]
    }
}
