//! Proven results, growth and flat priors, end to end (docs/search.md: "Proven results",
//! "Growth", "Flat priors"). The rules core that judges mates here is checked against
//! cshogi elsewhere (tests/rules_oracle_cshogi.rs); the mate facts used below were
//! confirmed with cshogi's `mate_move` when the tests were written.

use super::tests::HashEvaluator;
use super::tree::{NO_NODE, NodeId, NodeKind, ROOT, Tree};
use super::*;
use crate::eval::MaterialEvaluator;
use crate::shogi::{Move, Position};

fn pos(sfen: &str) -> Position {
    Position::from_sfen(sfen).unwrap()
}

fn after(sfen: &str, moves: &[&str]) -> Position {
    let mut p = pos(sfen);
    p.play_usi_moves(moves.iter().copied()).unwrap();
    p
}

fn search(p: &Position, config: SearchConfig, n: u32, e: &mut dyn Evaluator) -> SearchResult {
    GumbelSearch::new(config).run(p, e, &SearchLimits::simulations(n))
}

/// A search of `p` on `threads` threads with the material evaluator.
fn material_search(
    p: &Position,
    config: SearchConfig,
    limits: &SearchLimits,
    threads: usize,
) -> SearchResult {
    let mut evaluators: Vec<Box<dyn Evaluator>> = (0..threads)
        .map(|_| Box::new(MaterialEvaluator) as Box<dyn Evaluator>)
        .collect();
    let control = SearchControl::new(limits);
    GumbelSearch::new(config).run_threads(p, &mut evaluators, limits, &control, &mut |_| {})
}

/// Black mates in 3: B*3c or B*5e, then a gold drop (cshogi: `mate_move(3)` = B*3c, and
/// after B*5e each of White's two replies has a mate in one).
const MATE3: &str = "8k/9/7pp/9/9/9/9/9/K8 b BG 1";

/// Every defence of `line[0]` in `p` leaves a mate in one (a mate in 3 checked by trying
/// each reply, not by trusting the search).
pub(crate) fn is_mate_in_three(p: &Position, first: Move) -> bool {
    let mut q = p.clone();
    q.do_move(first);
    let replies = q.legal_moves();
    q.in_check()
        && !replies.is_empty()
        && replies.iter().all(|&r| {
            q.do_move(r);
            let mate = q.mate_in_one().is_some();
            q.undo_move(r);
            mate
        })
}

#[test]
fn a_mate_in_three_is_proven_at_the_root_and_ends_the_search() {
    let p = pos(MATE3);
    for e in [
        &mut MaterialEvaluator as &mut dyn Evaluator,
        &mut HashEvaluator::default(),
    ] {
        let r = search(&p, SearchConfig::default(), 20_000, e);
        assert_eq!(r.proof, Some(Proof::Win { plies: 3 }), "{}", e.name());
        assert_eq!(r.mate_plies(), Some(3));
        assert_eq!(r.root_value, 1.0);
        assert!(
            r.stats.simulations < 20_000,
            "a proven root ends the search"
        );
        let best = r.best_move.unwrap();
        assert!(
            is_mate_in_three(&p, best),
            "{} is no mate in 3",
            best.to_usi()
        );
        // The PV is the mate, to the end.
        assert_eq!(r.pv.len(), 3, "{:?}", r.pv);
        let mut end = p.clone();
        for &m in &r.pv {
            assert!(end.is_legal(m));
            end.do_move(m);
        }
        assert!(end.is_checkmate());
    }
}

#[test]
fn a_lost_root_reports_a_negative_mate_and_resists() {
    // After B*5e White has two replies, each mated at once: lost in 2 plies.
    let p = after(MATE3, &["B*5e"]);
    let r = search(&p, SearchConfig::default(), 2_000, &mut MaterialEvaluator);
    assert_eq!(r.proof, Some(Proof::Loss { plies: 2 }));
    assert_eq!(r.mate_plies(), Some(-2));
    assert_eq!(r.score_cp(), -30000);
    assert_eq!(r.pv.len(), 2, "the reply, then the mate: {:?}", r.pv);
    // Nothing the leaf check proves takes a second descent, so the search stops early.
    assert!(r.stats.simulations < 100, "{}", r.stats.simulations);
}

