//! Quantisation: SPEC §6's float network as YaneuraOu's integers, and back.
//!
//! The scales are those of YaneuraOu's NNUE trainer (`trainer/trainer_feature_transformer.h`,
//! `trainer/trainer_affine_transform.h`), chosen so that each integer activation is 127 × the
//! float one:
//!
//! | tensor | type | scale |
//! |---|---|---|
//! | `embed`, `embed.bias` | int16 | 127 (a float activation of 1 is the byte 127) |
//! | `w1`, `w2` | int8 | 64 (= 2^6, undone by the clipped ReLU's `>> 6`) |
//! | `b1`, `b2` | int32 | 64 · 127 |
//! | `value.w` | int8 | 600 · 16 / 127 |
//! | `value.b` | int32 | 600 · 16 |
//!
//! The output layer's scale is the Ponanza constant 600 (`kPonanzaConstant`,
//! `trainer/trainer.h`) times `FV_SCALE` = 16: the raw output is `9600 · ℓ`, YaneuraOu divides
//! it by `FV_SCALE`, so its internal evaluation is `600 · ℓ` — Manaka's `cp` (SPEC §5).
//!
//! Rounding is the trainer's `Round`, `floor(x + 0.5)`; values beyond the integer type
//! saturate (and are counted). YaneuraOu's trainer keeps int8 weights within ±127; an
//! imported −128 is kept, so that every file's integers survive dequantisation and
//! requantisation unchanged.

use super::NnueError;
use super::arch::Architecture;
use crate::weights::{TensorSource, WeightSet};
use manaka_shapes::Shape;

/// Feature transformer scale (weights and biases): `kActivationScale` = 127.
pub const FT_SCALE: f64 = 127.0;
/// Hidden weights: `1 << kWeightScaleBits` = 64.
pub const HIDDEN_WEIGHT_SCALE: f64 = 64.0;
/// Hidden biases: weight scale × activation scale.
pub const HIDDEN_BIAS_SCALE: f64 = 64.0 * 127.0;
/// The Ponanza constant: YaneuraOu's evaluation `v` has win probability `σ(v / 600)`.
pub const PONANZA: f64 = 600.0;
/// YaneuraOu's default `FV_SCALE`: its evaluation is the output layer's sum divided by it.
pub const FV_SCALE: i32 = 16;
/// Output bias scale: 600 · 16.
pub const OUTPUT_BIAS_SCALE: f64 = PONANZA * FV_SCALE as f64;
/// Output weight scale: 600 · 16 / 127 (the inputs carry the other factor 127).
pub const OUTPUT_WEIGHT_SCALE: f64 = OUTPUT_BIAS_SCALE / 127.0;

/// One affine layer's integers: int32 biases and row-major int8 weights (`outputs ×
/// inputs`, unpadded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntLayer {
    pub inputs: usize,
    pub outputs: usize,
    pub biases: Vec<i32>,
    pub weights: Vec<i8>,
}

/// A whole NNUE network in integers: the feature transformer, one or two hidden layers and
/// the output layer. Any `nnue` shape has one (the integer engine runs them all); the
/// shipped YaneuraOu architectures are the ones that can also be written as nn.bin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntWeights {
    pub shape: Shape,
    /// `d` int16 biases.
    pub ft_biases: Vec<i16>,
    /// `T × d` int16 weights, one row per feature (token id).
    pub ft_weights: Vec<i16>,
    /// `2d → h` and, with `h2`, `h → h2`.
    pub hidden: Vec<IntLayer>,
    /// `last hidden → 1`.
    pub output: IntLayer,
}

/// The largest magnitude a float value of tensor `tensor` of `shape` may have so that its
/// quantisation cannot saturate; `None` where nothing limits it (a shape that is not `nnue`,
/// or a tensor an nn.bin has no place for: the policy). The trainer keeps `nnue` shapes
/// within these limits (`train::optim`) and export refuses values beyond the integer types.
///
/// Derivation: a value `v` becomes `q = floor(v·s + 0.5)` for its tensor's scale `s` (table
/// above). If `|v| ≤ N/s` for an integer `N`, then `v·s ∈ [−N, N]`, so `q ∈ [−N, N]`: `N`
/// steps are reachable and nothing beyond them. `N` is
/// - 127 for the int8 weights `w1`, `w2` and `value.w`: YaneuraOu's trainer clips them to
///   `±127 / s` (`kMaxWeightMagnitude`, `trainer/trainer_affine_transform.h`), one step short
///   of i8's −128 so that the range is symmetric. So `w1`, `w2`: 127/64 ≈ 1.984; `value.w`:
///   127/(9600/127) = 127²/9600 ≈ 1.680.
/// - 32767 for the int16 feature transformer: `embed`, `embed.bias` within 32767/127 ≈ 258.0.
///   (The sums of up to 38 rows in the 16-bit accumulators can still wrap; the float net's
///   clipped accumulators cannot tell, so nothing here limits them.)
/// - 2^31 − 1 for the int32 biases: `b1`, `b2` within 2147483647/8128 ≈ 264,208;
///   `value.b` within 2147483647/9600 ≈ 223,696.
///
/// The limit is `N/s` rounded down to an f32, so that a weight clamped to it in f32 is never
/// beyond it (near 2^18, where the int32 biases' limits lie, an f32 step is 1/32: 254 bias
/// steps).
pub fn float_limit(shape: &Shape, tensor: &str) -> Option<f64> {
    if !shape.nnue {
        return None;
    }
    let (steps, scale) = match tensor {
        "embed" | "embed.bias" => (f64::from(i16::MAX), FT_SCALE),
        "w1" | "w2" => (f64::from(i8::MAX), HIDDEN_WEIGHT_SCALE),
        "b1" | "b2" => (f64::from(i32::MAX), HIDDEN_BIAS_SCALE),
        "value.w" => (f64::from(i8::MAX), OUTPUT_WEIGHT_SCALE),
        "value.b" => (f64::from(i32::MAX), OUTPUT_BIAS_SCALE),
        _ => return None,
    };
    let exact = steps / scale;
    let mut limit = exact as f32;
    if f64::from(limit) > exact {
        limit = limit.next_down();
    }
    Some(f64::from(limit))
}

