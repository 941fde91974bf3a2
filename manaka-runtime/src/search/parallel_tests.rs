//! The parallel search (`parallel.rs`) end to end: one thread is the single-thread search
//! bit for bit; with more, the budget is spent exactly, nothing stays in flight, the tree's
//! statistics stay consistent, proofs and mates come out as with one thread, a full tree
//! is recycled, and `stop` ends the search.

use super::solver_tests::is_mate_in_three;
use super::tests::HashEvaluator;
use super::tree::{NodeKind, ROOT, Tree};
use super::*;
use crate::eval::MaterialEvaluator;
use crate::shogi::Position;
use std::time::Duration;

const MIDGAME: &str = "ln1g3nl/1r1sg1k2/p2ppsbpp/2p2pp2/1p7/2PP5/PPBSPPPPP/2G1GS1R1/LN2K2NL b - 25";
/// Black mates in 3 (B*3c or B*5e, then a gold drop; confirmed with cshogi's `mate_move`).
const MATE3: &str = "8k/9/7pp/9/9/9/9/9/K8 b BG 1";

fn pos(sfen: &str) -> Position {
    Position::from_sfen(sfen).unwrap()
}

fn hash_evaluators(n: usize) -> Vec<Box<dyn Evaluator>> {
    (0..n)
        .map(|_| Box::new(HashEvaluator::default()) as Box<dyn Evaluator>)
        .collect()
}

fn run_threads(
    search: &mut GumbelSearch,
    p: &Position,
    evaluators: &mut [Box<dyn Evaluator>],
    limits: &SearchLimits,
) -> SearchResult {
    let control = SearchControl::new(limits);
    search.run_threads(p, evaluators, limits, &control, &mut |_| {})
}

/// Every node: no descent left in flight, and at least as many visits as its children
/// together (each backup through a node goes on to at most one child).
fn assert_consistent(tree: &Tree) {
    for n in tree.nodes() {
        assert_eq!(n.pending, 0, "a virtual loss left behind");
        assert_ne!(n.kind, NodeKind::Pending, "a node never evaluated");
    }
    let mut todo = vec![ROOT];
    while let Some(id) = todo.pop() {
        let n = *tree.node(id);
        let children: u32 = tree.children(id).map(|c| tree.node(c).visits).sum();
        assert!(
            n.visits >= children,
            "node {id}: {} visits < {children} below",
            n.visits
        );
        todo.extend(tree.children(id));
    }
}

#[test]
fn one_thread_is_the_single_thread_search_bit_for_bit() {
    let p = pos(MIDGAME);
    // The default rule (its prior at temperature 1.5) and PUCT on the network's own prior
    // (T = 1): the parallel search computes priors outside the lock, the sequential one at
    // expansion, so a path that used another temperature would differ in one of the two.
    let untempered = InteriorRule::Puct {
        c: 2.0,
        fpu_reduction: 0.0,
        policy_temperature: 1.0,
    };
    assert_ne!(InteriorRule::PLAY.prior_temperature(), 1.0);
    for (batch_size, interior) in [
        (1, InteriorRule::PLAY),
        (8, InteriorRule::PLAY),
        (1, untempered),
        (8, untempered),
    ] {
        let config = SearchConfig {
            batch_size,
            interior,
            ..SearchConfig::default()
        };
        let limits = SearchLimits::simulations(1_500);
        let mut a =
            GumbelSearch::new(config.clone()).run(&p, &mut HashEvaluator::default(), &limits);
        let mut b = run_threads(
            &mut GumbelSearch::new(config),
            &p,
            &mut hash_evaluators(1),
            &limits,
        );
        (a.elapsed, b.elapsed) = (Duration::ZERO, Duration::ZERO);
        assert_eq!(a.pv, b.pv);
        assert_eq!(a.stats, b.stats);
        assert_eq!(a.root_value.to_bits(), b.root_value.to_bits());
        for (x, y) in a.root_moves.iter().zip(&b.root_moves) {
            assert_eq!((x.mv, x.visits), (y.mv, y.visits));
            assert_eq!(x.improved_policy.to_bits(), y.improved_policy.to_bits());
        }
    }
}

