//! The tensor table of SPEC §7 and the sizes that follow from it.
//!
//! This is the one definition of a shape's tensors (names, dims, order): the MNW1 writer and
//! reader, the reference evaluator, the macro, the CUDA templates and the trainer all call
//! [`Shape::tensors`] and [`Shape::blocks`] instead of keeping their own copy.
//!
//! All sizes are `u64`, exact for valid shapes and saturating (never overflowing) for a
//! hand-built `Shape` that [`Shape::validate`] would refuse.

use crate::shape::{FeatureSpace, Shape};
use std::fmt;

/// Policy labels: dlshogi's 27 move classes × 81 destination squares (SPEC §5).
pub const POLICY_LABELS: u64 = 2187;
/// Move classes of the policy: 10 directions, 10 promoting directions, 7 drops (SPEC §5).
pub const MOVE_CLASSES: u64 = 27;
/// Squares of the board.
pub const SQUARES: u64 = 81;
/// Piece kinds (SPEC §1), the rows of `policy.from`.
pub const PIECE_KINDS: u64 = 14;
/// Origins in `policy.from`: 81 squares, then 81 for a drop (SPEC §5).
pub const ORIGINS: u64 = 82;
/// Tokens active in a position with standard material (SPEC §3: 40 native, 38 for HalfKP);
/// the FLOP estimate and the random initialisation use it as the typical count.
pub const TYPICAL_ACTIVE_TOKENS: u64 = 40;
/// Legal moves in a typical middlegame position; the FLOP estimate scores this many.
pub const TYPICAL_LEGAL_MOVES: u64 = 80;

/// Which group of tokens a power-sum block sums over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PowerGroup {
    /// All active tokens (no `split`).
    All,
    /// The perspective's own pieces (`split`).
    Own,
    /// The opponent's pieces (`split`).
    Opp,
}

/// What a normalised block of the head input holds (SPEC §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// Elementary symmetric polynomial `e_k` (k = 1..=o) of one group, `d` wide.
    Power { group: PowerGroup, k: u32 },
    /// The pair channels read linearly: the first `pair - lse`.
    PairLinear,
    /// The last `lse` pair channels, read out as `ln(sum)`.
    PairLse,
    /// The upper triangle of the second moments, row-major, `m(m+1)/2` wide.
    Moment,
    /// The square field, square-major (`s * f + c`), `81 f` wide.
    Field,
}

/// One RMS-normalised block of one perspective's head input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    pub kind: BlockKind,
    pub width: u64,
}

impl Block {
    /// The block's name in `norm.<name>` (SPEC §7): `e1`, `own.e1`, `opp.e1`, `pair`, `lse`,
    /// `moment`, `field`.
    pub fn name(&self) -> String {
        match self.kind {
            BlockKind::Power { group, k } => match group {
                PowerGroup::All => format!("e{k}"),
                PowerGroup::Own => format!("own.e{k}"),
                PowerGroup::Opp => format!("opp.e{k}"),
            },
            BlockKind::PairLinear => "pair".to_string(),
            BlockKind::PairLse => "lse".to_string(),
            BlockKind::Moment => "moment".to_string(),
            BlockKind::Field => "field".to_string(),
        }
    }
}

/// One tensor of a weight file: its name and dims (row-major, the last dim contiguous).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorSpec {
    pub name: String,
    pub dims: Vec<u64>,
}

impl TensorSpec {
    fn new(name: impl Into<String>, dims: &[u64]) -> TensorSpec {
        TensorSpec {
            name: name.into(),
            dims: dims.to_vec(),
        }
    }

    /// Number of f32 values.
    pub fn numel(&self) -> u64 {
        self.dims.iter().fold(1u64, |acc, &d| acc.saturating_mul(d))
    }

    /// Bytes of f32 data.
    pub fn bytes(&self) -> u64 {
        self.numel().saturating_mul(4)
    }
}

impl fmt::Display for TensorSpec {
    /// `name [a × b]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.dims.iter().map(u64::to_string).collect();
        write!(f, "{} [{}]", self.name, dims.join(" × "))
    }
}

