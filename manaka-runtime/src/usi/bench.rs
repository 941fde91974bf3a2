//! The USI `bench` command: a fixed set of positions searched with a fixed simulation budget,
//! printing the positions the search looked at — a signature of the search's behaviour, like
//! Stockfish's bench — and the speed. docs/usi.md, "bench".
//!
//! The count is network evaluations (cache hits excluded) plus the root mate search's nodes:
//! with a fixed budget the simulations and the tree nodes are nearly the budget whatever the
//! search does, but which leaves it reaches — transpositions answered by the cache, proven
//! nodes that need no evaluation, mates found early — is what the search decided. Every
//! bench starts from a fresh search (empty tree, cache and mate table), so the count depends
//! on nothing that ran before.
//!
//! Plain `bench` uses the built-in material evaluator and fixed settings ([`config`]: one
//! thread, batch 1, no noise), never the engine's options, so its node count depends only on
//! the search code: a change that alters how the search behaves changes it, a change that
//! does not leaves it alone. `bench net` measures the loaded network with the engine's
//! options instead (its count is a signature only for deterministic settings: `Threads 1`,
//! `BatchSize 1`, `GumbelScale 0`).

use super::engine::game_position;
use super::info::Output;
use super::options::EngineOptions;
use crate::eval::Evaluator;
use crate::search::{GumbelSearch, SearchConfig, SearchControl, SearchLimits};
use crate::shogi::Position;
use std::time::{Duration, Instant};

/// Simulations per position unless `bench N` says otherwise.
pub const SIMULATIONS: u32 = 1000;

/// The positions, as `position` commands write them: openings, middle games, an endgame
/// with many checks, a mate in three (found by the root mate search, no simulations).
pub const POSITIONS: &[&str] = &[
    "startpos",
    "startpos moves 7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d",
    "startpos moves 7g7f 8c8d 7i6h 3c3d 6h7g 7a6b 5g5f 5c5d 3i4h 3a4b 4i5h 4a3b 6g6f 6a5b",
    "startpos moves 2g2f 3c3d 7g7f 4c4d 3i4h 8b4b 5i6h 5a6b 6h7h 6b7b",
    "startpos moves 7g7f 3c3d 8h2b+ 3a2b 7i8h 2b3c 3i4h 7a7b 4g4f 6c6d",
    "sfen ln1g3nl/1r1sk1g2/p1ppp1sp1/1p3pp1p/9/2P1PP3/PPBP2PPP/2G1K2R1/LNS2GSNL b B 21",
    "sfen 4k4/9/9/9/9/9/9/9/4K4 b RBGSNLPrbgsnlp 1",
    "sfen 8k/9/7pp/9/9/9/9/9/K8 b BG 1",
];

/// The fixed settings of plain `bench`: the engine's defaults with a small hash.
pub fn config() -> SearchConfig {
    EngineOptions {
        hash_mb: 64,
        ..EngineOptions::default()
    }
    .search_config()
}

/// The positions of [`POSITIONS`].
pub fn positions() -> Vec<Position> {
    POSITIONS
        .iter()
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let (sfen, moves) = match words.iter().position(|w| *w == "moves") {
                Some(i) => (&words[..i], &words[i + 1..]),
                None => (&words[..], &[][..]),
            };
            let sfen = sfen.strip_prefix(&["sfen"]).unwrap_or(sfen).join(" ");
            let moves: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
            game_position(&sfen, &moves).expect("the bench positions are valid (tested)")
        })
        .collect()
}

/// What `bench` measured, all positions together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BenchTotals {
    pub positions: usize,
    pub simulations: u64,
    /// Evaluations plus mate search nodes: the signature.
    pub nodes: u64,
    pub evaluations: u64,
    pub mate_nodes: u64,
    /// Tree nodes the searches created.
    pub tree_nodes: u64,
    pub elapsed: Duration,
}

impl BenchTotals {
    /// Nodes (the signature's) per second.
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9)).round() as u64
    }
}

/// Searches every bench position with `simulations` each, in a fresh search with `config`
/// (its tree and cache cleared before each position), printing one `info string` per
/// position and the totals; `label` names the evaluator and settings.
pub fn run(
    config: &SearchConfig,
    evaluators: &mut [Box<dyn Evaluator>],
    simulations: u32,
    label: &str,
    out: &Output,
) -> BenchTotals {
    let limits = SearchLimits::simulations(simulations);
    let positions = positions();
    let mut search = GumbelSearch::new(config.clone());
    let mut t = BenchTotals::default();
    for (i, position) in positions.iter().enumerate() {
        search.clear_cache();
        let start = Instant::now();
        let control = SearchControl::new(&limits);
        let r = search.run_threads(position, evaluators, &limits, &control, &mut |_| {});
        let took = start.elapsed();
        let nodes = r.stats.evaluations + r.stats.mate_nodes;
        t.positions += 1;
        t.simulations += r.stats.simulations;
        t.nodes += nodes;
        t.evaluations += r.stats.evaluations;
        t.mate_nodes += r.stats.mate_nodes;
        t.tree_nodes += r.stats.nodes;
        t.elapsed += took;
        out.info_string(&format!(
            "bench position {}/{} nodes {nodes} evaluations {} mate_nodes {} simulations {} \
             tree_nodes {} time {} bestmove {}",
            i + 1,
            positions.len(),
            r.stats.evaluations,
            r.stats.mate_nodes,
            r.stats.simulations,
            r.stats.nodes,
            took.as_millis(),
            r.best_move.map_or("none".to_string(), |m| m.to_usi()),
        ));
    }
    out.info_string(&format!(
        "bench nodes {} nps {} evaluations {} mate_nodes {} simulations {} tree_nodes {} \
         time {} positions {} simulations_per_position {simulations} ({label})",
        t.nodes,
        t.nps(),
        t.evaluations,
        t.mate_nodes,
        t.simulations,
        t.tree_nodes,
        t.elapsed.as_millis(),
        t.positions,
    ));
    out.line(&format!("Nodes searched: {}", t.nodes));
    out.line(&format!("Nodes/second: {}", t.nps()));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::MaterialEvaluator;

    #[test]
    fn the_positions_are_valid_and_not_over() {
        let positions = positions();
        assert_eq!(positions.len(), POSITIONS.len());
        for (p, line) in positions.iter().zip(POSITIONS) {
            assert!(!p.legal_moves().is_empty(), "{line}");
        }
    }

    /// The signature is deterministic (the same count twice), and it sees what the search
    /// does: another setting that changes the search changes it, although the simulations
    /// and tree nodes stay the budget's.
    #[test]
    fn the_node_count_is_a_deterministic_signature() {
        let out = Output::new(Box::new(std::io::sink()));
        let mut evaluator = vec![MaterialEvaluator::factory().create()];
        let a = run(&config(), &mut evaluator, 200, "test", &out);
        let b = run(&config(), &mut evaluator, 200, "test", &out);
        assert_eq!(a.nodes, b.nodes);
        assert_eq!((a.evaluations, a.mate_nodes), (b.evaluations, b.mate_nodes));
        assert!(a.nodes > 0 && a.mate_nodes > 0);
        assert_eq!(a.positions, POSITIONS.len());
        let narrow = SearchConfig {
            max_considered: 4,
            ..config()
        };
        let c = run(&narrow, &mut evaluator, 200, "test", &out);
        assert_eq!(c.simulations, a.simulations);
        assert_ne!(c.nodes, a.nodes);
    }
}
