//! Where the engine's network comes from: the one place that turns the `EvalFile` option
//! into an evaluator factory.
//!
//! [`load_network`] is the plug-in point for the real networks: an MNW1 file through the
//! reference evaluator (or a compiled engine for its shape), and, with no file, the embedded
//! default shape `pair16_d128_o3_h512` with seeded random weights until trained weights
//! exist. Until that is wired in, it answers with the built-in material evaluator and says
//! so. [`resolve`] handles what the engine understands besides file paths
//! (`builtin:material`) and then calls [`load_network`].

use crate::eval::{EvaluatorFactory, MaterialEvaluator};
use std::path::Path;
use std::sync::Arc;

/// A loaded network: a factory for its evaluators and a one-line description for
/// `info string` (the shape, the file or "embedded default", whether the weights are random).
pub struct LoadedNetwork {
    pub factory: Arc<dyn EvaluatorFactory>,
    pub description: String,
}

/// Why a network could not be loaded (a weights error, an I/O error, ...).
pub type LoadError = Box<dyn std::error::Error + Send + Sync>;

/// The `EvalFile` value selecting the built-in material evaluator (tests, baselines).
pub const BUILTIN_MATERIAL: &str = "builtin:material";

/// The shape the engine runs when no `EvalFile` is set.
pub const DEFAULT_SHAPE: &str = "pair16_d128_o3_h512";

/// Loads the network for an `EvalFile` value: empty (or `<empty>`) for the embedded
/// default, [`BUILTIN_MATERIAL`], or a weight-file path.
pub fn resolve(eval_file: &str) -> Result<LoadedNetwork, LoadError> {
    match eval_file.trim() {
        "" | "<empty>" => load_network(None),
        BUILTIN_MATERIAL => Ok(material(
            "EvalFile builtin:material: material evaluator, uniform policy",
        )),
        path => load_network(Some(Path::new(path))),
    }
}

/// Loads a weight file, or the embedded default network when `eval_file` is `None`.
///
/// PLUG-IN POINT: replace the body with the reference evaluator (`crate::reference`) behind
/// an [`EvaluatorFactory`] sharing the mapped weights — `None` →
/// `"EvalFile not set: embedded default pair16_d128_o3_h512, random weights"`, `Some(path)`
/// → the file's shape and path. Errors are reported by the engine as `info string` and it
/// falls back to the default.
pub fn load_network(eval_file: Option<&Path>) -> Result<LoadedNetwork, LoadError> {
    match eval_file {
        None => Ok(material(&format!(
            "EvalFile not set: built-in material evaluator (the embedded default {DEFAULT_SHAPE} is not wired in yet)"
        ))),
        Some(path) => {
            let meta = std::fs::metadata(path)
                .map_err(|e| format!("cannot open '{}': {e}", path.display()))?;
            if !meta.is_file() {
                return Err(format!("'{}' is not a file", path.display()).into());
            }
            Err(format!(
                "'{}': loading MNW1 weight files is not wired into the engine yet",
                path.display()
            )
            .into())
        }
    }
}

fn material(description: &str) -> LoadedNetwork {
    LoadedNetwork {
        factory: MaterialEvaluator::factory(),
        description: description.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_builtin_default_and_refuses_missing_files() {
        let m = resolve(BUILTIN_MATERIAL).unwrap();
        assert!(m.description.contains("material"));
        assert!(m.factory.name().contains("material"));
        assert!(
            resolve("")
                .unwrap()
                .description
                .starts_with("EvalFile not set")
        );
        assert!(resolve("<empty>").is_ok());
        let e = resolve("/no/such/file.mnw").err().unwrap().to_string();
        assert!(e.contains("/no/such/file.mnw"), "{e}");
    }
}
