//! End-to-end search tests: the seed's Verification list and the exact rules.

use super::tree::{NO_NODE, NodeId, NodeKind, ROOT};
use super::*;
use crate::eval::{Evaluation, Evaluator, Leaf, MaterialEvaluator};
use crate::shogi::{Move, Position};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A deterministic evaluator with varied outputs: value and logits are hashes of the
/// position key (and move), so every position looks different and transpositions agree.
#[derive(Clone, Default)]
pub(crate) struct HashEvaluator {
    pub calls: usize,
    pub leaves: usize,
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

fn unit(x: u64) -> f32 {
    ((x >> 11) as f64 / (1u64 << 53) as f64) as f32
}

impl Evaluator for HashEvaluator {
    fn name(&self) -> String {
        "hash".into()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        self.calls += 1;
        self.leaves += batch.len();
        out.clear();
        for leaf in batch {
            let k = leaf.position.key();
            out.push(Evaluation {
                value_logit: 4.0 * unit(mix(k)) - 2.0,
                policy_logits: leaf
                    .moves
                    .iter()
                    .map(|m| {
                        6.0 * unit(mix(k ^ u64::from(m.to_u16()).wrapping_mul(0x9e37_79b9))) - 3.0
                    })
                    .collect(),
            });
        }
    }
}

/// An evaluator that must not be called.
struct Forbidden;

impl Evaluator for Forbidden {
    fn name(&self) -> String {
        "forbidden".into()
    }

