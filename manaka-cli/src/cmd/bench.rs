//! `manaka bench`: speed of the compiled-in engines, one row per shape.
//!
//! Weights are random (`weights::init`, seed 1, in memory): speed does not depend on the
//! values, and a benchmark needs no weight file. Positions come from one reproducible random
//! game. Every figure is the fastest of several timed rounds (the minimum is the estimate
//! least disturbed by other work on the machine), so a short run is already stable.
//!
//! What the columns measure (all per position, one core):
//! - `update_ns`: one incremental accumulator update, averaged over the moves of the game;
//! - `head_ns`: the head for the value alone (norms, W1, W2 if any, value), batch of one;
//! - `policy_ns`: what scoring every legal move adds to that (about 80 moves here);
//! - `evals_per_s`: full incremental evaluations per second, 1 / (update + head + policy);
//! - `speedup_vs_reference`: the reference evaluator's time for the same evaluation (it
//!   rebuilds the accumulators, then head and policy, in f64) over the engine's;
//! - `batch_head_ns`: `head_ns` when 16 leaves share one pass over W1 (the batched search);
//! - `batch_evals_per_s`, `batch_speedup_vs_reference`: the same two figures with the batched
//!   head, i.e. what the batched search gets per leaf;
//! - `refresh_ns`: rebuilding both accumulators from scratch;
//! - `search_nps`, `search_nps_batched`: Gumbel search simulations per second with the
//!   search's evaluator (800 simulations from three positions of the game), one leaf per
//!   network call and 16; `bytes_per_node`: the search tree's mean bytes per node;
//!   `search_growth`: new tree nodes per simulation of the sequential search (at least 0.9
//!   expected, docs/search.md "Growth"); `search_nps_no_leaf_mate`: the sequential search
//!   with the leaf mate check off, so `1 − search_nps / search_nps_no_leaf_mate` is its cost;
//! - `search_scaling`: the parallel search (`--threads`, one evaluator each on one tree) at
//!   each `--scaling-batches` size, `--scaling-simulations` per search from the same three
//!   positions, best of two interleaved rounds: simulations and new nodes per second, the
//!   speed-up over one thread at the same batch size, and the share of the threads' time
//!   spent holding the tree's lock and waiting for it (docs/search.md, "Threads");
//! - `w1_stream_ns`: reading a buffer of W1's size once at the same vector width (a sum
//!   into independent accumulators), i.e. the bandwidth floor of a batch-of-one f32 head (see
//!   docs/benchmarks.md);
//! - `precision`, `w1_precision_bytes`, `w1_floor_ns`, `head_over_floor`: the row's
//!   precision of W1/W2 (`--precision`, one row per shape and precision), the bytes of its
//!   W1 copy (int8: with its per-row f32 scales and i32 sums), the time to stream those bytes once as
//!   above (the floor of the smaller W1), and `head_ns` over that floor (issue 17's goal:
//!   within 1.3×);
//! - `integer` (`nnue` shapes): the same figures for the integer engine, YaneuraOu's
//!   arithmetic at the same level (with VNNI where the CPU has it; docs/nnue.md).

