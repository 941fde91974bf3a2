//! Where the engine's network comes from: the one place that turns the `EvalFile` option
//! into an evaluator factory.
//!
//! A weight file is memory-mapped once and shared by every evaluator the factory makes (one
//! per search thread). Its shape picks the evaluator: the compiled engine for that shape when
//! the binary has one (the [`CompiledHook`] the caller passes — the `manaka` CLI passes its
//! compiled-in shapes), else the reference evaluator, which runs any valid shape, slowly.
//! With no file the engine runs the embedded default: a `pair0_d128_o2_h256_kp` network
//! trained on fairy-stockfish-labelled self-play positions (`nets/default.mnw`, 3.7 MB,
//! built into the binary; the recipe is in docs/training.md).
//!
//! `EvalFile` takes an MNW1 file or a YaneuraOu nn.bin, told apart by their first bytes (an
//! nn.bin is converted at load, see [`is_nn_bin`]).
//!
//! With the `Backend` option at `cuda` ([`resolve_backend`]) the same weights go to the GPU
//! (docs/gpu.md) when the binary has the `cuda` feature and the machine a driver, a device
//! and NVRTC; otherwise the CPU network above runs and the description says why.

use super::options::Backend;
use crate::eval::{EvaluatorFactory, FnFactory, MaterialEvaluator};
use crate::nnue;
use crate::reference::{ReferenceEvaluator, ReferenceNet};
use crate::weights::{TensorSource, WeightFile};
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock};

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
pub const DEFAULT_SHAPE: &str = "pair0_d128_o2_h256_kp";

/// The embedded default network: an MNW1 file of shape [`DEFAULT_SHAPE`] trained as
/// docs/training.md describes.
static DEFAULT_NET: &[u8] = include_bytes!("../../nets/default.mnw");

/// The embedded default, verified once (checksum, tensor table) and shared by every load.
pub fn default_weights() -> Result<Arc<WeightFile>, LoadError> {
    static VERIFIED: OnceLock<Result<Arc<WeightFile>, String>> = OnceLock::new();
    VERIFIED
        .get_or_init(|| {
            WeightFile::from_bytes(DEFAULT_NET)
                .map(Arc::new)
                .map_err(|e| format!("the embedded default network is damaged: {e}"))
        })
        .clone()
        .map_err(Into::into)
}

/// Builds a compiled engine's evaluator factory for weights whose shape the binary has
/// compiled in; `None` for any other shape (the reference evaluator is used then).
pub type CompiledHook = dyn Fn(Arc<dyn TensorSource + Send + Sync>) -> Option<Result<Arc<dyn EvaluatorFactory>, LoadError>>
    + Send
    + Sync;

/// A [`CompiledHook`] borrowed for one load (it may borrow local state).
pub type Hook<'a> = dyn Fn(Arc<dyn TensorSource + Send + Sync>) -> Option<Result<Arc<dyn EvaluatorFactory>, LoadError>>
    + 'a;

/// Loads the network for an `EvalFile` value with the reference evaluator only: empty (or
/// `<empty>`) for the embedded default, [`BUILTIN_MATERIAL`], or a weight-file path.
pub fn resolve(eval_file: &str) -> Result<LoadedNetwork, LoadError> {
    resolve_with(eval_file, &|_| None)
}

/// As [`resolve`], preferring a compiled engine from `compiled` for the file's shape.
pub fn resolve_with(eval_file: &str, compiled: &Hook<'_>) -> Result<LoadedNetwork, LoadError> {
    match eval_file.trim() {
        "" | "<empty>" => load_network(None, compiled),
        BUILTIN_MATERIAL => Ok(material(
            "EvalFile builtin:material: material evaluator, uniform policy",
        )),
        path => load_network(Some(Path::new(path)), compiled),
    }
}

/// Loads the network for an `EvalFile` value with `integer`'s engine for its shape (the
/// integer engines of `nnue` shapes); a shape without one runs `compiled`'s float engine (or
/// the reference evaluator), and the description says so.
pub fn resolve_integer(
    eval_file: &str,
    integer: &CompiledHook,
    compiled: &CompiledHook,
) -> Result<LoadedNetwork, LoadError> {
    // One load: the integer hook first, the float engine for shapes it does not have.
    let float_shape = OnceLock::new();
    let hook = |source: Arc<dyn TensorSource + Send + Sync>| {
        integer(source.clone()).or_else(|| {
            let _ = float_shape.set(source.shape().to_string());
            compiled(source)
        })
    };
    let mut network = resolve_with(eval_file, &hook)?;
    if let Some(shape) = float_shape.get() {
        network.description = format!(
            "Backend integer: shape {shape} has no integer engine (only compiled-in nnue \
             shapes have one); running the float engine. {}",
            network.description
        );
    }
    Ok(network)
}

