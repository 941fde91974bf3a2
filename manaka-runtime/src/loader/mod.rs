//! The one network loader: every command that runs a network (`manaka usi`, `eval`, `go`,
//! `selfplay`) turns its weights argument into evaluators here.
//!
//! A weights argument ([`Weights`]) is a weight file (MNW1, or a YaneuraOu nn.bin told apart by
//! its first bytes and converted at load, see [`is_nn_bin`]), [`BUILTIN_MATERIAL`], or nothing:
//! the embedded default, a `pair0_d128_o2_h512_kp` network trained on fairy-stockfish-labelled
//! self-play positions (`nets/default.mnw`, 6.4 MB, built into the binary; the recipe is in
//! docs/training.md). A [`Backend`] says which evaluator runs it. The result
//! ([`LoadedNetwork`]) is an evaluator factory (the file is memory-mapped once and shared by
//! every evaluator it makes, one per search thread), a one-line description for people
//! (`info string`, `manaka go`) and an identity for run manifests.
//!
//! The runtime cannot know which shapes a binary compiled in (each is a `manaka_net!`
//! expansion in the binary's own crate), so the binary hands the loader a [`CompiledHook`]
//! (and an [`IntegerHook`] for the integer engines of `nnue` shapes); a loader without hooks
//! runs every shape on the reference evaluator, which runs any valid shape, slowly.
//!
//! A loader has a [`Precision`] ([`NetworkLoader::with_precision`]: the USI option
//! `Precision`, `manaka eval --precision`): the number format of the hidden layers' weights
//! of a compiled engine (docs/evaluator.md, "Precision"). It applies to the compiled CPU
//! engines of float shapes only; every other evaluator runs as it always does, and
//! [`LoadedNetwork::precision_note`] says so — a precision asked for is never silently
//! dropped.
//!
//! [`NetworkLoader::load`] is strict: the backend asked for, or an error saying why not
//! ([`LoadError`]). [`NetworkLoader::load_or_fallback`] is the USI engine's policy: a backend
//! that cannot run (no integer engine for the shape, no usable GPU) gives way to the CPU
//! engine and the description says why — a GUI cannot be asked what to do instead.
//!
//! [`evaluate_line`] is `manaka eval`'s work: play moves from a position, evaluate, and report
//! the value and the policy over the legal moves.

mod line;

pub use line::{LineEvaluation, MoveScore, evaluate_line};

pub use crate::compiled::Precision;
use crate::eval::{Evaluator, EvaluatorFactory, FnFactory, MaterialEvaluator};
use crate::nnue;
use crate::reference::{ReferenceError, ReferenceEvaluator, ReferenceNet};
use crate::weights::{TensorSource, WeightFile, WeightsError};
use std::cell::Cell;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

/// Shared weights of any shape, as every reader hands them out.
pub type Source = Arc<dyn TensorSource + Send + Sync>;

/// Why a compiled engine could not be built on weights of its shape (the engine's own error).
pub type EngineError = Box<dyn std::error::Error + Send + Sync>;

/// Builds a compiled engine's evaluator factory for weights whose shape the binary has
/// compiled in, its hidden layers at the [`Precision`] given; `None` for any other shape.
/// The loader asks for [`Precision::F32`] on `nnue` shapes (their precision is the integer
/// engine's).
pub type CompiledHook = dyn Fn(Source, Precision) -> Option<Result<Arc<dyn EvaluatorFactory>, EngineError>>
    + Send
    + Sync;

/// Builds the integer engine's evaluator factory (`Backend integer`) of a compiled-in `nnue`
/// shape; `None` for any other shape.
pub type IntegerHook =
    dyn Fn(Source) -> Option<Result<Arc<dyn EvaluatorFactory>, EngineError>> + Send + Sync;

/// An engine builder for one load, its precision (if any) already chosen (it may borrow
/// local state).
pub type Hook<'a> = dyn Fn(Source) -> Option<Result<Arc<dyn EvaluatorFactory>, EngineError>> + 'a;

/// What a hook answers: the engine's factory, why it could not be built, or `None` (no
/// engine for the shape).
type Built = Option<Result<Arc<dyn EvaluatorFactory>, EngineError>>;