    fn evaluate(&mut self, _: &[Leaf<'_>], _: &mut Vec<Evaluation>) {
        panic!("the evaluator was called");
    }
}

/// Values from a table of position keys (default 0), logits from a table of moves
/// (default 0): hand-built situations.
#[derive(Default)]
struct Crafted {
    values: HashMap<u64, f32>,
    logits: HashMap<Move, f32>,
    calls: AtomicUsize,
}

impl Evaluator for Crafted {
    fn name(&self) -> String {
        "crafted".into()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        out.clear();
        for leaf in batch {
            out.push(Evaluation {
                value_logit: self
                    .values
                    .get(&leaf.position.key())
                    .copied()
                    .unwrap_or(0.0),
                policy_logits: leaf
                    .moves
                    .iter()
                    .map(|m| self.logits.get(m).copied().unwrap_or(0.0))
                    .collect(),
            });
        }
    }
}

fn pos(sfen: &str) -> Position {
    Position::from_sfen(sfen).unwrap()
}

fn after(sfen: &str, moves: &[&str]) -> Position {
    let mut p = pos(sfen);
    p.play_usi_moves(moves.iter().copied()).unwrap();
    p
}

fn mv(p: &Position, usi: &str) -> Move {
    p.parse_usi_move(usi).unwrap()
}

const MIDGAME: &str = "ln1g3nl/1r1sg1k2/p2ppsbpp/2p2pp2/1p7/2PP5/PPBSPPPPP/2G1GS1R1/LN2K2NL b - 25";

fn run(
    position: &Position,
    config: SearchConfig,
    n: u32,
    e: &mut dyn Evaluator,
) -> (GumbelSearch, SearchResult) {
    let mut s = GumbelSearch::new(config);
    let r = s.run(position, e, &SearchLimits::simulations(n));
    (s, r)
}

#[test]
fn a_search_spends_its_budget_and_answers_a_legal_move() {
    for sfen in ["startpos", MIDGAME] {
        let p = pos(sfen);
        let (_, r) = run(
            &p,
            SearchConfig::default(),
            100,
            &mut HashEvaluator::default(),
        );
        assert_eq!(r.outcome, Outcome::Searched);
        assert!(p.is_legal(r.best_move.unwrap()));
        assert_eq!(r.stats.simulations, 100);
        assert_eq!(
            r.root_moves
                .iter()
                .map(|m| u64::from(m.visits))
                .sum::<u64>(),
            100
        );
        assert_eq!(r.pv[0], r.best_move.unwrap());
        // The PV is a legal line.
        let mut q = p.clone();
        for &m in &r.pv {
            assert!(q.is_legal(m), "{} illegal in pv", m.to_usi());
            q.do_move(m);
        }
        let total: f64 = r.root_moves.iter().map(|m| m.improved_policy).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }
}

/// Every expanded node's statistics are its own evaluation plus the negated statistics of
/// its children: the sign flips once per edge through every multi-edge backup of a real
/// search (a backup that forgot to negate, or negated twice, breaks this).
#[test]
fn backups_flip_sign_once_per_edge_throughout_the_tree() {
    let p = pos(MIDGAME);
    let config = SearchConfig {
        max_depth: 255,
        ..SearchConfig::default()
    };
    let (s, r) = run(&p, config, 400, &mut HashEvaluator::default());
    assert!(
        r.stats.max_depth >= 4,
        "the search went deep enough to test: {}",
        r.stats.max_depth
    );
    let t = &s.state.tree;
    let mut checked = 0;
    for id in 0..t.len() as u32 {
        let n = t.node(id);
        if n.kind != NodeKind::Expanded {
            continue;
        }
        let (mut sum, mut visits) = (f64::from(n.raw_value), 1u32);
        for e in t.edges(id) {
            if e.child != NO_NODE {
                sum -= t.node(e.child).value_sum;
                visits += t.node(e.child).visits;
            }
        }
        assert_eq!(visits, n.visits, "node {id}");
        assert!(
            (sum - n.value_sum).abs() < 1e-9,
            "node {id}: {sum} vs {}",
            n.value_sum
        );
        checked += 1;
    }
    assert!(checked > 50);
    // The root's Q of a move is minus the child's mean.
    for (m, e) in r.root_moves.iter().zip(t.edges(ROOT)) {
        if let Some(q) = m.q {
            assert!((q + t.node(e.child).mean_value()).abs() < 1e-12);
        }
    }
}

#[test]
fn completed_q_of_the_root_by_hand() {
    // Two simulations from the start position with a crafted network: root value 0.2
    // (logit 2·atanh 0.2), uniform prior over 30 moves, children evaluated at their default
    // 0. With gumbel favouring 7g7f then 2g2f, both get one visit, each q = −0 = 0.
    // The mixed value: (0.2 + 2·(π·0 + π·0)/(2π)) / 3 = 0.2 / 3 for the 28 others.
    let p = Position::startpos();
    let moves = p.legal_moves();
    let mut e = Crafted::default();
    e.values.insert(p.key(), (2.0 * 0.2f64.atanh()) as f32);
    let mut g = vec![0.0; moves.len()];
    g[moves.iter().position(|&m| m == mv(&p, "7g7f")).unwrap()] = 2.0;
    g[moves.iter().position(|&m| m == mv(&p, "2g2f")).unwrap()] = 1.0;
    let config = SearchConfig {
        noise: RootNoise::Fixed(g),
        ..SearchConfig::default()
    };
    let (_, r) = run(&p, config, 2, &mut e);
    let v_raw = f64::from(descent::search_value((2.0 * 0.2f64.atanh()) as f32));
    for m in &r.root_moves {
        let usi = m.mv.to_usi();
        if usi == "7g7f" || usi == "2g2f" {
            assert_eq!(m.visits, 1);
            assert_eq!(m.completed_q, 0.0);
        } else {
            assert_eq!(m.visits, 0);
            assert!(
                (m.completed_q - v_raw / 3.0).abs() < 1e-12,
                "{usi}: {}",
                m.completed_q
            );
        }
    }
    // σ = (50 + 1)·q; π' ∝ exp(σ) over equal logits: visited moves weigh e^0, others
    // e^(51·v/3); root value = Σ π'·completedQ.
    let s_other = 51.0 * v_raw / 3.0;
    let z = 2.0 + 28.0 * s_other.exp();
    let want = 28.0 * s_other.exp() / z * (v_raw / 3.0);
    assert!(
        (r.root_value - want).abs() < 1e-12,
        "{} vs {want}",
        r.root_value
    );
    assert_eq!(r.root_v_hat, v_raw);
}

#[test]
fn root_mate_in_one_before_any_inference_even_when_the_policy_dislikes_it() {
    let p = pos("4k4/9/4G4/9/9/9/9/9/4K4 b G 1");
    let mate = mv(&p, "G*5b");
    let (_, r) = run(&p, SearchConfig::default(), 64, &mut Forbidden);
    assert_eq!(r.outcome, Outcome::MateInOne);
    assert_eq!(r.best_move, Some(mate));
    assert_eq!(r.score_cp(), 30000);
    assert_eq!(r.pv, [mate]);
    // The same position searched with the rule bypassed (a policy that hates the mate)
    // would not necessarily find it: check that the crafted policy really dislikes it.
    let mut e = Crafted::default();
    e.logits.insert(mate, -20.0);
    let (_, r2) = run(&p, SearchConfig::default(), 64, &mut e);
    assert_eq!(
        r2.best_move,
        Some(mate),
        "the exact rule wins whatever the policy"
    );
    assert_eq!(e.calls.load(Ordering::Relaxed), 0);
}

#[test]
fn no_legal_moves_is_mate_without_inference() {
    // White to move, mated by the gold on 5b protected by 5c.
    let p = pos("4k4/4G4/4G4/9/9/9/9/9/4K4 w - 1");
    let (_, r) = run(&p, SearchConfig::default(), 16, &mut Forbidden);
    assert_eq!(r.outcome, Outcome::NoLegalMoves);
    assert_eq!(r.best_move, None);
    assert_eq!(r.root_value, -1.0);
    assert_eq!(r.score_cp(), -30000);
}

#[test]
fn entering_king_declaration_at_the_root() {
    // Black: king and ten pieces in the zone (4 big = 20, 6 small = 6) plus 2 pawns in hand:
    // 28 points, the CSA rule's requirement for Black.
    let p = pos("RRBBGGGGK/SS7/9/9/9/9/9/9/4k4 b 2P 1");
    let (_, r) = run(&p, SearchConfig::default(), 16, &mut Forbidden);
    assert_eq!(r.outcome, Outcome::DeclareWin);
    assert_eq!(r.best_move, None);
    // With declarations ignored it searches instead.
    let config = SearchConfig {
        entering_king: None,
        ..SearchConfig::default()
    };
    let (_, r) = run(&p, config, 16, &mut HashEvaluator::default());
    assert!(matches!(r.outcome, Outcome::Searched | Outcome::MateInOne));
    // One point short (a single pawn in hand): no declaration.
    let p = pos("RRBBGGGGK/SS7/9/9/9/9/9/9/4k4 b P 1");
    let (_, r) = run(
        &p,
        SearchConfig::default(),
        16,
        &mut HashEvaluator::default(),
    );
    assert_ne!(r.outcome, Outcome::DeclareWin);
}

#[test]
fn stable_at_800_simulations_with_extreme_network_outputs() {
    /// Logits of ±80 and values near ±1 (|ℓ| up to 40): softmaxes that would overflow
    /// without max subtraction, priors that underflow to 0 in the mixed value.
    struct Extreme(HashEvaluator);
    impl Evaluator for Extreme {
        fn name(&self) -> String {
            "extreme".into()
        }
        fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
            self.0.evaluate(batch, out);
            for e in out.iter_mut() {
                e.value_logit *= 20.0;
                for l in &mut e.policy_logits {
                    *l = if *l > 2.0 {
                        80.0
                    } else if *l < -2.0 {
                        -800.0
                    } else {
                        *l * 10.0
                    };
                }
            }
        }
    }
    for (sfen, batch) in [("startpos", 1), (MIDGAME, 1), (MIDGAME, 16)] {
        let p = pos(sfen);
        let config = SearchConfig {
            batch_size: batch,
            ..SearchConfig::default()
        };
        let (_, r) = run(&p, config, 800, &mut Extreme(HashEvaluator::default()));
        assert_eq!(r.stats.simulations, 800);
        assert!(r.root_value.is_finite() && r.root_value.abs() <= 1.0);
        let total: f64 = r.root_moves.iter().map(|m| m.improved_policy).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        for m in &r.root_moves {
            assert!(
                m.improved_policy.is_finite() && m.completed_q.is_finite() && m.prior.is_finite()
            );
            assert!(m.completed_q.abs() <= 1.0);
        }
        assert!(p.is_legal(r.best_move.unwrap()));
    }
}

/// The seed's first invariant: batched search with batch size 1 is the sequential search.
#[test]
fn batch_size_one_is_bit_identical_to_sequential() {
    for (sfen, n, noise) in [
        (
            "startpos",
            200,
            RootNoise::Sampled {
                scale: 1.0,
                seed: Some(7),
            },
        ),
        (MIDGAME, 300, RootNoise::NONE),
        (
            MIDGAME,
            64,
            RootNoise::Sampled {
                scale: 1.0,
                seed: Some(3),
            },
        ),
    ] {
        let p = pos(sfen);
        let config = SearchConfig {
            noise,
            batch_size: 1,
            ..SearchConfig::default()
        };
        let limits = SearchLimits::simulations(n);
        let mut results = Vec::new();
        for driver in [Driver::Sequential, Driver::Batched] {
            let mut s = GumbelSearch::new(config.clone());
            let control = SearchControl::new(&limits);
            let mut e = HashEvaluator::default();
            let mut r = s.run_driver(&p, &mut [&mut e], &limits, &control, &mut |_| {}, driver);
            r.elapsed = std::time::Duration::ZERO;
            results.push((r, e.calls, e.leaves));
        }
        let (a, b) = (&results[0], &results[1]);
        assert_eq!(a.0.root_value.to_bits(), b.0.root_value.to_bits());
        for (x, y) in a.0.root_moves.iter().zip(&b.0.root_moves) {
            assert_eq!(x.improved_policy.to_bits(), y.improved_policy.to_bits());
            assert_eq!(x.completed_q.to_bits(), y.completed_q.to_bits());
        }
        assert_eq!(a, b, "{sfen}");
    }
}

#[test]
fn batched_search_collides_evaluates_once_and_stays_consistent() {
    let p = pos(MIDGAME);
    for (batch, vl) in [(8, 1), (32, 0), (32, 3)] {
        let config = SearchConfig {
            batch_size: batch,
            virtual_loss: vl,
            ..SearchConfig::default()
        };
        let mut e = HashEvaluator::default();
        let (s, r) = run(&p, config, 800, &mut e);
        assert_eq!(r.stats.simulations, 800);
        assert_eq!(
            r.root_moves
                .iter()
                .map(|m| u64::from(m.visits))
                .sum::<u64>(),
            800
        );
        // Evaluations never exceed what the evaluator saw, and batches were used.
        assert_eq!(e.leaves as u64, r.stats.evaluations);
        assert!(r.stats.batches < 800, "batches {}", r.stats.batches);
        // Nothing is left in flight.
        let t = &s.state.tree;
        assert!(
            (0..t.len() as u32)
                .all(|id| t.node(id).pending == 0 && t.node(id).kind != NodeKind::Pending)
        );
        if vl == 0 {
            assert!(
                r.stats.collisions > 0,
                "without virtual loss descents collide"
            );
        }
        assert!(p.is_legal(r.best_move.unwrap()));
    }
}

/// A policy blunder that one ply of lookahead exposes: the network's policy loves the rook
/// move next to the enemy king, but the position after it is lost (the king takes the rook),
/// which the network's value of that position says. The search must not play it.
#[test]
fn one_ply_lookahead_rejects_a_policy_blunder() {
    let p = pos("4k4/R8/9/9/9/9/9/9/4K4 b - 1");
    let blunder = mv(&p, "9b4b");
    let mut e = Crafted::default();
    e.logits.insert(blunder, 6.0);
    // After the blunder White (to move) is winning: ℓ = +3 from White's side.
    e.values
        .insert(after("4k4/R8/9/9/9/9/9/9/4K4 b - 1", &["9b4b"]).key(), 3.0);
    for n in [16, 32, 64] {
        let (_, r) = run(&p, SearchConfig::default(), n, &mut e);
        assert_ne!(r.best_move, Some(blunder), "n = {n}");
        let b = r.root_moves.iter().find(|m| m.mv == blunder).unwrap();
        assert!(b.visits > 0, "the blunder was looked at");
        assert!(b.q.unwrap() < -0.5, "and found bad: {:?}", b.q);
    }
    // Policy-only (no lookahead) does play it: the test is not vacuous.
    let config = SearchConfig {
        policy_only: true,
        ..SearchConfig::default()
    };
    let (_, r) = run(&p, config, 16, &mut e);
    assert_eq!(r.best_move, Some(blunder));
}

/// A blunder against a plain material evaluator, where only two plies show the loss: the
/// policy loves moving the dragon next to the enemy king, which one ply of material does not
/// condemn (the dragon is still on the board); the king's capture does.
#[test]
fn two_ply_lookahead_with_material_rejects_a_hanging_dragon() {
    struct LovesBlunder(Move);
    impl Evaluator for LovesBlunder {
        fn name(&self) -> String {
            "material + blunder-loving policy".into()
        }
        fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
            MaterialEvaluator.evaluate(batch, out);
            for (leaf, e) in batch.iter().zip(out.iter_mut()) {
                for (m, l) in leaf.moves.iter().zip(&mut e.policy_logits) {
                    if *m == self.0 {
                        *l = 4.0;
                    }
                }
            }
        }
    }
    let p = pos("4k4/+R8/9/9/9/9/9/9/4K4 b - 1");
    let blunder = mv(&p, "9b4b");
    let mut e = LovesBlunder(blunder);
    // One ply: the position after the blunder is as good as any other for material.
    let child = after("4k4/+R8/9/9/9/9/9/9/4K4 b - 1", &["9b4b"]);
    let quiet = after("4k4/+R8/9/9/9/9/9/9/4K4 b - 1", &["9b9c"]);
    assert_eq!(
        MaterialEvaluator::material_cp(&child),
        MaterialEvaluator::material_cp(&quiet)
    );
    for n in [64, 200] {
        let (_, r) = run(&p, SearchConfig::default(), n, &mut e);
        assert_ne!(r.best_move, Some(blunder), "n = {n}");
        let b = r.root_moves.iter().find(|m| m.mv == blunder).unwrap();
        assert!(
            b.visits >= 2 && b.q.unwrap() < -0.1,
            "n = {n}: the blunder was searched and refuted: {b:?}"
        );
    }
}

