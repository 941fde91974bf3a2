//! Every shape compiled into the `manaka` binary, at every SIMD level this CPU runs, equals
//! the reference evaluator (the f64 oracle of SPEC §4–6) on random weights along random games
//! played with incremental accumulator updates.
//!
//! Per shape: at least 50 games and 50 × 200 = 10,000 positions (games stop at 200 plies, or
//! at mate, in which case an extra game makes up the count). Each position is evaluated once by the
//! reference (from scratch, so the oracle shares no incremental state with the engine); then
//! each SIMD level replays the games from the start position with `Network::update`, and its
//! value logit and every legal move's policy logit must satisfy
//! `|engine − reference| <= 1e-4 · (1 + |reference|)`, both for one leaf at a time
//! (`evaluate`) and for batches of leaves (`evaluate_batch`, the shared-W1 GEMM path: every
//! position at the best level, every fifth game at the slower ones).
//!
//! Shapes are checked on worker threads, one shape's weights per worker at a time (the pair
//! tables are large). The test prints, on stderr, which SIMD paths ran for which shapes.

use manaka::kernels::Simd;
use manaka::runtime::compiled::Precision;
use manaka::runtime::network::Network;
use manaka::runtime::reference::ReferenceNet;
use manaka::runtime::reference::compare::{Batches, RandomGames};
use manaka::runtime::weights::{TensorSource, WeightSet, init};
use manaka::shapes::Shape;
use manaka_cli::engines::{self, COMPILED, EngineVisitor};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

const GAMES: usize = 50;
const PLIES: usize = 200;
/// Leaves per `evaluate_batch` call when the games are replayed in batches.
const BATCH: usize = 16;

/// Random weights for `shape`, as `init` makes them. (Its lse channels sum to about e over
/// the 780 active pairs, so the `ln` readout sits near 1, away from the ill-conditioned
/// ln(1) = 0 of a one-wide RMS-normalised block; no adjustment is needed here.)
fn weights(shape: &Shape, seed: u64) -> WeightSet {
    init::random_weights(shape, seed)
}

/// Largest relative errors seen (value, policy) and positions compared.
#[derive(Default)]
struct Stats {
    value: f64,
    policy: f64,
    positions: usize,
}

/// Replays the games on one compiled engine and compares every evaluation, through the
/// runtime's one comparison loop (`reference::compare`).
struct Replay<'a> {
    games: &'a RandomGames,
    shape: &'a str,
    /// Also replay every game in batches (else every fifth): the best level, which
    /// production runs, checks every position both ways; slower levels check a sample.
    batch_all: bool,
}

impl EngineVisitor for Replay<'_> {
    type Out = Stats;

    fn visit<N: Network>(self, net: N) -> Stats {
        let name = net.describe();
        assert!(
            name.starts_with(self.shape),
            "engine {name} for shape {}",
            self.shape
        );
        let mut stats = Stats::default();
        let batch_all = self.batch_all;
        let batches = Batches {
            leaves: BATCH,
            games: &|g| batch_all || g % 5 == 0,
        };
        stats.positions = self.games.replay(&net, &batches, |p| {
            p.assert_close(&name);
            let (value, policy) = p.errors();
            stats.value = stats.value.max(value);
            stats.policy = stats.policy.max(policy);
        });
        stats
    }
}

/// Checks one shape at every SIMD level; returns the report line.
fn check_shape(name: &str, seed: u64) -> String {
    let shape = Shape::parse(name).expect("compiled-in shapes are valid");
    let source: Arc<dyn TensorSource + Send + Sync> = Arc::new(weights(&shape, seed));
    let reference = ReferenceNet::new(source.clone()).expect("random weights are complete");
    let clock = Instant::now();
    let games = RandomGames::play(
        &reference,
        GAMES,
        PLIES,
        GAMES * PLIES,
        seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
    );
    let positions = games.positions();
    let mut parts = vec![format!("reference {:.1}s", clock.elapsed().as_secs_f64())];
    let levels = Simd::available();
    for &simd in &levels {
        let clock = Instant::now();
        let batch_all = Some(&simd) == levels.last();
        let stats = engines::with_engine_precision(
            source.clone(),
            simd,
            Precision::F32,
            Replay {
                games: &games,
                shape: name,
                batch_all,
            },
        )
        .expect("a compiled-in shape has a compiled engine")
        .expect("random weights fit the compiled engine");
        assert_eq!(stats.positions, positions);
        parts.push(format!(
            "{simd} {:.1}s (max rel err value {:.1e}, policy {:.1e})",
            clock.elapsed().as_secs_f64(),
            stats.value,
            stats.policy
        ));
    }
    format!(
        "{name}: {} games, {positions} positions; {}",
        games.len(),
        parts.join(", ")
    )
}

#[test]
fn every_compiled_shape_at_every_simd_level_equals_the_reference() {
    let levels: Vec<String> = Simd::available().iter().map(|s| s.to_string()).collect();
    // Two workers (this machine has two cores); each holds one shape's weights at a time.
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 2);
    // Largest first (the head's W1 dominates both the reference's and the engines' time), so
    // that the slowest shape does not start last.
    let mut order: Vec<&str> = COMPILED.to_vec();
    order.sort_by_key(|name| {
        let s = Shape::parse(name).expect("valid");
        std::cmp::Reverse(s.input_width() * u64::from(s.h))
    });
    let next = AtomicUsize::new(0);
    let lines = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(name) = order.get(i) else { break };
                    let line = check_shape(name, 1000 + i as u64);
                    // Straight to stderr: the harness captures `println!`, not this.
                    let _ = writeln!(std::io::stderr(), "  {line}");
                    lines.lock().unwrap().push(line);
                }
            });
        }
    });
    let lines = lines.into_inner().unwrap();
    assert_eq!(
        lines.len(),
        COMPILED.len(),
        "every compiled-in shape was checked"
    );
    let _ = writeln!(
        std::io::stderr(),
        "compiled engines equal the reference: {} shapes × SIMD paths [{}] (not available on this CPU: [{}])",
        COMPILED.len(),
        levels.join(", "),
        ["scalar", "avx2", "avx512"]
            .iter()
            .filter(|l| !levels.iter().any(|x| x == *l))
            .copied()
            .collect::<Vec<_>>()
            .join(", "),
    );
}

#[test]
fn the_compiled_list_is_valid_and_has_no_duplicates() {
    let mut seen = std::collections::HashSet::new();
    for name in COMPILED {
        let shape = Shape::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            shape.to_string(),
            *name,
            "compiled shapes are listed by canonical name"
        );
        assert!(seen.insert(*name), "{name} is listed twice");
    }
}
