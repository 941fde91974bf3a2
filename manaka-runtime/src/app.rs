//! A compiled shape as a program: one call runs it as a USI engine, searches a position with
//! it, plays self-play games, trains on them or benchmarks it — what the `manaka` binary does, for an engine
//! declared in a user's own crate with `manaka_net!` (docs/library.md).
//!
//! Every `manaka_net!` engine implements [`CompiledNetwork`]: a [`Network`] that knows its
//! shape and attaches weights. [`App`] holds such an engine type and the weights it runs
//! when nothing else is said; its methods are the programs:
//!
//! ```
//! # use manaka_runtime::app::App;
//! # use manaka_runtime::search::SearchLimits;
//! # use manaka_runtime::shogi::Position;
//! # fn demo<N: manaka_runtime::app::CompiledNetwork>() -> Result<(), manaka_runtime::app::Error> {
//! let app = App::<N>::new().random_weights(1);             // or .weights("net.mnw")
//! let result = app.search(&Position::startpos(), &SearchLimits::simulations(64))?;
//! println!("bestmove {}", result.best_move.unwrap().to_usi());
//! # Ok(()) }
//! ```
//!
//! As a USI engine ([`App::run_usi`]) the `EvalFile` option behaves as in `manaka usi`: empty
//! runs the app's default weights (the file given to [`App::weights`], bytes given to
//! [`App::embedded`], random weights of the shape, or, for the shape of the `manaka` binary's
//! embedded default network, that network); `builtin:material` the material evaluator; a
//! weight file of the engine's shape the compiled engine; a file of any other shape (or a
//! YaneuraOu nn.bin) the reference evaluator, slowly, as the description printed at
//! `isready` says. `Backend integer` runs the integer engine of an `nnue` shape
//! ([`App::load_integer`]). The `Precision` option runs the engine's hidden layers at that
//! precision when `N` takes one ([`CompiledNetwork::from_source_at`]), as in `manaka usi`;
//! otherwise an `info string` says what runs instead. One difference remains: `Backend cuda` with no `EvalFile` uploads
//! the `manaka` binary's embedded default network, not the app's default weights (set
//! `EvalFile` to run your weights on a GPU).

