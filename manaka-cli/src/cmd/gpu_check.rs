//! `manaka gpu-check`: the CUDA evaluator on this machine's GPU, checked against the
//! reference evaluator and timed (docs/gpu.md; `scripts/gpu-check.sh` runs it).
//!
//! **Equivalence.** For each shape: fresh random weights (`weights::init`), random positions
//! (random playouts, plus the start position and a sparse mating problem), evaluated on the
//! GPU in batches of 1, 7, 64, 257 and 1000 leaves with every device output and intermediate
//! buffer filled with NaN first. Every value logit and every legal move's policy logit must
//! satisfy `|gpu − reference| <= 1e-4 · (1 + |reference|)`, and no output may stay NaN.
//!
//! **Throughput.** For the baseline and the NNUE shape, leaves per second at batch sizes
//! 64 … 4096: end to end (`Evaluator::evaluate`: packing, copies, kernels) and the kernels
//! alone (the same batch replayed on the device), against a roofline: the time of W1's
//! FLOPs at the fp32 peak, or of the bytes the batch must move at the memory bandwidth,
//! whichever is longer (`batch_bytes` says what counts). The peak figures are assumptions,
//! printed with the results.

use anyhow::Result;

/// H200 SXM datasheet figures (NVIDIA): fp32 without tensor cores, and HBM3e bandwidth.
pub const ASSUMED_FP32_FLOPS: f64 = 67e12;
pub const ASSUMED_BANDWIDTH: f64 = 4.8e12;
/// Tables up to this size are taken to stay in L2 (60 MB on an H200) within a batch.
pub const ASSUMED_L2: f64 = 50e6;

/// Check the CUDA evaluator on this GPU against the reference evaluator (random weights,
/// random positions, outputs poisoned with NaN first; relative error <= 1e-4), then measure
/// leaves per second for batch sizes 64 to 4096 against the roofline.
///
/// Needs a CUDA driver, a device and NVRTC (MANAKA_NVRTC_LIB names the library or its folder
/// when it is not on the library path). Exit status 0: every check passed; 1: a check failed;
/// 2: no usable GPU or bad arguments.
///
/// Example: `manaka gpu-check --shapes pair4_d16_o2_h32 --bench-shapes none --json`
#[derive(clap::Args)]
pub struct Args {
    /// Comma-separated shapes to check (default: every compiled-in shape).
    #[arg(long, value_delimiter = ',', value_name = "SHAPE,...")]
    shapes: Vec<String>,
    /// Random positions per shape in the equivalence check.
    #[arg(long, default_value_t = 600, value_name = "N")]
    positions: usize,
    /// Comma-separated shapes to time (default: pair16_d128_o3_h512 and
    /// pair0_d256_o1_h32_h232_halfkp_nnue; `none` for none).
    #[arg(long, value_delimiter = ',', value_name = "SHAPE,...")]
    bench_shapes: Vec<String>,
    /// Comma-separated batch sizes to time.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,...",
        default_value = "64,128,256,512,1024,2048,4096"
    )]
    batches: Vec<usize>,
    /// Seconds spent timing each batch size (each way).
    #[arg(long, default_value_t = 0.5, value_name = "SECONDS")]
    seconds: f64,
    /// Seed of the random weights and positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
}

#[cfg(not(feature = "cuda"))]
pub fn run(_args: Args) -> Result<()> {
    anyhow::bail!(
        "this manaka was built without the `cuda` feature; build it with `cargo build --release -p manaka-cli --features cuda`"
    )
}

#[cfg(feature = "cuda")]
pub fn run(args: Args) -> Result<()> {
    imp::run(args)
}

#[cfg(feature = "cuda")]
mod imp {
    use super::{ASSUMED_BANDWIDTH, ASSUMED_FP32_FLOPS, ASSUMED_L2, Args};
    use crate::engines::COMPILED;
    use anyhow::{Context, Result, bail};
    use manaka::runtime::cuda::equivalence::{self, Equivalence};
    use manaka::runtime::cuda::{self, CudaEvaluator, CudaNet};
    use manaka::runtime::eval::Leaf;
    use manaka::runtime::reference::ReferenceNet;
    use manaka::runtime::shogi::{Move, Position};
    use manaka::runtime::weights::{TensorSource, init};
    use manaka::shapes::{POLICY_LABELS, SQUARES, Shape, TYPICAL_ACTIVE_TOKENS};
    use serde_json::{Value, json};
    use std::sync::Arc;
    use std::time::Instant;