/// Loads the network for `eval_file` on `backend`: `cpu` is the CPU loader (e.g. the
/// engine's [`resolve_with`]); with [`Backend::Cuda`] the weights go to the GPU, and when
/// CUDA cannot run them the CPU network is returned with the reason in its description
/// (printed as `info string`). The CUDA evaluators fall back to `cpu`'s if the device fails
/// later.
pub fn resolve_backend(
    eval_file: &str,
    backend: Backend,
    cpu: &dyn Fn(&str) -> Result<LoadedNetwork, LoadError>,
) -> Result<LoadedNetwork, LoadError> {
    if backend == Backend::Integer {
        let mut network = cpu(eval_file)?;
        network.description = format!(
            "Backend integer unavailable: this engine has no integer engines; running the \
             float engine. {}",
            network.description
        );
        return Ok(network);
    }
    if backend == Backend::Cpu {
        return cpu(eval_file);
    }
    let network = cpu(eval_file);
    let why = match eval_file.trim() {
        BUILTIN_MATERIAL => "the material evaluator has no network to run on a GPU".to_string(),
        file => {
            let path = (!file.is_empty() && file != "<empty>").then(|| Path::new(file));
            let fallback = network.as_ref().ok().map(|n| n.factory.clone());
            match cuda_network(path, fallback) {
                Ok(n) => return Ok(n),
                Err(e) => e,
            }
        }
    };
    let mut network = network?;
    network.description = format!(
        "Backend cuda unavailable: {why}; running on the CPU. {}",
        network.description
    );
    Ok(network)
}

/// The CUDA network for `eval_file` (`None`: the embedded default), with `fallback`'s
/// evaluators taking over on a device failure; or why not.
fn cuda_network(
    eval_file: Option<&Path>,
    fallback: Option<Arc<dyn EvaluatorFactory>>,
) -> Result<LoadedNetwork, String> {
    let (source, origin) = weights_source(eval_file).map_err(|e| e.to_string())?;
    let factory = cuda_factory(source, fallback)?;
    let description = format!("{origin}, {}", factory.name());
    Ok(LoadedNetwork {
        factory,
        description,
    })
}

#[cfg(feature = "cuda")]
fn cuda_factory(
    source: Arc<dyn TensorSource + Send + Sync>,
    fallback: Option<Arc<dyn EvaluatorFactory>>,
) -> Result<Arc<dyn EvaluatorFactory>, String> {
    crate::cuda::factory(source, fallback).map_err(|e| e.to_string())
}

#[cfg(not(feature = "cuda"))]
fn cuda_factory(
    _source: Arc<dyn TensorSource + Send + Sync>,
    _fallback: Option<Arc<dyn EvaluatorFactory>>,
) -> Result<Arc<dyn EvaluatorFactory>, String> {
    Err("this binary was built without the `cuda` feature".to_string())
}

/// The weights for `eval_file` (`None`: the embedded default) and where they came from.
fn weights_source(
    eval_file: Option<&Path>,
) -> Result<(Arc<dyn TensorSource + Send + Sync>, String), LoadError> {
    Ok(match eval_file {
        None => (
            default_weights()?,
            format!("EvalFile not set: embedded default {DEFAULT_SHAPE}, trained"),
        ),
        Some(path) if is_nn_bin(path) => {
            // YaneuraOu's nn.bin, recognised by its header: converted at load into the float
            // tensors of its shape, which quantise back to the file's integers exactly (so
            // `Backend integer` evaluates as YaneuraOu does).
            let imported = nnue::import(path)
                .map_err(|e| format!("cannot load '{}' as an nn.bin: {e}", path.display()))?;
            let origin = format!(
                "EvalFile {}: YaneuraOu nn.bin ({}), converted to shape {}",
                path.display(),
                imported.file.architecture.name(),
                imported.weights.shape()
            );
            (Arc::new(imported.weights), origin)
        }
        Some(path) => {
            let file = WeightFile::open(path).map_err(|e| {
                format!(
                    "cannot load '{}': {e} (EvalFile takes an MNW1 weight file or a \
                     YaneuraOu nn.bin)",
                    path.display()
                )
            })?;
            let origin = format!("EvalFile {}: shape {}", path.display(), file.shape());
            (Arc::new(file), origin)
        }
    })
}

/// Whether the file at `path` starts like a YaneuraOu nn.bin (its version word,
/// [`nnue::arch::VERSION`]); unreadable files are left to the MNW1 reader's error.
pub fn is_nn_bin(path: &Path) -> bool {
    let mut head = [0u8; 4];
    // Only a regular file is opened (a FIFO would block); the rest go to the MNW1 reader,
    // which says what they are.
    crate::data::io::open_regular(path)
        .and_then(|(mut f, _)| f.read_exact(&mut head))
        .is_ok_and(|()| u32::from_le_bytes(head) == nnue::arch::VERSION)
}