use crate::compiled::{FixedNetError, Precision};
use crate::eval::{Evaluator, EvaluatorFactory};
use crate::network::{Network, NetworkFactory};
use crate::runs::selfplay::{self, Batching, GameSettings, Progress, SelfplayConfig};
use crate::search::bench::BenchReport;
use crate::search::{GumbelSearch, SearchConfig, SearchLimits, SearchResult};
use crate::shogi::{EnteringKingRule, Position};
use crate::train::{self, DataFormat, Dataset, Summary, TrainConfig};
use crate::usi::eval_file::{self as usi_eval_file, DEFAULT_SHAPE, LoadedNetwork};
use crate::usi::{self, Loader};
use crate::weights::{TensorSource, WeightFile, init};
use std::cell::Cell;
use std::io::{self, BufRead, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// What the app's methods fail with: a weight file that does not load, a self-play
/// directory that cannot be written, ... (any error, with its message).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Shared weights of any shape, as every reader hands them out.
pub type Source = Arc<dyn TensorSource + Send + Sync>;

/// An engine `manaka_net!` generated: a [`Network`] that knows its shape and attaches
/// weights of that shape.
pub trait CompiledNetwork: Network + Sized {
    /// The canonical shape name.
    const SHAPE: &'static str;

    /// The engine on weights already in memory or mapped (refused if they are of another
    /// shape).
    fn from_source(source: Source) -> Result<Self, FixedNetError>;

    /// The engine on `source` with its hidden layers' weights at `precision`
    /// (docs/evaluator.md, "Precision"); `None` if this engine takes no such precision. The
    /// default takes f32 only; an engine with low-precision copies overrides it.
    fn from_source_at(source: Source, precision: Precision) -> Option<Result<Self, FixedNetError>> {
        (precision == Precision::F32).then(|| Self::from_source(source))
    }

    /// The engine on an MNW1 file, memory-mapped and verified.
    fn open(path: &Path) -> Result<Self, FixedNetError> {
        Self::from_source(Arc::new(WeightFile::open(path)?))
    }

    /// Evaluators of the integer engine on `source` (YaneuraOu's arithmetic, USI
    /// `Backend integer`; docs/nnue.md): `manaka_net!` gives one to `nnue` shapes, `None`
    /// for the others.
    fn integer_factory(source: Source) -> Option<Result<Arc<dyn EvaluatorFactory>, Error>> {
        let _ = source;
        None
    }
}

/// The weights an [`App`] runs when no `EvalFile` says otherwise.
#[derive(Clone)]
enum DefaultWeights {
    /// Not chosen: the embedded default network for its shape, else random weights (seed 1).
    Unset,
    File(PathBuf),
    Embedded(&'static [u8]),
    Random(u64),
}

/// A compiled engine type `N` and its default weights: the programs of the `manaka` binary
/// (USI engine, search, self-play, training, benchmark) for that engine. See the [module docs](self).
pub struct App<N: CompiledNetwork> {
    default: DefaultWeights,
    _engine: PhantomData<fn() -> N>,
}

impl<N: CompiledNetwork> Clone for App<N> {
    fn clone(&self) -> Self {
        App {
            default: self.default.clone(),
            _engine: PhantomData,
        }
    }
}

impl<N: CompiledNetwork> Default for App<N> {
    fn default() -> Self {
        App::new()
    }
}

/// An [`App`] for the engine `N`: `manaka::app::<my_shape::Engine>()`.
pub fn app<N: CompiledNetwork>() -> App<N> {
    App::new()
}

impl<N: CompiledNetwork> App<N> {
    /// An app with no default weights chosen: it runs the embedded default network if `N`
    /// has its shape ([`DEFAULT_SHAPE`]), else random weights of `N`'s shape (seed 1), which
    /// play legal but weak shogi.
    pub fn new() -> Self {
        App {
            default: DefaultWeights::Unset,
            _engine: PhantomData,
        }
    }

    /// Runs the weight file at `path` by default (MNW1, or a YaneuraOu nn.bin for USI).
    pub fn weights(mut self, path: impl Into<PathBuf>) -> Self {
        self.default = DefaultWeights::File(path.into());
        self
    }

    /// Runs an MNW1 file built into the program by default:
    /// `.embedded(include_bytes!("net.mnw"))`. It must be of `N`'s shape.
    pub fn embedded(mut self, mnw1: &'static [u8]) -> Self {
        self.default = DefaultWeights::Embedded(mnw1);
        self
    }

    /// Runs reproducible random weights of `N`'s shape by default (SPEC §7's initialisation,
    /// as `manaka weights init --seed`).
    pub fn random_weights(mut self, seed: u64) -> Self {
        self.default = DefaultWeights::Random(seed);
        self
    }

    /// The engine's shape, canonical.
    pub fn shape(&self) -> &'static str {
        N::SHAPE
    }

    /// The default weights as `N` (a typed engine: `new_state`, `update`, `evaluate`).
    pub fn network(&self) -> Result<N, Error> {
        let (source, _) = self.default_source()?;
        Ok(N::from_source(source)?)
    }

    /// The network for a USI `EvalFile` value (see the [module docs](self)): an evaluator
    /// factory and a one-line description.
    pub fn load(&self, eval_file: &str) -> Result<LoadedNetwork, Error> {
        self.load_at(eval_file, Precision::F32)
    }

    /// As [`App::load`], `N`'s hidden layers at `precision` if it takes it
    /// ([`CompiledNetwork::from_source_at`]; never for `nnue` shapes): the network's
    /// [`LoadedNetwork::precision`] is the one that runs, and
    /// [`LoadedNetwork::precision_note`] says why when it is not `precision`.
    pub fn load_at(&self, eval_file: &str, precision: Precision) -> Result<LoadedNetwork, Error> {
        let applied = Cell::new(Precision::F32);
        let hook = |source: Source| {
            (source.shape().to_string() == N::SHAPE)
                .then(|| factory_at::<N>(source, precision, &applied))
        };
        let mut network = if !matches!(eval_file.trim(), "" | "<empty>") {
            usi_eval_file::resolve_with(eval_file, &hook)?
        } else if let DefaultWeights::File(path) = &self.default {
            // Through the USI loader, so that a default file of another shape (the
            // reference evaluator) or an nn.bin runs as it would as EvalFile.
            let path = utf8(path)?;
            let mut network = usi_eval_file::resolve_with(path, &hook)?;
            network.description = format!("EvalFile not set: default {}", network.description);
            network
        } else {
            let (source, origin) = self.default_source()?;
            let factory = factory_at::<N>(source, precision, &applied)?;
            let description = format!("{origin}, {}", factory.name());
            let mut network = LoadedNetwork::new(factory, description, origin);
            network.shape = Some(N::SHAPE.to_string());
            network
        };
        // Set only if `N` ran at the precision (not the reference evaluator, say).
        network.precision = applied.get();
        Ok(network)
    }

    /// [`App::load_at`] as the USI engine's loader.
    pub fn loader(&self) -> Loader {
        let app = self.clone();
        Box::new(move |eval_file, precision| app.load_at(eval_file, precision))
    }

    /// The network for an `EvalFile` value under `Backend integer`: the integer engine of
    /// `N` when its shape has one ([`CompiledNetwork::integer_factory`]) and the weights are
    /// of that shape, else what [`App::load_at`] runs at `precision`, the description saying
    /// why.
    pub fn load_integer(
        &self,
        eval_file: &str,
        precision: Precision,
    ) -> Result<LoadedNetwork, Error> {
        let integer = |source: Source| {
            (source.shape().to_string() == N::SHAPE)
                .then(|| N::integer_factory(source))
                .flatten()
        };
        let applied = Cell::new(Precision::F32);
        let float = |source: Source| {
            (source.shape().to_string() == N::SHAPE)
                .then(|| factory_at::<N>(source, precision, &applied))
        };
        let mut network = if !matches!(eval_file.trim(), "" | "<empty>") {
            usi_eval_file::resolve_integer(eval_file, &integer, &float)?
        } else if let DefaultWeights::File(path) = &self.default {
            let path = utf8(path)?;
            let mut network = usi_eval_file::resolve_integer(path, &integer, &float)?;
            network.description = format!("EvalFile not set: default {}", network.description);
            network
        } else {
            let (source, origin) = self.default_source()?;
            let (factory, why) = match integer(source.clone()) {
                Some(factory) => (factory?, String::new()),
                None => (
                    factory_at::<N>(source, precision, &applied)?,
                    format!(
                        "Backend integer: shape {} has no integer engine (only nnue shapes have \
                         one); running the float engine. ",
                        N::SHAPE
                    ),
                ),
            };
            let description = format!("{why}{origin}, {}", factory.name());
            let mut network = LoadedNetwork::new(factory, description, origin);
            network.shape = Some(N::SHAPE.to_string());
            network
        };
        // Set only if the float engine ran at the precision.
        network.precision = applied.get();
        Ok(network)
    }

    /// The USI engine (options, position, search thread) on `output`, loading networks as
    /// [`App::load_at`] and [`App::load_integer`] say.
    pub fn usi_engine(&self, output: Box<dyn Write + Send>) -> usi::Engine {
        let app = self.clone();
        usi::Engine::new(usi::Output::new(output), self.loader()).with_integer_loader(Box::new(
            move |eval_file, precision| app.load_integer(eval_file, precision),
        ))
    }

    /// The default weights and where they come from (for `info string`).
    fn default_source(&self) -> Result<(Source, String), Error> {
        let shape = N::SHAPE;
        Ok(match &self.default {
            DefaultWeights::Unset if shape == DEFAULT_SHAPE => (
                usi_eval_file::default_weights()?,
                format!("EvalFile not set: embedded default {shape}, trained"),
            ),
            DefaultWeights::Unset => random(shape, 1)?,
            DefaultWeights::Random(seed) => random(shape, *seed)?,
            DefaultWeights::File(path) => (
                Arc::new(
                    WeightFile::open(path)
                        .map_err(|e| format!("default weights '{}': {e}", path.display()))?,
                ),
                format!("default weights {}", path.display()),
            ),
            DefaultWeights::Embedded(bytes) => (
                Arc::new(
                    WeightFile::from_bytes(bytes)
                        .map_err(|e| format!("the embedded weights are damaged: {e}"))?,
                ),
                "EvalFile not set: embedded weights".to_string(),
            ),
        })
    }

    /// Runs the USI protocol on stdin/stdout until `quit`: the whole `main` of an engine.
    /// Any command-line argument prints what the program is and exits (`--help`,
    /// `--version` with status 0, anything else with 2), since USI takes none.
    pub fn run_usi(self) -> ExitCode {
        if let Some(arg) = std::env::args().nth(1) {
            println!(
                "Manaka USI engine for shape {} ({} parameters). Run without arguments and speak \
                 USI on stdin/stdout; set the option EvalFile to an MNW1 file of this shape.",
                N::SHAPE,
                shape_params(N::SHAPE)
            );
            let known = ["--help", "-h", "--version"].contains(&arg.as_str());
            return if known {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
        let engine = self.usi_engine(Box::new(io::stdout()));
        match usi::run_engine(io::stdin().lock(), engine) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: USI input/output failed: {e}");
                ExitCode::from(1)
            }
        }
    }

    /// Runs the USI protocol on `input` until `quit` or its end, answering on `output`
    /// (tests, an engine inside another program).
    pub fn run_usi_on(&self, input: impl BufRead, output: Box<dyn Write + Send>) -> io::Result<()> {
        usi::run_engine(input, self.usi_engine(output))
    }

    /// A reusable search on the default weights (it keeps its tree and cache between calls,
    /// as the USI engine does along a game).
    pub fn searcher(&self, config: SearchConfig) -> Result<Searcher, Error> {
        let network = self.load("")?;
        Ok(Searcher {
            evaluator: network.factory.create(),
            search: GumbelSearch::new(config),
            description: network.description,
        })
    }

    /// Searches `position` once on the default weights with the default settings.
    pub fn search(
        &self,
        position: &Position,
        limits: &SearchLimits,
    ) -> Result<SearchResult, Error> {
        Ok(self
            .searcher(SearchConfig::default())?
            .run(position, limits))
    }

    /// Self-play on the default weights into `dir` (HCPE3 files, resumable; see
    /// [`selfplay::run`]), with `threads` evaluator threads. [`selfplay_config`] gives the
    /// settings of `manaka selfplay`.
    pub fn selfplay(
        &self,
        config: &SelfplayConfig,
        threads: usize,
        dir: &Path,
    ) -> Result<Progress, Error> {
        let network = self.load("")?;
        let name = format!("{} ({})", N::SHAPE, network.description);
        Ok(selfplay::run(
            config,
            &name,
            network.factory,
            threads,
            dir,
            &mut |_| {},
        )?)
    }

    /// The trainer's settings (docs/training.md) for `N`'s shape, writing `out`: starting
    /// from the app's default weights file if one was chosen ([`App::weights`]), else from
    /// SPEC §7's random initialisation; the other fields are `manaka train`'s defaults.
    pub fn train_config(&self, out: impl Into<PathBuf>) -> TrainConfig {
        let shape = manaka_shapes::Shape::parse(N::SHAPE).expect("a compiled shape is valid");
        let mut config = TrainConfig::new(shape, out.into());
        if let DefaultWeights::File(path) = &self.default {
            config.init = Some(path.clone());
        }
        config
    }

    /// Trains `config` (of `N`'s shape) on data files — HCPE, HCPE3 or PackedSfenValue, told
    /// by extension — or directories of them, such as [`App::selfplay`]'s; the weights are
    /// then at `config.out`, ready for [`App::weights`] or `EvalFile`.
    pub fn train(&self, config: &TrainConfig, data: &[&Path]) -> Result<Summary, Error> {
        if config.shape.to_string() != N::SHAPE {
            return Err(format!(
                "the training settings are for shape {}, this engine is {}",
                config.shape,
                N::SHAPE
            )
            .into());
        }
        let mut dataset = Dataset::new();
        for &path in data {
            let files = if path.is_dir() {
                let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                    .map_err(|e| format!("cannot list {}: {e}", path.display()))?
                    .filter_map(|entry| entry.ok().map(|e| e.path()))
                    .filter(|p| p.is_file() && DataFormat::from_path(p).is_some())
                    .collect();
                files.sort();
                files
            } else {
                vec![path.to_path_buf()]
            };
            for file in files {
                dataset.load(&file, None, None)?;
            }
        }
        Ok(train::train(config, &dataset, None, &mut |_| {})?)
    }

    /// The search benchmark of USI `bench net` on the default weights: `searches` searches
    /// of `simulations` each over the bench positions ([`usi::bench::positions`]).
    pub fn bench(&self, simulations: u32, searches: usize) -> Result<BenchReport, Error> {
        let network = self.load("")?;
        let mut evaluator = network.factory.create();
        Ok(crate::search::bench::run(
            &usi::bench::positions(),
            evaluator.as_mut(),
            &usi::bench::config(),
            simulations,
            searches,
        ))
    }
}

/// The evaluator factory over engine `N` on `source` (one evaluator per search thread, all
/// reading the same weights), its hidden layers at `precision` when `N` takes it (never for
/// an `nnue` shape: their precision is the integer engine's), else at f32; `applied` records
/// the precision that runs.
fn factory_at<N: CompiledNetwork>(
    source: Source,
    precision: Precision,
    applied: &Cell<Precision>,
) -> Result<Arc<dyn EvaluatorFactory>, Error> {
    let at = if source.shape().nnue {
        None
    } else {
        N::from_source_at(source.clone(), precision)
    };
    let engine = match at {
        Some(engine) => {
            applied.set(precision);
            engine?
        }
        None => {
            applied.set(Precision::F32);
            N::from_source(source)?
        }
    };
    Ok(Arc::new(NetworkFactory(Arc::new(engine))))
}

/// `path` as the text of an `EvalFile` value.
fn utf8(path: &Path) -> Result<&str, Error> {
    Ok(path
        .to_str()
        .ok_or_else(|| format!("the default weights' path {} is not UTF-8", path.display()))?)
}

fn random(shape: &str, seed: u64) -> Result<(Source, String), Error> {
    let parsed = manaka_shapes::Shape::parse(shape)?;
    Ok((
        Arc::new(init::random_weights(&parsed, seed)),
        format!("EvalFile not set: random weights (seed {seed}) of shape {shape}"),
    ))
}

fn shape_params(shape: &str) -> u64 {
    manaka_shapes::Shape::parse(shape).map_or(0, |s| s.param_count())
}

/// `manaka selfplay`'s settings for `games` games of `simulations` simulations a move: 16
/// moves considered at the root, Gumbel scale 1, at most 320 moves a game (then a draw), the
/// CSA 27-point declaration rule, one game at a time per thread, 100 games a file, seed 1.
pub fn selfplay_config(games: u64, simulations: u32) -> SelfplayConfig {
    SelfplayConfig {
        games,
        settings: GameSettings {
            simulations,
            max_considered: 16,
            gumbel_scale: 1.0,
            max_moves: 320,
            entering_king: EnteringKingRule::Csa27,
            cache_entries: 1 << 12,
            resign: None,
        },
        seed: 1,
        batching: Batching::PerThread,
        games_per_file: 100,
        openings: Default::default(),
        shard: Default::default(),
    }
}

/// A search bound to an evaluator: [`App::searcher`].
pub struct Searcher {
    search: GumbelSearch,
    evaluator: Box<dyn Evaluator>,
    description: String,
}

impl Searcher {
    /// Searches `position` within `limits` (the tree of the previous search is reused when
    /// `position` continues its game).
    pub fn run(&mut self, position: &Position, limits: &SearchLimits) -> SearchResult {
        self.search.run(position, self.evaluator.as_mut(), limits)
    }

    /// The search itself (settings, clearing its tree for a new game).
    pub fn search_mut(&mut self) -> &mut GumbelSearch {
        &mut self.search
    }

    /// Which network it runs, as the USI engine prints it at `isready`.
    pub fn description(&self) -> &str {
        &self.description
    }
}