/// The weights argument selecting the built-in material evaluator (tests, baselines).
pub const BUILTIN_MATERIAL: &str = "builtin:material";

/// The shape of the embedded default network.
pub const DEFAULT_SHAPE: &str = "pair0_d128_o2_h512_kp";

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
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(LoadError::DefaultDamaged)
}

/// Which evaluator runs a network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The compiled engine for the weights' shape when the binary has one, else the
    /// reference evaluator (the description says so). USI's `Backend cpu`.
    #[default]
    Auto,
    /// Only the compiled engine for the weights' shape ([`LoadError::NotCompiled`] without).
    Compiled,
    /// The shape-generic f64 reference evaluator (the oracle; slow but exact).
    Reference,
    /// The integer engine of an `nnue` shape: YaneuraOu's arithmetic, so on an imported
    /// nn.bin cp is YaneuraOu's evaluation exactly (docs/nnue.md).
    Integer,
    /// The CUDA batch evaluator (feature `cuda`, a driver, a device and NVRTC; docs/gpu.md),
    /// falling back to the CPU engine if the device fails later.
    Cuda,
}

impl Backend {
    /// Every backend, in the order of the docs.
    pub const ALL: [Backend; 5] = [
        Backend::Auto,
        Backend::Compiled,
        Backend::Reference,
        Backend::Integer,
        Backend::Cuda,
    ];

