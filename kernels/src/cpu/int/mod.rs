//! Integer kernels for NNUE inference in YaneuraOu's arithmetic (docs/nnue.md): a 16-bit
//! accumulator updated by adding and subtracting int16 rows, its clip to 0..=127 as bytes,
//! u8 × i8 affine layers summed in 32 bits, and the clipped ReLU `clamp(y >> 6, 0, 127)`.
//!
//! Every level computes the same integers: wrapping 16-bit lanes in the accumulator,
//! wrapping 32-bit sums in the affine layers (their products are exact for inputs in
//! 0..=127, the range every clipped activation has), saturating packs that agree with the
//! clamps. So the SIMD levels are tested for *equality* with the scalar twin, not closeness.
//!
//! The level is an [`IntSimd`]: a [`Simd`] level plus, on AVX-512 CPUs that have it, VNNI
//! (`vpdpbusd`, one instruction for four u8 × i8 products per lane).

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod scalar;

use super::{Level, Simd};
use std::fmt;

/// The clipped ReLU's right shift: YaneuraOu's `kWeightScaleBits` (`nnue_common.h`), the
/// log2 of the hidden layers' weight scale 64.
pub const CRELU_SHIFT: i32 = 6;

/// An integer-kernel level: a [`Simd`] level, and whether AVX-512 VNNI is used with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntSimd {
    simd: Simd,
    vnni: bool,
}

impl IntSimd {
    /// `simd`, with VNNI when `simd` is AVX-512 and this CPU has AVX-512 VNNI.
    pub fn new(simd: Simd) -> IntSimd {
        IntSimd {
            simd,
            vnni: simd.0 == Level::Avx512 && has_vnni(),
        }
    }

    /// The same level with VNNI off (AVX-512 then uses `vpmaddubsw` + `vpmaddwd`).
    pub fn without_vnni(self) -> IntSimd {
        IntSimd {
            vnni: false,
            ..self
        }
    }

    /// [`IntSimd::new`] of [`Simd::detect`]: the best this CPU has (`MANAKA_SIMD` forces
    /// the base level).
    pub fn detect() -> IntSimd {
        IntSimd::new(Simd::detect())
    }

    /// Every integer level this CPU can run, slowest first: each [`Simd::available`] level,
    /// and AVX-512 both without and with VNNI where the CPU has VNNI.
    pub fn available() -> Vec<IntSimd> {
        let mut v = Vec::new();
        for simd in Simd::available() {
            let s = IntSimd::new(simd);
            if s.vnni {
                v.push(s.without_vnni());
            }
            v.push(s);
        }
        v
    }

    /// The base SIMD level.
    pub fn simd(self) -> Simd {
        self.simd
    }

    /// Whether VNNI is used.
    pub fn vnni(self) -> bool {
        self.vnni
    }

    /// `scalar`, `avx2`, `avx512` or `avx512-vnni`.
    pub fn name(self) -> &'static str {
        if self.vnni {
            "avx512-vnni"
        } else {
            self.simd.name()
        }
    }
}

impl fmt::Display for IntSimd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn has_vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

