//! Reproducible random weights: the same shape and seed give the same bits on every platform
//! and every version of this crate's dependencies.
//!
//! **Generator.** Element `i` of tensor `name` is SplitMix64's output `i` from the state
//! `key = mix(seed ^ mix(fnv1a64(name)))`, i.e. `mix(key + (i + 1) · 0x9E3779B97F4A7C15)`
//! (Steele, Lea & Flood, 2014). Its top 24 bits make `u ∈ [0, 1)`, exactly representable in
//! f32, and the value is `lo + (hi − lo) · u` computed in f32: only IEEE basic operations, so
//! no libm differences. Being counter-based, any element can be produced on its own, so a file
//! can be generated in pieces ([`write_random`]) with the same result as all at once
//! ([`random_weights`]). Hand-written, because `rand`'s `StdRng` may change between versions.
//!
//! **Distributions** ([`distribution`]; the table with the reasoning is in docs/weights.md).
//! They are chosen so that every valid shape gives finite, non-degenerate outputs on random
//! weights, with `A = 40` active tokens and `P = 780` active pairs as the typical counts: each
//! aggregate block has raw RMS about 1 (so `ks` scalars and the raw field term of the policy
//! stay near 0, and power sums stay far from f32 limits), the lse channels of the pair table are
//! positive (they hold exp(x), SPEC §4) and sum to about e (ln about 1), norm gains are 1, hidden layers are
//! He-initialised (about half the units active), biases are U(±0.01), value logits have standard
//! deviation about 0.4 and policy logits about 1. `tests/weights_init.rs` checks this with an
//! independent forward pass.

use super::WeightSet;
use super::error::WeightsError;
use super::writer::WeightWriter;
use manaka_shapes::{Shape, TYPICAL_ACTIVE_TOKENS, TensorSpec};
use std::path::Path;

/// How the values of one tensor are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    Constant(f32),
    /// Uniform on `[lo, hi)`.
    Uniform {
        lo: f32,
        hi: f32,
    },
    /// The pair table: columns `first_lse..width` (the lse channels) use `lse`, the others
    /// `linear`.
    PairColumns {
        width: u64,
        first_lse: u64,
        linear: (f32, f32),
        lse: (f32, f32),
    },
}

fn symmetric(a: f64) -> Distribution {
    Distribution::Uniform {
        lo: -a as f32,
        hi: a as f32,
    }
}

/// The distribution of tensor `spec` of `shape` (the table in the module documentation).
pub fn distribution(shape: &Shape, spec: &TensorSpec) -> Distribution {
    let active = TYPICAL_ACTIVE_TOKENS as f64;
    let pairs = active * (active - 1.0) / 2.0;
    let last = shape.last_hidden().max(1) as f64;
    let small = symmetric(0.01);
    match spec.name.as_str() {
        // NNUE: the sum of 40 rows has std 0.5, around a bias of 0.5, the middle of clip's [0, 1].
        "embed" if shape.nnue => symmetric(3f64.sqrt() * 0.5 / active.sqrt()),
        "embed.bias" => Distribution::Uniform { lo: 0.4, hi: 0.6 },
        // e_k of 40 tokens is about √C(40,k)·0.23^k: 0.07 … 1.5 for k <= 8.
        "embed" => symmetric(0.4),
        "pair" => {
            let width = u64::from(shape.pair);
            let lse = u64::from(shape.lse.unwrap_or(0));
            // Linear channels: the sum of 780 rows has RMS 1. Lse channels hold exp(x) > 0.
            let a = (3.0 / pairs).sqrt() as f32;
            Distribution::PairColumns {
                width,
                first_lse: width - lse.min(width),
                linear: (-a, a),
                // Sum about e, so ln(sum) is about 1: a readout near ln(1) = 0 would sit where the
                // RMS normalisation is dominated by its epsilon and amplifies f32 rounding.
                lse: (
                    (0.5 * std::f64::consts::E / pairs) as f32,
                    (1.5 * std::f64::consts::E / pairs) as f32,
                ),
            }
        }
        // Σvvᵀ has a diagonal averaging 1; field values have RMS 1.
        "moment.proj" | "field" => symmetric((3.0 / active).sqrt()),
        // He: pre-activations of variance 2, about half the units active.
        "w1" => symmetric((6.0 / shape.input_width().max(1) as f64).sqrt()),
        "w2" => symmetric((6.0 / f64::from(shape.h.max(1))).sqrt()),
        // Value logit std about 0.4, policy logit std about 1; clipped NNUE units are smaller.
        "value.w" if shape.nnue => symmetric((3.0 / last).sqrt()),
        "value.w" => symmetric((0.75 / last).sqrt()),
        "policy.w" if shape.nnue => symmetric((12.0 / last).sqrt()),
        "policy.w" => symmetric((3.0 / last).sqrt()),
        "policy.from" => symmetric(0.25),
        "policy.field" => symmetric((0.75 / f64::from(shape.field.unwrap_or(1).max(1))).sqrt()),
        "b1" | "b2" | "value.b" | "policy.b" => small,
        name if name.starts_with("norm.") => Distribution::Constant(1.0),
        // Shape::tensors lists no other names.
        _ => Distribution::Constant(0.0),
    }
}