use crate::engines::{self, COMPILED, EngineVisitor};
use anyhow::{Context, Result, bail};
use manaka::kernels::Simd;
use manaka::kernels::cpu::bf16_copy_bytes;
use manaka::kernels::cpu::int::{IntSimd, int8_copy_bytes};
use manaka::runtime::compiled::Precision;
use manaka::runtime::eval::Leaf;
use manaka::runtime::network::{Network, NetworkEvaluator, StateLeaf};
use manaka::runtime::random::SplitMix64;
use manaka::runtime::reference::{ReferenceNet, compare};
use manaka::runtime::search::{SearchConfig, bench as search_bench};
use manaka::runtime::shogi::{Move, MoveEffect, Position};
use manaka::runtime::weights::{TensorSource, init};
use manaka::shapes::Shape;
use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Measure the compiled engines: update, head, policy, batched head, full evaluations per
/// second and the speed-up over the reference evaluator, one row per shape.
///
/// Uses random weights (speed does not depend on the values). Progress goes to stderr; the
/// table (or, with --json, one JSON object) to stdout.
///
/// Example: `manaka bench --shapes pair16_d128_o3_h512,pair4_d16_o2_h32 --json`
#[derive(clap::Args)]
pub struct Args {
    /// Comma-separated shapes to measure (default: every compiled-in shape; `manaka shape
    /// list` shows them).
    #[arg(long, value_delimiter = ',', value_name = "SHAPE,...")]
    shapes: Vec<String>,
    /// SIMD level: scalar, avx2 or avx512 (default: the best this CPU has, or MANAKA_SIMD).
    #[arg(long, value_name = "LEVEL")]
    simd: Option<String>,
    /// Number formats of the hidden layers' weights (W1, W2), comma-separated, one row per
    /// shape and precision, measured one after the other: f32 (the file's), bf16 or int8
    /// (copies made at load; docs/evaluator.md, "Precision").
    #[arg(long, value_delimiter = ',', default_value = "f32", value_name = "f32|bf16|int8,...", value_parser = super::eval::precision_parser())]
    precision: Vec<Precision>,
    /// Seconds spent measuring each quantity of each shape.
    #[arg(long, default_value_t = 0.25, value_name = "SECONDS")]
    time: f64,
    /// Search threads to measure the parallel search at (comma-separated; default 1 and
    /// every core this machine has).
    #[arg(long, value_delimiter = ',', value_name = "N,...", value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Vec<u32>,
    /// Batch sizes (leaves per evaluator call, per thread) for the parallel search figures.
    #[arg(long, value_delimiter = ',', value_name = "N,...", default_value = "1,8,32", value_parser = clap::value_parser!(u32).range(1..=4096))]
    scaling_batches: Vec<u32>,
    /// Simulations per search in the parallel search figures (0 = skip them).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    scaling_simulations: u32,
    /// Print one JSON object {"simd", "precision", "clock_ghz", "rows": [{shape, precision,
    /// params, bytes, ...}]}.
    #[arg(long)]
    json: bool,
}

/// One point of the parallel search's scaling.
#[derive(Clone, Debug)]
struct Scaling {
    threads: usize,
    batch: usize,
    nps: f64,
    new_nodes_per_s: f64,
    lock_held_share: f64,
    lock_wait_share: f64,
}

impl Scaling {
    fn json(&self, base: f64) -> serde_json::Value {
        serde_json::json!({
            "threads": self.threads,
            "batch": self.batch,
            "nps": self.nps.round(),
            "new_nodes_per_s": self.new_nodes_per_s.round(),
            "speedup_vs_1_thread": (self.nps / base * 1000.0).round() / 1000.0,
            "lock_held_share": (self.lock_held_share * 1000.0).round() / 1000.0,
            "lock_wait_share": (self.lock_wait_share * 1000.0).round() / 1000.0,
        })
    }
}

/// The one-thread figure at `s`'s batch size (the base of its speed-up).
fn scaling_base(all: &[Scaling], s: &Scaling) -> f64 {
    all.iter()
        .find(|b| b.batch == s.batch && b.threads == 1)
        .map_or(s.nps, |b| b.nps)
}

/// One shape's figures.
#[derive(Clone, Debug)]
struct Row {
    shape: String,
    precision: Precision,
    params: u64,
    bytes: u64,
    simd: Simd,
    update_ns: f64,
    head_ns: f64,
    policy_ns: f64,
    batch_head_ns: f64,
    refresh_ns: f64,
    search_nps: f64,
    search_nps_batched: f64,
    search_nps_no_leaf_mate: f64,
    search_growth: f64,
    bytes_per_node: f64,
    reference_ns: f64,
    w1_bytes: u64,
    w1_stream_ns: f64,
    /// The bytes of W1 at the row's precision, and the time to stream them once.
    w1_precision_bytes: u64,
    w1_floor_ns: f64,
    peak_rss_bytes: Option<u64>,
    /// The integer engine's figures (`nnue` shapes).
    int: Option<IntRow>,
    search_scaling: Vec<Scaling>,
}

impl Row {
    fn eval_ns(&self) -> f64 {
        self.update_ns + self.head_ns + self.policy_ns
    }

