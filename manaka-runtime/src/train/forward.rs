//! The trainer's forward pass: SPEC §4–6 exactly as the reference evaluator computes them
//! (`reference::accumulator`, `reference::head`), keeping every intermediate value that the
//! backward pass needs. `tests.rs` checks that, in `f64`, it gives the reference's value and
//! policy logits for every block type and both arithmetics.
//!
//! The pass works on a *chunk* of examples (one thread's share of a batch): the per-position
//! parts (tokens, aggregates, normalisation) run example by example, but the dense layers run
//! over the whole chunk row by row of the weight matrix, so each row of W1 (the largest dense
//! tensor) is read once per chunk instead of once per position.

use super::model::{Layout, Model};
use super::real::Real;
use crate::labels::{move_class, move_label};
use crate::shogi::{Color, Move, Position};
use crate::tokens::{self, ActiveTokens};
use manaka_shapes::formula::{self, pair_index};
use manaka_shapes::{BlockKind, PowerGroup};

/// The lse readout's floor: `ln(max(sum, f32::MIN_POSITIVE))` (`reference::head::raw_blocks`).
pub const LSE_FLOOR: f64 = formula::LSE_FLOOR as f64;
/// RMS-normalisation epsilon (SPEC §5).
pub use manaka_shapes::formula::RMS_EPS;

/// What a policy logit of one move reads besides the hidden vector (SPEC §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveFeature {
    /// dlshogi label, `81 · class + to`.
    pub label: u16,
    /// Move class 0..27.
    pub class: u8,
    /// Kind of the moving (or dropped) piece before promotion, 0..14.
    pub kind: u8,
    /// Origin relative to the side to move; 81 for a drop.
    pub from: u8,
    /// Destination relative to the side to move.
    pub to: u8,
}

impl MoveFeature {
    /// The feature of legal move `m` in `pos`; `None` if `m` has no piece at its origin.
    pub fn of(pos: &Position, m: Move) -> Option<MoveFeature> {
        let side = pos.side_to_move();
        let (kind, from) = match m.from() {
            Some(from) => (
                pos.piece_at(from)?.kind as u8,
                from.relative(side).index() as u8,
            ),
            None => (m.drop_kind()?.piece_kind() as u8, 81),
        };
        Some(MoveFeature {
            label: move_label(m, side),
            class: move_class(m, side) as u8,
            kind,
            from,
            to: m.to().relative(side).index() as u8,
        })
    }
}

/// One perspective's aggregates and normalisation statistics for one position.
#[derive(Clone, Debug, Default)]
pub struct Perspective<R> {
    pub tokens: ActiveTokens,
    /// Pair-table rows of the active pairs (pair shapes only), in summation order; the
    /// backward pass adds to the same rows.
    pub pairs: Vec<u32>,
    /// Power sums, `p[(g·o + k)·d + c] = Σ_z E[z][c]^(k+1)` over group g's tokens.
    pub power: Vec<R>,
    /// Elementary symmetric polynomials `e_(k+1)`, same layout.
    pub elementary: Vec<R>,
    /// Pair sums (lse channels: sums of the stored exp values).
    pub pair: Vec<R>,
    /// Second moments, upper triangle in row-major `m × m` storage (the lower part is unused).
    pub moments: Vec<R>,
    /// Raw square field, `81 · f`, square-major.
    pub field: Vec<R>,
    /// Every block's raw values, concatenated in block order.
    pub raw: Vec<R>,
    /// `sqrt(mean(x²) + ε)` per block.
    pub rms: Vec<R>,
    /// NNUE accumulator `b_ft + Σ E[z]` (nnue shapes only).
    pub acc: Vec<R>,
}

/// Everything the forward pass computed for a chunk of positions.
#[derive(Clone, Debug, Default)]
pub struct Forward<R> {
    pub n: usize,
    /// Per example: [side to move, other side].
    pub perspectives: Vec<[Perspective<R>; 2]>,
    /// Head inputs, `n × input`.
    pub u: Vec<R>,
    /// First layer pre-activations and activations, `n × h`.
    pub a1: Vec<R>,
    pub h1: Vec<R>,
    /// Second layer (with `h2`), `n × h2`.
    pub a2: Vec<R>,
    pub h2: Vec<R>,
    /// Value logits.
    pub value: Vec<R>,
    /// Policy logits per example, one per legal move.
    pub logits: Vec<Vec<R>>,
    /// The moves' policy features, parallel to `logits`.
    pub features: Vec<Vec<MoveFeature>>,
}