#[test]
fn two_threads_spend_the_budget_exactly_and_leave_a_consistent_tree() {
    for (sfen, batch_size) in [(MIDGAME, 1), (MIDGAME, 8), ("startpos", 4)] {
        let p = pos(sfen);
        let mut search = GumbelSearch::new(SearchConfig {
            batch_size,
            ..SearchConfig::default()
        });
        let r = run_threads(
            &mut search,
            &p,
            &mut hash_evaluators(2),
            &SearchLimits::simulations(4_000),
        );
        assert_eq!(r.stats.simulations, 4_000, "batch {batch_size}");
        assert_eq!(r.stats.parallel.threads, 2);
        let tree = &search.state.tree;
        // The root's own evaluation and one visit per simulation.
        assert_eq!(tree.node(ROOT).visits, 4_001);
        assert_eq!(
            r.root_moves
                .iter()
                .map(|m| u64::from(m.visits))
                .sum::<u64>(),
            4_000
        );
        assert_consistent(tree);
        assert_eq!(tree.len() as u64, r.stats.nodes);
        assert!(p.is_legal(r.best_move.unwrap()));
        // Every new node is evaluated once, found in the cache, or judged without the
        // network (a repetition, a mate, a leaf mate).
        assert!(r.stats.new_nodes >= r.stats.evaluations - 1);
        assert!(r.growth() > 0.9, "growth {}", r.growth());
    }
}

#[test]
fn two_threads_prove_a_mate_in_three() {
    let p = pos(MATE3);
    let config = SearchConfig {
        root_mate_nodes: 0, // the tree must find it
        ..SearchConfig::default()
    };
    for evaluators in [
        hash_evaluators(2),
        vec![
            Box::new(MaterialEvaluator) as Box<dyn Evaluator>,
            Box::new(MaterialEvaluator),
        ],
    ] {
        let mut evaluators = evaluators;
        let r = run_threads(
            &mut GumbelSearch::new(config.clone()),
            &p,
            &mut evaluators,
            &SearchLimits::simulations(20_000),
        );
        assert_eq!(r.proof, Some(Proof::Win { plies: 3 }));
        assert!(
            r.stats.simulations < 20_000,
            "a proven root ends the search"
        );
        assert!(is_mate_in_three(&p, r.best_move.unwrap()));
        let mut end = p.clone();
        for &m in &r.pv {
            assert!(end.is_legal(m));
            end.do_move(m);
        }
        assert!(end.is_checkmate(), "the PV ends in mate: {:?}", r.pv);
    }
}

#[test]
fn two_threads_recycle_a_full_tree_and_go_on() {
    let p = pos(MIDGAME);
    let max_tree_bytes = 400_000;
    let mut search = GumbelSearch::new(SearchConfig {
        batch_size: 4,
        max_tree_bytes,
        ..SearchConfig::default()
    });
    let r = run_threads(
        &mut search,
        &p,
        &mut hash_evaluators(2),
        &SearchLimits::simulations(30_000),
    );
    assert_eq!(r.stats.simulations, 30_000);
    assert!(r.stats.recycled > 0, "{:?}", r.stats);
    assert!(search.state.tree.bytes_used() <= max_tree_bytes);
    assert_consistent(&search.state.tree);
}

#[test]
fn stop_ends_a_two_thread_search_without_a_budget() {
    let p = pos(MIDGAME);
    let mut search = GumbelSearch::new(SearchConfig::default());
    let limits = SearchLimits::simulations(1_000);
    let control = SearchControl::new(&limits);
    control.set_stop_at_budget(false);
    let mut evaluators = hash_evaluators(2);
    let r = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            control.stop();
        });
        search.run_threads(&p, &mut evaluators, &limits, &control, &mut |_| {})
    });
    assert!(r.stats.simulations > 0);
    assert!(p.is_legal(r.best_move.unwrap()));
    assert_consistent(&search.state.tree);
}

#[test]
fn the_tree_is_reused_after_a_two_thread_search() {
    let mut p = pos("startpos");
    let mut search = GumbelSearch::new(SearchConfig {
        reuse_tree: true,
        ..SearchConfig::default()
    });
    let first = run_threads(
        &mut search,
        &p,
        &mut hash_evaluators(2),
        &SearchLimits::simulations(3_000),
    );
    // Play the best move and the reply the tree visited most.
    let best = first.best_move.unwrap();
    p.do_move(best);
    let tree = &search.state.tree;
    let reply = tree
        .most_visited_expanded(tree.child_by_move(ROOT, best).unwrap())
        .unwrap();
    p.do_move(reply);
    let second = run_threads(
        &mut search,
        &p,
        &mut hash_evaluators(2),
        &SearchLimits::simulations(1_000),
    );
    assert!(second.stats.reused_visits > 0, "{:?}", second.stats);
    assert_eq!(second.stats.simulations, 1_000);
    assert_consistent(&search.state.tree);
}