#[test]
fn repetition_in_the_tree_is_judged_from_the_game_history() {
    // The kings step out and back: the root is the start position's board for the second
    // time, and 5i5h now repeats the position after the first move: a draw, value 0.
    let p = after("startpos", &["5i5h", "5a5b", "5h5i", "5b5a"]);
    let moves = p.legal_moves();
    let rep = mv(&p, "5i5h");
    let mut g = vec![0.0; moves.len()];
    g[moves.iter().position(|&m| m == rep).unwrap()] = 50.0;
    struct Winning;
    impl Evaluator for Winning {
        fn name(&self) -> String {
            "always +1".into()
        }
        fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
            out.clear();
            out.extend(batch.iter().map(|l| Evaluation {
                value_logit: 1.0,
                policy_logits: vec![0.0; l.moves.len()],
            }));
        }
    }
    let config = SearchConfig {
        noise: RootNoise::Fixed(g),
        ..SearchConfig::default()
    };
    let (s, r) = run(&p, config, 32, &mut Winning);
    let m = r.root_moves.iter().find(|m| m.mv == rep).unwrap();
    assert!(m.visits > 0);
    assert_eq!(m.q, Some(0.0), "a repetition draw");
    let e = s
        .state
        .tree
        .edges(ROOT)
        .iter()
        .find(|e| e.mv == rep)
        .unwrap();
    assert_eq!(s.state.tree.node(e.child).kind, NodeKind::Terminal);
    // Without the history (the same board set up from SFEN) it is an ordinary move.
    let fresh = pos(&p.to_sfen());
    let (_, r) = run(
        &fresh,
        SearchConfig {
            noise: RootNoise::Fixed(vec![0.0; 0]),
            ..SearchConfig::default()
        },
        32,
        &mut Winning,
    );
    let m = r.root_moves.iter().find(|m| m.mv == rep).unwrap();
    assert!(m.q.is_none_or(|q| q != 0.0));
}