/// How many values of one tensor saturated at the integer type's range, and the worst.
#[derive(Clone, Debug, PartialEq)]
pub struct Saturated {
    pub tensor: &'static str,
    pub count: u64,
    /// The value furthest beyond the range (as stored, before scaling).
    pub worst: f32,
    /// [`float_limit`] of the tensor: the largest magnitude that quantises without saturating
    /// within the trainer's ±127 int8 steps.
    pub limit: f64,
}

/// The integer types of an NNUE file, with their ranges.
trait Int: Sized {
    const MIN: f64;
    const MAX: f64;
    fn from_clamped(v: f64) -> Self;
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const MIN: f64 = <$t>::MIN as f64;
            const MAX: f64 = <$t>::MAX as f64;
            fn from_clamped(v: f64) -> Self {
                v as $t
            }
        }
    )*};
}
int!(i8, i16, i32);

/// Quantises the tensors of one source, collecting the saturation counts.
struct Quantiser<'a> {
    src: &'a dyn TensorSource,
    saturated: Vec<Saturated>,
}

impl Quantiser<'_> {
    /// `floor(v · scale + 0.5)` of every value of tensor `name`, saturated to `T`'s range.
    fn tensor<T: Int>(&mut self, name: &'static str, scale: f64) -> Result<Vec<T>, NnueError> {
        let values = self.src.require(name)?;
        // A source of another origin than MNW1's reader or `WeightSet` (which check every
        // length) could hold a tensor of the wrong size.
        let expected = self
            .src
            .shape()
            .tensors()
            .iter()
            .find(|t| t.name == name)
            .map_or(0, |t| t.numel());
        if values.len() as u64 != expected {
            return Err(crate::weights::WeightsError::WrongLength {
                tensor: name.to_string(),
                expected,
                found: values.len() as u64,
            }
            .into());
        }
        let mut count = 0;
        let mut worst = 0.0f32;
        let out = values
            .iter()
            .enumerate()
            .map(|(index, &v)| {
                if !v.is_finite() {
                    return Err(NnueError::NotFinite {
                        tensor: name.to_string(),
                        index,
                        value: v,
                    });
                }
                let x = (f64::from(v) * scale + 0.5).floor();
                if !(T::MIN..=T::MAX).contains(&x) {
                    count += 1;
                    if v.abs() > worst.abs() {
                        worst = v;
                    }
                }
                Ok(T::from_clamped(x.clamp(T::MIN, T::MAX)))
            })
            .collect::<Result<Vec<T>, NnueError>>()?;
        if count > 0 {
            self.saturated.push(Saturated {
                tensor: name,
                count,
                worst,
                limit: float_limit(self.src.shape(), name).unwrap_or(f64::INFINITY),
            });
        }
        Ok(out)
    }

    fn layer(
        &mut self,
        w: &'static str,
        b: &'static str,
        dims: (usize, usize),
        scales: (f64, f64),
    ) -> Result<IntLayer, NnueError> {
        let biases = self.tensor::<i32>(b, scales.1)?;
        let weights = self.tensor::<i8>(w, scales.0)?;
        Ok(IntLayer {
            inputs: dims.0,
            outputs: dims.1,
            biases,
            weights,
        })
    }
}

