//! Search throughput, for `manaka bench`: run a number of searches and report simulations
//! (USI nodes) per second and the tree's bytes per node.
//!
//! Each search starts with an empty evaluation cache, so the figures measure the evaluator
//! and the tree, not cache hits carried over between searches.

use super::{GumbelSearch, SearchConfig, SearchLimits};
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
}

/// Runs `searches` searches of `simulations` each, cycling through `positions`.
pub fn run(
    positions: &[Position],
    evaluator: &mut dyn Evaluator,
    config: &SearchConfig,
    simulations: u32,
    searches: usize,
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
    };
    let mut bytes = 0u64;
    let start = Instant::now();
    for position in positions
        .iter()
        .cycle()
        .take(if positions.is_empty() { 0 } else { searches })
    {
        search.clear_cache();
        let r = search.run(position, evaluator, &limits);
        report.searches += 1;
        report.simulations += r.stats.simulations;
        report.evaluations += r.stats.evaluations;
        report.batches += r.stats.batches;
        report.nodes += r.stats.nodes;
        report.new_nodes += r.stats.new_nodes;
        bytes += r.stats.tree_bytes;
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
    }
}