#[test]
fn depth_cap_bounds_every_descent() {
    let p = pos(MIDGAME);
    for cap in [1u16, 2, 5] {
        let config = SearchConfig {
            max_depth: cap,
            ..SearchConfig::default()
        };
        let (_, r) = run(&p, config, 300, &mut HashEvaluator::default());
        assert!(
            r.stats.max_depth <= u32::from(cap),
            "cap {cap}: {}",
            r.stats.max_depth
        );
        assert_eq!(r.stats.simulations, 300);
    }
}

#[test]
fn policy_only_is_one_evaluation() {
    let p = pos(MIDGAME);
    let mut e = HashEvaluator::default();
    let config = SearchConfig {
        policy_only: true,
        ..SearchConfig::default()
    };
    let (_, r) = run(&p, config, 100, &mut e);
    assert_eq!(r.outcome, Outcome::PolicyOnly);
    assert_eq!(e.leaves, 1);
    let best = r
        .root_moves
        .iter()
        .max_by(|a, b| a.logit.total_cmp(&b.logit))
        .unwrap();
    assert_eq!(r.best_move, Some(best.mv));
    for m in &r.root_moves {
        assert!((m.improved_policy - m.prior).abs() < 1e-12);
    }
    assert!((r.root_value - r.root_v_hat).abs() < 1e-12);
}

