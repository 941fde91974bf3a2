//! The backward pass, derived by hand block by block (SPEC §4–6). Given `∂L/∂ℓ` for each value
//! logit and `∂L/∂z` for each policy logit, it adds `∂L/∂θ` for every tensor θ into [`Grads`].
//! Notation: `x̄ = ∂L/∂x`. Every formula here is checked against central finite differences in
//! `f64` by `tests.rs`, for every tensor of shapes that together enable every block.
//!
//! **Heads.** `ℓ = w_v·h + b_v`: `w̄_v += ℓ̄ h`, `b̄_v += ℓ̄`, `h̄ += ℓ̄ w_v`. A policy logit
//! `z = W_p[label]·h + b_p[label] + PF[kind][from] + Σ_j F_stm[to][j] U[class][j]`:
//! `W̄_p[label] += z̄ h`, `h̄ += z̄ W_p[label]`, `b̄_p[label] += z̄`, `P̄F[kind][from] += z̄`,
//! `Ū[class][j] += z̄ F_stm[to][j]` and — the field term reads the side to move's *raw* field —
//! `F̄_stm[to][j] += z̄ U[class][j]`, added to the field's gradient beside the normalised path.
//!
//! **Dense layers.** `a = W x + b`, `y = act(a)`: `ā = ȳ ⊙ act'(a)` (ReLU: 1 for a > 0; NNUE
//! clip: 1 for 0 < a < 1; 0 elsewhere, kinks included), `W̄ += ā xᵀ`, `b̄ += ā`, `x̄ = Wᵀ ā`.
//!
//! **RMS norm with gains** (SPEC §5). `r = sqrt(Σx²/n + ε)`, `y_i = g_i x_i / r`,
//! `∂r/∂x_k = x_k / (n r)`, so `ḡ_i += ȳ_i x_i / r` and
//! `x̄_k = ȳ_k g_k / r − x_k (Σ_i ȳ_i g_i x_i) / (n r³)`. With `ks` the block also feeds
//! `ln r`, whose derivative adds `k̄s · x_k / (n r²)`.
//!
//! **Power sums through Newton's identities** (SPEC §4). `e_k = (1/k) Σ_{i=1..k} (−1)^(i−1)
//! e_(k−i) p_i` with `e_0 = 1`; `e_k` feeds only `e_j` for `j > k`, so walking k from o down to
//! 1 every `ē_k` is complete before it is used: `ē_(k−i) += ē_k (−1)^(i−1) p_i / k` and
//! `p̄_i += ē_k (−1)^(i−1) e_(k−i) / k`. Then `p_k = Σ_z E[z]^k` gives
//! `Ē[z][c] += Σ_k p̄_k[c] · k · E[z][c]^(k−1)` for every active occurrence of z (with
//! `split`, from its own group's p̄).
//!
//! **Pair rows** (sparse). `S = Σ_{pairs} P[row]`, so every active pair's row gets `S̄`. The
//! lse channels read `ln(max(S, f32::MIN_POSITIVE))`: `S̄ = ȳ / S` above the floor, 0 below
//! (there the readout is constant). These are gradients with respect to the *stored* values
//! `exp(x)`; the optimiser turns them into gradients for `x` (`optim.rs`).
//!
//! **Moments.** The block holds `M_ij = Σ_z v_i v_j` for `i ≤ j`, so with `G = M̄ + M̄ᵀ` over the
//! upper triangle (the diagonal counted twice), `V̄[z] += G v(z)`.
//!
//! **Field.** `F = Σ_z K[z]`: `K̄[z] += F̄`, F̄ from the normalised block and (side to move) the
//! policy term.
//!
//! **NNUE** (SPEC §6). `acc = b_ft + Σ E[z]`, input `clip(acc)`: `ācc = ū ⊙ clip'(acc)`,
//! `b̄_ft += ācc`, `Ē[z] += ācc`.

use super::forward::{Forward, LSE_FLOOR, PREFETCH_AHEAD, Perspective, activation_slope, group};
use super::grads::Grads;
use super::model::Model;
use super::real::Real;
use manaka_shapes::formula;
use manaka_shapes::{BlockKind, PowerGroup};

