//! What can go wrong while training, each with enough context to act on.

use crate::data::DataError;
use crate::weights::WeightsError;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TrainError {
    #[error(transparent)]
    Weights(#[from] WeightsError),
    #[error(transparent)]
    Data(#[from] DataError),
    /// Weights the trainer cannot start from (non-finite values, non-positive lse channels).
    #[error("bad weights: {0}")]
    BadWeights(String),
    /// A sample that cannot be turned into a training example (named by file and index).
    #[error("{0}")]
    BadSample(String),
    #[error("{}: {reason}", path.display())]
    Checkpoint { path: PathBuf, reason: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Settings that cannot work together (the text says which and why).
    #[error("{0}")]
    Config(String),
    /// The loss or the weights became NaN or infinite.
    #[error("{0}")]
    Diverged(String),
}