#[test]
fn stop_memory_limit_and_cache() {
    let p = pos(MIDGAME);
    // Stopped before it starts: still a legal move, from the policy.
    let mut s = GumbelSearch::new(SearchConfig::default());
    let limits = SearchLimits::simulations(1000);
    let control = SearchControl::new(&limits);
    control.stop();
    let r = s.run_with(
        &p,
        &mut HashEvaluator::default(),
        &limits,
        &control,
        &mut |_| {},
    );
    assert_eq!(r.stats.simulations, 0);
    assert!(p.is_legal(r.best_move.unwrap()));
    // A tree capped at 20 KB recycles its least visited nodes and spends the whole budget,
    // sequential and batched.
    for batch_size in [1, 8] {
        let config = SearchConfig {
            max_tree_bytes: 20_000,
            batch_size,
            ..SearchConfig::default()
        };
        let (_, r) = run(&p, config, 1000, &mut HashEvaluator::default());
        assert_eq!(r.stats.simulations, 1000, "batch {batch_size}");
        assert!(r.stats.tree_bytes <= 20_000, "{}", r.stats.tree_bytes);
        assert!(r.stats.recycled > 0 && r.stats.recycled_nodes > 0);
        assert!(p.is_legal(r.best_move.unwrap()));
    }
    // The same search again is served from the cache.
    let mut s = GumbelSearch::new(SearchConfig::default());
    let mut e = HashEvaluator::default();
    let a = s.run(&p, &mut e, &SearchLimits::simulations(100));
    let calls = e.leaves;
    let b = s.run(&p, &mut e, &SearchLimits::simulations(100));
    assert_eq!(e.leaves, calls, "no evaluation the second time");
    assert_eq!(a.root_moves, b.root_moves);
    assert!(b.stats.cache_hits > 0);
}