/// Adds the gradient of `Σ_s (ℓ̄_s ℓ_s + Σ_i z̄_si z_si)` into `grads`: `dvalue[s]` is `∂L/∂ℓ`
/// of example s, `dlogits[s][i]` is `∂L/∂z` of its move i (in the order given to `forward`).
#[inline(never)] // a unit of its own in profiles
pub fn backward<R: Real>(
    model: &Model<R>,
    f: &Forward<R>,
    dvalue: &[R],
    dlogits: &[Vec<R>],
    grads: &mut Grads<R>,
) {
    let l = &model.layout;
    let t = &model.tensors;
    let n = f.n;
    let nnue = model.shape.nnue;
    let last = l.last;
    let fch = l.field;
    // Heads → h̄ (n × last), and the policy's share of each side to move's field gradient.
    let mut dh = vec![R::ZERO; n * last];
    let mut dfield_policy: Vec<Vec<R>> = Vec::with_capacity(n);
    for s in 0..n {
        let h = f.hidden(l, s);
        let dhs = &mut dh[s * last..(s + 1) * last];
        let dv = dvalue[s];
        R::axpy(dhs, dv, &t[l.value_w]);
        R::axpy(&mut grads.dense[l.value_w], dv, h);
        grads.dense[l.value_b][0] += dv;
        let mut df = vec![R::ZERO; 81 * fch];
        let field = &f.perspectives[s][0].field;
        for (mf, &dz) in f.features[s].iter().zip(&dlogits[s]) {
            if dz == R::ZERO {
                continue;
            }
            let label = mf.label as usize;
            R::axpy(dhs, dz, &t[l.policy_w][label * last..(label + 1) * last]);
            R::axpy(
                &mut grads.dense[l.policy_w][label * last..(label + 1) * last],
                dz,
                h,
            );
            grads.dense[l.policy_b][label] += dz;
            grads.dense[l.policy_from]
                [formula::move_feature(mf.kind as usize, mf.from as usize)] += dz;
            if let Some(u) = l.policy_field {
                let (class, to) = (mf.class as usize * fch, mf.to as usize * fch);
                R::axpy(
                    &mut grads.dense[u][class..class + fch],
                    dz,
                    &field[to..to + fch],
                );
                R::axpy(&mut df[to..to + fch], dz, &t[u][class..class + fch]);
            }
        }
        dfield_policy.push(df);
    }
    // Hidden layers, last to first.
    let mut dx = dh;
    if let (Some(w2), Some(b2)) = (l.w2, l.b2) {
        dx = dense_backward(model, w2, b2, &f.h1, &f.a2, dx, n, nnue, grads);
    }
    let du = dense_backward(model, l.w1, l.b1, &f.u, &f.a1, dx, n, nnue, grads);
    // Perspectives: u = [side to move, other side].
    let pw = l.perspective;
    for s in 0..n {
        for (p, persp) in f.perspectives[s].iter().enumerate() {
            let dy = &du[(s * 2 + p) * pw..(s * 2 + p + 1) * pw];
            let policy_field = if p == 0 {
                Some(dfield_policy[s].as_slice())
            } else {
                None
            };
            perspective_backward(model, persp, dy, policy_field, grads);
        }
    }
}