impl Shape {
    /// Size `T` of the token space.
    pub fn token_count(&self) -> u64 {
        u64::from(self.features.token_count())
    }

    /// Rows of the pair table: unordered token pairs, `T(T-1)/2` (SPEC §4).
    pub fn pair_rows(&self) -> u64 {
        let t = self.token_count();
        t.saturating_mul(t.saturating_sub(1)) / 2
    }

    /// Width of the last hidden layer: `h2` if present, else `h`. Value and policy read it.
    pub fn last_hidden(&self) -> u64 {
        u64::from(self.h2.unwrap_or(self.h))
    }

    /// The normalised blocks of one perspective, in SPEC §5 order. Empty for `nnue`, whose
    /// head reads the clipped accumulator instead (SPEC §6).
    pub fn blocks(&self) -> Vec<Block> {
        if self.nnue {
            return Vec::new();
        }
        let d = u64::from(self.d);
        let groups: &[PowerGroup] = if self.split {
            &[PowerGroup::Own, PowerGroup::Opp]
        } else {
            &[PowerGroup::All]
        };
        let mut blocks: Vec<Block> = groups
            .iter()
            .flat_map(|&group| {
                (1..=self.order).map(move |k| Block {
                    kind: BlockKind::Power { group, k },
                    width: d,
                })
            })
            .collect();
        let lse = u64::from(self.lse.unwrap_or(0));
        let linear = u64::from(self.pair).saturating_sub(lse);
        if linear > 0 {
            blocks.push(Block {
                kind: BlockKind::PairLinear,
                width: linear,
            });
        }
        if lse > 0 {
            blocks.push(Block {
                kind: BlockKind::PairLse,
                width: lse,
            });
        }
        if let Some(m) = self.moments {
            let m = u64::from(m);
            blocks.push(Block {
                kind: BlockKind::Moment,
                width: m * (m + 1) / 2,
            });
        }
        if let Some(f) = self.field {
            blocks.push(Block {
                kind: BlockKind::Field,
                width: SQUARES * u64::from(f),
            });
        }
        blocks
    }

    /// Width of one perspective's part of the head input: the blocks, then (with `ks`) one
    /// log-RMS scalar per block (SPEC §5); for `nnue`, the accumulator, `d` wide (SPEC §6).
    pub fn perspective_width(&self) -> u64 {
        if self.nnue {
            return u64::from(self.d);
        }
        let blocks = self.blocks();
        let widths = blocks.iter().fold(0u64, |a, b| a.saturating_add(b.width));
        let ks = if self.ks { blocks.len() as u64 } else { 0 };
        widths.saturating_add(ks)
    }

    /// Width of the head input `u = [side to move, other side]`: twice
    /// [`Shape::perspective_width`]. This is the second dim of `w1`.
    pub fn input_width(&self) -> u64 {
        self.perspective_width().saturating_mul(2)
    }

    /// The tensors of a weight file for this shape, in file order (SPEC §7).
    pub fn tensors(&self) -> Vec<TensorSpec> {
        let t = self.token_count();
        let d = u64::from(self.d);
        let h = u64::from(self.h);
        let last = self.last_hidden();
        let mut out = vec![TensorSpec::new("embed", &[t, d])];
        if self.nnue {
            out.push(TensorSpec::new("embed.bias", &[d]));
        }
        if self.pair > 0 {
            out.push(TensorSpec::new(
                "pair",
                &[self.pair_rows(), u64::from(self.pair)],
            ));
        }
        if let Some(m) = self.moments {
            out.push(TensorSpec::new("moment.proj", &[t, u64::from(m)]));
        }
        if let Some(f) = self.field {
            out.push(TensorSpec::new("field", &[t, SQUARES, u64::from(f)]));
        }
        for block in self.blocks() {
            out.push(TensorSpec::new(
                format!("norm.{}", block.name()),
                &[block.width],
            ));
        }
        out.push(TensorSpec::new("w1", &[h, self.input_width()]));
        out.push(TensorSpec::new("b1", &[h]));
        if let Some(h2) = self.h2 {
            let h2 = u64::from(h2);
            out.push(TensorSpec::new("w2", &[h2, h]));
            out.push(TensorSpec::new("b2", &[h2]));
        }
        out.push(TensorSpec::new("value.w", &[last]));
        out.push(TensorSpec::new("value.b", &[1]));
        out.push(TensorSpec::new("policy.w", &[POLICY_LABELS, last]));
        out.push(TensorSpec::new("policy.b", &[POLICY_LABELS]));
        out.push(TensorSpec::new("policy.from", &[PIECE_KINDS, ORIGINS]));
        if let Some(f) = self.field {
            out.push(TensorSpec::new(
                "policy.field",
                &[MOVE_CLASSES, u64::from(f)],
            ));
        }
        out
    }