impl<R: Real> Forward<R> {
    /// The last hidden vector of example `s`.
    pub fn hidden(&self, layout: &Layout, s: usize) -> &[R] {
        let w = layout.last;
        if layout.h2.is_some() {
            &self.h2[s * w..(s + 1) * w]
        } else {
            &self.h1[s * w..(s + 1) * w]
        }
    }
}

/// Elementary symmetric polynomials from power sums by Newton's identities (SPEC §4):
/// `e_0 = 1`, `k·e_k = Σ_{i=1..k} (−1)^(i−1) e_(k−i) p_i`. `p[i−1] = p_i`; fills `e[0..=o]`.
pub fn newton<R: Real>(p: &[R], e: &mut [R]) {
    e[0] = R::ONE;
    for k in 1..=p.len() {
        let mut s = R::ZERO;
        for i in 1..=k {
            let term = e[k - i] * p[i - 1];
            if i % 2 == 1 { s += term } else { s -= term }
        }
        e[k] = s / R::from_f64(k as f64);
    }
}

/// The activation after each hidden layer: ReLU (SPEC §5) or clip to [0, 1] (SPEC §6).
#[inline(always)]
pub fn activation<R: Real>(nnue: bool, x: R) -> R {
    if x <= R::ZERO {
        R::ZERO
    } else if nnue && x > R::ONE {
        R::ONE
    } else {
        x
    }
}

/// The activation's derivative: 1 strictly inside the linear part, 0 elsewhere.
#[inline(always)]
pub fn activation_slope<R: Real>(nnue: bool, x: R) -> R {
    if x > R::ZERO && (!nnue || x < R::ONE) {
        R::ONE
    } else {
        R::ZERO
    }
}

/// Which power-sum group token `t` adds to (`split`: 0 own, 1 opponent).
pub fn group(model: &Model<impl Real>, t: u32) -> usize {
    if model.shape.split && !tokens::is_own(model.shape.features, t) {
        1
    } else {
        0
    }
}

/// The pair-table rows of every pair of active tokens with distinct ids, as the accumulator
/// adds them (SPEC §4; equal ids — YaneuraOu's missing pieces — form no row).
pub fn pair_rows(tokens: &[u32], out: &mut Vec<u32>) {
    out.clear();
    for (i, &b) in tokens.iter().enumerate() {
        for &a in &tokens[..i] {
            if a != b {
                let row = if a < b {
                    pair_index(a, b)
                } else {
                    pair_index(b, a)
                };
                out.push(row as u32);
            }
        }
    }
}

/// How many rows ahead the pair loops ask for the row they will need: the table is far larger
/// than the caches, so each row is a miss, and asking early lets several be in flight.
pub const PREFETCH_AHEAD: usize = 8;

