//! Why an nn.bin could not be read or written, or weights could not be quantised: every
//! refusal of a file names the problem and the byte offset where it was found.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum NnueError {
    #[error("cannot access `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("truncated: {what} needs bytes {offset}..{end}, but the file ends at byte {len}")]
    Truncated {
        what: String,
        offset: u64,
        end: u64,
        len: u64,
    },
    #[error(
        "not a YaneuraOu NNUE file: version {found:#010x} at byte 0, expected {expected:#010x}"
    )]
    Version { found: u32, expected: u32 },
    #[error(
        "unknown NNUE architecture: hash {hash:#010x} at byte 4 is none of {known} \
         (the file's architecture string at byte 12: {string:?})"
    )]
    UnknownArchitecture {
        hash: u32,
        known: String,
        string: String,
    },
    #[error(
        "{what} hash {found:#010x} at byte {offset}, expected {expected:#010x} for {architecture}"
    )]
    LayerHash {
        what: &'static str,
        offset: u64,
        found: u32,
        expected: u32,
        architecture: String,
    },
    #[error(
        "{extra} unexpected bytes after the end of the {architecture} parameters at byte {offset}"
    )]
    TrailingBytes {
        offset: u64,
        extra: u64,
        architecture: String,
    },
    #[error(
        "{tensor}[{index}] = {value} (byte {offset}) does not survive conversion to f32 and back; \
         MNW1 stores f32, so this file cannot be imported exactly"
    )]
    Inexact {
        tensor: &'static str,
        index: usize,
        value: i64,
        offset: u64,
    },
    #[error("shape {shape} cannot be exported to YaneuraOu's NNUE: {reason}")]
    NotExportable { shape: String, reason: String },
    #[error(
        "tensor '{tensor}' value {index} is {value}, not a finite number: it has no integer form"
    )]
    NotFinite {
        tensor: String,
        index: usize,
        value: f32,
    },
    #[error(
        "this integer engine is compiled for shape {engine}, but the weights are for {weights}"
    )]
    ShapeMismatch { engine: String, weights: String },
    #[error("integer engine constants do not match shape {shape}: {what} (a bug in manaka_net!)")]
    Dims { shape: String, what: String },
    #[error(
        "values beyond nn.bin's integer types: {}; the integer engine would not evaluate as \
         the float net does. Train with this version's `manaka train`, which keeps `nnue` \
         shapes within these limits (docs/training.md), or write them clamped to the type \
         with --allow-saturation",
        saturated_list(.0)
    )]
    Saturated(Vec<super::Saturated>),
    #[error(transparent)]
    Weights(#[from] crate::weights::WeightsError),
}

/// `w1: 3 values (worst 2.5, limit ±1.984), …` for [`NnueError::Saturated`].
fn saturated_list(list: &[super::Saturated]) -> String {
    list.iter()
        .map(|s| {
            format!(
                "{}: {} value{} (worst {}, limit ±{:.4})",
                s.tensor,
                s.count,
                if s.count == 1 { "" } else { "s" },
                s.worst,
                s.limit
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