#[test]
fn a_forced_repetition_is_a_proven_draw() {
    // Bare kings; Black's king (9i) has three moves, and each leads to a position the game
    // has seen (the history shuttles through all three): every root move is a repetition.
    let p = after(
        "8k/9/9/9/9/9/9/9/K8 b - 1",
        &[
            "9i9h", "1a1b", "9h9i", "1b1a", "9i8h", "1a1b", "8h9i", "1b1a", "9i8i", "1a1b", "8i9i",
            "1b1a",
        ],
    );
    assert_eq!(p.legal_moves().len(), 3);
    let r = search(
        &p,
        SearchConfig::default(),
        800,
        &mut HashEvaluator::default(),
    );
    assert_eq!(r.proof, Some(Proof::Draw));
    assert_eq!(r.root_value, 0.0);
    assert_eq!(r.score_cp(), 0);
    assert_eq!(r.mate_plies(), None);
    assert_eq!(r.stats.simulations, 3, "one descent per move, then proven");
    // Without the history nothing is proven.
    let fresh = pos(&p.to_sfen());
    let r = search(
        &fresh,
        SearchConfig::default(),
        200,
        &mut HashEvaluator::default(),
    );
    assert_eq!(r.proof, None);
}

#[test]
fn a_guaranteed_draw_is_not_given_away() {
    // Black is far behind on material (the material evaluator sees every move as losing)
    // but one move repeats the position (a draw): the search must prefer it.
    let p = after(
        "4k4/9/9/9/4r4/9/9/9/K8 b - 1",
        &["9i9h", "5a5b", "9h9i", "5b5a"],
    );
    let rep = p.parse_usi_move("9i9h").unwrap();
    let r = search(&p, SearchConfig::default(), 400, &mut MaterialEvaluator);
    assert_eq!(r.best_move, Some(rep), "the drawing move");
}

/// Every node of the tree, with its depth.
fn walk(tree: &Tree) -> Vec<(NodeId, usize)> {
    let mut out = vec![(ROOT, 0)];
    let mut i = 0;
    while i < out.len() {
        let (id, d) = out[i];
        if tree.node(id).kind == NodeKind::Expanded {
            for e in tree.edges(id) {
                if e.child != NO_NODE {
                    out.push((e.child, d + 1));
                }
            }
        }
        i += 1;
    }
    out
}

#[test]
fn proven_children_take_no_more_descents_than_their_first() {
    // An endgame of exposed kings and pieces in hand, searched long enough to reach many
    // mates, mate-checked nodes and repetitions.
    let p = pos("4k4/9/9/9/9/9/9/9/4K4 b Gg 1");
    let mut s = GumbelSearch::new(SearchConfig::default());
    let r = s.run(
        &p,
        &mut HashEvaluator::default(),
        &SearchLimits::simulations(30_000),
    );
    let tree = &s.state.tree;
    let nodes = walk(tree);
    assert_eq!(
        nodes.len() as u64,
        r.stats.nodes,
        "every node reachable once"
    );
    let born_proven: Vec<_> = nodes
        .iter()
        .filter(|&&(id, _)| id != ROOT && tree.node(id).kind == NodeKind::Terminal)
        .collect();
    assert!(
        born_proven.len() > 10,
        "the test needs terminals: {}",
        born_proven.len()
    );
    for &&(id, _) in &born_proven {
        assert_eq!(tree.node(id).visits, 1, "node {id}");
    }
    assert_eq!(r.stats.proven_hits, 0);
}

/// Growth over a long search: at least `bar` new nodes per simulation.
fn assert_growth(p: &Position, config: SearchConfig, n: u32, e: &mut dyn Evaluator, bar: f64) {
    let r = search(p, config, n, e);
    assert_eq!(r.stats.simulations, u64::from(n), "{}", e.name());
    assert!(
        r.growth() >= bar,
        "{}: {} new nodes in {} simulations ({:.3}; proven hits {}, capped {})",
        e.name(),
        r.stats.new_nodes,
        r.stats.simulations,
        r.growth(),
        r.stats.proven_hits,
        r.stats.capped_hits
    );
    assert_eq!(r.stats.new_nodes, r.stats.nodes, "a fresh tree");
}

