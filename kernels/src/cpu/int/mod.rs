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
//!
//! Each kernel is one body (`body.rs`) over a small lane trait (`lanes.rs`: a register, its
//! loads, 16- and 32-bit adds, the u8 × i8 dot step, the clipping packs) with scalar, AVX2,
//! AVX-512 and AVX-512 VNNI implementations, and one thin `#[target_feature]` entry point
//! per level — the pattern of the f32 kernels (`cpu/body.rs`, `cpu/lanes.rs`). Every size
//! is a const parameter down to the loops.

mod body;
mod lanes;

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

// The entry points: per level, one thin function per kernel that enables the level's target
// features and runs the shared body (`body.rs`) with that level's lanes (`lanes.rs`). The
// body and the lane methods are `#[inline(always)]`, so each entry point compiles to one
// function with the intrinsics inlined and every size a constant.
macro_rules! entry_points {
    ($level:ident, $lanes:ty $(, $features:literal)?) => {
        mod $level {
            use super::{AffineI8, body};
            #[allow(unused_imports)]
            use super::lanes::*;

            $(#[target_feature(enable = $features)])?
            pub unsafe fn accumulate<const N: usize>(
                acc: &mut [i16; N],
                base: Option<&[i16; N]>,
                sub: &[&[i16; N]],
                add: &[&[i16; N]],
            ) {
                // SAFETY: the caller runs this level only on a CPU with its features.
                unsafe { body::accumulate::<$lanes, N>(acc, base, sub, add) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn clip_i16<const N: usize>(acc: &[i16; N], out: &mut [u8; N]) {
                // SAFETY: as above.
                unsafe { body::clip_i16::<$lanes, N>(acc, out) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn crelu_i32<const N: usize>(y: &[i32; N], out: &mut [u8; N]) {
                // SAFETY: as above.
                unsafe { body::crelu_i32::<$lanes, N>(y, out) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn affine<const IN: usize, const OUT: usize>(
                layer: &AffineI8<IN, OUT>,
                x: &[u8; IN],
                out: &mut [i32; OUT],
            ) {
                // SAFETY: as above.
                unsafe { body::affine::<$lanes, IN, OUT>(layer, x, out) }
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn quantize_input<const N: usize>(
                x: &[f32; N],
                u: &mut [u8; N],
                v: &mut [u8; N],
            ) -> super::quantized::InputSteps {
                // Plain Rust, vectorised by the compiler at this level's width.
                super::quantized::quantize_input(x, u, v)
            }

            $(#[target_feature(enable = $features)])?
            pub unsafe fn dot_u8i8<const N: usize>(x: &[u8; N], w: &[i8; N]) -> i32 {
                // SAFETY: as above.
                unsafe { body::dot_u8i8::<$lanes, N>(x, w) }
            }
        }
    };
}

entry_points!(scalar, Scalar);
#[cfg(target_arch = "x86_64")]
entry_points!(avx2, Avx2, "avx2");
#[cfg(target_arch = "x86_64")]
entry_points!(avx512, Avx512, "avx512f,avx512bw,avx2");
#[cfg(target_arch = "x86_64")]
entry_points!(avx512_vnni, Avx512Vnni, "avx512f,avx512bw,avx512vnni,avx2");

// Dispatch. The arms after `Scalar` are reachable only with a `Simd` made by
// `Simd::available()`, which checked AVX2 (and AVX-512 F/BW); `vnni` is set only after
// checking AVX-512 VNNI.
macro_rules! dispatch {
    ($s:expr, $f:ident ( $($arg:expr),* )) => {
        match ($s.simd.0, $s.vnni) {
            // SAFETY: the scalar level needs no CPU feature.
            (Level::Scalar, _) => unsafe { scalar::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports AVX2 (checked when this `Simd` was made).
            (Level::Avx2, _) => unsafe { avx2::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports AVX-512 F and BW (checked when this `Simd` was made).
            (Level::Avx512, false) => unsafe { avx512::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports AVX-512 F, BW and VNNI (checked by `IntSimd::new`).
            (Level::Avx512, true) => unsafe { avx512_vnni::$f($($arg),*) },
            #[cfg(not(target_arch = "x86_64"))]
            // SAFETY: as the scalar arm.
            _ => unsafe { scalar::$f($($arg),*) },
        }
    };
}

mod quantized;
pub use quantized::{
    InputSteps, QuantizedAffine, QuantizedScratch, int8_copy_bytes, quantize_input,
};

/// A refresh: `acc = bias + Σ rows`, each 16-bit lane wrapping (YaneuraOu's
/// `refresh_accumulator`, `nnue_feature_transformer.h`).
#[inline]
pub fn refresh_i16<const N: usize>(
    s: IntSimd,
    acc: &mut [i16; N],
    bias: &[i16; N],
    rows: &[&[i16; N]],
) {
    dispatch!(s, accumulate(acc, Some(bias), &[], rows))
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
    dispatch!(s, accumulate(acc, None, sub, add))
}

/// The feature transformer's output: `out[i] = clamp(acc[i], 0, 127)` as a byte.
#[inline]
pub fn clip_i16<const N: usize>(s: IntSimd, acc: &[i16; N], out: &mut [u8; N]) {
    dispatch!(s, clip_i16(acc, out))
}

/// The clipped ReLU: `out[i] = clamp(y[i] >> 6, 0, 127)` (arithmetic shift, i.e. floor
/// division by 64; YaneuraOu's `ClippedReLU`, `layers/clipped_relu.h`).
#[inline]
pub fn crelu_i32<const N: usize>(s: IntSimd, y: &[i32; N], out: &mut [u8; N]) {
    dispatch!(s, crelu_i32(y, out))
}

/// An affine layer: `out = b + W x`, summed in 32 bits (wrapping). Inputs must be in
/// 0..=127 (every clipped activation is): above 127 the levels' intermediate 16-bit pair
/// sums could saturate and the levels would no longer agree.
#[inline]
pub fn affine<const IN: usize, const OUT: usize>(
    s: IntSimd,
    layer: &AffineI8<IN, OUT>,
    x: &[u8; IN],
    out: &mut [i32; OUT],
) {
    debug_assert!(
        x.iter().all(|&v| v <= 127),
        "affine inputs must be clipped to 0..=127"
    );
    dispatch!(s, affine(layer, x, out))
}

/// [`quantize_input`] at level `s`, its loops vectorised at that level's width.
#[inline]
pub fn quantize<const N: usize>(
    s: IntSimd,
    x: &[f32; N],
    u: &mut [u8; N],
    v: &mut [u8; N],
) -> InputSteps {
    dispatch!(s, quantize_input(x, u, v))
}

/// `Σ x[i]·w[i]` summed in 32 bits (wrapping); inputs in 0..=127 as for [`affine`].
#[inline]
pub fn dot_u8i8<const N: usize>(s: IntSimd, x: &[u8; N], w: &[i8; N]) -> i32 {
    debug_assert!(
        x.iter().all(|&v| v <= 127),
        "dot inputs must be clipped to 0..=127"
    );
    dispatch!(s, dot_u8i8(x, w))
}

/// An affine layer's int8 weights and int32 biases, `OUT` outputs of `IN` inputs, its
/// weights rearranged once for the kernels: for each group of four inputs, the four weights
/// of every output side by side, so one broadcast of four input bytes meets the columns of
/// many outputs in a single register — the layout YaneuraOu's loader builds
/// (`get_weight_index_scrambled`, `layers/affine_transform.h`) — in tiles of [`TILE`]
/// outputs: tile `t` holds `[IN / 4][its outputs][4]`, contiguous, so a register block (at
/// most a tile wide, never across one) streams its weights in order. With `OUT ≤ TILE`
/// (every NNUE layer) this is exactly YaneuraOu's layout. The `IN % 4` inputs beyond the last
/// full group are kept per output in `tail`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffineI8<const IN: usize, const OUT: usize> {
    /// `IN / 4 · OUT` groups of four weights, tile by tile ([`AffineI8::group`]).
    packed: Vec<[i8; 4]>,
    /// One row per output when `IN % 4 != 0` (its first `IN % 4` bytes used), else none.
    tail: Vec<[i8; 4]>,
    biases: [i32; OUT],
}

/// The outputs of one tile of [`AffineI8`]'s layout: the widest register block, four
/// AVX-512 registers of sixteen 32-bit sums.
pub const TILE: usize = 64;

impl<const IN: usize, const OUT: usize> AffineI8<IN, OUT> {
    /// Where output `o`'s tile starts in `packed` (in groups) and how many outputs it has.
    #[inline(always)]
    fn tile(o: usize) -> (usize, usize) {
        let first = o / TILE * TILE;
        (first * (IN / 4), TILE.min(OUT - first))
    }

    /// The index in `packed` of input group `g`'s four weights of output `o`.
    #[inline(always)]
    fn group(g: usize, o: usize) -> usize {
        let (start, width) = Self::tile(o);
        start + g * width + o % TILE
    }

    /// A layer from its row-major weights (`outputs × inputs`) and biases.
    ///
    /// # Panics
    /// If `inputs != IN`, `outputs != OUT`, `weights.len() != OUT · IN` or
    /// `biases.len() != OUT`.
    pub fn new(inputs: usize, outputs: usize, weights: &[i8], biases: &[i32]) -> Self {
        assert_eq!((inputs, outputs), (IN, OUT), "the layer is IN → OUT");
        assert_eq!(weights.len(), IN * OUT, "weights are outputs × inputs");
        let biases: [i32; OUT] = biases.try_into().expect("one bias per output");
        let mut packed = vec![[0i8; 4]; IN / 4 * OUT];
        let mut tail = vec![[0i8; 4]; if IN.is_multiple_of(4) { 0 } else { OUT }];
        for (o, row) in weights.chunks_exact(IN).enumerate() {
            for (i, &w) in row.iter().enumerate() {
                if i / 4 < IN / 4 {
                    packed[Self::group(i / 4, o)][i % 4] = w;
                } else {
                    tail[o][i % 4] = w;
                }
            }
        }
        AffineI8 {
            packed,
            tail,
            biases,
        }
    }

    pub fn inputs(&self) -> usize {
        IN
    }

    pub fn outputs(&self) -> usize {
        OUT
    }

    /// The weight from input `i` to output `o`.
    pub fn weight(&self, o: usize, i: usize) -> i8 {
        if i / 4 < IN / 4 {
            self.packed[Self::group(i / 4, o)][i % 4]
        } else {
            self.tail[o][i % 4]
        }
    }

    pub fn biases(&self) -> &[i32; OUT] {
        &self.biases
    }
}

#[cfg(test)]
mod tests;