    /// A full evaluation with the head batched 16 leaves at a time.
    fn batch_eval_ns(&self) -> f64 {
        self.update_ns + self.batch_head_ns + self.policy_ns
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "shape": self.shape,
            "precision": self.precision.name(),
            "params": self.params,
            "bytes": self.bytes,
            "simd": self.simd.name(),
            "update_ns": round1(self.update_ns),
            "head_ns": round1(self.head_ns),
            "policy_ns": round1(self.policy_ns),
            "evals_per_s": self.eval_ns().recip() * 1e9,
            "speedup_vs_reference": self.reference_ns / self.eval_ns(),
            "batch_head_ns": round1(self.batch_head_ns),
            "batch_evals_per_s": self.batch_eval_ns().recip() * 1e9,
            "batch_speedup_vs_reference": self.reference_ns / self.batch_eval_ns(),
            "refresh_ns": round1(self.refresh_ns),
            "search_nps": self.search_nps.round(),
            "search_nps_batched": self.search_nps_batched.round(),
            "search_nps_no_leaf_mate": self.search_nps_no_leaf_mate.round(),
            "search_growth": self.search_growth,
            "bytes_per_node": round1(self.bytes_per_node),
            "reference_ns": round1(self.reference_ns),
            "w1_bytes": self.w1_bytes,
            "w1_stream_ns": round1(self.w1_stream_ns),
            "w1_precision_bytes": self.w1_precision_bytes,
            "w1_floor_ns": round1(self.w1_floor_ns),
            "head_over_floor": (self.head_ns / self.w1_floor_ns * 1000.0).round() / 1000.0,
            "peak_rss_bytes": self.peak_rss_bytes,
            "integer": self.int.as_ref().map(IntRow::json),
            "search_scaling": self
                .search_scaling
                .iter()
                .map(|s| s.json(scaling_base(&self.search_scaling, s)))
                .collect::<Vec<_>>(),
        })
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

pub fn run(args: Args) -> Result<()> {
    if !(args.time > 0.0 && args.time <= 60.0) {
        bail!("--time {} is out of range (0 < seconds <= 60)", args.time);
    }
    let simd = match &args.simd {
        Some(name) => Simd::by_name(name)
            .map_err(anyhow::Error::msg)
            .context("bad --simd")?,
        None => match Simd::from_env() {
            Some(r) => r.map_err(anyhow::Error::msg).context("bad MANAKA_SIMD")?,
            None => Simd::detect(),
        },
    };
    let names: Vec<String> = if args.shapes.is_empty() {
        COMPILED.iter().map(|s| s.to_string()).collect()
    } else {
        args.shapes.clone()
    };
    let mut shapes = Vec::with_capacity(names.len());
    for name in &names {
        let shape =
            Shape::parse(name.trim()).with_context(|| format!("bad --shapes entry '{name}'"))?;
        if !COMPILED.contains(&shape.to_string().as_str()) {
            bail!(
                "shape {shape} is not compiled into this binary (compiled: {}); `manaka build-engine {shape}` builds an engine for it",
                COMPILED.join(", ")
            );
        }
        shapes.push(shape);
    }

    let mut threads: Vec<usize> = args.threads.iter().map(|&t| t as usize).collect();
    if threads.is_empty() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        threads = if cores > 1 { vec![1, cores] } else { vec![1] };
    }
    if !threads.contains(&1) {
        threads.insert(0, 1); // the base of every speed-up
    }
    let scaling = ScalingPlan {
        threads,
        batches: args.scaling_batches.iter().map(|&b| b as usize).collect(),
        simulations: args.scaling_simulations,
    };
    let game = Game::random(200, 0x5eed);
    let budget = Duration::from_secs_f64(args.time);
    let clock_ghz = measure_clock_ghz();
    let precisions = args.precision.iter().map(|p| p.name()).collect::<Vec<_>>();
    let precisions = precisions.join(",");
    progress(format_args!(
        "bench: {} shape(s) at {simd}, {precisions} W1/W2, ~{clock_ghz:.2} GHz, {:.2} s per figure",
        shapes.len(),
        args.time
    ));
    let mut rows = Vec::with_capacity(shapes.len());
    for shape in &shapes {
        progress(format_args!(
            "bench: {shape}: random weights ({} MB)",
            shape.bytes() >> 20
        ));
        let source: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(shape, 1));
        progress(format_args!("bench: {shape}: measuring"));
        let reference_ns = measure_reference(&source, &game, budget)?;
        let int = measure_integer(source.as_ref(), simd, &game, budget)?;
        for &precision in &args.precision {
            let row = measure_row(
                shape,
                &source,
                simd,
                precision,
                Measure {
                    game: &game,
                    budget,
                    scaling: &scaling,
                },
                reference_ns,
                int.clone(),
            )?;
            progress(format_args!(
                "bench: {shape} {precision}: {:.0} evals/s, {:.1}x the reference, head {:.2}x \
                 its W1 floor",
                row.eval_ns().recip() * 1e9,
                row.reference_ns / row.eval_ns(),
                row.head_ns / row.w1_floor_ns
            ));
            rows.push(row);
        }
        drop(source);
    }

    if args.json {
        let v = serde_json::json!({
            "simd": simd.name(),
            "precision": precisions,
            "clock_ghz": round1(clock_ghz * 100.0) / 100.0,
            "weights": "random (init seed 1)",
            "rows": rows.iter().map(Row::json).collect::<Vec<_>>(),
        });
        println!("{v}");
    } else {
        print_table(&rows, simd, clock_ghz);
        print_scaling(&rows, &scaling);
    }
    Ok(())
}