#[test]
fn long_searches_keep_growing() {
    // The bar (0.9 new nodes per simulation over 100,000 simulations), on a middle
    // game and an opening, with a value-only evaluator and a hashed one.
    let positions = [
        pos("ln1g3nl/1r1sg1k2/p2ppsbpp/2p2pp2/1p7/2PP5/PPBSPPPPP/2G1GS1R1/LN2K2NL b - 25"),
        after("startpos", &["7g7f", "3c3d"]),
    ];
    for p in &positions {
        assert_growth(
            p,
            SearchConfig::default(),
            100_000,
            &mut MaterialEvaluator,
            0.9,
        );
        assert_growth(
            p,
            SearchConfig::default(),
            100_000,
            &mut HashEvaluator::default(),
            0.9,
        );
    }
}

#[test]
fn a_shallow_depth_cap_spreads_instead_of_revisiting() {
    // With a cap of 6 plies the deterministic descent reaches the cap early: visited leaves
    // there take no more descents, so the tree still grows (mctx's rule, kept as
    // `cap_revisits` for parity, revisits them and stalls).
    let p = after("startpos", &["7g7f", "3c3d"]);
    let capped = SearchConfig {
        max_depth: 6,
        ..SearchConfig::default()
    };
    assert_growth(
        &p,
        capped.clone(),
        20_000,
        &mut HashEvaluator::default(),
        0.9,
    );
    let r = search(
        &p,
        SearchConfig {
            cap_revisits: true,
            ..capped
        },
        20_000,
        &mut HashEvaluator::default(),
    );
    assert!(r.growth() < 0.9, "mctx's rule stalls: {}", r.growth());
    assert!(r.stats.max_depth <= 6);
}

#[test]
fn flat_priors_consider_captures_and_checks_first() {
    // The material evaluator gives every move the same logit: generation order alone would
    // leave the free bishop on 2d outside the considered set.
    let p = pos("4k4/9/9/7b1/9/9/PPPPPPP1P/1B5R1/LNSGKGSNL b - 1");
    let take = p.parse_usi_move("2h2d").unwrap();
    for n in [64, 800, 20_000] {
        let r = search(&p, SearchConfig::default(), n, &mut MaterialEvaluator);
        assert_eq!(r.best_move, Some(take), "{n} simulations");
    }
}

/// Nodes in the subtree under `id`.
fn subtree_size(tree: &Tree, id: NodeId) -> usize {
    let mut n = 0;
    let mut todo = vec![id];
    while let Some(x) = todo.pop() {
        n += 1;
        if tree.node(x).kind == NodeKind::Expanded {
            todo.extend(tree.children(x));
        }
    }
    n
}

#[test]
fn tree_reuse_keeps_exactly_the_subtree_of_the_position_played() {
    let config = SearchConfig {
        reuse_tree: true,
        ..SearchConfig::default()
    };
    let start = after("startpos", &["7g7f", "3c3d"]);
    let mut s = GumbelSearch::new(config);
    let mut e = HashEvaluator::default();
    let first = s.run(&start, &mut e, &SearchLimits::simulations(3_000));
    // Two plies down the PV: the subtree there, as the first search left it.
    let (m1, m2) = (first.pv[0], first.pv[1]);
    let tree = &s.state.tree;
    let a = tree.edges(ROOT).iter().find(|x| x.mv == m1).unwrap().child;
    let b = tree.edges(a).iter().find(|x| x.mv == m2).unwrap().child;
    let (visits, size) = (tree.node(b).visits, subtree_size(tree, b));
    let edges_before: Vec<(Move, u32)> = tree
        .edges(b)
        .iter()
        .map(|x| (x.mv, tree.edge_visits(x)))
        .collect();
    assert!(visits > 10 && size > 10, "{visits} {size}");
    let mut next = start.clone();
    next.do_move(m1);
    next.do_move(m2);
    let calls = e.calls;
    // A search of budget 1 leaves the carried-over statistics visible.
    let r = s.run(&next, &mut e, &SearchLimits::simulations(1));
    assert_eq!(r.stats.reused_visits, u64::from(visits));
    assert_eq!(r.stats.reused_nodes, size as u64);
    assert_eq!(
        r.stats.nodes,
        size as u64 + r.stats.new_nodes,
        "the subtree, plus what this search added"
    );
    assert!(
        e.calls - calls <= 1,
        "no root evaluation: at most the one leaf"
    );
    // The root's edges and their visits (before the one new simulation) are the subtree's.
    let tree = &s.state.tree;
    let after_edges: Vec<(Move, u32)> = tree
        .edges(ROOT)
        .iter()
        .map(|x| (x.mv, tree.edge_visits(x)))
        .collect();
    let moved: u32 = after_edges
        .iter()
        .zip(&edges_before)
        .map(|(x, y)| {
            assert_eq!(x.0, y.0);
            x.1 - y.1
        })
        .sum();
    assert_eq!(moved, 1, "one simulation on top of the carried-over visits");
    // The schedule counts this search only: the one visit.
    assert_eq!(r.root_moves.iter().map(|m| m.visits).sum::<u32>(), 1);
}

