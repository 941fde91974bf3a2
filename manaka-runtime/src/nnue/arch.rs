//! YaneuraOu's NNUE architectures that Manaka shapes can be: their hashes, architecture
//! strings and byte layout (docs/nnue.md has the same facts as a table, with sources).
//!
//! Every constant and formula here is YaneuraOu's (`source/eval/nnue/`):
//! - `kVersion = 0x7AF32F16` (`nnue_common.h`);
//! - feature hashes: HalfKP `0x5D69D5B9 ^ (king == Friend)` (`features/half_kp.h`), K
//!   `0xD3CEE169` (`features/k.h`), P `0x764CFB4B` (`features/p.h`); a set of two features
//!   `Head ^ (Tail << 1) ^ (Tail >> 31)` (`features/feature_set.h`);
//! - the feature transformer's hash `features ^ (2·d)` (`nnue_feature_transformer.h`);
//! - layer hashes: `InputSlice` `0xEC42E90D ^ (out ^ (offset << 10))` (`layers/input_slice.h`),
//!   `AffineTransform` `(0xCC03DAE4 + out) ^ (prev >> 1) ^ (prev << 31)`
//!   (`layers/affine_transform.h`, the same in `affine_transform_sparse_input.h`),
//!   `ClippedReLU` `0x538D24C7 + prev` (`layers/clipped_relu.h`), all in wrapping u32;
//! - the file's hash: feature transformer hash `^` network hash (`evaluate_nnue.h`).

use manaka_shapes::{FeatureSpace, Shape};
use std::fmt;

/// The file format version (`kVersion`).
pub const VERSION: u32 = 0x7AF3_2F16;

const HALF_KP_HASH: u32 = 0x5D69_D5B9;
const K_HASH: u32 = 0xD3CE_E169;
const P_HASH: u32 = 0x764C_FB4B;
const INPUT_SLICE_HASH: u32 = 0xEC42_E90D;
const AFFINE_HASH: u32 = 0xCC03_DAE4;
const CLIPPED_RELU_HASH: u32 = 0x538D_24C7;

/// An affine layer's input dimension padded as YaneuraOu stores its weight rows:
/// `CeilToMultiple(inputs, kMaxSimdWidth = 32)` (`layers/affine_transform.h`).
pub fn padded(inputs: usize) -> usize {
    inputs.div_ceil(32) * 32
}

/// The input feature sets Manaka's `kp` / `halfkp` token spaces reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureSet {
    /// `FeatureSet<HalfKP<Friend>>`: own king square × BonaPiece.
    HalfKp,
    /// `FeatureSet<K, P>`: BonaPieces (P) first, then both kings (K) offset by P's 1548
    /// dimensions — the order in which `FeatureSet` appends a tail before its head.
    Kp,
}

impl FeatureSet {
    /// `RawFeatures::kDimensions`: 81 × 1548, or 1548 + 162.
    pub fn dimensions(self) -> usize {
        match self {
            FeatureSet::HalfKp => 81 * 1548,
            FeatureSet::Kp => 1548 + 2 * 81,
        }
    }

    /// `RawFeatures::kHashValue`.
    pub fn hash(self) -> u32 {
        match self {
            // Friend: the XORed flag `AssociatedKing == Side::kFriend` is 1.
            FeatureSet::HalfKp => HALF_KP_HASH ^ 1,
            FeatureSet::Kp => K_HASH ^ (P_HASH << 1) ^ (P_HASH >> 31),
        }
    }

    /// `RawFeatures::GetName()`.
    pub fn name(self) -> &'static str {
        match self {
            FeatureSet::HalfKp => "HalfKP(Friend)",
            FeatureSet::Kp => "K+P",
        }
    }

    /// The shape token and architecture-name prefix: `halfkp` or `kp`.
    pub fn token(self) -> &'static str {
        match self {
            FeatureSet::HalfKp => "halfkp",
            FeatureSet::Kp => "kp",
        }
    }

    pub fn space(self) -> FeatureSpace {
        match self {
            FeatureSet::HalfKp => FeatureSpace::HalfKp,
            FeatureSet::Kp => FeatureSpace::Kp,
        }
    }
}