/// The bytes of W1 (`H × IN`) at `precision`: 4, 2 or 1 per weight — bf16 padded to whole
/// tiles (`bf16_copy_bytes`), int8 with one f32 scale and one i32 sum of steps per row
/// (`int8_copy_bytes`): what the batch-of-one head reads once per evaluation.
fn w1_precision_bytes(shape: &Shape, precision: Precision) -> u64 {
    let (inputs, rows) = (shape.input_width(), u64::from(shape.h));
    match precision {
        Precision::F32 => 4 * inputs * rows,
        Precision::Bf16 => bf16_copy_bytes(inputs as usize, rows as usize),
        Precision::Int8 => int8_copy_bytes(inputs as usize, rows as usize),
    }
}

/// One shape's figures at one precision (`reference_ns` and the integer engine's figures
/// are the shape's, measured once).
fn measure_row(
    shape: &Shape,
    source: &Arc<dyn TensorSource + Send + Sync>,
    simd: Simd,
    precision: Precision,
    measure: Measure<'_>,
    reference_ns: f64,
    int: Option<IntRow>,
) -> Result<Row> {
    let budget = measure.budget;
    let figures = engines::with_engine_precision(source.clone(), simd, precision, measure)
        .context("shape listed as compiled but has no engine")?
        .context("cannot build the compiled engine")?;
    let w1_bytes = 4 * shape.input_width() * u64::from(shape.h);
    let w1_precision_bytes = w1_precision_bytes(shape, precision);
    Ok(Row {
        shape: shape.to_string(),
        precision,
        params: shape.param_count(),
        bytes: shape.bytes(),
        simd,
        update_ns: figures.update_ns,
        head_ns: figures.head_ns,
        policy_ns: figures.policy_ns,
        batch_head_ns: figures.batch_head_ns,
        refresh_ns: figures.refresh_ns,
        search_nps: figures.search_nps,
        search_nps_batched: figures.search_nps_batched,
        search_nps_no_leaf_mate: figures.search_nps_no_leaf_mate,
        search_growth: figures.search_growth,
        bytes_per_node: figures.bytes_per_node,
        reference_ns,
        w1_bytes,
        w1_stream_ns: stream_ns(simd, (w1_bytes / 4) as usize, budget),
        // The same stream over the smaller copy's bytes (reading bytes is the same work
        // whatever their type).
        w1_precision_bytes,
        w1_floor_ns: stream_ns(simd, w1_precision_bytes.div_ceil(4) as usize, budget),
        peak_rss_bytes: peak_rss_bytes(),
        int,
        search_scaling: figures.search_scaling,
    })
}

fn progress(args: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{args}");
}