#[test]
fn progress_reports_and_open_ended_search() {
    let p = pos(MIDGAME);
    let mut s = GumbelSearch::new(SearchConfig::default());
    let limits = SearchLimits {
        simulations: 64,
        stop_at_budget: false,
        time_limit: Some(std::time::Duration::from_millis(100)),
        report_every: Some(std::time::Duration::from_millis(10)),
        searchmoves: None,
    };
    let control = SearchControl::new(&limits);
    let mut reports = 0;
    let r = s.run_with(
        &p,
        &mut HashEvaluator::default(),
        &limits,
        &control,
        &mut |snap| {
            reports += 1;
            assert!(snap.best_move.is_some());
        },
    );
    assert!(reports >= 2, "{reports}");
    assert!(
        r.stats.simulations > 64,
        "kept searching past the budget: {}",
        r.stats.simulations
    );
    // Past the budget only the final two candidates are refined.
    let top: Vec<u32> = r.ranked_moves().iter().take(3).map(|m| m.visits).collect();
    assert!(top[1] > 2 * top[2], "{top:?}");
}

#[test]
fn searchmoves_restrict_the_root_and_multipv_reads_out_lines() {
    let p = pos(MIDGAME);
    let only: Vec<Move> = ["1g1f", "9g9f", "5i4i"].iter().map(|m| mv(&p, m)).collect();
    let mut s = GumbelSearch::new(SearchConfig {
        multipv: 3,
        ..SearchConfig::default()
    });
    let limits = SearchLimits {
        searchmoves: Some(only.clone()),
        ..SearchLimits::simulations(200)
    };
    let r = s.run(&p, &mut HashEvaluator::default(), &limits);
    assert_eq!(r.root_moves.len(), 3);
    assert!(only.contains(&r.best_move.unwrap()));
    assert_eq!(r.lines.len(), 3);
    assert_eq!(r.lines[0].pv, r.pv, "the first line is the PV");
    let firsts: Vec<Move> = r.lines.iter().map(|l| l.pv[0]).collect();
    assert!(only.iter().all(|m| firsts.contains(m)));
    assert!(
        r.lines
            .windows(2)
            .skip(1)
            .all(|w| w[0].visits >= w[1].visits)
    );
    // No legal move among them: every legal move is searched.
    let limits = SearchLimits {
        searchmoves: Some(vec![Move::parse_usi_syntax("5a5b").unwrap()]),
        ..SearchLimits::simulations(50)
    };
    let r = s.run(&p, &mut HashEvaluator::default(), &limits);
    assert_eq!(r.root_moves.len(), p.legal_moves().len());
}