/// One perspective's aggregates, raw blocks and normalisation; appends its head input
/// (normalised blocks, then ks scalars; NNUE: the clipped accumulator) to `input`.
#[inline(never)] // a unit of its own in profiles
pub fn perspective<R: Real>(
    model: &Model<R>,
    pos: &Position,
    color: Color,
    input: &mut Vec<R>,
) -> Perspective<R> {
    let l = &model.layout;
    let mut tk = tokens::active_tokens(model.shape.features, pos, color);
    // Ascending ids make the pair rows of each token ascend too (row = b(b−1)/2 + a): kinder
    // to caches and pages. Sums are order-independent up to rounding.
    let mut sorted = [0u32; tokens::MAX_ACTIVE];
    let n = tk.len();
    sorted[..n].copy_from_slice(tk.as_slice());
    sorted[..n].sort_unstable();
    tk = ActiveTokens::new();
    for &t in &sorted[..n] {
        tk.push(t);
    }
    let ids = tk.as_slice();
    let d = l.d;
    let embed = &model.tensors[l.embed];
    let mut out = Perspective {
        tokens: tk,
        ..Perspective::default()
    };
    if model.shape.nnue {
        // SPEC §6: acc = b_ft + Σ E[z]; input clip(acc).
        let mut acc = model.tensors[l.embed_bias.expect("nnue shapes have embed.bias")].clone();
        for &t in ids {
            R::axpy(
                &mut acc,
                R::ONE,
                &embed[t as usize * d..(t as usize + 1) * d],
            );
        }
        input.extend(acc.iter().map(|&x| activation(true, x)));
        out.acc = acc;
        return out;
    }
    let o = l.order;
    // Power sums p_k = Σ E^k, by repeated multiplication.
    let mut power = vec![R::ZERO; l.groups * o * d];
    let mut pw = vec![R::ZERO; d];
    for &t in ids {
        let row = &embed[t as usize * d..(t as usize + 1) * d];
        let base = group(model, t) * o * d;
        pw.copy_from_slice(row);
        for k in 0..o {
            let pk = &mut power[base + k * d..base + (k + 1) * d];
            for c in 0..d {
                pk[c] += pw[c];
                pw[c] *= row[c];
            }
        }
    }
    let mut elementary = vec![R::ZERO; l.groups * o * d];
    let (mut pc, mut ec) = ([R::ZERO; 8], [R::ZERO; 9]);
    for g in 0..l.groups {
        for c in 0..d {
            for k in 0..o {
                pc[k] = power[(g * o + k) * d + c];
            }
            newton(&pc[..o], &mut ec[..=o]);
            for k in 0..o {
                elementary[(g * o + k) * d + c] = ec[k + 1];
            }
        }
    }
    let mut pair = vec![R::ZERO; l.pair];
    if let Some(pt) = l.pair_table {
        let table = &model.tensors[pt];
        let w = l.pair;
        pair_rows(ids, &mut out.pairs);
        for (i, &row) in out.pairs.iter().enumerate() {
            if let Some(&ahead) = out.pairs.get(i + PREFETCH_AHEAD) {
                manaka_kernels::prefetch(table.as_ptr().wrapping_add(ahead as usize * w));
            }
            let row = row as usize;
            R::axpy(&mut pair, R::ONE, &table[row * w..(row + 1) * w]);
        }
    }
    let m = l.moments;
    let mut moments = vec![R::ZERO; m * m];
    if let Some(vt) = l.moment_proj {
        let proj = &model.tensors[vt];
        for &t in ids {
            let v = &proj[t as usize * m..(t as usize + 1) * m];
            for i in 0..m {
                R::axpy(&mut moments[i * m + i..(i + 1) * m], v[i], &v[i..]);
            }
        }
    }
    let fw = 81 * l.field;
    let mut field = vec![R::ZERO; fw];
    if let Some(kt) = l.field_table {
        let k = &model.tensors[kt];
        for &t in ids {
            R::axpy(
                &mut field,
                R::ONE,
                &k[t as usize * fw..(t as usize + 1) * fw],
            );
        }
    }
    // Raw blocks in Shape::blocks() order (reference::head::raw_blocks).
    let mut raw = Vec::with_capacity(l.raw_width);
    for b in &l.blocks {
        match b.kind {
            BlockKind::Power { group, k } => {
                let g = usize::from(group == PowerGroup::Opp);
                let at = (g * o + k as usize - 1) * d;
                raw.extend_from_slice(&elementary[at..at + d]);
            }
            BlockKind::PairLinear => raw.extend_from_slice(&pair[..l.first_lse]),
            BlockKind::PairLse => {
                let floor = R::from_f64(LSE_FLOOR);
                raw.extend(pair[l.first_lse..].iter().map(|&s| s.max(floor).ln()));
            }
            BlockKind::Moment => {
                for i in 0..m {
                    raw.extend_from_slice(&moments[i * m + i..(i + 1) * m]);
                }
            }
            BlockKind::Field => raw.extend_from_slice(&field),
        }
    }
    // RMS normalisation with gains, then the log-RMS scalars (SPEC §5).
    let mut rms = Vec::with_capacity(l.blocks.len());
    let eps = R::from_f64(RMS_EPS);
    for b in &l.blocks {
        let x = &raw[b.offset..b.offset + b.width];
        let r = (R::dot(x, x) / R::from_f64(b.width as f64) + eps).sqrt();
        let gains = &model.tensors[b.gains];
        input.extend(x.iter().zip(gains).map(|(&v, &g)| g * v / r));
        rms.push(r);
    }
    if model.shape.ks {
        input.extend(rms.iter().map(|&r| r.ln()));
    }
    out.power = power;
    out.elementary = elementary;
    out.pair = pair;
    out.moments = moments;
    out.field = field;
    out.raw = raw;
    out.rms = rms;
    out
}