    /// The name commands take (`--backend NAME`).
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Compiled => "compiled",
            Backend::Reference => "reference",
            Backend::Integer => "integer",
            Backend::Cuda => "cuda",
        }
    }

    /// One line on what the backend runs (for `--help`).
    pub const fn summary(self) -> &'static str {
        match self {
            Backend::Auto => {
                "the compiled engine if the file's shape is compiled in, else the reference \
                 evaluator (with a note)"
            }
            Backend::Compiled => {
                "the fixed-size engine compiled for the file's shape (`manaka shape list` shows \
                 which are compiled in); an error if there is none"
            }
            Backend::Reference => {
                "the shape-generic f64 reference evaluator (the oracle; slow but exact)"
            }
            Backend::Integer => {
                "the integer engine of an `nnue` shape: YaneuraOu's arithmetic, so on an \
                 imported nn.bin cp is YaneuraOu's evaluation exactly (docs/nnue.md)"
            }
            Backend::Cuda => {
                "the CUDA batch evaluator (a `cuda` build on a machine with a GPU; docs/gpu.md)"
            }
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend name that is none of [`Backend::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend '{0}' (one of auto, compiled, reference, integer, cuda)")]
pub struct UnknownBackend(pub String);

impl FromStr for Backend {
    type Err = UnknownBackend;

    /// A backend by [`Backend::name`], in any case.
    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownBackend(s.to_string()))
    }
}

/// What to evaluate with: the argument of `--weights` or the `EvalFile` option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Weights {
    /// The embedded default network (an empty argument, or USI's `<empty>`).
    Default,
    /// The material evaluator ([`BUILTIN_MATERIAL`]): material value, uniform policy.
    Material,
    /// An MNW1 weight file or a YaneuraOu nn.bin.
    File(PathBuf),
}

impl Weights {
    /// The weights a text argument names (surrounding blanks ignored, as USI option values).
    pub fn parse(arg: &str) -> Weights {
        match arg.trim() {
            "" | "<empty>" => Weights::Default,
            BUILTIN_MATERIAL => Weights::Material,
            path => Weights::File(PathBuf::from(path)),
        }
    }

    /// The weights of an optional path argument (`None`: the embedded default); a path
    /// spelled [`BUILTIN_MATERIAL`] is the material evaluator.
    pub fn from_path(path: Option<&Path>) -> Weights {
        match path {
            None => Weights::Default,
            Some(p) if p.to_str() == Some(BUILTIN_MATERIAL) => Weights::Material,
            Some(p) => Weights::File(p.to_path_buf()),
        }
    }
}

/// A loaded network.
pub struct LoadedNetwork {
    /// Makes the evaluators (one per search thread), all sharing the loaded weights.
    pub factory: Arc<dyn EvaluatorFactory>,
    /// One line for people (`info string`): where the weights came from, their shape, which
    /// evaluator runs them, and why if it is not the one asked for.
    pub description: String,
    /// What the weights are, for run manifests: `SHAPE xxh64 HASH` (the MNW1 trailer's
    /// checksum; for an nn.bin, `SHAPE nn.bin xxh64 HASH` over its converted tensors) or
    /// [`BUILTIN_MATERIAL`].
    pub identity: String,
    /// The weights' shape; `None` for the material evaluator.
    pub shape: Option<String>,
    /// The reference network when the reference evaluator runs: [`evaluate_line`] reports its
    /// exact f64 logits rather than the f32 ones evaluators hand the search.
    pub reference: Option<ReferenceNet>,
    /// The precision of the hidden layers' weights in use: [`Precision::F32`] for every
    /// evaluator but a compiled engine of a float shape loaded at another precision.
    pub precision: Precision,
}

impl LoadedNetwork {
    /// A network from a factory made elsewhere (a library's own engine, say).
    pub fn new(
        factory: Arc<dyn EvaluatorFactory>,
        description: String,
        identity: String,
    ) -> LoadedNetwork {
        LoadedNetwork {
            factory,
            description,
            identity,
            shape: None,
            reference: None,
            precision: Precision::F32,
        }
    }

    /// Why `requested` is not the precision in use, as one sentence for `info string` and
    /// CLI notes; `None` when it is. Only compiled CPU engines of float shapes take a
    /// precision (docs/evaluator.md, "Precision").
    pub fn precision_note(&self, requested: Precision) -> Option<String> {
        if requested == self.precision {
            return None;
        }
        let nnue = self
            .shape
            .as_deref()
            .and_then(|s| manaka_shapes::Shape::parse(s).ok())
            .is_some_and(|s| s.nnue);
        let why = match (&self.shape, &self.reference) {
            (None, _) => "the material evaluator has no weights".to_string(),
            (Some(_), Some(_)) => "the reference evaluator computes in f64".to_string(),
            (Some(shape), None) if nnue => format!(
                "shape {shape} is an nnue shape (its weights are clamped to the integer \
                 engine's ranges; Backend integer runs them in integers)"
            ),
            (Some(_), None) => format!("{} does not take one", self.factory.name()),
        };
        Some(format!(
            "Precision {requested} not applied: {why}; running {} (Precision applies to the \
             compiled CPU engines of float shapes)",
            self.precision
        ))
    }
}

/// Why a network could not be loaded. The messages name the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("the embedded default network is damaged: {0}")]
    DefaultDamaged(String),
    #[error(
        "cannot load '{}': {reason} (an MNW1 weight file or a YaneuraOu nn.bin is expected)",
        path.display()
    )]
    Mnw1 { path: PathBuf, reason: WeightsError },
    #[error("cannot load '{}' as an nn.bin: {reason}", path.display())]
    NnBin {
        path: PathBuf,
        reason: nnue::NnueError,
    },
    #[error("weights for {shape}: {reason}")]
    Reference {
        shape: String,
        reason: ReferenceError,
    },
    #[error("cannot build the compiled engine for shape {shape}: {reason}")]
    Engine { shape: String, reason: EngineError },
    #[error(
        "shape {shape} is not compiled into this binary (see `manaka shape list`); use the \
         reference backend or `manaka build-engine {shape}`"
    )]
    NotCompiled { shape: String },
    #[error(
        "shape {shape} has no integer engine in this binary (only compiled-in `nnue` shapes \
         have one)"
    )]
    NoIntegerEngine { shape: String },
    #[error("Backend cuda unavailable: {0}")]
    CudaUnavailable(String),
}

/// The loader of one binary: the compiled engines it has, if any, and the precision their
/// hidden layers run at.
#[derive(Clone, Default)]
pub struct NetworkLoader {
    compiled: Option<Arc<CompiledHook>>,
    integer: Option<Arc<IntegerHook>>,
    precision: Precision,
}

impl NetworkLoader {
    /// A loader with no compiled engines: every shape runs on the reference evaluator.
    pub fn reference_only() -> NetworkLoader {
        NetworkLoader::default()
    }

    /// Prefers the compiled engines `hook` builds (for [`Backend::Auto`], [`Backend::Compiled`],
    /// and the float fallback of the others).
    pub fn with_compiled(mut self, hook: Arc<CompiledHook>) -> NetworkLoader {
        self.compiled = Some(hook);
        self
    }

    /// Runs [`Backend::Integer`] on the integer engines `hook` builds.
    pub fn with_integer(mut self, hook: Arc<IntegerHook>) -> NetworkLoader {
        self.integer = Some(hook);
        self
    }

    /// Builds compiled engines of float shapes with their hidden layers at `precision`
    /// (default [`Precision::F32`]). Other evaluators are unchanged:
    /// [`LoadedNetwork::precision_note`] says so.
    pub fn with_precision(mut self, precision: Precision) -> NetworkLoader {
        self.precision = precision;
        self
    }

    /// The precision compiled engines of float shapes are built at.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The compiled hook at this loader's precision for one load (`None` without a hook):
    /// `nnue` shapes are asked for f32, and `applied` records the precision of an engine the
    /// hook built.
    fn compiled_at<'a>(&'a self, applied: &'a Cell<Precision>) -> impl Fn(Source) -> Built + 'a {
        move |source: Source| {
            let hook = self.compiled.as_ref()?;
            let precision = if source.shape().nnue {
                Precision::F32
            } else {
                self.precision
            };
            let built = hook(source, precision);
            if built.is_some() {
                applied.set(precision);
            }
            built
        }
    }

    /// [`load_cpu`] with the compiled hook at this loader's precision, the network's
    /// [`LoadedNetwork::precision`] set to the one its engine runs.
    fn load_compiled(
        &self,
        weights: &Weights,
        backend: Backend,
    ) -> Result<LoadedNetwork, LoadError> {
        let applied = Cell::new(Precision::F32);
        let mut network = load_cpu(weights, backend, &self.compiled_at(&applied))?;
        // Set only if the hook built the engine that runs.
        network.precision = applied.get();
        Ok(network)
    }

    /// The network for `weights` on `backend`, or why that backend cannot run it. The
    /// material evaluator runs for [`Weights::Material`] whatever the CPU backend (it has no
    /// network to compile); on [`Backend::Cuda`] it is refused.
    pub fn load(&self, weights: &Weights, backend: Backend) -> Result<LoadedNetwork, LoadError> {
        match backend {
            Backend::Cuda => {
                let cpu = self.load(weights, Backend::Auto);
                cuda_network(weights, cpu.as_ref().ok().map(|n| n.factory.clone()))
            }
            Backend::Integer => match &self.integer {
                Some(hook) => load_cpu(weights, Backend::Integer, hook.as_ref()),
                None => load_cpu(weights, Backend::Integer, &|_| None),
            },
            Backend::Reference => load_cpu(weights, Backend::Reference, &|_| None),
            Backend::Auto | Backend::Compiled => self.load_compiled(weights, backend),
        }
    }

    /// As [`NetworkLoader::load`], but [`Backend::Integer`] and [`Backend::Cuda`], when they
    /// cannot run, give way to the CPU engine (compiled, else reference) and the description
    /// starts with why (the USI engine's policy, docs/usi.md). Errors are then those of the
    /// weights themselves.
    pub fn load_or_fallback(
        &self,
        weights: &Weights,
        backend: Backend,
    ) -> Result<LoadedNetwork, LoadError> {
        match backend {
            Backend::Auto | Backend::Compiled | Backend::Reference => self.load(weights, backend),
            Backend::Integer => {
                let applied = Cell::new(Precision::F32);
                let float = self.compiled_at(&applied);
                match &self.integer {
                    Some(integer) => {
                        let mut network = resolve_integer(weights, integer.as_ref(), &float)?;
                        // Set only if the float engine ran (a shape without an integer one).
                        network.precision = applied.get();
                        Ok(network)
                    }
                    None => {
                        let mut network = self.load_compiled(weights, Backend::Auto)?;
                        network.description = format!(
                            "Backend integer unavailable: this engine has no integer engines; \
                             running the float engine. {}",
                            network.description
                        );
                        Ok(network)
                    }
                }
            }
            Backend::Cuda => with_cuda(weights, self.load(weights, Backend::Auto)),
        }
    }
}

/// The CPU network for `weights`: `compiled`'s engine for the shape, else (for
/// [`Backend::Auto`] and [`Backend::Reference`]) the reference evaluator. `compiled` is the
/// integer hook for [`Backend::Integer`]; the hook is not asked for [`Backend::Reference`].
pub fn load_cpu(
    weights: &Weights,
    backend: Backend,
    compiled: &Hook<'_>,
) -> Result<LoadedNetwork, LoadError> {
    let Some(w) = weights_source(weights)? else {
        return Ok(material());
    };
    let shape = w.source.shape().to_string();
    if backend != Backend::Reference
        && let Some(factory) = compiled(w.source.clone())
    {
        let factory = factory.map_err(|reason| LoadError::Engine {
            shape: shape.clone(),
            reason,
        })?;
        return Ok(LoadedNetwork {
            description: format!("{}, {}", w.origin, factory.name()),
            factory,
            identity: w.identity,
            shape: Some(shape),
            reference: None,
            precision: Precision::F32,
        });
    }
    match backend {
        Backend::Compiled => return Err(LoadError::NotCompiled { shape }),
        Backend::Integer => return Err(LoadError::NoIntegerEngine { shape }),
        _ => {}
    }
    let net = ReferenceNet::new(w.source).map_err(|reason| LoadError::Reference {
        shape: shape.clone(),
        reason,
    })?;
    let oracle = net.clone();
    let factory: Arc<dyn EvaluatorFactory> =
        Arc::new(FnFactory::new(format!("{shape} (reference)"), move || {
            Box::new(ReferenceEvaluator::new(oracle.clone())) as Box<dyn Evaluator>
        }));
    let description = if backend == Backend::Reference {
        format!("{}, reference evaluator", w.origin)
    } else {
        format!(
            "{}, reference evaluator (shape {shape} is not compiled into this binary; slow)",
            w.origin
        )
    };
    Ok(LoadedNetwork {
        factory,
        description,
        identity: w.identity,
        shape: Some(shape),
        reference: Some(net),
        precision: Precision::F32,
    })
}

/// The network for `weights` with `integer`'s engine for its shape; a shape without one runs
/// `compiled`'s float engine (or the reference evaluator), and the description says so.
pub fn resolve_integer(
    weights: &Weights,
    integer: &Hook<'_>,
    compiled: &Hook<'_>,
) -> Result<LoadedNetwork, LoadError> {
    // One load: the integer hook first, the float engine for shapes it does not have.
    let float_shape = OnceLock::new();
    let hook = |source: Source| {
        integer(source.clone()).or_else(|| {
            let _ = float_shape.set(source.shape().to_string());
            compiled(source)
        })
    };
    let mut network = load_cpu(weights, Backend::Auto, &hook)?;
    if let Some(shape) = float_shape.get() {
        network.description = format!(
            "Backend integer: shape {shape} has no integer engine (only compiled-in nnue \
             shapes have one); running the float engine. {}",
            network.description
        );
    }
    Ok(network)
}

/// The CUDA network for `weights` when CUDA can run it, else `cpu` with the reason at the
/// start of its description (printed as `info string`). The CUDA evaluators fall back to
/// `cpu`'s if the device fails later.
pub fn with_cuda<E>(weights: &Weights, cpu: Result<LoadedNetwork, E>) -> Result<LoadedNetwork, E> {
    let fallback = cpu.as_ref().ok().map(|n| n.factory.clone());
    let why = match cuda_network(weights, fallback) {
        Ok(n) => return Ok(n),
        Err(e) => e,
    };
    let mut network = cpu?;
    network.description = format!(
        "Backend cuda unavailable: {}; running on the CPU. {}",
        cuda_reason(&why),
        network.description
    );
    Ok(network)
}

/// Why CUDA did not run, as one clause for a description.
fn cuda_reason(e: &LoadError) -> String {
    match e {
        LoadError::CudaUnavailable(why) => why.clone(),
        e => e.to_string(),
    }
}

/// The CUDA network for `weights`, with `fallback`'s evaluators taking over on a device
/// failure; or why not ([`LoadError::CudaUnavailable`], or the weights' own error).
pub fn cuda_network(
    weights: &Weights,
    fallback: Option<Arc<dyn EvaluatorFactory>>,
) -> Result<LoadedNetwork, LoadError> {
    let Some(w) = weights_source(weights)? else {
        return Err(LoadError::CudaUnavailable(
            "the material evaluator has no network to run on a GPU".to_string(),
        ));
    };
    let shape = w.source.shape().to_string();
    let factory = cuda_factory(w.source, fallback).map_err(LoadError::CudaUnavailable)?;
    Ok(LoadedNetwork {
        description: format!("{}, {}", w.origin, factory.name()),
        factory,
        identity: w.identity,
        shape: Some(shape),
        reference: None,
        precision: Precision::F32,
    })
}

#[cfg(feature = "cuda")]
fn cuda_factory(
    source: Source,
    fallback: Option<Arc<dyn EvaluatorFactory>>,
) -> Result<Arc<dyn EvaluatorFactory>, String> {
    crate::cuda::factory(source, fallback).map_err(|e| e.to_string())
}

#[cfg(not(feature = "cuda"))]
fn cuda_factory(
    _source: Source,
    _fallback: Option<Arc<dyn EvaluatorFactory>>,
) -> Result<Arc<dyn EvaluatorFactory>, String> {
    Err("this binary was built without the `cuda` feature".to_string())
}

/// Weights read for a load: the tensors, where they came from (for the description) and
/// what they are (for manifests).
struct Loaded {
    source: Source,
    origin: String,
    identity: String,
}

/// The tensors `weights` names; `None` for the material evaluator.
fn weights_source(weights: &Weights) -> Result<Option<Loaded>, LoadError> {
    Ok(Some(match weights {
        Weights::Material => return Ok(None),
        Weights::Default => {
            let file = default_weights()?;
            Loaded {
                origin: format!("EvalFile not set: embedded default {DEFAULT_SHAPE}, trained"),
                identity: format!("{} xxh64 {:016x}", file.shape(), file.checksum()),
                source: file,
            }
        }
        Weights::File(path) if is_nn_bin(path) => {
            // YaneuraOu's nn.bin, recognised by its header: converted at load into the float
            // tensors of its shape, which quantise back to the file's integers exactly (so
            // `Backend integer` evaluates as YaneuraOu does).
            let imported = nnue::import(path).map_err(|reason| LoadError::NnBin {
                path: path.clone(),
                reason,
            })?;
            let shape = imported.weights.shape().to_string();
            Loaded {
                origin: format!(
                    "EvalFile {}: YaneuraOu nn.bin ({}), converted to shape {shape}",
                    path.display(),
                    imported.file.architecture.name(),
                ),
                identity: format!(
                    "{shape} nn.bin xxh64 {:016x}",
                    tensor_hash(&imported.weights)
                ),
                source: Arc::new(imported.weights),
            }
        }
        Weights::File(path) => {
            let file = WeightFile::open(path).map_err(|reason| LoadError::Mnw1 {
                path: path.clone(),
                reason,
            })?;
            Loaded {
                origin: format!("EvalFile {}: shape {}", path.display(), file.shape()),
                identity: format!("{} xxh64 {:016x}", file.shape(), file.checksum()),
                source: Arc::new(file),
            }
        }
    }))
}

/// xxh64 of a source's tensors (little-endian f32, in the shape's table order): the identity
/// of weights that have no MNW1 trailer.
fn tensor_hash(source: &dyn TensorSource) -> u64 {
    let mut h = xxhash_rust::xxh64::Xxh64::new(0);
    for spec in source.shape().tensors() {
        if let Some(t) = source.tensor(&spec.name) {
            for x in t {
                h.update(&x.to_le_bytes());
            }
        }
    }
    h.digest()
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

fn material() -> LoadedNetwork {
    LoadedNetwork {
        factory: MaterialEvaluator::factory(),
        description: "EvalFile builtin:material: material evaluator, uniform policy".to_string(),
        identity: BUILTIN_MATERIAL.to_string(),
        shape: None,
        reference: None,
        precision: Precision::F32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Evaluator;
    use crate::weights::{init, write_file};
    use manaka_shapes::Shape;

    pub(super) const TINY: &str = "pair4_d16_o2_h32";

    /// A random-weights MNW1 file of `shape` in a fresh directory, and its trailer checksum.
    pub(super) fn weight_file(shape: &str, seed: u64) -> (tempfile::TempDir, PathBuf, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("net.mnw");
        let set = init::random_weights(&Shape::parse(shape).unwrap(), seed);
        let checksum = write_file(&path, &set).unwrap();
        (dir, path, checksum)
    }

    #[test]
    fn backend_names_and_weights_arguments_parse() {
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>(), Ok(b));
            assert_eq!(b.name().to_uppercase().parse::<Backend>(), Ok(b));
        }
        let e = "gpu".parse::<Backend>().unwrap_err().to_string();
        assert!(e.contains("'gpu'") && e.contains("reference"), "{e}");
        assert_eq!(Weights::parse(" "), Weights::Default);
        assert_eq!(Weights::parse("<empty>"), Weights::Default);
        assert_eq!(Weights::parse(BUILTIN_MATERIAL), Weights::Material);
        assert_eq!(
            Weights::parse(" a b.mnw "),
            Weights::File(PathBuf::from("a b.mnw"))
        );
        assert_eq!(Weights::from_path(None), Weights::Default);
        let m = Path::new(BUILTIN_MATERIAL);
        assert_eq!(Weights::from_path(Some(m)), Weights::Material);
    }

    /// A loader without compiled engines: `auto` and `reference` run the reference
    /// evaluator, `compiled` and `integer` are refused with typed errors naming the shape,
    /// and the identity is the file's own trailer checksum.
    #[test]
    fn strict_backends_refuse_what_they_cannot_run() {
        let (_dir, path, checksum) = weight_file(TINY, 3);
        let weights = Weights::File(path.clone());
        let loader = NetworkLoader::reference_only();
        for backend in [Backend::Auto, Backend::Reference] {
            let n = loader.load(&weights, backend).unwrap();
            assert!(n.reference.is_some(), "{backend}");
            assert_eq!(n.identity, format!("{TINY} xxh64 {checksum:016x}"));
            assert_eq!(n.shape.as_deref(), Some(TINY));
            assert_eq!(n.factory.name(), format!("{TINY} (reference)"));
            assert!(n.description.contains(&path.display().to_string()));
        }
        match loader.load(&weights, Backend::Compiled) {
            Err(LoadError::NotCompiled { shape }) => assert_eq!(shape, TINY),
            other => panic!("{:?}", other.map(|n| n.description)),
        }
        match loader.load(&weights, Backend::Integer) {
            Err(LoadError::NoIntegerEngine { shape }) => assert_eq!(shape, TINY),
            other => panic!("{:?}", other.map(|n| n.description)),
        }
        // The engine's policy: integer gives way to the float engine and says so.
        let n = loader.load_or_fallback(&weights, Backend::Integer).unwrap();
        assert!(
            n.description
                .starts_with("Backend integer unavailable: this engine has no integer engines"),
            "{}",
            n.description
        );
        let missing = Weights::File(PathBuf::from("/no/such/net.mnw"));
        let e = loader.load(&missing, Backend::Auto).err().unwrap();
        assert!(matches!(e, LoadError::Mnw1 { .. }), "{e:?}");
        assert!(e.to_string().contains("/no/such/net.mnw"), "{e}");
    }

    /// The loader's precision reaches the compiled hook for float shapes and f32 for `nnue`
    /// shapes; the network says which precision runs, and the note says why when it is not
    /// the one asked for (the reference evaluator, an `nnue` shape, the material evaluator).
    #[test]
    fn precision_reaches_the_hook_for_float_shapes_only() {
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = asked.clone();
        let hook: Arc<CompiledHook> = Arc::new(move |source: Source, precision| {
            seen.lock()
                .unwrap()
                .push((source.shape().to_string(), precision));
            let net = ReferenceNet::new(source).ok()?;
            let f: Arc<dyn EvaluatorFactory> = Arc::new(FnFactory::new("stand-in", move || {
                Box::new(ReferenceEvaluator::new(net.clone())) as Box<dyn Evaluator>
            }));
            Some(Ok(f))
        });
        let int8 = Precision::Int8;
        let loader = NetworkLoader::reference_only()
            .with_compiled(hook)
            .with_precision(int8);
        assert_eq!(loader.precision(), int8);
        let (_dir, path, _) = weight_file(TINY, 5);
        let float = Weights::File(path);
        let n = loader.load(&float, Backend::Auto).unwrap();
        assert_eq!((n.precision, n.precision_note(int8)), (int8, None));
        // Backend integer without integer engines runs the float engine, at the precision.
        let n = loader.load_or_fallback(&float, Backend::Integer).unwrap();
        assert_eq!(n.precision, int8);
        let nnue_shape = "pair0_d16_o1_h8_halfkp_nnue";
        let (_nnue_dir, nnue_path, _) = weight_file(nnue_shape, 6);
        let n = loader
            .load(&Weights::File(nnue_path), Backend::Auto)
            .unwrap();
        assert_eq!(n.precision, Precision::F32);
        let note = n.precision_note(int8).unwrap();
        assert!(
            note.starts_with(
                "Precision int8 not applied: shape pair0_d16_o1_h8_halfkp_nnue is an nnue shape"
            ),
            "{note}"
        );
        assert!(note.contains("running f32"), "{note}");
        assert_eq!(
            *asked.lock().unwrap(),
            [
                (TINY.to_string(), int8),
                (TINY.to_string(), int8),
                (nnue_shape.to_string(), Precision::F32)
            ]
        );
        let n = loader.load(&float, Backend::Reference).unwrap();
        let note = n.precision_note(Precision::Bf16).unwrap();
        assert!(
            note.contains("the reference evaluator computes in f64"),
            "{note}"
        );
        let n = loader.load(&Weights::Material, Backend::Auto).unwrap();
        let note = n.precision_note(int8).unwrap();
        assert!(
            note.contains("the material evaluator has no weights"),
            "{note}"
        );
        assert_eq!(n.precision_note(Precision::F32), None);
    }

    /// A hook is asked for the file's shape, and what it builds runs (here the reference
    /// evaluator under another name, standing in for a compiled engine); a failing hook is
    /// the load's error.
    #[test]
    fn a_compiled_hook_is_preferred_and_its_failure_reported() {
        let (_dir, path, _) = weight_file(TINY, 4);
        let weights = Weights::File(path);
        let hook: Arc<CompiledHook> = Arc::new(|source: Source, _| {
            let net = ReferenceNet::new(source).ok()?;
            let f: Arc<dyn EvaluatorFactory> = Arc::new(FnFactory::new("stand-in", move || {
                Box::new(ReferenceEvaluator::new(net.clone())) as Box<dyn Evaluator>
            }));
            Some(Ok(f))
        });
        let loader = NetworkLoader::reference_only().with_compiled(hook);
        for backend in [Backend::Auto, Backend::Compiled] {
            let n = loader.load(&weights, backend).unwrap();
            assert_eq!(n.factory.name(), "stand-in");
            assert!(n.reference.is_none());
        }
        assert!(
            loader
                .load(&weights, Backend::Reference)
                .unwrap()
                .reference
                .is_some()
        );
        let failing: Arc<CompiledHook> = Arc::new(|_, _| Some(Err("no memory".into())));
        let e = NetworkLoader::reference_only()
            .with_compiled(failing)
            .load(&weights, Backend::Auto)
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            format!("cannot build the compiled engine for shape {TINY}: no memory")
        );
    }
}
