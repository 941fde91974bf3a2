//! Why a shape name was refused: one variant per rule of SPEC §2.
//!
//! Written by hand (this crate has no dependencies). Every message names the offending token;
//! [`ShapeError::suggestion`] gives the spelling the user probably meant where there is one, and
//! the message ends with `did you mean `…`?` in that case.

use crate::shape::{FeatureSpace, TokenKind};
use std::fmt;

/// A shape name that SPEC §2 does not allow.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShapeError {
    /// The name is the empty string.
    Empty,
    /// Two `_` in a row, or a leading or trailing `_`; `index` counts tokens from 0.
    EmptyToken { index: usize },
    /// A token that is no token of the grammar (a misspelling, wrong case, a stray word).
    Unknown {
        token: String,
        suggestion: Option<String>,
    },
    /// A numeric token whose number is missing, not decimal, or has a leading zero.
    MalformedNumber {
        token: String,
        kind: TokenKind,
        suggestion: Option<String>,
    },
    /// A number outside the range SPEC §2 allows for its token.
    OutOfRange {
        token: String,
        kind: TokenKind,
        value: u64,
        min: u32,
        max: u32,
    },
    /// A token of a kind that already appeared (`kp` then `halfkp` counts: one feature space).
    Repeated {
        token: String,
        first: String,
        kind: TokenKind,
    },
    /// A token that comes before one it should follow; `suggestion` is the canonical order.
    OutOfOrder {
        token: String,
        after: String,
        suggestion: String,
    },
    /// One of the four required tokens `pairN_dN_oN_hN` is absent.
    Missing { kind: TokenKind },
    /// `lseN` reads out the last N pair channels, so it needs `N <= pair`.
    LseExceedsPair { lse: u32, pair: u32 },
    /// `split` is defined for native tokens only.
    SplitNeedsNative { features: FeatureSpace },
    /// `halfkp` with a pair table: T(T-1)/2 = 7.9 billion rows per channel.
    HalfKpWithPair { pair: u32 },
    /// `halfkp` with a square field: 125,388 × 81 × f values.
    HalfKpWithField { field: u32 },
    /// `nnue` needs `pair0`.
    NnueNeedsPair0 { pair: u32 },
    /// `nnue` needs `o1` (its accumulator is a plain sum).
    NnueNeedsO1 { order: u32 },
    /// `nnue` forbids `m`, `f`, `lse`, `ks` and `split`; `token` is the first one present.
    NnueForbids { token: String },
    /// `nnue` needs the `kp` or `halfkp` feature space.
    NnueNeedsKpFeatures,
    /// The weights would take more than `limit` bytes (16 GiB).
    TooLarge {
        name: String,
        bytes: u64,
        limit: u64,
    },
}