#[test]
fn another_position_or_a_cleared_tree_starts_clean() {
    let config = SearchConfig {
        reuse_tree: true,
        ..SearchConfig::default()
    };
    let start = after("startpos", &["7g7f", "3c3d"]);
    let mut s = GumbelSearch::new(config);
    let mut e = HashEvaluator::default();
    let first = s.run(&start, &mut e, &SearchLimits::simulations(1_000));
    let mut next = start.clone();
    next.do_move(first.pv[0]);
    // The same position set up from its SFEN (another game, no history): clean.
    let r = s.run(
        &pos(&next.to_sfen()),
        &mut e,
        &SearchLimits::simulations(10),
    );
    assert_eq!(r.stats.reused_visits, 0);
    // A different line of the same game: clean.
    let other = after("startpos", &["2g2f", "8c8d"]);
    let r = s.run(&other, &mut e, &SearchLimits::simulations(1_000));
    assert_eq!(r.stats.reused_visits, 0);
    let mut next = other.clone();
    next.do_move(r.pv[0]);
    s.clear_tree();
    let r = s.run(&next, &mut e, &SearchLimits::simulations(10));
    assert_eq!(r.stats.reused_visits, 0, "usinewgame");
    // Another policy temperature: the tree's priors are stale, so it starts clean; a
    // setting that leaves the priors alone (PUCT's c) keeps the subtree.
    let r = s.run(&start, &mut e, &SearchLimits::simulations(1_000));
    let mut next = start.clone();
    next.do_move(r.pv[0]);
    let mut kept = s.config().clone();
    let t = kept.interior.prior_temperature();
    kept.interior = InteriorRule::Puct {
        c: 3.0,
        fpu_reduction: 0.0,
        policy_temperature: t,
    };
    s.set_config(kept.clone());
    let r = s.run(&next, &mut e, &SearchLimits::simulations(10));
    assert!(r.stats.reused_visits > 0, "{:?}", r.stats);
    let mut next = next.clone();
    next.do_move(r.pv[0]);
    let mut tempered = kept;
    tempered.interior = InteriorRule::Puct {
        c: 3.0,
        fpu_reduction: 0.0,
        policy_temperature: t + 0.5,
    };
    s.set_config(tempered);
    let r = s.run(&next, &mut e, &SearchLimits::simulations(10));
    assert_eq!(r.stats.reused_visits, 0, "PolicyTemperature changed");
    // Off by default.
    let mut plain = GumbelSearch::new(SearchConfig::default());
    let r = plain.run(&start, &mut e, &SearchLimits::simulations(500));
    let mut next = start.clone();
    next.do_move(r.pv[0]);
    let r = plain.run(&next, &mut e, &SearchLimits::simulations(10));
    assert_eq!(r.stats.reused_visits, 0);
}

#[test]
fn a_full_tree_recycles_and_keeps_growing_within_its_bound() {
    // 1 MiB holds about 1,500 nodes here: 40,000 simulations must recycle many times, never
    // exceed the bound, keep adding nodes, and keep the root's statistics whole.
    let p = after("startpos", &["7g7f", "3c3d"]);
    let limit = 1 << 20;
    let config = SearchConfig {
        max_tree_bytes: limit,
        ..SearchConfig::default()
    };
    let mut s = GumbelSearch::new(config);
    let r = s.run(
        &p,
        &mut HashEvaluator::default(),
        &SearchLimits::simulations(40_000),
    );
    assert_eq!(r.stats.simulations, 40_000);
    assert!(r.stats.recycled >= 2, "{}", r.stats.recycled);
    assert!(r.stats.tree_bytes <= limit as u64);
    assert!(s.state.tree.bytes_used() <= limit);
    assert!(r.growth() >= 0.9, "{}", r.growth());
    let root = s.state.tree.node(ROOT);
    assert_eq!(u64::from(root.visits), r.stats.simulations + 1);
    // Every kept node is reachable, and a child never has more visits than its parent.
    let nodes = walk(&s.state.tree);
    assert_eq!(nodes.len(), s.state.tree.len());
    for &(id, _) in &nodes {
        let n = s.state.tree.node(id);
        if n.kind == NodeKind::Expanded {
            for e in s.state.tree.edges(id) {
                assert!(s.state.tree.edge_visits(e) <= n.visits);
            }
        }
    }
}