/// A network `features → d×2 → h1 → h2 → 1` with clipped ReLUs between, as YaneuraOu's
/// `architectures/*.h` define them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Architecture {
    pub features: FeatureSet,
    /// Feature transformer outputs per perspective (`kTransformedFeatureDimensions`).
    pub d: usize,
    pub h1: usize,
    pub h2: usize,
}

/// The architectures YaneuraOu ships headers for (`source/eval/nnue/architectures/`) whose
/// feature set Manaka has: `halfkp_256x2-32-32` (its default), `kp_256x2-32-32`,
/// `halfkp_512x2-16-32`, `halfkp_1024x2-8-32`, `halfkp_1024x2-8-64`.
pub const SHIPPED: [Architecture; 5] = [
    Architecture {
        features: FeatureSet::HalfKp,
        d: 256,
        h1: 32,
        h2: 32,
    },
    Architecture {
        features: FeatureSet::Kp,
        d: 256,
        h1: 32,
        h2: 32,
    },
    Architecture {
        features: FeatureSet::HalfKp,
        d: 512,
        h1: 16,
        h2: 32,
    },
    Architecture {
        features: FeatureSet::HalfKp,
        d: 1024,
        h1: 8,
        h2: 32,
    },
    Architecture {
        features: FeatureSet::HalfKp,
        d: 1024,
        h1: 8,
        h2: 64,
    },
];

/// Why a shape has no YaneuraOu NNUE form (the property that blocks export).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unrepresentable {
    /// Manaka arithmetic (RMS norms, power sums, ReLU) instead of SPEC §6's.
    NotNnue,
    /// Native tokens: YaneuraOu's features are BonaPiece based.
    NativeTokens,
    /// One hidden layer: every YaneuraOu architecture has two.
    NoSecondHidden,
    /// Sizes YaneuraOu has no architecture for.
    Sizes { name: String },
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unrepresentable::NotNnue => f.write_str(
                "it lacks the `nnue` token: only the NNUE arithmetic (SPEC §6: no RMS norms, clipped activations, \
                 linear value) has an integer form",
            ),
            Unrepresentable::NativeTokens => f.write_str(
                "its feature space is Manaka's native tokens: YaneuraOu's networks read `halfkp` or `kp` \
                 (BonaPiece) features",
            ),
            Unrepresentable::NoSecondHidden => f.write_str(
                "it has one hidden layer: YaneuraOu's architectures have two (add an `h2N` token, e.g. `h232`)",
            ),
            Unrepresentable::Sizes { name } => {
                let shipped: Vec<String> = SHIPPED.iter().map(Architecture::name).collect();
                write!(f, "{name} is not an architecture YaneuraOu ships (it has {})", shipped.join(", "))
            }
        }
    }
}

/// Wrapping u32 hash of `AffineTransform<Previous, out>`.
pub fn affine_hash(out: usize, previous: u32) -> u32 {
    (AFFINE_HASH.wrapping_add(out as u32)) ^ (previous >> 1) ^ (previous << 31)
}

/// Hash of `ClippedReLU<Previous>`.
pub fn clipped_relu_hash(previous: u32) -> u32 {
    CLIPPED_RELU_HASH.wrapping_add(previous)
}

/// Hash of `InputSlice<out, offset>`.
pub fn input_slice_hash(out: usize, offset: usize) -> u32 {
    INPUT_SLICE_HASH ^ (out as u32 ^ ((offset as u32) << 10))
}

/// One affine layer's dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerDims {
    pub inputs: usize,
    pub outputs: usize,
}

impl LayerDims {
    /// Bytes in the file: int32 biases, then int8 weights `outputs × padded(inputs)`.
    pub fn file_bytes(&self) -> usize {
        4 * self.outputs + self.outputs * padded(self.inputs)
    }
}

impl Architecture {
    /// YaneuraOu's name for it, e.g. `halfkp_256x2-32-32`.
    pub fn name(&self) -> String {
        format!(
            "{}_{}x2-{}-{}",
            self.features.token(),
            self.d,
            self.h1,
            self.h2
        )
    }