/// Backward through `y = act(W x + b)` over n examples: accumulates W̄ and b̄, returns x̄.
#[allow(clippy::too_many_arguments)]
#[inline(never)] // a unit of its own in profiles
fn dense_backward<R: Real>(
    model: &Model<R>,
    w: usize,
    b: usize,
    x: &[R],
    pre: &[R],
    mut dy: Vec<R>,
    n: usize,
    nnue: bool,
    grads: &mut Grads<R>,
) -> Vec<R> {
    let rows = model.tensors[b].len();
    let cols = model.tensors[w].len() / rows;
    for (g, &a) in dy.iter_mut().zip(pre) {
        *g *= activation_slope(nnue, a);
    }
    let mut dx = vec![R::ZERO; n * cols];
    let wt = &model.tensors[w];
    let row = |r: usize| &wt[r * cols..(r + 1) * cols];
    let xrow = |s: usize| &x[s * cols..(s + 1) * cols];
    // Blocks of four rows (and, for W̄, four examples): x̄_s takes four rows' contributions in
    // one pass, a row of W̄ four examples' — each pass over a long vector does four times the
    // arithmetic, and the vectors of a block stay in the L1 cache.
    let mut r0 = 0;
    while r0 < rows {
        let k = (rows - r0).min(4);
        for s in 0..n {
            let mut a = [R::ZERO; 4];
            a[..k].copy_from_slice(&dy[s * rows + r0..s * rows + r0 + k]);
            if a.iter().all(|&v| v == R::ZERO) {
                continue;
            }
            let dxs = &mut dx[s * cols..(s + 1) * cols];
            if k == 4 {
                R::axpy4(dxs, a, [row(r0), row(r0 + 1), row(r0 + 2), row(r0 + 3)]);
            } else {
                for (j, &aj) in a[..k].iter().enumerate() {
                    R::axpy(dxs, aj, row(r0 + j));
                }
            }
        }
        for r in r0..r0 + k {
            let dw = &mut grads.dense[w][r * cols..(r + 1) * cols];
            let mut db = R::ZERO;
            let mut s0 = 0;
            while s0 < n {
                let m = (n - s0).min(4);
                let mut a = [R::ZERO; 4];
                for i in 0..m {
                    a[i] = dy[(s0 + i) * rows + r];
                    db += a[i];
                }
                if m == 4 {
                    if a.iter().any(|&v| v != R::ZERO) {
                        R::axpy4(dw, a, [xrow(s0), xrow(s0 + 1), xrow(s0 + 2), xrow(s0 + 3)]);
                    }
                } else {
                    for (i, &ai) in a[..m].iter().enumerate() {
                        if ai != R::ZERO {
                            R::axpy(dw, ai, xrow(s0 + i));
                        }
                    }
                }
                s0 += m;
            }
            grads.dense[b][r] += db;
        }
        r0 += k;
    }
    dx
}

/// One perspective: from `ȳ` of its head input to the token tables, gains and NNUE bias.
/// `policy_field` is the policy term's `F̄` (side to move only).
///
/// The forward pass's phases in reverse, one function each, as the reference evaluator
/// computes them forwards (`reference::head::perspective_input` normalises the blocks that
/// `raw_blocks` reads off the accumulator, block kind by block kind, which sums token rows):
/// norms → raw blocks → aggregates (Newton's identities for the power sums) → token rows of
/// each table.
#[inline(never)] // a unit of its own in profiles
fn perspective_backward<R: Real>(
    model: &Model<R>,
    p: &Perspective<R>,
    dy: &[R],
    policy_field: Option<&[R]>,
    grads: &mut Grads<R>,
) {
    if model.shape.nnue {
        nnue_backward(model, p, dy, grads);
        return;
    }
    let draw = norms_backward(model, p, dy, grads);
    let mut agg = blocks_backward(&model.layout, p, &draw);
    if let Some(pf) = policy_field {
        R::axpy(&mut agg.field, R::ONE, pf);
    }
    let dpower = newton_backward(&model.layout, p, &agg.elementary);
    power_rows_backward(model, p, &dpower, grads);
    pair_rows_backward(model, p, &agg.pair, grads);
    moment_rows_backward(model, p, &agg.moments, grads);
    field_rows_backward(model, p, &agg.field, grads);
}

/// NNUE (SPEC §6): `ācc = ū ⊙ clip'(acc)` into the bias and every active token's row.
fn nnue_backward<R: Real>(model: &Model<R>, p: &Perspective<R>, dy: &[R], grads: &mut Grads<R>) {
    let l = &model.layout;
    let dacc: Vec<R> = dy
        .iter()
        .zip(&p.acc)
        .map(|(&g, &a)| g * activation_slope(true, a))
        .collect();
    let bias = l.embed_bias.expect("nnue shapes have embed.bias");
    R::axpy(&mut grads.dense[bias], R::ONE, &dacc);
    let rows = grads.rows(l.embed);
    for &z in p.tokens.as_slice() {
        R::axpy(rows.row_mut(z as usize), R::ONE, &dacc);
    }
}