/// Black's king steps away and back while White's does the same: at the root (the start
/// position again, Black to move) 5i5h repeats the position after the first move.
fn repetition_root() -> Position {
    after(
        "4k4/9/9/9/9/9/9/9/4K4 b RBGSNLPrbgsnlp 1",
        &["5i5h", "5a5b", "5h5i", "5b5a"],
    )
}

#[test]
fn a_draw_value_is_what_a_repetition_backs_up_from_each_side() {
    let p = repetition_root();
    let repeat = p.parse_usi_move("5i5h").unwrap();
    for (draw_value, threads) in [(0.0, 1), (0.5, 1), (-0.5, 1), (0.5, 2), (-0.25, 2)] {
        let config = SearchConfig {
            draw_value,
            root_mate_nodes: 0,
            ..SearchConfig::default()
        };
        let mut limits = SearchLimits::simulations(64);
        limits.searchmoves = Some(vec![repeat]);
        let r = material_search(&p, config, &limits, threads);
        let m = r.root_moves.iter().find(|m| m.mv == repeat).unwrap();
        // Every descent ends on the repetition: the move's Q is the draw value for Black
        // (the leaf backs up its negation for White, the side to move there).
        assert_eq!(
            m.q,
            Some(draw_value),
            "draw value {draw_value}, {threads} threads"
        );
        assert_eq!(
            r.proof.is_some(),
            draw_value == 0.0,
            "only a 0 draw is proven"
        );
    }
}

#[test]
fn a_tree_valued_with_a_draw_value_is_reused_only_for_the_same_side_and_value() {
    let p = repetition_root();
    let config = SearchConfig {
        draw_value: 0.3,
        reuse_tree: true,
        root_mate_nodes: 0,
        ..SearchConfig::default()
    };
    // The most visited reply to the best move, in a searched tree.
    let line = |s: &GumbelSearch, best: Move| {
        let tree = &s.state.tree;
        tree.most_visited_expanded(tree.child_by_move(ROOT, best).unwrap())
            .unwrap()
    };
    for (value, plies, expect_reuse) in [
        (0.3, 2, true),
        (-0.3, 2, false),
        (0.3, 1, false),
        // One ply later the opponent is to move: its draw value is the negation.
        (-0.3, 1, true),
    ] {
        let mut s = GumbelSearch::new(config.clone());
        let r = s.run(
            &p,
            &mut MaterialEvaluator,
            &SearchLimits::simulations(2_000),
        );
        let best = r.best_move.unwrap();
        let mut next = p.clone();
        next.do_move(best);
        if plies == 2 {
            next.do_move(line(&s, best));
        }
        s.set_config(SearchConfig {
            draw_value: value,
            ..config.clone()
        });
        let r2 = s.run(
            &next,
            &mut MaterialEvaluator,
            &SearchLimits::simulations(100),
        );
        assert_eq!(
            r2.stats.reused_visits > 0,
            expect_reuse,
            "draw value {value}, {plies} plies later: {:?}",
            r2.stats
        );
    }
}

#[test]
fn a_move_limit_draws_the_leaves_beyond_it_and_bounds_the_mates() {
    // Black mates in 3: with 3 plies left before the limit the mate counts, with 2 it
    // cannot come in time and every line ends drawn by the limit.
    let p = pos(MATE3);
    for (k, threads, proof) in [
        (3, 1, Proof::Win { plies: 3 }),
        (2, 1, Proof::Draw),
        (3, 2, Proof::Win { plies: 3 }),
        (2, 2, Proof::Draw),
    ] {
        let config = SearchConfig {
            plies_to_draw: Some(k),
            max_depth: k as u16,
            root_mate_nodes: 0,
            ..SearchConfig::default()
        };
        let r = material_search(&p, config, &SearchLimits::simulations(50_000), threads);
        assert_eq!(r.proof, Some(proof), "{k} plies left, {threads} threads");
    }
}