    const BASELINE: &str = "pair16_d128_o3_h512";
    const NNUE: &str = "pair0_d256_o1_h32_h232_halfkp_nnue";
    /// Batch sizes of the equivalence check, cycled: single leaves, GEMM tile edges, large.
    const CHECK_BATCHES: [usize; 5] = [1, 7, 64, 257, 1000];

    fn parse_shapes(names: &[String], default: &[&str]) -> Result<Vec<Shape>> {
        let names: Vec<String> = if names.is_empty() {
            default.iter().map(|s| s.to_string()).collect()
        } else if names.len() == 1 && names[0] == "none" {
            Vec::new()
        } else {
            names.to_vec()
        };
        names
            .iter()
            .map(|n| Shape::parse(n).with_context(|| format!("bad shape '{n}'")))
            .collect()
    }

    /// The positions of the checks (the runtime's: random playouts of up to 200 plies, the
    /// start position and a sparse mating problem).
    fn positions(count: usize, seed: u64) -> Result<Vec<Position>> {
        equivalence::check_positions(count, seed, 200)
            .map_err(|e| anyhow::anyhow!("random positions: {e}"))
    }

    /// One shape's check: the runtime's equivalence harness on the GPU, outputs poisoned.
    struct Checked {
        shape: String,
        eq: Equivalence,
        seconds: f64,
    }