impl ShapeError {
    /// The spelling the user probably meant: a token (`halfkp` for `hlafkp`, `d128` for
    /// `d0128`) or, for tokens out of order, the whole canonical name. The proc macro shows it
    /// as a help line; the CLI prints it in the message.
    pub fn suggestion(&self) -> Option<&str> {
        match self {
            ShapeError::Unknown { suggestion, .. }
            | ShapeError::MalformedNumber { suggestion, .. } => suggestion.as_deref(),
            ShapeError::OutOfOrder { suggestion, .. } => Some(suggestion),
            _ => None,
        }
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Empty => write!(
                f,
                "empty shape name; a shape name is at least `pairN_dN_oN_hN`, e.g. `{}`",
                crate::Shape::BASELINE
            ),
            ShapeError::EmptyToken { index } => write!(
                f,
                "empty token at position {} (tokens are joined by single `_`, with none at \
                 either end)",
                index + 1
            ),
            ShapeError::Unknown { token, suggestion } => {
                write!(f, "unknown token `{token}`")?;
                if suggestion.is_none() {
                    f.write_str(
                        " (tokens are pairN dN oN hN h2N mN fN lseN ks split kp halfkp nnue)",
                    )?;
                }
                Ok(())
            }
            ShapeError::MalformedNumber { token, kind, .. } => {
                let prefix = kind.numeric().map_or("", |(p, _, _)| p);
                let digits = token.get(prefix.len()..).unwrap_or("");
                let what = if digits.is_empty() {
                    "has no number"
                } else if digits.bytes().all(|b| b.is_ascii_digit()) {
                    "has a leading zero"
                } else {
                    "is not a decimal number"
                };
                write!(f, "malformed token `{token}`: `{}` {what}", kind.spelling())
            }
            ShapeError::OutOfRange {
                token,
                kind,
                min,
                max,
                ..
            } => {
                let note = if *kind == TokenKind::Lse {
                    " and at most the pair width"
                } else {
                    ""
                };
                write!(
                    f,
                    "`{token}` is out of range: `{}` allows {min}..={max}{note}",
                    kind.spelling()
                )
            }
            ShapeError::Repeated { token, first, kind } => match kind {
                TokenKind::Features => write!(
                    f,
                    "`{token}` after `{first}`: a shape has at most one feature space"
                ),
                TokenKind::H => write!(
                    f,
                    "`{token}` repeats `hN` (already `{first}`); a second hidden layer is \
                     written `h2N`, e.g. `h2{}`",
                    token.get(1..).unwrap_or("")
                ),
                _ => write!(
                    f,
                    "`{token}` repeats `{}` (already `{first}`); each token may appear once",
                    kind.spelling()
                ),
            },
            ShapeError::OutOfOrder { token, after, .. } => write!(
                f,
                "tokens out of order: `{token}` must come before `{after}`"
            ),
            ShapeError::Missing { kind } => write!(
                f,
                "missing required token `{}` (every shape starts pairN_dN_oN_hN, e.g. `{}`)",
                kind.spelling(),
                crate::Shape::BASELINE
            ),
            ShapeError::LseExceedsPair { lse, pair } => write!(
                f,
                "`lse{lse}` exceeds `pair{pair}`: lse reads out the last N of the pair channels, \
                 so N must be at most {pair}"
            ),
            ShapeError::SplitNeedsNative { features } => write!(
                f,
                "`split` is defined for native tokens only, not `{features}` (drop `split` or \
                 the feature space)"
            ),
            ShapeError::HalfKpWithPair { pair } => write!(
                f,
                "`halfkp` forbids a pair table (`pair{pair}`): 125,388 tokens give 7.9 billion \
                 pairs; use `pair0`"
            ),
            ShapeError::HalfKpWithField { field } => write!(
                f,
                "`halfkp` forbids a square field (`f{field}`): its table would not fit in memory"
            ),
            ShapeError::NnueNeedsPair0 { pair } => {
                write!(f, "`nnue` requires `pair0`, not `pair{pair}`")
            }
            ShapeError::NnueNeedsO1 { order } => write!(
                f,
                "`nnue` requires `o1`, not `o{order}` (its accumulator is a plain sum)"
            ),
            ShapeError::NnueForbids { token } => write!(
                f,
                "`nnue` forbids `{token}` (NNUE arithmetic has no m, f, lse, ks or split)"
            ),
            ShapeError::NnueNeedsKpFeatures => write!(
                f,
                "`nnue` requires the `kp` or `halfkp` feature space (add one before `nnue`)"
            ),
            ShapeError::TooLarge { name, bytes, limit } => write!(
                f,
                "shape `{name}` is too large: its weights take {bytes} bytes ({:.2} GiB), over \
                 the limit of {limit} bytes ({:.0} GiB)",
                *bytes as f64 / (1u64 << 30) as f64,
                *limit as f64 / (1u64 << 30) as f64
            ),
        }?;
        if let Some(s) = self.suggestion() {
            write!(f, "; did you mean `{s}`?")?;
        }
        Ok(())
    }
}

impl std::error::Error for ShapeError {}