/// Loads a weight file, or the embedded default network when `eval_file` is `None`.
pub fn load_network(
    eval_file: Option<&Path>,
    compiled: &Hook<'_>,
) -> Result<LoadedNetwork, LoadError> {
    let (source, origin) = weights_source(eval_file)?;
    let shape = source.shape().to_string();
    if let Some(factory) = compiled(source.clone()) {
        let factory = factory?;
        let description = format!("{origin}, {}", factory.name());
        return Ok(LoadedNetwork {
            factory,
            description,
        });
    }
    let net = ReferenceNet::new(source).map_err(|e| format!("weights for {shape}: {e}"))?;
    let factory: Arc<dyn EvaluatorFactory> =
        Arc::new(FnFactory::new(format!("{shape} (reference)"), move || {
            Box::new(ReferenceEvaluator::new(net.clone()))
        }));
    let description = format!(
        "{origin}, reference evaluator (shape {shape} is not compiled into this binary; slow)"
    );
    Ok(LoadedNetwork {
        factory,
        description,
    })
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
        let d = resolve("").unwrap().description;
        assert!(
            d.starts_with("EvalFile not set: embedded default pair0_d128_o2_h256_kp, trained"),
            "{d}"
        );
        let e = resolve("/no/such/file.mnw").err().unwrap().to_string();
        assert!(e.contains("/no/such/file.mnw"), "{e}");
    }

    /// Backend cuda on a machine where CUDA cannot run (no driver in CI, or no `cuda`
    /// feature) loads the CPU network and says why; a CPU backend never mentions CUDA.
    #[test]
    fn backend_cuda_without_a_gpu_runs_the_cpu_and_says_why() {
        let m = resolve_backend(BUILTIN_MATERIAL, Backend::Cuda, &resolve).unwrap();
        assert!(
            m.description
                .starts_with("Backend cuda unavailable: the material evaluator"),
            "{}",
            m.description
        );
        assert!(m.factory.name().contains("material"));
        let cpu = resolve_backend("", Backend::Cpu, &resolve).unwrap();
        assert!(!cpu.description.contains("cuda"), "{}", cpu.description);
        #[cfg(feature = "cuda")]
        if crate::cuda::probe().is_ok() {
            return; // a machine with a GPU runs the CUDA network (scripts/gpu-check.sh)
        }
        let d = resolve_backend("", Backend::Cuda, &resolve).unwrap();
        assert!(
            d.description.starts_with("Backend cuda unavailable: "),
            "{}",
            d.description
        );
        assert!(
            d.description
                .contains("running on the CPU. EvalFile not set"),
            "{}",
            d.description
        );
        let e = resolve_backend("/no/such/file.mnw", Backend::Cuda, &resolve)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/no/such/file.mnw"), "{e}");
    }

    /// Whether a network plays like a trained one: it sees an extra rook from either side's
    /// point of view, calls the start position roughly even, and its policy puts a standard
    /// opening move (2g2f, 7g7f) first there. `Err` names the first check that fails.
    fn looks_trained(source: Arc<dyn TensorSource + Send + Sync>) -> Result<(), String> {
        let net = ReferenceNet::new(source)?;
        let value = |sfen: &str| {
            let pos = crate::shogi::Position::from_sfen(sfen).unwrap();
            let moves = pos.legal_moves();
            let out = net.evaluate_position(&pos, &moves);
            let best = (0..moves.len())
                .max_by(|&a, &b| out.policy[a].total_cmp(&out.policy[b]))
                .unwrap();
            (
                crate::eval::win_probability(out.value_logit),
                moves[best].to_usi(),
            )
        };
        let (start, best) = value("startpos");
        if !(0.35..0.65).contains(&start) {
            return Err(format!("start position win probability {start}"));
        }
        if !["2g2f", "7g7f"].contains(&best.as_str()) {
            return Err(format!("start position best move {best}"));
        }
        // Black holds White's rook in hand: good for Black, whoever is to move.
        let up = "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1";
        let (black, _) = value(up);
        if black <= 0.75 {
            return Err(format!("Black to move, a rook up: {black}"));
        }
        let (white, _) = value(&up.replace(" b R 1", " w R 1"));
        if white >= 0.25 {
            return Err(format!("White to move, a rook down: {white}"));
        }
        Ok(())
    }

    /// The embedded default is a trained network, not random weights — and the checks tell
    /// the two apart: random weights of the same shape fail them.
    #[test]
    fn embedded_default_is_trained() {
        let source = default_weights().unwrap();
        assert_eq!(source.shape().to_string(), DEFAULT_SHAPE);
        looks_trained(source).unwrap();
        let shape = manaka_shapes::Shape::parse(DEFAULT_SHAPE).unwrap();
        for seed in 1..=3 {
            let random = Arc::new(crate::weights::init::random_weights(&shape, seed));
            assert!(
                looks_trained(random).is_err(),
                "random weights (seed {seed}) pass"
            );
        }
    }
}
