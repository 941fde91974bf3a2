//! Search throughput, for `manaka bench`: run a number of searches and report simulations
//! (USI nodes) per second and the tree's bytes per node.
//!
//! Each search starts with an empty evaluation cache, so the figures measure the evaluator
//! and the tree, not cache hits carried over between searches.

use super::{GumbelSearch, SearchConfig, SearchControl, SearchLimits, SearchResult};
use crate::eval::Evaluator;
use crate::shogi::Position;
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    pub searches: usize,
    /// Completed simulations, all searches together (USI `nodes`).
    pub simulations: u64,
    /// Leaves the evaluator was asked for.
    pub evaluations: u64,
    /// Evaluator calls.
    pub batches: u64,
    /// Tree nodes created.
    pub nodes: u64,
    /// Nodes the searches added (equal to `nodes` while every search starts afresh).
    pub new_nodes: u64,
    pub elapsed: Duration,
    /// Simulations per second.
    pub nps: f64,
    /// Evaluated leaves per second.
    pub evaluations_per_second: f64,
    /// Mean bytes per tree node over all searches.
    pub bytes_per_node: f64,
    /// The most a node can cost (one with the maximum number of legal moves).
    pub max_bytes_per_node: usize,
    /// Search threads (one evaluator each).
    pub threads: usize,
    /// With several threads: the share of the threads' time spent holding the tree's
    /// lock, and waiting for it (0 with one thread).
    pub lock_held_share: f64,
    pub lock_wait_share: f64,
}

/// Runs `searches` searches of `simulations` each, cycling through `positions`.
pub fn run(
    positions: &[Position],
    evaluator: &mut dyn Evaluator,
    config: &SearchConfig,
    simulations: u32,
    searches: usize,
) -> BenchReport {
    measure(positions, config, simulations, searches, 1, |s, p, l| {
        s.run(p, evaluator, l)
    })
}

/// [`run`] with one search thread per evaluator on one tree ([`GumbelSearch::run_threads`]).
pub fn run_threads(
    positions: &[Position],
    evaluators: &mut [Box<dyn Evaluator>],
    config: &SearchConfig,
    simulations: u32,
    searches: usize,
) -> BenchReport {
    let threads = evaluators.len();
    measure(
        positions,
        config,
        simulations,
        searches,
        threads,
        |s, p, l| {
            let control = SearchControl::new(l);
            s.run_threads(p, evaluators, l, &control, &mut |_| {})
        },
    )
}

fn measure(
    positions: &[Position],
    config: &SearchConfig,
    simulations: u32,
    searches: usize,
    threads: usize,
    mut search_one: impl FnMut(&mut GumbelSearch, &Position, &SearchLimits) -> SearchResult,
) -> BenchReport {
    let mut search = GumbelSearch::new(config.clone());
    let limits = SearchLimits::simulations(simulations);
    let mut report = BenchReport {
        searches: 0,
        simulations: 0,
        evaluations: 0,
        batches: 0,
        nodes: 0,
        new_nodes: 0,
        elapsed: Duration::ZERO,
        nps: 0.0,
        evaluations_per_second: 0.0,
        bytes_per_node: 0.0,
        max_bytes_per_node: super::tree::Tree::max_bytes_per_node(),
        threads,
        lock_held_share: 0.0,
        lock_wait_share: 0.0,
    };
    let mut bytes = 0u64;
    let (mut held, mut waited) = (Duration::ZERO, Duration::ZERO);
    let start = Instant::now();
    for position in positions
        .iter()
        .cycle()
        .take(if positions.is_empty() { 0 } else { searches })
    {
        search.clear_cache();
        let r = search_one(&mut search, position, &limits);
        report.searches += 1;
        report.simulations += r.stats.simulations;
        report.evaluations += r.stats.evaluations;
        report.batches += r.stats.batches;
        report.nodes += r.stats.nodes;
        report.new_nodes += r.stats.new_nodes;
        bytes += r.stats.tree_bytes;
        held += r.stats.parallel.locked;
        waited += r.stats.parallel.lock_wait;
    }
    report.elapsed = start.elapsed();
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    report.nps = report.simulations as f64 / secs;
    report.evaluations_per_second = report.evaluations as f64 / secs;
    report.bytes_per_node = if report.nodes == 0 {
        0.0
    } else {
        bytes as f64 / report.nodes as f64
    };
    let thread_secs = secs * threads as f64;
    report.lock_held_share = held.as_secs_f64() / thread_secs;
    report.lock_wait_share = waited.as_secs_f64() / thread_secs;
    report
}

impl BenchReport {
    /// New tree nodes per simulation (docs/search.md, "Growth").
    pub fn growth(&self) -> f64 {
        if self.simulations == 0 {
            0.0
        } else {
            self.new_nodes as f64 / self.simulations as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::MaterialEvaluator;

    #[test]
    fn reports_throughput_and_memory() {
        let positions = [Position::startpos()];
        let r = run(
            &positions,
            &mut MaterialEvaluator,
            &SearchConfig::default(),
            64,
            3,
        );
        assert_eq!(r.searches, 3);
        assert_eq!(r.simulations, 3 * 64);
        assert!(r.nodes > 0 && r.nps > 0.0);
        assert!(r.bytes_per_node > 0.0 && r.bytes_per_node <= r.max_bytes_per_node as f64);
        assert_eq!((r.threads, r.lock_held_share), (1, 0.0));
    }

    #[test]
    fn reports_threads_and_the_lock() {
        let positions = [Position::startpos()];
        let mut evaluators: Vec<Box<dyn Evaluator>> =
            vec![Box::new(MaterialEvaluator), Box::new(MaterialEvaluator)];
        let r = run_threads(
            &positions,
            &mut evaluators,
            &SearchConfig::default(),
            500,
            2,
        );
        assert_eq!((r.searches, r.simulations, r.threads), (2, 1000, 2));
        assert!(r.lock_held_share > 0.0 && r.lock_held_share < 1.0);
    }
}