fn print_table(rows: &[Row], simd: Simd, clock_ghz: f64) {
    println!(
        "simd {simd}, ~{clock_ghz:.2} GHz, random weights; times in ns per position, one core"
    );
    println!(
        "{:<36} {:>5} {:>11} {:>9} {:>8} {:>8} {:>8} {:>10} {:>11} {:>8} {:>9} {:>8} {:>9} {:>9} {:>10} {:>9} {:>10} {:>7} {:>8} {:>11}",
        "shape",
        "prec",
        "params",
        "MB",
        "update",
        "head",
        "policy",
        "evals/s",
        "x reference",
        "batch16",
        "x ref b16",
        "refresh",
        "w1 stream",
        "w1 floor",
        "head/floor",
        "search/s",
        "search b16",
        "growth",
        "RSS MB",
        "int evals/s"
    );
    for r in rows {
        println!(
            "{:<36} {:>5} {:>11} {:>9.1} {:>8.0} {:>8.0} {:>8.0} {:>10.0} {:>11.1} {:>8.0} {:>9.1} {:>8.0} {:>9.0} {:>9.0} {:>10.2} {:>9.0} {:>10.0} {:>7.3} {:>8} {:>11}",
            r.shape,
            r.precision.name(),
            r.params,
            r.bytes as f64 / 1e6,
            r.update_ns,
            r.head_ns,
            r.policy_ns,
            r.eval_ns().recip() * 1e9,
            r.reference_ns / r.eval_ns(),
            r.batch_head_ns,
            r.reference_ns / r.batch_eval_ns(),
            r.refresh_ns,
            r.w1_stream_ns,
            r.w1_floor_ns,
            r.head_ns / r.w1_floor_ns,
            r.search_nps,
            r.search_nps_batched,
            r.search_growth,
            r.peak_rss_bytes
                .map_or("-".to_string(), |b| (b >> 20).to_string()),
            r.int.as_ref().map_or("-".to_string(), |i| format!(
                "{:.0}",
                i.eval_ns().recip() * 1e9
            )),
        );
    }
}

fn print_scaling(rows: &[Row], plan: &ScalingPlan) {
    for r in rows.iter().filter(|r| !r.search_scaling.is_empty()) {
        println!(
            "search threads, {}: {} simulations per search, 3 positions, best of 2 rounds",
            r.shape, plan.simulations
        );
        println!(
            "{:>8} {:>6} {:>10} {:>12} {:>8} {:>7} {:>7}",
            "threads", "batch", "sims/s", "new nodes/s", "speedup", "locked", "waiting"
        );
        for s in &r.search_scaling {
            println!(
                "{:>8} {:>6} {:>10.0} {:>12.0} {:>7.2}x {:>6.1}% {:>6.1}%",
                s.threads,
                s.batch,
                s.nps,
                s.new_nodes_per_s,
                s.nps / scaling_base(&r.search_scaling, s),
                100.0 * s.lock_held_share,
                100.0 * s.lock_wait_share
            );
        }
    }
}

/// A reproducible random game: its positions, legal moves and move effects.
struct Game {
    /// `positions[i]` is the position before `moves[i]`; one more at the end.
    positions: Vec<Position>,
    legal: Vec<Vec<Move>>,
    effects: Vec<MoveEffect>,
}

impl Game {
    fn random(plies: usize, seed: u64) -> Game {
        let mut rng = SplitMix64::new(seed);
        loop {
            if let Some(game) = Game::try_random(plies, &mut rng) {
                return game;
            }
            // Mate before `plies` moves: play another game (the next random choices).
        }
    }

    /// The walk of [`compare::random_game`] (the one every engine test uses): `plies + 1`
    /// positions, so that each of the `plies` moves' effects leads to a kept position; `None`
    /// at a mate before that.
    fn try_random(plies: usize, rng: &mut SplitMix64) -> Option<Game> {
        let mut game = Game {
            positions: vec![],
            legal: vec![],
            effects: vec![],
        };
        compare::random_game(&Position::startpos(), plies + 1, rng, |step| {
            if let Some(effect) = step.effect {
                game.effects.push(*effect);
            }
            let mut pos = step.position.clone();
            pos.clear_history();
            game.positions.push(pos);
            game.legal.push(step.moves.to_vec());
        });
        // A mate before `plies` moves ends the walk early, with fewer effects.
        if game.effects.len() < plies {
            return None;
        }
        game.legal.truncate(plies);
        Some(game)
    }
}