/// RMS norms (and ks), block by block: `ȳ` → the raw blocks' gradients `x̄` (returned, in
/// block order), and the gains' gradients added.
fn norms_backward<R: Real>(
    model: &Model<R>,
    p: &Perspective<R>,
    dy: &[R],
    grads: &mut Grads<R>,
) -> Vec<R> {
    let l = &model.layout;
    let t = &model.tensors;
    let mut draw = vec![R::ZERO; l.raw_width];
    for (bi, b) in l.blocks.iter().enumerate() {
        let x = &p.raw[b.offset..b.offset + b.width];
        let dyb = &dy[b.offset..b.offset + b.width];
        let gains = &t[b.gains];
        let r = p.rms[bi];
        let nw = R::from_f64(b.width as f64);
        let mut s = R::ZERO;
        for i in 0..b.width {
            s += dyb[i] * gains[i] * x[i];
        }
        let gg = &mut grads.dense[b.gains];
        for i in 0..b.width {
            gg[i] += dyb[i] * x[i] / r;
        }
        let dks = if model.shape.ks {
            dy[l.raw_width + bi]
        } else {
            R::ZERO
        };
        let c1 = s / (nw * r * r * r);
        let c2 = dks / (nw * r * r);
        let dx = &mut draw[b.offset..b.offset + b.width];
        for i in 0..b.width {
            dx[i] = dyb[i] * gains[i] / r - x[i] * c1 + x[i] * c2;
        }
    }
    draw
}

/// The gradients of one perspective's aggregates, as the raw blocks read them.
struct AggregateGrads<R> {
    /// `ē`, per group, order and channel (`(g · order + k − 1) · d + c`).
    elementary: Vec<R>,
    /// `S̄` of the pair sums (the lse channels' already through the log).
    pair: Vec<R>,
    /// `M̄`, upper triangle of an `m × m` matrix.
    moments: Vec<R>,
    /// `F̄`, 81 squares × field channels.
    field: Vec<R>,
}

/// Raw blocks → aggregates, by block kind (`reference::head::raw_blocks` forwards).
fn blocks_backward<R: Real>(
    l: &super::model::Layout,
    p: &Perspective<R>,
    draw: &[R],
) -> AggregateGrads<R> {
    let (d, o, m) = (l.d, l.order, l.moments);
    let mut agg = AggregateGrads {
        elementary: vec![R::ZERO; l.groups * o * d],
        pair: vec![R::ZERO; l.pair],
        moments: vec![R::ZERO; m * m],
        field: vec![R::ZERO; 81 * l.field],
    };
    for b in &l.blocks {
        let dx = &draw[b.offset..b.offset + b.width];
        match b.kind {
            BlockKind::Power { group, k } => {
                let g = usize::from(group == PowerGroup::Opp);
                let at = (g * o + k as usize - 1) * d;
                agg.elementary[at..at + d].copy_from_slice(dx);
            }
            BlockKind::PairLinear => agg.pair[..l.first_lse].copy_from_slice(dx),
            BlockKind::PairLse => {
                let floor = R::from_f64(LSE_FLOOR);
                for (j, &g) in dx.iter().enumerate() {
                    let sum = p.pair[l.first_lse + j];
                    agg.pair[l.first_lse + j] = if sum > floor { g / sum } else { R::ZERO };
                }
            }
            BlockKind::Moment => {
                let mut at = 0;
                for i in 0..m {
                    for j in i..m {
                        agg.moments[i * m + j] = dx[at];
                        at += 1;
                    }
                }
            }
            BlockKind::Field => agg.field.copy_from_slice(dx),
        }
    }
    agg
}