/// SplitMix64's output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, 64-bit: a stable hash of a tensor name.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// Fills `out` with elements `start..start + out.len()` of tensor `spec` of `shape`.
pub fn fill(shape: &Shape, spec: &TensorSpec, seed: u64, start: u64, out: &mut [f32]) {
    const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
    let key = mix(seed ^ mix(fnv1a64(spec.name.as_bytes())));
    let dist = distribution(shape, spec);
    for (j, value) in out.iter_mut().enumerate() {
        let i = start.wrapping_add(j as u64);
        let bits = mix(key.wrapping_add(i.wrapping_add(1).wrapping_mul(GOLDEN)));
        let u = (bits >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
        let uniform = |(lo, hi): (f32, f32)| lo + (hi - lo) * u;
        *value = match dist {
            Distribution::Constant(c) => c,
            Distribution::Uniform { lo, hi } => uniform((lo, hi)),
            Distribution::PairColumns {
                width,
                first_lse,
                linear,
                lse,
            } => {
                if i % width.max(1) >= first_lse {
                    uniform(lse)
                } else {
                    uniform(linear)
                }
            }
        };
    }
}

/// Random weights for `shape` from `seed`, in memory. For large shapes prefer
/// [`write_random`], which never holds more than one piece of a tensor.
pub fn random_weights(shape: &Shape, seed: u64) -> WeightSet {
    let mut set = WeightSet::zeros(shape);
    for spec in shape.tensors() {
        if let Some(values) = set.tensor_mut(&spec.name) {
            fill(shape, &spec, seed, 0, values);
        }
    }
    set
}

/// Writes random weights for `shape` from `seed` to `path` (atomically), in pieces of 1 Mi
/// values; `progress(bytes written, total bytes)` is called after each piece. The file equals
/// `write_file(path, &random_weights(shape, seed))`.
pub fn write_random(
    path: &Path,
    shape: &Shape,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64, WeightsError> {
    const PIECE: u64 = 1 << 20;
    let total = shape.bytes();
    let mut done = 0u64;
    let mut buffer = vec![0f32; PIECE as usize];
    let mut writer = WeightWriter::create(path, shape)?;
    for spec in shape.tensors() {
        let numel = spec.numel();
        let mut start = 0;
        while start < numel {
            let n = (numel - start).min(PIECE) as usize;
            let piece = &mut buffer[..n];
            fill(shape, &spec, seed, start, piece);
            writer.write(piece)?;
            start += n as u64;
            done += 4 * n as u64;
            progress(done, total);
        }
    }
    writer.finish()
}