/// Times `f` (which does `per_call` operations) in rounds until `budget` is spent; returns
/// nanoseconds per operation in the fastest round.
fn time_ns(budget: Duration, per_call: usize, mut f: impl FnMut()) -> f64 {
    f();
    // Calibrate: calls per round so that a round takes about a tenth of the budget.
    let round = budget / 10;
    let mut calls = 1usize;
    loop {
        let t = Instant::now();
        for _ in 0..calls {
            f();
        }
        if t.elapsed() >= round / 4 || calls >= 1 << 24 {
            break;
        }
        calls *= 2;
    }
    let start = Instant::now();
    let mut best = f64::INFINITY;
    while start.elapsed() < budget || best.is_infinite() {
        let t = Instant::now();
        for _ in 0..calls {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / (calls * per_call) as f64);
    }
    best
}

/// The reference evaluator as `ReferenceEvaluator` runs it: accumulators from scratch, head
/// and policy over the legal moves, in f64.
fn measure_reference(
    source: &Arc<dyn TensorSource + Send + Sync>,
    game: &Game,
    budget: Duration,
) -> Result<f64> {
    let net = ReferenceNet::new(source.clone()).map_err(anyhow::Error::msg)?;
    let mut i = 0;
    Ok(time_ns(budget, 1, || {
        let k = i % game.legal.len();
        black_box(net.evaluate_position(&game.positions[k], &game.legal[k]));
        i += 7;
    }))
}

struct Figures {
    update_ns: f64,
    head_ns: f64,
    policy_ns: f64,
    batch_head_ns: f64,
    refresh_ns: f64,
    /// Gumbel search, simulations per second: one leaf per evaluator call, and 16.
    search_nps: f64,
    search_nps_batched: f64,
    /// The sequential search without the leaf mate check.
    search_nps_no_leaf_mate: f64,
    /// New tree nodes per simulation of the sequential search.
    search_growth: f64,
    /// Mean bytes per search-tree node.
    bytes_per_node: f64,
    search_scaling: Vec<Scaling>,
}

/// What the parallel search figures measure.
struct ScalingPlan {
    threads: Vec<usize>,
    batches: Vec<usize>,
    simulations: u32,
}

struct Measure<'a> {
    game: &'a Game,
    budget: Duration,
    scaling: &'a ScalingPlan,
}