/// `out[s·rows + r] = bias[r] + W[r] · x_s` for every example s (W row-major, `rows × cols`),
/// then the activation into `act`.
#[inline(never)] // a unit of its own in profiles
fn dense_layer<R: Real>(
    w: &[R],
    bias: &[R],
    x: &[R],
    n: usize,
    nnue: bool,
    pre: &mut Vec<R>,
    act: &mut Vec<R>,
) {
    let rows = bias.len();
    let cols = w.len() / rows.max(1);
    pre.clear();
    pre.resize(n * rows, R::ZERO);
    let row = |r: usize| &w[r * cols..(r + 1) * cols];
    // Four rows at a time: each input is read once per four rows (the inputs of a chunk
    // outgrow the L1 cache; four rows of W1 stay in it).
    let mut r = 0;
    while r + 4 <= rows {
        let ws = [row(r), row(r + 1), row(r + 2), row(r + 3)];
        for s in 0..n {
            let d = R::dot4(ws, &x[s * cols..(s + 1) * cols]);
            for j in 0..4 {
                pre[s * rows + r + j] = bias[r + j] + d[j];
            }
        }
        r += 4;
    }
    for r in r..rows {
        for s in 0..n {
            pre[s * rows + r] = bias[r] + R::dot(row(r), &x[s * cols..(s + 1) * cols]);
        }
    }
    act.clear();
    act.extend(pre.iter().map(|&v| activation(nnue, v)));
}

/// The forward pass over `positions` (each with the legal moves to score).
#[inline(never)] // a unit of its own in profiles
pub fn forward<R: Real>(model: &Model<R>, positions: &[(&Position, &[Move])]) -> Forward<R> {
    let l = &model.layout;
    let n = positions.len();
    let nnue = model.shape.nnue;
    let mut f = Forward {
        n,
        u: Vec::with_capacity(n * 2 * l.perspective),
        ..Forward::default()
    };
    for &(pos, _) in positions {
        let stm = pos.side_to_move();
        let a = perspective(model, pos, stm, &mut f.u);
        let b = perspective(model, pos, stm.flip(), &mut f.u);
        f.perspectives.push([a, b]);
    }
    let t = &model.tensors;
    dense_layer(&t[l.w1], &t[l.b1], &f.u, n, nnue, &mut f.a1, &mut f.h1);
    if let (Some(w2), Some(b2)) = (l.w2, l.b2) {
        let (mut a2, mut h2) = (Vec::new(), Vec::new());
        dense_layer(&t[w2], &t[b2], &f.h1, n, nnue, &mut a2, &mut h2);
        f.a2 = a2;
        f.h2 = h2;
    }
    let last = l.last;
    let (vw, vb) = (&t[l.value_w], t[l.value_b][0]);
    let (pw, pb, pf) = (&t[l.policy_w], &t[l.policy_b], &t[l.policy_from]);
    let fch = l.field;
    for (s, &(pos, moves)) in positions.iter().enumerate() {
        let h = if l.h2.is_some() {
            &f.h2[s * last..(s + 1) * last]
        } else {
            &f.h1[s * last..(s + 1) * last]
        };
        f.value.push(vb + R::dot(vw, h));
        let features: Vec<MoveFeature> = moves
            .iter()
            .map(|&m| MoveFeature::of(pos, m).expect("examples hold legal moves only"))
            .collect();
        let field = &f.perspectives[s][0].field;
        let logits = features
            .iter()
            .map(|mf| {
                let label = mf.label as usize;
                let mut z = pb[label] + R::dot(&pw[label * last..(label + 1) * last], h);
                z += pf[formula::move_feature(mf.kind as usize, mf.from as usize)];
                if let Some(u) = l.policy_field {
                    // The side to move's raw field at the destination (SPEC §5).
                    let uc = &t[u][mf.class as usize * fch..(mf.class as usize + 1) * fch];
                    z += R::dot(&field[mf.to as usize * fch..(mf.to as usize + 1) * fch], uc);
                }
                z
            })
            .collect();
        f.logits.push(logits);
        f.features.push(features);
    }
    f
}
