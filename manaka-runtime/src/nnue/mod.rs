//! NNUE interoperability with YaneuraOu: its nn.bin format both ways, and integer inference
//! in its arithmetic (docs/nnue.md).
//!
//! - [`arch`]: the architectures (`halfkp_256x2-32-32`, `kp_256x2-32-32`, …), their hashes,
//!   architecture strings and byte layout, and which Manaka shapes they are.
//! - [`quant`]: SPEC §6's float network ⇄ YaneuraOu's integers ([`IntWeights`]).
//! - [`file`](mod@file): reading and writing nn.bin.
//! - [`IntNet`]: the integer engine of any `nnue` shape, a [`crate::network::Network`];
//!   `manaka_net!` names it `IntEngine` in every `nnue` shape's module.
//!
//! ```no_run
//! use manaka_runtime::nnue;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // nn.bin → MNW1 (float tensors that quantise back to the file's integers exactly) …
//! let imported = nnue::import("nn.bin".as_ref())?;
//! manaka_runtime::weights::write_file("net.mnw".as_ref(), &imported.weights)?;
//! // … and back.
//! let file = manaka_runtime::weights::WeightFile::open("net.mnw".as_ref())?;
//! let report = nnue::export(&file, "nn2.bin".as_ref(), nnue::Saturation::Refuse)?;
//! assert_eq!(report.bytes, 64_217_077);
//! # Ok(()) }
//! ```

pub mod arch;
#[cfg(test)]
pub(crate) mod bounds;
mod error;
pub mod file;
mod int_net;
pub mod quant;

pub use arch::{Architecture, FeatureSet, Unrepresentable};
pub use error::NnueError;
pub use file::NnueFile;
pub use int_net::{IntNet, IntState};
pub use quant::{IntWeights, Saturated, float_limit};

use crate::weights::{TensorSource, WeightSet};
use std::path::Path;

/// What [`export`] wrote.
#[derive(Clone, Debug)]
pub struct ExportReport {
    pub architecture: Architecture,
    pub bytes: u64,
    /// Tensors with values beyond the integer types, written as the nearest integer
    /// ([`Saturation::Allow`] only; none for weights the trainer kept in their limits).
    pub saturated: Vec<Saturated>,
    /// Policy tensors the file has no place for (all but zero ones are dropped).
    pub dropped: Vec<&'static str>,
}

/// What [`export`] does with values beyond their integer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Saturation {
    /// Write nothing: the error names each tensor, how many values and the worst. The
    /// integer engine would not evaluate as the float net does (issue 19: 919 cp apart).
    Refuse,
    /// Write them as the type's nearest value, and list them in the report.
    Allow,
}

/// Quantises `source` (a shape YaneuraOu can represent) and writes it as an nn.bin at
/// `path`; values beyond their integer type are refused or clamped as `saturation` says.
/// The policy tensors are dropped: NNUE files have no policy.
pub fn export(
    source: &dyn TensorSource,
    path: &Path,
    saturation: Saturation,
) -> Result<ExportReport, NnueError> {
    let shape = *source.shape();
    let architecture =
        Architecture::of_shape(&shape).map_err(|reason| NnueError::NotExportable {
            shape: shape.to_string(),
            reason: reason.to_string(),
        })?;
    let (ints, saturated) = IntWeights::quantise(source)?;
    if saturation == Saturation::Refuse && !saturated.is_empty() {
        return Err(NnueError::Saturated(saturated));
    }
    let bytes = file::write(path, &ints)?;
    let dropped = ["policy.w", "policy.b", "policy.from"]
        .into_iter()
        .filter(|name| {
            source
                .tensor(name)
                .is_some_and(|v| v.iter().any(|&x| x != 0.0))
        })
        .collect();
    Ok(ExportReport {
        architecture,
        bytes,
        saturated,
        dropped,
    })
}

/// An nn.bin as Manaka weights.
#[derive(Clone, Debug)]
pub struct Imported {
    pub file: NnueFile,
    /// The float tensors (policy all zero); they quantise back to `file`'s integers exactly.
    pub weights: WeightSet,
}

/// Reads the nn.bin at `path` and dequantises it into the float tensors of its shape, after
/// checking that every value survives the round trip through f32 (else the value, its
/// tensor and its byte offset are the error).
pub fn import(path: &Path) -> Result<Imported, NnueError> {
    let file = file::read(path)?;
    import_file(file)
}

/// [`import`] of an nn.bin already in memory.
pub fn import_bytes(bytes: &[u8]) -> Result<Imported, NnueError> {
    import_file(file::decode(bytes)?)
}

fn import_file(file: NnueFile) -> Result<Imported, NnueError> {
    if let Some((tensor, index, value)) = file.weights.first_inexact() {
        let offset = file::offset_of(&file.architecture, file.string.len(), tensor, index);
        return Err(NnueError::Inexact {
            tensor,
            index,
            value,
            offset,
        });
    }
    let weights = file.weights.dequantise();
    Ok(Imported { file, weights })
}

#[cfg(test)]
mod tests;