/// An evaluator that answers badly: NaN values, one logit too few, an infinite logit, and
/// nothing at all for every third batch.
struct BrokenEvaluator(usize);

impl Evaluator for BrokenEvaluator {
    fn name(&self) -> String {
        "broken".into()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        self.0 += 1;
        out.clear();
        if self.0 % 3 == 0 {
            return;
        }
        for leaf in batch {
            let mut logits = vec![0.0; leaf.moves.len().saturating_sub(1)];
            if let Some(l) = logits.first_mut() {
                *l = f32::INFINITY;
            }
            out.push(Evaluation {
                value_logit: f32::NAN,
                policy_logits: logits,
            });
        }
    }
}

#[test]
fn unusable_evaluations_are_repaired_and_counted() {
    let p = pos(MIDGAME);
    for (batch_size, threads) in [(1, 1), (8, 1), (4, 2)] {
        let mut evaluators: Vec<Box<dyn Evaluator>> = (0..threads)
            .map(|_| Box::new(BrokenEvaluator(0)) as Box<dyn Evaluator>)
            .collect();
        let limits = SearchLimits::simulations(300);
        let control = SearchControl::new(&limits);
        let r = GumbelSearch::new(SearchConfig {
            batch_size,
            root_mate_nodes: 0,
            ..SearchConfig::default()
        })
        .run_threads(&p, &mut evaluators, &limits, &control, &mut |_| {});
        assert!(p.is_legal(r.best_move.unwrap()));
        assert!(r.root_value.is_finite());
        // Every evaluation the broken evaluator was asked for is unusable.
        assert_eq!(
            r.stats.unusable_evaluations, r.stats.evaluations,
            "batch {batch_size}, {threads} threads: {:?}",
            r.stats
        );
        assert!(r.stats.evaluations > 0);
    }
}

#[test]
fn a_good_evaluator_has_no_unusable_evaluations() {
    let r = GumbelSearch::new(SearchConfig::default()).run(
        &pos(MIDGAME),
        &mut HashEvaluator::default(),
        &SearchLimits::simulations(300),
    );
    assert_eq!(r.stats.unusable_evaluations, 0);
}

/// First-play urgency (puct.rs): with PUCT choosing at the root (`root_interior`), no
/// reduction tries every one of the start position's 30 moves within 100 simulations of a
/// uniform-prior evaluator, as an untried move's exploration term is the largest; a
/// reduction of 1 values an untried move √(k/30) below the mixed value once k moves are
/// tried, so the search stays on fewer moves (by hand, about 13: it tries another while
/// 2·(1/30)·√ΣN exceeds √(k/30)) — and gives the moves it stays on more visits.
#[test]
fn fpu_reduction_keeps_the_search_on_fewer_moves() {
    let p = pos("startpos");
    let tried = |fpu_reduction: f64| {
        let config = SearchConfig {
            root_interior: true,
            interior: InteriorRule::Puct {
                c: 2.0,
                fpu_reduction,
                policy_temperature: 1.0,
            },
            ..SearchConfig::default()
        };
        let (_, r) = run(&p, config, 100, &mut MaterialEvaluator);
        assert_eq!(r.stats.simulations, 100);
        let visits: Vec<u32> = r.root_moves.iter().map(|m| m.visits).collect();
        (
            visits.iter().filter(|&&n| n > 0).count(),
            visits.iter().copied().max().unwrap_or(0),
        )
    };
    let (all, most_plain) = tried(0.0);
    let (few, most_reduced) = tried(1.0);
    assert_eq!(all, 30);
    assert!(
        (8..=18).contains(&few),
        "{few} moves tried with the reduction, {all} without"
    );
    assert!(most_reduced > most_plain, "{most_reduced} vs {most_plain}");
}