/// Newton's identities backwards, per group and channel: `ē` → `p̄` (same layout).
fn newton_backward<R: Real>(l: &super::model::Layout, p: &Perspective<R>, delem: &[R]) -> Vec<R> {
    let (d, o) = (l.d, l.order);
    let mut dpower = vec![R::ZERO; l.groups * o * d];
    let (mut pc, mut ec, mut de, mut dp) = ([R::ZERO; 8], [R::ZERO; 9], [R::ZERO; 9], [R::ZERO; 8]);
    for g in 0..l.groups {
        for c in 0..d {
            for k in 0..o {
                pc[k] = p.power[(g * o + k) * d + c];
                ec[k + 1] = p.elementary[(g * o + k) * d + c];
                de[k + 1] = delem[(g * o + k) * d + c];
                dp[k] = R::ZERO;
            }
            ec[0] = R::ONE;
            de[0] = R::ZERO;
            for k in (1..=o).rev() {
                let scaled = de[k] / R::from_f64(k as f64);
                for i in 1..=k {
                    let sg = if i % 2 == 1 { scaled } else { -scaled };
                    de[k - i] += sg * pc[i - 1];
                    dp[i - 1] += sg * ec[k - i];
                }
            }
            for k in 0..o {
                dpower[(g * o + k) * d + c] = dp[k];
            }
        }
    }
    dpower
}

/// Power sums → embedding rows: `Ē[z][c] += Σ_k p̄_k[c] · k · E[z][c]^(k−1)` per active token.
fn power_rows_backward<R: Real>(
    model: &Model<R>,
    p: &Perspective<R>,
    dpower: &[R],
    grads: &mut Grads<R>,
) {
    let l = &model.layout;
    let (d, o) = (l.d, l.order);
    let embed = &model.tensors[l.embed];
    let rows = grads.rows(l.embed);
    let mut coef = vec![R::ZERO; d];
    for &z in p.tokens.as_slice() {
        let e = &embed[z as usize * d..(z as usize + 1) * d];
        let dpg = &dpower[group(model, z) * o * d..(group(model, z) + 1) * o * d];
        // Σ_k p̄_k · k · e^(k−1), by Horner's rule from the highest k.
        for c in 0..d {
            let mut acc = R::ZERO;
            for k in (0..o).rev() {
                acc = acc * e[c] + dpg[k * d + c] * R::from_f64((k + 1) as f64);
            }
            coef[c] = acc;
        }
        R::axpy(rows.row_mut(z as usize), R::ONE, &coef);
    }
}

/// Pair sums → every active pair's row gets `S̄`.
fn pair_rows_backward<R: Real>(
    model: &Model<R>,
    p: &Perspective<R>,
    dpair: &[R],
    grads: &mut Grads<R>,
) {
    let Some(pt) = model.layout.pair_table else {
        return;
    };
    let rows = grads.rows(pt);
    for (i, &row) in p.pairs.iter().enumerate() {
        if let Some(&ahead) = p.pairs.get(i + PREFETCH_AHEAD) {
            rows.prefetch(ahead as usize);
        }
        R::axpy(rows.row_mut(row as usize), R::ONE, dpair);
    }
}

/// Moments → projection rows: `V̄[z] += G v(z)` with `G = M̄ + M̄ᵀ` over the upper triangle.
fn moment_rows_backward<R: Real>(
    model: &Model<R>,
    p: &Perspective<R>,
    dmom: &[R],
    grads: &mut Grads<R>,
) {
    let Some(vt) = model.layout.moment_proj else {
        return;
    };
    let m = model.layout.moments;
    let mut gm = vec![R::ZERO; m * m];
    for i in 0..m {
        for j in i..m {
            gm[i * m + j] += dmom[i * m + j];
            gm[j * m + i] += dmom[i * m + j];
        }
    }
    let proj = &model.tensors[vt];
    let rows = grads.rows(vt);
    for &z in p.tokens.as_slice() {
        let v = &proj[z as usize * m..(z as usize + 1) * m];
        let gv: Vec<R> = (0..m).map(|a| R::dot(&gm[a * m..(a + 1) * m], v)).collect();
        R::axpy(rows.row_mut(z as usize), R::ONE, &gv);
    }
}

/// Field → every active token's field row gets `F̄`.
fn field_rows_backward<R: Real>(
    model: &Model<R>,
    p: &Perspective<R>,
    dfield: &[R],
    grads: &mut Grads<R>,
) {
    let Some(kt) = model.layout.field_table else {
        return;
    };
    let rows = grads.rows(kt);
    for &z in p.tokens.as_slice() {
        R::axpy(rows.row_mut(z as usize), R::ONE, dfield);
    }
}