// Dispatch. The arms after `Scalar` are reachable only with a `Simd` made by
// `Simd::available()`, which checked AVX2 (and AVX-512 F/BW); `vnni` is set only after
// checking AVX-512 VNNI.
macro_rules! dispatch {
    ($s:expr, $f:ident, $fv:ident ( $($arg:expr),* )) => {
        match ($s.simd.0, $s.vnni) {
            (Level::Scalar, _) => scalar::$f($($arg),*),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports AVX2 (checked when this `Simd` was made).
            (Level::Avx2, _) => unsafe { avx2::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports AVX-512 F and BW (checked when this `Simd` was made).
            (Level::Avx512, false) => unsafe { avx512::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports AVX-512 F, BW and VNNI (checked by `IntSimd::new`).
            (Level::Avx512, true) => unsafe { avx512::$fv($($arg),*) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => scalar::$f($($arg),*),
        }
    };
}

/// A refresh: `acc = bias + Σ rows`, each 16-bit lane wrapping (YaneuraOu's
/// `refresh_accumulator`, `nnue_feature_transformer.h`).
#[inline]
pub fn refresh_i16<const N: usize>(
    s: IntSimd,
    acc: &mut [i16; N],
    bias: &[i16; N],
    rows: &[&[i16; N]],
) {
    dispatch!(s, accumulate, accumulate(acc, Some(bias), &[], rows))
}

/// An incremental update: `acc = acc − Σ sub + Σ add`, each lane wrapping (YaneuraOu's
/// `update_accumulator`). Wrapping arithmetic is associative, so the order of the rows
/// does not change the result.
#[inline]
pub fn update_i16<const N: usize>(
    s: IntSimd,
    acc: &mut [i16; N],
    sub: &[&[i16; N]],
    add: &[&[i16; N]],
) {
    dispatch!(s, accumulate, accumulate(acc, None, sub, add))
}

/// The feature transformer's output: `out[i] = clamp(acc[i], 0, 127)` as a byte.
#[inline]
pub fn clip_i16<const N: usize>(s: IntSimd, acc: &[i16; N], out: &mut [u8; N]) {
    dispatch!(s, clip_i16, clip_i16(acc.as_slice(), out.as_mut_slice()))
}

/// The clipped ReLU: `out[i] = clamp(y[i] >> 6, 0, 127)` (arithmetic shift, i.e. floor
/// division by 64; YaneuraOu's `ClippedReLU`, `layers/clipped_relu.h`).
#[inline]
pub fn crelu_i32<const N: usize>(s: IntSimd, y: &[i32; N], out: &mut [u8; N]) {
    dispatch!(s, crelu_i32, crelu_i32(y.as_slice(), out.as_mut_slice()))
}

/// An affine layer: `out = b + W x`, summed in 32 bits (wrapping). Inputs must be in
/// 0..=127 (every clipped activation is): above 127 the levels' intermediate 16-bit pair
/// sums could saturate and the levels would no longer agree.
#[inline]
pub fn affine(s: IntSimd, layer: &AffineI8, x: &[u8], out: &mut [i32]) {
    assert_eq!(x.len(), layer.inputs, "affine layer input width");
    assert_eq!(out.len(), layer.outputs, "affine layer output width");
    debug_assert!(
        x.iter().all(|&v| v <= 127),
        "affine inputs must be clipped to 0..=127"
    );
    let n = layer.outputs;
    dispatch!(s, affine, affine_vnni(layer, x, out, 0, n))
}

/// `Σ x[i]·w[i]` summed in 32 bits (wrapping); inputs in 0..=127 as for [`affine`].
#[inline]
pub fn dot_u8i8<const N: usize>(s: IntSimd, x: &[u8; N], w: &[i8; N]) -> i32 {
    debug_assert!(
        x.iter().all(|&v| v <= 127),
        "dot inputs must be clipped to 0..=127"
    );
    dispatch!(s, dot_u8i8, dot_u8i8_vnni(x.as_slice(), w.as_slice()))
}

/// An affine layer's int8 weights and int32 biases, its weights rearranged once for the
/// kernels: for each group of four inputs, the four weights of every output side by side
/// (`[inputs / 4][outputs][4]`), so one broadcast of four input bytes meets the columns of
/// many outputs in a single vector — the layout YaneuraOu's loader builds
/// (`get_weight_index_scrambled`, `layers/affine_transform.h`). Inputs beyond the last full
/// group are kept row-major in `tail`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffineI8 {
    inputs: usize,
    outputs: usize,
    groups: usize,
    packed: Vec<i8>,
    tail: Vec<i8>,
    biases: Vec<i32>,
}

impl AffineI8 {
    /// A layer from its row-major weights (`outputs × inputs`) and biases.
    ///
    /// # Panics
    /// If `weights.len() != outputs · inputs` or `biases.len() != outputs`.
    pub fn new(inputs: usize, outputs: usize, weights: &[i8], biases: &[i32]) -> AffineI8 {
        assert_eq!(
            weights.len(),
            inputs * outputs,
            "weights are outputs × inputs"
        );
        assert_eq!(biases.len(), outputs, "one bias per output");
        let groups = inputs / 4;
        let t = inputs - 4 * groups;
        let mut packed = vec![0i8; groups * outputs * 4];
        let mut tail = vec![0i8; outputs * t];
        for o in 0..outputs {
            for i in 0..inputs {
                let w = weights[o * inputs + i];
                if i < 4 * groups {
                    packed[((i / 4) * outputs + o) * 4 + i % 4] = w;
                } else {
                    tail[o * t + i - 4 * groups] = w;
                }
            }
        }
        AffineI8 {
            inputs,
            outputs,
            groups,
            packed,
            tail,
            biases: biases.to_vec(),
        }
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// The weight from input `i` to output `o`.
    pub fn weight(&self, o: usize, i: usize) -> i8 {
        if i < 4 * self.groups {
            self.packed[((i / 4) * self.outputs + o) * 4 + i % 4]
        } else {
            let t = self.inputs - 4 * self.groups;
            self.tail[o * t + i - 4 * self.groups]
        }
    }

    pub fn biases(&self) -> &[i32] {
        &self.biases
    }

    /// Adds the tail columns' products to outputs `from..to`.
    fn add_tail(&self, x: &[u8], out: &mut [i32], from: usize, to: usize) {
        let t = self.inputs - 4 * self.groups;
        if t == 0 {
            return;
        }
        let xt = &x[4 * self.groups..self.inputs];
        for (o, y) in (from..to).zip(&mut out[from..to]) {
            *y = y.wrapping_add(scalar::dot_u8i8(xt, &self.tail[o * t..(o + 1) * t]));
        }
    }
}

#[cfg(test)]
mod tests;
