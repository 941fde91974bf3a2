//! The accumulator of one perspective (SPEC §4): every enabled block is a sum over the
//! active tokens, kept in f64 so that incremental updates and a refresh agree to ~1e-12.

use super::params::Params;
use crate::tokens::TokenDelta;
// The pair row formula lives with the spec's other small formulas (issue 17).
use manaka_shapes::Shape;
pub use manaka_shapes::formula::pair_index;

/// Sums over one perspective's active tokens.
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulator {
    /// The active token ids (a multiset; see `tokens` for why ids can repeat).
    pub tokens: Vec<u32>,
    /// Power sums `p[g][k-1][c] = Σ_z E[z][c]^k` per group g (one group, or own/opp with
    /// `split`), k = 1..=o.
    pub power: Vec<Vec<Vec<f64>>>,
    /// Pair sums, `pair` wide (the last `lse` channels hold sums of exp-baked rows).
    pub pair: Vec<f64>,
    /// Second moments `Σ v vᵀ`, full `m × m` (the head reads the upper triangle).
    pub moments: Vec<f64>,
    /// Square field `F[s][c]`, square-major.
    pub field: Vec<f64>,
    /// NNUE accumulator `b_ft + Σ E[z]` (nnue shapes only).
    pub nnue: Vec<f64>,
}

impl Accumulator {
    /// An accumulator with no tokens (NNUE: just the bias).
    pub fn empty(shape: &Shape, params: &Params<'_>) -> Accumulator {
        let d = shape.d as usize;
        let groups = if shape.split { 2 } else { 1 };
        let m = shape.moments.unwrap_or(0) as usize;
        let f = shape.field.unwrap_or(0) as usize;
        Accumulator {
            tokens: Vec::with_capacity(40),
            power: if shape.nnue {
                Vec::new()
            } else {
                vec![vec![vec![0.0; d]; shape.order as usize]; groups]
            },
            pair: vec![0.0; shape.pair as usize],
            moments: vec![0.0; m * m],
            field: vec![0.0; 81 * f],
            nnue: match params.embed_bias {
                Some(b) => b.iter().map(|&x| x as f64).collect(),
                None => Vec::new(),
            },
        }
    }

    /// Builds the accumulator of `tokens` from scratch, adding them one at a time.
    pub fn refresh(shape: &Shape, params: &Params<'_>, tokens: &[u32]) -> Accumulator {
        let mut acc = Accumulator::empty(shape, params);
        for &t in tokens {
            acc.add(shape, params, t);
        }
        acc
    }

    /// Applies a move's token delta: removals first, then additions (SPEC §4).
    pub fn apply(&mut self, shape: &Shape, params: &Params<'_>, delta: &TokenDelta) {
        debug_assert!(!delta.refresh, "caller rebuilds on refresh");
        for &r in delta.removed.as_slice() {
            self.remove(shape, params, r);
        }
        for &a in delta.added.as_slice() {
            self.add(shape, params, a);
        }
    }

    fn add(&mut self, shape: &Shape, params: &Params<'_>, t: u32) {
        self.accumulate(shape, params, t, 1.0);
        self.tokens.push(t);
    }

    fn remove(&mut self, shape: &Shape, params: &Params<'_>, t: u32) {
        let i = self
            .tokens
            .iter()
            .position(|&x| x == t)
            .expect("removed token is active");
        self.tokens.swap_remove(i);
        self.accumulate(shape, params, t, -1.0);
    }

    /// Adds (`sign` = 1) or subtracts (−1) token `t`'s contribution to every block; for the
    /// pair block, the rows pairing `t` with every other active token (self.tokens must not
    /// contain this occurrence of `t`).
    fn accumulate(&mut self, shape: &Shape, params: &Params<'_>, t: u32, sign: f64) {
        let d = shape.d as usize;
        let e = &params.embed[t as usize * d..(t as usize + 1) * d];
        if shape.nnue {
            for (a, &x) in self.nnue.iter_mut().zip(e) {
                *a += sign * x as f64;
            }
            return;
        }
        let group = if shape.split && !crate::tokens::is_own(shape.features, t) {
            1
        } else {
            0
        };
        for (k, pk) in self.power[group].iter_mut().enumerate() {
            for (c, p) in pk.iter_mut().enumerate() {
                *p += sign * (e[c] as f64).powi(k as i32 + 1);
            }
        }
        if shape.pair > 0 {
            let w = shape.pair as usize;
            let table = params.pair.expect("pair table");
            for &other in &self.tokens {
                if other == t {
                    continue; // equal ids never form a pair row (the diagonal)
                }
                let (a, b) = if t < other { (t, other) } else { (other, t) };
                let row = pair_index(a, b) * w;
                for (s, &x) in self.pair.iter_mut().zip(&table[row..row + w]) {
                    *s += sign * x as f64;
                }
            }
        }
        if let Some(m) = shape.moments {
            let m = m as usize;
            let v = &params.moment_proj.expect("moment projection")
                [t as usize * m..(t as usize + 1) * m];
            for i in 0..m {
                for j in 0..m {
                    self.moments[i * m + j] += sign * v[i] as f64 * v[j] as f64;
                }
            }
        }
        if let Some(f) = shape.field {
            let n = 81 * f as usize;
            let k = &params.field.expect("field table")[t as usize * n..(t as usize + 1) * n];
            for (s, &x) in self.field.iter_mut().zip(k) {
                *s += sign * x as f64;
            }
        }
    }
}