    /// Number of f32 parameters: the sum over [`Shape::tensors`].
    pub fn param_count(&self) -> u64 {
        self.tensors()
            .iter()
            .fold(0u64, |acc, t| acc.saturating_add(t.numel()))
    }

    /// Bytes of f32 parameters (`4 × param_count`). An MNW1 file adds its header, up to 63
    /// bytes of alignment per tensor, and an 8-byte trailer.
    pub fn bytes(&self) -> u64 {
        self.param_count().saturating_mul(4)
    }

    /// Estimated floating-point operations (a multiply-add counts 2) for one evaluation after
    /// a typical quiet move, as the incremental CPU engine does it:
    ///
    /// - accumulator, per perspective, one token removed and one added: power sums `2·o·d`
    ///   each (powers by repeated multiplication, then add), Newton's identities `d·o(o+1)`
    ///   per group, pair `39·pair` each (one row per other active token), moments `m(m+1)`
    ///   each, field `81·f` each; NNUE: `d` each, plus the clip `2d`;
    /// - RMS norms: `3` per block value, plus `lse` logarithms counted as 1;
    /// - head: `2·h·in + 2h` (bias and ReLU), the same for `h2`, value `2·last + 1`;
    /// - policy over [`TYPICAL_LEGAL_MOVES`] moves: `2·last + 2` each, plus `2f` with a field.
    ///
    /// Transcendentals count 1 and memory traffic is ignored: this ranks shapes by arithmetic,
    /// it does not predict speed (that is `manaka bench`'s job).
    pub fn flops_per_eval(&self) -> u64 {
        // u128 throughout: exact for every valid shape, and no overflow for hand-built ones.
        let d = u128::from(self.d);
        let o = u128::from(self.order);
        let changes = 2; // one token removed, one added, per perspective
        let per_perspective = if self.nnue {
            changes * d + 2 * d
        } else {
            let groups = if self.split { 2 } else { 1 };
            let m = u128::from(self.moments.unwrap_or(0));
            let f = u128::from(self.field.unwrap_or(0));
            let accumulator = changes * 2 * o * d
                + groups * d * o * (o + 1)
                + changes * u128::from(TYPICAL_ACTIVE_TOKENS - 1) * u128::from(self.pair)
                + changes * m * (m + 1)
                + changes * u128::from(SQUARES) * f;
            let norms =
                3 * u128::from(self.perspective_width()) + u128::from(self.lse.unwrap_or(0));
            accumulator + norms
        };
        let h = u128::from(self.h);
        let last = u128::from(self.last_hidden());
        let mut head = 2 * h * u128::from(self.input_width()) + 2 * h;
        if let Some(h2) = self.h2 {
            head += 2 * u128::from(h2) * h + 2 * u128::from(h2);
        }
        head += 2 * last + 1;
        let field_term = 2 * u128::from(self.field.unwrap_or(0));
        let policy = u128::from(TYPICAL_LEGAL_MOVES) * (2 * last + 2 + field_term);
        u64::try_from(2 * per_perspective + head + policy).unwrap_or(u64::MAX)
    }
}

impl FeatureSpace {
    /// Every feature space, in the order of SPEC §3.
    pub const ALL: [FeatureSpace; 3] =
        [FeatureSpace::Native, FeatureSpace::Kp, FeatureSpace::HalfKp];
}