    fn check_shape(shape: &Shape, count: usize, seed: u64) -> Result<Checked> {
        let start = Instant::now();
        let source: Arc<dyn TensorSource + Send + Sync> =
            Arc::new(init::random_weights(shape, seed));
        let reference = ReferenceNet::new(source.clone()).map_err(|e| anyhow::anyhow!("{e}"))?;
        let net = CudaNet::new(source).with_context(|| format!("{shape} on the GPU"))?;
        let mut gpu = net.evaluator().context("a CUDA evaluator")?;
        gpu.set_poison(true);
        let positions = positions(count, seed)?;
        let eq = equivalence::check(&reference, &positions, &CHECK_BATCHES, |batch, out| {
            gpu.try_evaluate(batch, out)
        });
        Ok(Checked {
            shape: shape.to_string(),
            eq,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    struct Timing {
        shape: String,
        batch: usize,
        leaves_per_s: f64,
        kernel_leaves_per_s: f64,
        roofline_leaves_per_s: f64,
        bound: &'static str,
        flops_per_leaf: f64,
        bytes_per_batch: f64,
    }

    /// W1's FLOPs per leaf (a multiply-add counts 2), as the roofline's compute side.
    fn w1_flops(shape: &Shape) -> f64 {
        2.0 * shape.h as f64 * shape.input_width() as f64
    }

    /// Bytes of memory traffic a batch of `n` leaves with `moves` legal moves needs at
    /// least: W1 and W2 once; the head input and hidden vectors written and read once per
    /// leaf; and the rows gathered per leaf — embedding, pair, moment and field rows of both
    /// perspectives' active tokens (typical counts: 40 tokens, 780 pairs), one policy row per
    /// legal move. A table that fits in L2 ([`ASSUMED_L2`]) costs at most its size per batch;
    /// a larger one (the native pair table, the HalfKP embedding) costs every row gathered.
    fn batch_bytes(shape: &Shape, n: usize, moves: usize) -> f64 {
        let f = 4.0;
        let n = n as f64;
        let tokens = 2.0 * TYPICAL_ACTIVE_TOKENS as f64; // both perspectives
        let pairs = 2.0 * (TYPICAL_ACTIVE_TOKENS * (TYPICAL_ACTIVE_TOKENS - 1) / 2) as f64;
        let gathered = |table_rows: f64, row: f64, reads: f64| {
            let table = f * table_rows * row;
            let bytes = f * reads * row;
            if table <= ASSUMED_L2 {
                bytes.min(table)
            } else {
                bytes
            }
        };
        let t = shape.token_count() as f64;
        let h = shape.h as f64;
        let h2 = shape.h2.unwrap_or(0) as f64;
        let weights = f * (h * shape.input_width() as f64 + h2 * h);
        let activations = n * f * 2.0 * (shape.input_width() as f64 + h + h2);
        weights
            + activations
            + gathered(t, shape.d as f64, n * tokens)
            + gathered(shape.pair_rows() as f64, shape.pair as f64, n * pairs)
            + gathered(t, shape.moments.unwrap_or(0) as f64, n * tokens)
            + gathered(
                t,
                SQUARES as f64 * shape.field.unwrap_or(0) as f64,
                n * tokens,
            )
            + gathered(
                POLICY_LABELS as f64,
                shape.last_hidden() as f64,
                moves as f64,
            )
    }

    /// Leaves per second of a batch of `n` leaves at the roofline: the longer of W1's FLOPs at
    /// the fp32 peak and [`batch_bytes`] at the memory bandwidth; and which one bounds it.
    pub(super) fn roofline(shape: &Shape, n: usize, moves: usize) -> (f64, &'static str) {
        let t_compute = n as f64 * w1_flops(shape) / ASSUMED_FP32_FLOPS;
        let t_memory = batch_bytes(shape, n, moves) / ASSUMED_BANDWIDTH;
        let bound = if t_compute >= t_memory {
            "compute"
        } else {
            "memory"
        };
        (n as f64 / t_compute.max(t_memory), bound)
    }

    fn time_shape(
        shape: &Shape,
        batches: &[usize],
        seconds: f64,
        seed: u64,
    ) -> Result<Vec<Timing>> {
        let source: Arc<dyn TensorSource + Send + Sync> =
            Arc::new(init::random_weights(shape, seed));
        let net = CudaNet::new(source).with_context(|| format!("{shape} on the GPU"))?;
        let mut gpu: CudaEvaluator = net.evaluator().context("a CUDA evaluator")?;
        let max = batches.iter().copied().max().unwrap_or(0);
        let pool = positions(max.clamp(1, 1024), seed)?;
        let moves: Vec<Vec<Move>> = pool.iter().map(|p| p.legal_moves()).collect();
        let mut rows = Vec::new();
        let mut out = Vec::new();
        for &n in batches {
            let batch: Vec<Leaf<'_>> = (0..n)
                .map(|i| Leaf {
                    position: &pool[i % pool.len()],
                    moves: &moves[i % pool.len()],
                })
                .collect();
            let total_moves: usize = batch.iter().map(|l| l.moves.len()).sum();
            gpu.try_evaluate(&batch, &mut out)?; // warm-up: buffers grow, caches fill
            let mut rounds = 0u32;
            let start = Instant::now();
            while rounds < 3 || start.elapsed().as_secs_f64() < seconds {
                gpu.try_evaluate(&batch, &mut out)?;
                rounds += 1;
            }
            let e2e = f64::from(rounds) * n as f64 / start.elapsed().as_secs_f64();
            let mut rounds = 0u32;
            let start = Instant::now();
            while rounds < 3 || start.elapsed().as_secs_f64() < seconds {
                gpu.replay()?;
                rounds += 1;
            }
            let kernels = f64::from(rounds) * n as f64 / start.elapsed().as_secs_f64();
            let (roof, bound) = roofline(shape, n, total_moves);
            rows.push(Timing {
                shape: shape.to_string(),
                batch: n,
                leaves_per_s: e2e,
                kernel_leaves_per_s: kernels,
                roofline_leaves_per_s: roof,
                bound,
                flops_per_leaf: w1_flops(shape),
                bytes_per_batch: batch_bytes(shape, n, total_moves),
            });
        }
        Ok(rows)
    }

    pub fn run(args: Args) -> Result<()> {
        let check = parse_shapes(&args.shapes, COMPILED)?;
        let bench = parse_shapes(&args.bench_shapes, &[BASELINE, NNUE])?;
        if args.batches.iter().any(|&b| b == 0 || b > 65_536) {
            bail!("--batches must be from 1 to 65536");
        }
        if !(args.seconds > 0.0 && args.seconds <= 60.0) {
            bail!("--seconds must be above 0 and at most 60");
        }
        let device = cuda::probe().context("no usable GPU")?;
        let say = |line: String| {
            if !args.json {
                println!("{line}");
            }
        };
        say(format!("device: {device}"));
        say(format!(
            "equivalence: {} positions per shape (+2), batches of {CHECK_BATCHES:?}, outputs poisoned with NaN, |gpu - ref| <= 1e-4 (1 + |ref|)",
            args.positions
        ));
        let mut results = Vec::new();
        for shape in &check {
            eprintln!("checking {shape} ...");
            let c = check_shape(shape, args.positions, args.seed)?;
            say(format!(
                "  {:<40} {:>5} leaves {:>7} moves  max rel err value {:.2e} policy {:.2e}  {:>5.1}s  {}",
                c.shape,
                c.eq.leaves,
                c.eq.moves,
                c.eq.value_error,
                c.eq.policy_error,
                c.seconds,
                if c.eq.ok() { "ok" } else { "FAILED" }
            ));
            for f in &c.eq.failures {
                say(format!("    {f}"));
            }
            results.push(c);
        }
        say(format!(
            "throughput (roofline: W1 FLOPs at {:.0} TFLOP/s fp32, bytes at {:.1} TB/s, tables up to {:.0} MB read once per batch (L2) — assumed H200 SXM figures)",
            ASSUMED_FP32_FLOPS / 1e12,
            ASSUMED_BANDWIDTH / 1e12,
            ASSUMED_L2 / 1e6
        ));
        let mut timings = Vec::new();
        for shape in &bench {
            eprintln!("timing {shape} ...");
            let rows = time_shape(shape, &args.batches, args.seconds, args.seed)?;
            say(format!(
                "  {:<40} {:>6} {:>14} {:>14} {:>14} {:>7} {:>8}",
                "shape", "batch", "leaves/s", "kernels/s", "roofline/s", "of roof", "bound"
            ));
            for r in &rows {
                say(format!(
                    "  {:<40} {:>6} {:>14.0} {:>14.0} {:>14.0} {:>6.1}% {:>8}",
                    r.shape,
                    r.batch,
                    r.leaves_per_s,
                    r.kernel_leaves_per_s,
                    r.roofline_leaves_per_s,
                    100.0 * r.kernel_leaves_per_s / r.roofline_leaves_per_s,
                    r.bound
                ));
            }
            timings.extend(rows);
        }
        let ok = results.iter().all(|r| r.eq.ok());
        if args.json {
            let v = json!({
                "device": device.to_string(),
                "assumptions": {
                    "fp32_flops_per_s": ASSUMED_FP32_FLOPS,
                    "bytes_per_s": ASSUMED_BANDWIDTH,
                    "l2_bytes": ASSUMED_L2,
                    "source": "H200 SXM datasheet: fp32 (no tensor cores), HBM3e"
                },
                "equivalence": results.iter().map(|r| json!({
                    "shape": r.shape, "leaves": r.eq.leaves, "moves": r.eq.moves,
                    "max_rel_error_value": finite(r.eq.value_error),
                    "max_rel_error_policy": finite(r.eq.policy_error),
                    "failures": r.eq.failures, "ok": r.eq.ok(), "seconds": r.seconds,
                })).collect::<Vec<Value>>(),
                "throughput": timings.iter().map(|r| json!({
                    "shape": r.shape, "batch": r.batch,
                    "leaves_per_s": r.leaves_per_s,
                    "kernel_leaves_per_s": r.kernel_leaves_per_s,
                    "roofline_leaves_per_s": r.roofline_leaves_per_s,
                    "bound": r.bound,
                    "w1_flops_per_leaf": r.flops_per_leaf,
                    "bytes_per_batch": r.bytes_per_batch,
                })).collect::<Vec<Value>>(),
                "ok": ok,
            });
            println!("{v}");
        } else {
            println!(
                "{}",
                if ok {
                    "gpu-check: all equivalence checks passed"
                } else {
                    "gpu-check: FAILED"
                }
            );
        }
        if !ok {
            std::process::exit(1);
        }
        Ok(())
    }

    /// JSON has no infinity: an unbounded error (a NaN output) is written as null.
    fn finite(x: f64) -> Value {
        if x.is_finite() { json!(x) } else { Value::Null }
    }
}

#[cfg(all(test, feature = "cuda"))]
mod tests {
    use super::imp::roofline;
    use manaka::shapes::Shape;

    /// The baseline at batch 4096 (docs/gpu.md): W1 is 2·512·800 FLOPs per leaf (50 µs at
    /// 67 TFLOP/s), but its 176 MB pair table does not fit in L2, so the 1560 rows of 64 bytes
    /// gathered per leaf (409 MB), the activations (43 MB), W1, the embedding and the policy
    /// table (7 MB) make it memory-bound: 459 MB at 4.8 TB/s, 96 µs, about 42.8M leaves/s.
    #[test]
    fn baseline_roofline_is_memory_bound_on_the_pair_gathers() {
        let shape = Shape::parse("pair16_d128_o3_h512").unwrap();
        let (leaves_per_s, bound) = roofline(&shape, 4096, 4096 * 80);
        assert_eq!(bound, "memory");
        assert!((leaves_per_s / 42.8e6 - 1.0).abs() < 0.01, "{leaves_per_s}");
        // The NNUE shape: its 128 MB HalfKP embedding is gathered row by row (76 rows of 1 KB
        // per leaf); W1 is tiny (2·32·512 FLOPs).
        let nnue = Shape::parse("pair0_d256_o1_h32_h232_halfkp_nnue").unwrap();
        let (_, bound) = roofline(&nnue, 4096, 4096 * 80);
        assert_eq!(bound, "memory");
    }
}
