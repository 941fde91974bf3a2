//! Network weights: MNW1 version 5 files (SPEC §7), in memory and on disk.
//!
//! Everything that reads weights — the reference evaluator, compiled engines, the CUDA
//! executor, a trainer — reads them through [`TensorSource`], by the names of
//! [`Shape::tensors`]; two implementations exist:
//!
//! - [`WeightFile`]: a verified file, memory-mapped, tensors as zero-copy `&[f32]` views;
//! - [`WeightSet`]: owned tensors (random initialisation, training, tests).
//!
//! [`WeightWriter`] writes a file streaming and atomically; [`init`] makes reproducible random
//! weights from a seed; [`widen`] grows trained weights into wider hidden layers. See
//! `docs/weights.md` for the layout and the checks.
//!
//! ```no_run
//! use manaka_runtime::weights::{self, TensorSource, WeightFile};
//! use manaka_shapes::Shape;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let shape = Shape::parse("pair16_d128_o3_h512")?;
//! let random = weights::init::random_weights(&shape, 1);
//! weights::write_file("net.mnw".as_ref(), &random)?;
//! let file = WeightFile::open_expecting("net.mnw".as_ref(), &shape)?;
//! assert_eq!(file.tensor("b1"), random.tensor("b1"));
//! # Ok(()) }
//! ```

mod error;
pub mod format;
pub mod init;
mod reader;
mod widen;
mod writer;

pub use error::WeightsError;
pub use reader::WeightFile;
pub use widen::widen;
pub(crate) use writer::sync_dir;
pub use writer::{StagedWeights, WeightWriter, encode, write_file, write_file_staged};

use manaka_shapes::{Shape, TensorSpec};

// Tensors are read and written as the in-memory f32 bytes; MNW1 is little-endian.
#[cfg(not(target_endian = "little"))]
compile_error!("MNW1 weights are read zero-copy and need a little-endian target");

/// Named f32 tensors of one shape, as listed by [`Shape::tensors`].
pub trait TensorSource {
    /// The shape whose tensors these are.
    fn shape(&self) -> &Shape;

    /// The values of tensor `name` (row-major), or `None` if the shape has no such tensor.
    fn tensor(&self, name: &str) -> Option<&[f32]>;

    /// [`TensorSource::tensor`], with a missing tensor as an error that names it.
    fn require(&self, name: &str) -> Result<&[f32], WeightsError> {
        self.tensor(name).ok_or_else(|| WeightsError::NoSuchTensor {
            name: name.to_string(),
            shape: self.shape().to_string(),
        })
    }
}

/// Owned weights: one `Vec<f32>` per tensor of the shape, in table order.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightSet {
    shape: Shape,
    specs: Vec<TensorSpec>,
    data: Vec<Vec<f32>>,
}

impl WeightSet {
    /// Weights from one vector per tensor, in the order of [`Shape::tensors`]; every length
    /// is checked.
    pub fn new(shape: &Shape, data: Vec<Vec<f32>>) -> Result<WeightSet, WeightsError> {
        let specs = shape.tensors();
        for (spec, values) in specs.iter().zip(&data) {
            if values.len() as u64 != spec.numel() {
                return Err(WeightsError::WrongLength {
                    tensor: spec.name.clone(),
                    expected: spec.numel(),
                    found: values.len() as u64,
                });
            }
        }
        if let Some(missing) = specs.get(data.len()) {
            return Err(WeightsError::MissingTensor {
                name: missing.name.clone(),
                count: u32::try_from(data.len()).unwrap_or(u32::MAX),
                expected: specs.len(),
                shape: shape.to_string(),
            });
        }
        if data.len() > specs.len() {
            return Err(WeightsError::TooMuchData {
                shape: shape.to_string(),
            });
        }
        Ok(WeightSet {
            shape: *shape,
            specs,
            data,
        })
    }

    /// All-zero weights (a starting point to fill in place).
    pub fn zeros(shape: &Shape) -> WeightSet {
        let specs = shape.tensors();
        let data = specs
            .iter()
            .map(|s| vec![0.0; usize::try_from(s.numel()).unwrap_or(0)])
            .collect();
        WeightSet {
            shape: *shape,
            specs,
            data,
        }
    }

    /// A copy of every tensor of `source` (e.g. a mapped file, to train on).
    pub fn from_source(source: &dyn TensorSource) -> Result<WeightSet, WeightsError> {
        let shape = *source.shape();
        let data = shape
            .tensors()
            .iter()
            .map(|spec| source.require(&spec.name).map(<[f32]>::to_vec))
            .collect::<Result<Vec<_>, _>>()?;
        WeightSet::new(&shape, data)
    }

    /// Mutable values of tensor `name`.
    pub fn tensor_mut(&mut self, name: &str) -> Option<&mut [f32]> {
        let index = self.specs.iter().position(|s| s.name == name)?;
        self.data.get_mut(index).map(Vec::as_mut_slice)
    }

    /// Each tensor with its values, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (&TensorSpec, &[f32])> {
        self.specs.iter().zip(self.data.iter().map(Vec::as_slice))
    }
}

impl TensorSource for WeightSet {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn tensor(&self, name: &str) -> Option<&[f32]> {
        let index = self.specs.iter().position(|s| s.name == name)?;
        self.data.get(index).map(Vec::as_slice)
    }
}