    /// The YaneuraOu architecture a Manaka shape is, or the property that prevents it.
    pub fn of_shape(shape: &Shape) -> Result<Architecture, Unrepresentable> {
        if !shape.nnue {
            return Err(Unrepresentable::NotNnue);
        }
        let features = match shape.features {
            FeatureSpace::HalfKp => FeatureSet::HalfKp,
            FeatureSpace::Kp => FeatureSet::Kp,
            FeatureSpace::Native => return Err(Unrepresentable::NativeTokens),
        };
        let Some(h2) = shape.h2 else {
            return Err(Unrepresentable::NoSecondHidden);
        };
        let arch = Architecture {
            features,
            d: shape.d as usize,
            h1: shape.h as usize,
            h2: h2 as usize,
        };
        if SHIPPED.contains(&arch) {
            Ok(arch)
        } else {
            Err(Unrepresentable::Sizes { name: arch.name() })
        }
    }

    /// The Manaka shape of this architecture, e.g. `pair0_d256_o1_h32_h232_halfkp_nnue`.
    pub fn shape(&self) -> Shape {
        let name = format!(
            "pair0_d{}_o1_h{}_h2{}_{}_nnue",
            self.d,
            self.h1,
            self.h2,
            self.features.token()
        );
        Shape::parse(&name).expect("every shipped architecture is a valid nnue shape")
    }

    /// The shipped architecture whose file hash is `hash`.
    pub fn from_hash(hash: u32) -> Option<Architecture> {
        SHIPPED.into_iter().find(|a| a.hash() == hash)
    }

    /// The three affine layers, input to output.
    pub fn layers(&self) -> [LayerDims; 3] {
        [
            LayerDims {
                inputs: 2 * self.d,
                outputs: self.h1,
            },
            LayerDims {
                inputs: self.h1,
                outputs: self.h2,
            },
            LayerDims {
                inputs: self.h2,
                outputs: 1,
            },
        ]
    }

    /// `FeatureTransformer::GetHashValue()`: the feature hash XOR the transformer's output
    /// dimensions (both perspectives, `2·d`).
    pub fn feature_transformer_hash(&self) -> u32 {
        self.features.hash() ^ (2 * self.d) as u32
    }

    /// `Network::GetHashValue()`: the output layer's hash, built up from the input slice.
    pub fn network_hash(&self) -> u32 {
        let [l1, l2, out] = self.layers();
        let mut h = input_slice_hash(2 * self.d, 0);
        h = clipped_relu_hash(affine_hash(l1.outputs, h));
        h = clipped_relu_hash(affine_hash(l2.outputs, h));
        affine_hash(out.outputs, h)
    }

    /// The file's header hash (`kHashValue`).
    pub fn hash(&self) -> u32 {
        self.feature_transformer_hash() ^ self.network_hash()
    }

    /// `GetArchitectureString()` of current YaneuraOu, whose first hidden layer is an
    /// `AffineTransformSparseInput` (older versions wrote `AffineTransform` there; the loader
    /// reads the string but checks only the version and hashes).
    pub fn string(&self) -> String {
        let [l1, l2, out] = self.layers();
        let input = format!("InputSlice[{0}(0:{0})]", 2 * self.d);
        let h1 = format!(
            "ClippedReLU[{}](AffineTransformSparseInput[{}<-{}]({input}))",
            l1.outputs, l1.outputs, l1.inputs
        );
        let h2 = format!(
            "ClippedReLU[{}](AffineTransform[{}<-{}]({h1}))",
            l2.outputs, l2.outputs, l2.inputs
        );
        let network = format!("AffineTransform[{}<-{}]({h2})", out.outputs, out.inputs);
        format!(
            "Features={}[{}->{}x2],Network={network}",
            self.features.name(),
            self.features.dimensions(),
            self.d
        )
    }

    /// Bytes of the feature transformer's parameters: int16 biases `d`, int16 weights
    /// `dimensions × d` (feature-major).
    pub fn feature_transformer_bytes(&self) -> usize {
        2 * self.d + 2 * self.d * self.features.dimensions()
    }

    /// The whole file's length with an architecture string of `string_len` bytes: header
    /// (version, hash, string length, string), transformer hash and parameters, network
    /// hash and the three layers.
    pub fn file_len(&self, string_len: usize) -> usize {
        12 + string_len
            + 4
            + self.feature_transformer_bytes()
            + 4
            + self
                .layers()
                .iter()
                .map(LayerDims::file_bytes)
                .sum::<usize>()
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