/// PUCT's policy temperature: the priors stored on the tree's edges are `softmax(logit / T)`.
/// Black's 7g7f and White's reply 3c3d at logit ln 16, every other move at 0: of 30 moves,
/// by hand T = 1 gives 16 / 45 = 0.3556 (1 / 45 each other), T = 2 gives 4 / 33 = 0.1212
/// (1 / 33) — on the root's edges and on every White node below them; the flatter prior
/// sends fewer of 200 simulations to 7g7f. The Gumbel rule keeps the network's own prior.
#[test]
fn policy_temperature_flattens_the_stored_prior() {
    let p = pos("startpos");
    let favourite = mv(&p, "7g7f");
    let reply = mv(&after("startpos", &["2g2f"]), "3c3d");
    let search = |interior: InteriorRule| {
        let mut e = Crafted::default();
        e.logits.insert(favourite, 16f32.ln());
        e.logits.insert(reply, 16f32.ln());
        let config = SearchConfig {
            root_interior: true,
            interior,
            ..SearchConfig::default()
        };
        run(&p, config, 200, &mut e)
    };
    let puct = |policy_temperature: f64| InteriorRule::Puct {
        c: 2.0,
        fpu_reduction: 0.0,
        policy_temperature,
    };
    // (the favourite's prior, another move's) on `node`'s edges.
    let priors_at = |s: &GumbelSearch, node: NodeId, best: Move| {
        let edges = s.state.tree.edges(node);
        assert_eq!(edges.len(), 30);
        let of =
            |want: bool| f64::from(edges.iter().find(|e| (e.mv == best) == want).unwrap().prior);
        (of(true), of(false))
    };
    let close = |(a, b): (f64, f64), (x, y): (f64, f64)| {
        assert!(
            (a - x).abs() < 1e-6 && (b - y).abs() < 1e-6,
            "{a} {b} vs {x} {y}"
        )
    };
    for (t, expected) in [
        (1.0, (16.0 / 45.0, 1.0 / 45.0)),
        (2.0, (4.0 / 33.0, 1.0 / 33.0)),
    ] {
        let (s, _) = search(puct(t));
        close(priors_at(&s, ROOT, favourite), expected);
        let tree = &s.state.tree;
        let children: Vec<NodeId> = tree
            .edges(ROOT)
            .iter()
            .map(|e| e.child)
            .filter(|&c| c != NO_NODE && !tree.edges(c).is_empty())
            .collect();
        assert!(
            children.len() > 5,
            "{} White nodes expanded",
            children.len()
        );
        for c in children {
            close(priors_at(&s, c, reply), expected);
        }
    }
    let visits = |r: &SearchResult| {
        r.root_moves
            .iter()
            .find(|m| m.mv == favourite)
            .unwrap()
            .visits
    };
    let (_, sharp) = search(puct(1.0));
    let (_, flat) = search(puct(2.0));
    assert!(
        visits(&flat) < visits(&sharp),
        "{} vs {}",
        visits(&flat),
        visits(&sharp)
    );
    // The Gumbel rule ignores the temperature: its π' is mctx's.
    let (gumbel, _) = search(InteriorRule::Gumbel);
    close(
        priors_at(&gumbel, ROOT, favourite),
        (16.0 / 45.0, 1.0 / 45.0),
    );
    assert_eq!(InteriorRule::Gumbel.prior_temperature(), 1.0);
}

/// A new game starts from nothing: `clear_cache` (self-play calls it at every game's start)
/// empties the root mate search's table too. Before it did, the table carried what the
/// games a thread had played before had found, so a self-play game's root mate searches —
/// and with them its moves — depended on which thread played it (64 games of generation 6
/// at 128 simulations differed in three of eight files between one and two threads).
#[test]
fn clear_cache_forgets_what_the_root_mate_search_learned() {
    // Black to move with a gold and a pawn in hand against a bare king: many checks to try.
    let pos = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 b GP 1").unwrap();
    let mut search = GumbelSearch::new(SearchConfig {
        root_mate_nodes: 2_000,
        mate_table_bytes: 1 << 12,
        ..SearchConfig::default()
    });
    search.run(&pos, &mut MaterialEvaluator, &SearchLimits::simulations(8));
    let used = |s: &GumbelSearch| s.state.mate.as_ref().map(|m| m.hashfull());
    assert!(used(&search).is_some_and(|h| h > 0), "{:?}", used(&search));
    search.clear_cache();
    assert_eq!(used(&search), Some(0));
}