impl EngineVisitor for Measure<'_> {
    type Out = Figures;

    fn visit<N: Network>(self, net: N) -> Figures {
        let game = self.game;
        let budget = self.budget;
        let n = game.effects.len();
        // The incremental state of every position of the game.
        let mut states = Vec::with_capacity(n + 1);
        let mut state = net.new_state(&game.positions[0]);
        states.push(state.clone());
        for (effect, after) in game.effects.iter().zip(&game.positions[1..]) {
            net.update(&mut state, effect, after);
            states.push(state.clone());
        }

        // The whole game's updates from the start position; the one copy of the start state
        // per pass is a small part of a pass of 200 updates.
        let update_ns = time_ns(budget, n, || {
            let mut s = states[0].clone();
            for (effect, after) in game.effects.iter().zip(&game.positions[1..]) {
                net.update(&mut s, effect, after);
            }
            black_box(&s);
        });
        let mut scratch = states[0].clone();
        let mut i = 0;
        let refresh_ns = time_ns(budget, 1, || {
            net.refresh(&mut scratch, &game.positions[i % n]);
            black_box(&scratch);
            i += 1;
        });
        let mut i = 0;
        let head_ns = time_ns(budget, 1, || {
            let k = i % n;
            black_box(net.evaluate(
                &states[k],
                Leaf {
                    position: &game.positions[k],
                    moves: &[],
                },
            ));
            i += 1;
        });
        let mut i = 0;
        let full_ns = time_ns(budget, 1, || {
            let k = i % n;
            black_box(net.evaluate(
                &states[k],
                Leaf {
                    position: &game.positions[k],
                    moves: &game.legal[k],
                },
            ));
            i += 1;
        });
        const BATCH: usize = 16;
        let mut out = Vec::with_capacity(BATCH);
        let mut i = 0;
        let batch_head_ns = time_ns(budget, BATCH, || {
            let batch: Vec<StateLeaf<'_, N::State>> = (0..BATCH)
                .map(|j| {
                    let k = (i + j) % n;
                    StateLeaf {
                        state: &states[k],
                        leaf: Leaf {
                            position: &game.positions[k],
                            moves: &[],
                        },
                    }
                })
                .collect();
            net.evaluate_batch(&batch, &mut out);
            black_box(&out);
            i += BATCH;
        });
        // Search speed: the search's evaluator (accumulators from the cached parent, heads
        // batched) over a few positions of the game, sequential and 16 leaves per call.
        let net = Arc::new(net);
        let roots: Vec<Position> = [0, n / 3, 2 * n / 3]
            .iter()
            .map(|&k| game.positions[k].clone())
            .collect();
        let search = |batch_size: usize, leaf_mate_plies: u32| {
            let mut eval = NetworkEvaluator::new(net.clone());
            let config = SearchConfig {
                batch_size,
                leaf_mate_plies,
                ..SearchConfig::default()
            };
            search_bench::run(&roots, &mut eval, &config, SEARCH_SIMULATIONS, roots.len())
        };
        let leaf_mate = SearchConfig::default().leaf_mate_plies;
        let sequential = search(1, leaf_mate);
        let batched = search(BATCH, leaf_mate);
        let no_leaf_mate = search(1, 0);
        // The parallel search: every (threads, batch) point in each of two rounds, the
        // rounds interleaved so that a burst of other work on the machine hits all points
        // alike; the faster round counts.
        let plan = self.scaling;
        let mut search_scaling: Vec<Scaling> = Vec::new();
        for _round in 0..if plan.simulations == 0 { 0 } else { 2 } {
            for &batch_size in &plan.batches {
                for &threads in &plan.threads {
                    let mut evaluators: Vec<Box<dyn manaka::runtime::eval::Evaluator>> = (0
                        ..threads)
                        .map(|_| {
                            Box::new(NetworkEvaluator::new(net.clone()))
                                as Box<dyn manaka::runtime::eval::Evaluator>
                        })
                        .collect();
                    let config = SearchConfig {
                        batch_size,
                        ..SearchConfig::default()
                    };
                    let r = search_bench::run_threads(
                        &roots,
                        &mut evaluators,
                        &config,
                        plan.simulations,
                        roots.len(),
                    );
                    let point = Scaling {
                        threads,
                        batch: batch_size,
                        nps: r.nps,
                        new_nodes_per_s: r.new_nodes as f64 / r.elapsed.as_secs_f64().max(1e-9),
                        lock_held_share: r.lock_held_share,
                        lock_wait_share: r.lock_wait_share,
                    };
                    match search_scaling
                        .iter_mut()
                        .find(|s| s.threads == threads && s.batch == batch_size)
                    {
                        Some(s) if s.nps >= point.nps => {}
                        Some(s) => *s = point,
                        None => search_scaling.push(point),
                    }
                }
            }
        }
        Figures {
            update_ns,
            head_ns,
            policy_ns: (full_ns - head_ns).max(0.0),
            batch_head_ns,
            refresh_ns,
            search_nps: sequential.nps,
            search_nps_batched: batched.nps,
            search_nps_no_leaf_mate: no_leaf_mate.nps,
            search_growth: sequential.growth(),
            bytes_per_node: sequential.bytes_per_node,
            search_scaling,
        }
    }
}

/// Simulations per search in the search-speed figures.
const SEARCH_SIMULATIONS: u32 = 800;

/// Time to read `len` f32 values once at `simd`'s vector width: the buffer is summed into
/// eight independent vector accumulators, so nothing waits on an FMA or add latency chain and
/// the time is that of moving the data (the kernels' dot product, with two accumulators,
/// measures its latency chain instead). The buffer stays warm in whatever cache level holds
/// it, as W1 does between evaluations.
fn stream_ns(simd: Simd, len: usize, budget: Duration) -> f64 {
    let a = vec![1.0f32; len.div_ceil(128) * 128];
    time_ns(budget, 1, || {
        black_box(stream_sum(simd, black_box(&a)));
    })
}