impl IntWeights {
    /// Quantises the float weights of an `nnue` shape; also reports the tensors in which
    /// values saturated (none for weights in the trainer's ranges).
    pub fn quantise(src: &dyn TensorSource) -> Result<(IntWeights, Vec<Saturated>), NnueError> {
        let shape = *src.shape();
        if !shape.nnue {
            return Err(NnueError::NotExportable {
                shape: shape.to_string(),
                reason: super::Unrepresentable::NotNnue.to_string(),
            });
        }
        let mut q = Quantiser {
            src,
            saturated: Vec::new(),
        };
        let ft_biases = q.tensor::<i16>("embed.bias", FT_SCALE)?;
        let ft_weights = q.tensor::<i16>("embed", FT_SCALE)?;
        let (d, h) = (shape.d as usize, shape.h as usize);
        let hidden_scales = (HIDDEN_WEIGHT_SCALE, HIDDEN_BIAS_SCALE);
        let mut hidden = vec![q.layer("w1", "b1", (2 * d, h), hidden_scales)?];
        if let Some(h2) = shape.h2 {
            hidden.push(q.layer("w2", "b2", (h, h2 as usize), hidden_scales)?);
        }
        let last = shape.last_hidden() as usize;
        let output = q.layer(
            "value.w",
            "value.b",
            (last, 1),
            (OUTPUT_WEIGHT_SCALE, OUTPUT_BIAS_SCALE),
        )?;
        Ok((
            IntWeights {
                shape,
                ft_biases,
                ft_weights,
                hidden,
                output,
            },
            q.saturated,
        ))
    }

    /// The float weights these integers stand for (each value divided by its scale), with the
    /// policy tensors — which NNUE files do not have — all zero: every legal move then gets
    /// the same logit, i.e. a uniform policy.
    pub fn dequantise(&self) -> WeightSet {
        let mut ws = WeightSet::zeros(&self.shape);
        let mut put = |name: &str, values: Vec<f32>| {
            ws.tensor_mut(name)
                .expect("nnue shapes have this tensor")
                .copy_from_slice(&values);
        };
        let de = |v: &[i16]| {
            v.iter()
                .map(|&q| (f64::from(q) / FT_SCALE) as f32)
                .collect::<Vec<_>>()
        };
        put("embed.bias", de(&self.ft_biases));
        put("embed", de(&self.ft_weights));
        let names = [("w1", "b1"), ("w2", "b2")];
        for (layer, (wn, bn)) in self.hidden.iter().zip(names) {
            put(
                wn,
                layer
                    .weights
                    .iter()
                    .map(|&q| (f64::from(q) / HIDDEN_WEIGHT_SCALE) as f32)
                    .collect(),
            );
            put(
                bn,
                layer
                    .biases
                    .iter()
                    .map(|&q| (f64::from(q) / HIDDEN_BIAS_SCALE) as f32)
                    .collect(),
            );
        }
        put(
            "value.w",
            self.output
                .weights
                .iter()
                .map(|&q| (f64::from(q) / OUTPUT_WEIGHT_SCALE) as f32)
                .collect(),
        );
        put(
            "value.b",
            self.output
                .biases
                .iter()
                .map(|&q| (f64::from(q) / OUTPUT_BIAS_SCALE) as f32)
                .collect(),
        );
        ws
    }

    /// The first value (tensor, index, value) whose f32 form does not quantise back to
    /// itself. None for any file YaneuraOu's trainer writes: int16 and int8 values and int32
    /// biases below 2^23 in magnitude are exact in f32 after scaling; only a huge int32 bias
    /// could be lost.
    pub fn first_inexact(&self) -> Option<(&'static str, usize, i64)> {
        fn check(
            name: &'static str,
            scale: f64,
            values: impl Iterator<Item = i64>,
        ) -> Option<(&'static str, usize, i64)> {
            values.enumerate().find_map(|(i, q)| {
                let f = (q as f64 / scale) as f32;
                let back = (f64::from(f) * scale + 0.5).floor();
                (back != q as f64).then_some((name, i, q))
            })
        }
        check(
            "embed.bias",
            FT_SCALE,
            self.ft_biases.iter().map(|&q| i64::from(q)),
        )
        .or_else(|| {
            check(
                "embed",
                FT_SCALE,
                self.ft_weights.iter().map(|&q| i64::from(q)),
            )
        })
        .or_else(|| {
            let names = [("w1", "b1"), ("w2", "b2")];
            self.hidden.iter().zip(names).find_map(|(l, (wn, bn))| {
                check(
                    bn,
                    HIDDEN_BIAS_SCALE,
                    l.biases.iter().map(|&q| i64::from(q)),
                )
                .or_else(|| {
                    check(
                        wn,
                        HIDDEN_WEIGHT_SCALE,
                        l.weights.iter().map(|&q| i64::from(q)),
                    )
                })
            })
        })
        .or_else(|| {
            check(
                "value.b",
                OUTPUT_BIAS_SCALE,
                self.output.biases.iter().map(|&q| i64::from(q)),
            )
        })
        .or_else(|| {
            check(
                "value.w",
                OUTPUT_WEIGHT_SCALE,
                self.output.weights.iter().map(|&q| i64::from(q)),
            )
        })
    }

    /// The YaneuraOu architecture these weights are, if it is one.
    pub fn architecture(&self) -> Result<Architecture, super::Unrepresentable> {
        Architecture::of_shape(&self.shape)
    }
}