/// Plain Rust that the compiler vectorises at the requested width (no intrinsics: those
/// live in `kernels/`); `L` floats are eight vectors of that width.
#[inline(always)]
fn sum_lanes<const L: usize>(buf: &[f32]) -> f32 {
    let mut acc = [0.0f32; L];
    for chunk in buf.chunks_exact(L) {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a += x;
        }
    }
    acc.iter().sum()
}

fn stream_sum(simd: Simd, buf: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        fn avx2(buf: &[f32]) -> f32 {
            sum_lanes::<64>(buf)
        }
        #[target_feature(enable = "avx512f")]
        fn avx512(buf: &[f32]) -> f32 {
            sum_lanes::<128>(buf)
        }
        match simd.name() {
            // SAFETY: a `Simd` of these levels exists only when the CPU has their features.
            "avx2" => return unsafe { avx2(buf) },
            "avx512" => return unsafe { avx512(buf) },
            _ => {}
        }
    }
    let _ = simd;
    sum_lanes::<32>(buf)
}

/// The core clock, estimated from a chain of dependent one-cycle integer operations
/// (rotate, xor): there are no cycle counters in this VM, and the roofline needs cycles.
fn measure_clock_ghz() -> f64 {
    const N: u64 = 2_000_000;
    let mut best = f64::INFINITY;
    // The fastest of many short rounds (about a millisecond each): a round that shared the
    // core with another process, or was interrupted, is discarded.
    for _ in 0..60 {
        let t = Instant::now();
        let mut x = black_box(0x1234_5678_9abc_def0u64);
        for _ in 0..N {
            x = x.rotate_left(1) ^ 0x9e37_79b9;
        }
        black_box(x);
        best = best.min(t.elapsed().as_secs_f64());
    }
    // Two dependent one-cycle operations per iteration.
    2.0 * N as f64 / best / 1e9
}

/// The process's peak resident set (Linux `VmHWM`), after this shape's weights were made.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The integer engine's figures (docs/nnue.md), measured with the same visitor as the float
/// engine's.
#[derive(Clone, Debug)]
struct IntRow {
    simd: IntSimd,
    update_ns: f64,
    head_ns: f64,
    policy_ns: f64,
    batch_head_ns: f64,
    refresh_ns: f64,
    search_nps: f64,
}

impl IntRow {
    fn eval_ns(&self) -> f64 {
        self.update_ns + self.head_ns + self.policy_ns
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "simd": self.simd.name(),
            "update_ns": round1(self.update_ns),
            "head_ns": round1(self.head_ns),
            "policy_ns": round1(self.policy_ns),
            "evals_per_s": self.eval_ns().recip() * 1e9,
            "batch_head_ns": round1(self.batch_head_ns),
            "refresh_ns": round1(self.refresh_ns),
            "search_nps": self.search_nps.round(),
        })
    }
}

/// The integer engine of `source`'s shape at `simd` (with VNNI where the CPU has it); `None`
/// for shapes without one (not `nnue`).
fn measure_integer(
    source: &dyn TensorSource,
    simd: Simd,
    game: &Game,
    budget: Duration,
) -> Result<Option<IntRow>> {
    let level = IntSimd::new(simd);
    // The integer engine's search is not measured for threads (its float twin is).
    let scaling = ScalingPlan {
        threads: Vec::new(),
        batches: Vec::new(),
        simulations: 0,
    };
    let measure = Measure {
        game,
        budget,
        scaling: &scaling,
    };
    let Some(figures) = engines::with_int_engine(source, level, measure) else {
        return Ok(None);
    };
    let f = figures.context("cannot build the integer engine")?;
    Ok(Some(IntRow {
        simd: level,
        update_ns: f.update_ns,
        head_ns: f.head_ns,
        policy_ns: f.policy_ns,
        batch_head_ns: f.batch_head_ns,
        refresh_ns: f.refresh_ns,
        search_nps: f.search_nps,
    }))
}
