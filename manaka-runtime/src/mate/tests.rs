//! Unit tests of the mate solver. Positions and their mates were checked with cshogi
//! (`mate_move`, and its legal-move list for the pawn-drop case); the oracle test
//! (tests/mate_oracle_cshogi.rs) does the same on hundreds of positions.

use super::*;
use crate::random::{self, SplitMix64};
use crate::shogi::{Color, Move, Position};
use std::collections::BTreeSet;

fn pos(sfen: &str) -> Position {
    Position::from_sfen(sfen).unwrap()
}

fn solve_with(solver: &mut MateSolver, sfen: &str, limits: MateLimits) -> MateResult {
    solver.search(&pos(sfen), &limits, &AtomicBool::new(false))
}

fn solve(sfen: &str, limits: MateLimits) -> MateResult {
    solve_with(&mut MateSolver::new(1 << 22), sfen, limits)
}

fn usi(line: &[Move]) -> Vec<String> {
    line.iter().map(|m| m.to_usi()).collect()
}

/// A real mate line: odd length, attacker moves legal and checking, defender moves legal,
/// the end checkmate.
fn assert_mate_line(sfen: &str, line: &[Move]) {
    let mut p = pos(sfen);
    assert!(line.len() % 2 == 1, "{sfen}: {:?}", usi(line));
    for (i, &m) in line.iter().enumerate() {
        assert!(p.is_legal(m), "{sfen}: {m} illegal in {:?}", usi(line));
        p.do_move(m);
        if i % 2 == 0 {
            assert!(
                p.in_check(),
                "{sfen}: {m} gives no check in {:?}",
                usi(line)
            );
        }
    }
    assert!(p.is_checkmate(), "{sfen}: {:?} does not mate", usi(line));
}

/// A proof tree checked with the rules core: every defence present, every attack a legal
/// check, checkmate at the leaves.
fn assert_tree(p: &mut Position, t: &ProofTree) {
    assert!(p.is_legal(t.attack));
    p.do_move(t.attack);
    assert!(p.in_check());
    let legal: BTreeSet<Move> = p.legal_moves().into_iter().collect();
    let given: BTreeSet<Move> = t.defences.iter().map(|(m, _)| *m).collect();
    assert_eq!(legal, given);
    for (d, sub) in &t.defences {
        p.do_move(*d);
        assert_tree(p, sub);
        p.undo_move(*d);
    }
    p.undo_move(t.attack);
}

const BG_MATE3: &str = "8k/9/7pp/9/9/9/9/9/K8 b BG 1";

#[test]
fn mate_in_three_with_bishop_and_gold_in_hand() {
    let r = solve(BG_MATE3, MateLimits::default());
    let line = r.mate().expect("a mate");
    assert_eq!(usi(line)[0], "B*3c");
    assert_eq!(line.len(), 3);
    assert_mate_line(BG_MATE3, line);
    assert!(r.nodes > 0 && r.nodes < 1000, "{}", r.nodes);
}

#[test]
fn the_same_mate_with_white_attacking() {
    // BG_MATE3 turned round: White to move, the same solver for both colours (the table
    // keeps the two attackers apart).
    let white = "8k/9/9/9/9/9/PP7/9/K8 w bg 1";
    let mut s = MateSolver::new(1 << 20);
    for sfen in [BG_MATE3, white, BG_MATE3, white] {
        let r = solve_with(&mut s, sfen, MateLimits::default());
        let line = r.mate().expect("a mate");
        assert_eq!(line.len(), 3, "{sfen}");
        assert_mate_line(sfen, line);
        let r = solve_with(&mut s, sfen, MateLimits::default().with_max_plies(1));
        assert_eq!(r.outcome, MateOutcome::NoMate, "{sfen}");
    }
    assert_eq!(pos(white).side_to_move(), Color::White);
}

#[test]
fn mates_in_one_and_three_in_tsume_positions() {
    // Tsume style: no attacking king, the defender holds every other piece.
    let r = solve(
        "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1",
        MateLimits::default(),
    );
    assert_eq!(usi(r.mate().unwrap()), ["G*5b"]);
    let sfen = "9/4k4/9/4P4/9/9/9/9/9 b 2G2r2b4s4n4l17p 1";
    let r = solve(sfen, MateLimits::default());
    assert_eq!(r.mate().unwrap().len(), 3);
    assert_mate_line(sfen, r.mate().unwrap());
    // One gold fewer: no mate at all (cshogi: none within 15 either).
    let r = solve(
        "9/4k4/9/4P4/9/9/9/9/9 b G2r2b4s4n4l17p 1",
        MateLimits::default(),
    );
    assert_eq!(r.outcome, MateOutcome::NoMate);
}

#[test]
fn no_mate_is_proven() {
    for sfen in [
        "8k/7p1/9/9/9/9/9/9/K8 b R 1",
        "4k4/9/9/9/9/9/9/9/4K4 b R 1",
        // A rook chases the king round the board: lines of checks run into the depth cap,
        // and "no mate" means none within MAX_PLY plies.
        "8k/9/9/9/9/9/9/9/K8 b R 1",
        "startpos",
    ] {
        let r = solve(sfen, MateLimits::nodes(1_000_000));
        assert_eq!(r.outcome, MateOutcome::NoMate, "{sfen}");
    }
}

#[test]
fn a_pawn_drop_mate_is_never_a_mate() {
    // P*1b would mate (the knight guards 1b, the gold 2a and 2b): illegal, and nothing
    // else mates.
    let sfen = "8k/6G2/9/7N1/9/9/9/9/K8 b P 1";
    let p = pos(sfen);
    let drop = Move::parse_usi_syntax("P*1b").unwrap();
    assert!(!p.is_legal(drop));
    assert!(!checks_slow(&p).contains(&drop));
    assert_eq!(
        solve(sfen, MateLimits::default()).outcome,
        MateOutcome::NoMate
    );
    assert_eq!(mate_within(&mut p.clone(), 7, 1_000_000), None);
    // With a bishop as well, P*1b still would mate and still is illegal: the mate takes
    // three plies and does not end with a pawn drop.
    let sfen = "8k/9/7+R1/9/9/9/9/9/9 b BPrb4g4s4n4l17p 1";
    let r = solve(sfen, MateLimits::default());
    let line = r.mate().unwrap();
    assert_eq!(line.len(), 3, "{:?}", usi(line));
    assert_mate_line(sfen, line);
    let last = *line.last().unwrap();
    assert!(last.drop_kind() != Some(crate::shogi::HandKind::Pawn));
    assert_eq!(mate_within(&mut pos(sfen), 1, 1_000_000), None);
    assert!(mate_within(&mut pos(sfen), 3, 1_000_000).is_some());
}

#[test]
fn perpetual_check_is_no_mate() {
    // A rook against a king shut in by its own lance, silver and pawn: the rook can check
    // for ever, nothing mates (cshogi: no mate within 17). Only the repetition rule ends
    // those lines; without it the search runs to its depth cap and answers Unknown.
    let sfen = "lksp5/9/9/9/9/9/9/2K6/9 b R 1";
    let r = solve(sfen, MateLimits::nodes(1_000_000));
    assert_eq!(r.outcome, MateOutcome::NoMate, "{} nodes", r.nodes);
    assert_eq!(mate_within(&mut pos(sfen), 9, 10_000_000), None);
    // The rook checks from 9b and 9a while the king steps between 1b and 1a (the gold can
    // interpose as well).
    let sfen = "R8/8k/7gp/9/9/9/9/9/K8 b - 1";
    assert!(!checks_slow(&pos(sfen)).is_empty());
    assert_eq!(
        solve(sfen, MateLimits::nodes(1_000_000)).outcome,
        MateOutcome::NoMate
    );
}

#[test]
fn the_attacker_may_start_in_check() {
    // Black is in check; the evasion 8e6e (rook takes on 6e) mates.
    let sfen = "1G7/6n1l/S4sp1b/4rl1pp/1R1lk4/PbG1pp3/5s1+n1/1P6S/1L1K5 b 2N2g11p 175";
    assert!(pos(sfen).in_check());
    let r = solve(sfen, MateLimits::default());
    assert_eq!(r.mate().unwrap().len(), 1);
    assert_mate_line(sfen, r.mate().unwrap());
    assert_eq!(
        mate_within(&mut pos(sfen), 1, 1000).map(|m| m.to_usi()),
        Some("8e6e".into())
    );
}

#[test]
fn max_plies_bounds_the_mate() {
    let r = solve(BG_MATE3, MateLimits::default().with_max_plies(1));
    assert_eq!(r.outcome, MateOutcome::NoMate, "no mate within one ply");
    let r = solve(BG_MATE3, MateLimits::default().with_max_plies(4));
    assert_eq!(r.mate().unwrap().len(), 3);
    let r = solve(BG_MATE3, MateLimits::default().with_max_plies(0));
    assert_eq!(r.outcome, MateOutcome::NoMate);
}

#[test]
fn shortest_mate_is_preferred() {
    // df-pn's first proof is often long (the proof tree, built from it, shows it); the
    // shortening passes then find the shortest mate, and every shorter bound proves none.
    let stop = AtomicBool::new(false);
    for (sfen, shortest) in [
        ("k8/1P1+B5/9/9/9/9/9/9/9 b RGSNrb3g3s3n4l17p 1", 3),
        ("7k1/9/4G4/9/9/9/9/9/K8 b R2S 1", 7),
    ] {
        let mut s = MateSolver::new(16 << 20);
        let first = s
            .proof_tree(&pos(sfen), &MateLimits::default(), 1 << 20, &stop)
            .unwrap();
        assert!(first.depth() > shortest, "{sfen}: {}", first.depth());
        let r = solve_with(&mut s, sfen, MateLimits::default());
        let line = r.mate().unwrap();
        assert_eq!(line.len(), shortest, "{sfen}: {:?}", usi(line));
        assert_mate_line(sfen, line);
        let r = solve_with(
            &mut s,
            sfen,
            MateLimits::default().with_max_plies(shortest as u32 - 2),
        );
        assert_eq!(r.outcome, MateOutcome::NoMate);
    }
}

/// Composed problems from Itō Kanju's *Shōgi Zukō* (将棋図巧, 1755): number, published
/// length, published first move, position. The positions are those of the Open Tsume
/// dataset (github.com/tokoroten/edo_era_tsume_shogi, `collections/edo/zukou/problems/`,
/// CC0), tsume style (the defender holds every piece not on the board, no attacking king);
/// for each, cshogi's `mate_move(N)` finds the published first move and `mate_move(N - 2)`
/// nothing (docs/mate.md).
const ZUKO: [(u32, usize, &str, &str); 3] = [
    (
        36,
        13,
        "G*2e",
        "9/6nS1/4s4/4r1P1g/5Sk1B/5+pbR1/4Nsp2/9/4N4 b 3Gn4l15p 1",
    ),
    (
        85,
        15,
        "P*5d",
        "4nS3/3g1n3/3pk1p+b1/5R3/3bN1S2/4N4/9/9/9 b R3P3g2s4l13p 1",
    ),
    (
        92,
        13,
        "2c2b+",
        "6kp1/8n/5R1L1/4+b2sB/6N2/9/6L2/9/9 b r4g3s2n2l17p 1",
    ),
];

#[test]
fn composed_problems_of_shogi_zuko() {
    let stop = AtomicBool::new(false);
    for (number, plies, first, sfen) in ZUKO {
        let mut s = MateSolver::new(16 << 20);
        let r = solve_with(&mut s, sfen, MateLimits::nodes(2_000_000));
        let line = r
            .mate()
            .unwrap_or_else(|| panic!("Zukō {number}: {:?}", r.outcome));
        assert_eq!(
            (line.len(), line[0].to_usi().as_str()),
            (plies, first),
            "Zukō {number}: {:?}",
            usi(line)
        );
        assert_mate_line(sfen, line);
        // Shortest: nothing within two plies less.
        let shorter = MateLimits::nodes(2_000_000).with_max_plies(plies as u32 - 2);
        assert_eq!(
            solve_with(&mut s, sfen, shorter).outcome,
            MateOutcome::NoMate
        );
        let limits = MateLimits::nodes(2_000_000).with_max_plies(plies as u32);
        let tree = s.proof_tree(&pos(sfen), &limits, 1 << 20, &stop).unwrap();
        assert_eq!(tree.depth(), plies, "Zukō {number}");
        assert_tree(&mut pos(sfen), &tree);
    }
}

/// A position df-pn does not settle in a few thousand nodes (Shōgi Zukō 79 as transcribed,
/// a mate of 21 plies or more).
const HARD: &str = "9/5lB2/9/4n1+b2/3+P5/3+pk+rG2/3p2S2/3s2s2/5Ns2 b R2Gg2n3l15p 1";

#[test]
fn node_limit_gives_unknown_within_the_limit() {
    for n in [1, 100, 5000] {
        let r = solve(HARD, MateLimits::nodes(n));
        assert_eq!(r.outcome, MateOutcome::Unknown);
        assert!(r.nodes <= n, "{} > {n}", r.nodes);
    }
    let r = solve(HARD, MateLimits::nodes(0));
    assert_eq!((r.outcome, r.nodes), (MateOutcome::Unknown, 0));
    let r = solve(HARD, MateLimits::time(Duration::from_millis(20)));
    assert_eq!(r.outcome, MateOutcome::Unknown);
}

#[test]
fn stop_flag_is_honoured() {
    let stop = AtomicBool::new(true);
    let mut s = MateSolver::new(1 << 20);
    let r = s.search(&pos(HARD), &MateLimits::default(), &stop);
    assert_eq!(r.outcome, MateOutcome::Unknown);
    assert!(r.nodes <= 256, "polled every 256 nodes: {}", r.nodes);
    // Raised from another thread while searching.
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let r = s.search(&pos(HARD), &MateLimits::nodes(200_000_000), &stop);
    t.join().unwrap();
    assert_eq!(r.outcome, MateOutcome::Unknown);
    assert!(r.nodes < 200_000_000);
}

#[test]
fn the_table_never_exceeds_its_bytes() {
    for bytes in [0, 100, 128, 1000, 1 << 16, (1 << 20) + 3, 3 << 20] {
        let mut s = MateSolver::new(bytes);
        assert!(s.table_bytes() <= bytes, "{bytes}: {}", s.table_bytes());
        // Searching never grows it, and the answers stay right with any size.
        let r = solve_with(&mut s, BG_MATE3, MateLimits::default());
        assert_eq!(r.mate().map(|l| l.len()), Some(3), "{bytes} bytes");
        let r = solve_with(
            &mut s,
            "R8/8k/7gp/9/9/9/9/9/K8 b - 1",
            MateLimits::nodes(1 << 20),
        );
        assert_eq!(r.outcome, MateOutcome::NoMate, "{bytes} bytes");
        assert!(s.table_bytes() <= bytes);
    }
}

#[test]
fn the_table_is_reused_and_cleared() {
    let sfen = "6kp1/8n/5R1L1/4+b2sB/6N2/9/6L2/9/9 b r4g3s2n2l17p 1";
    let mut s = MateSolver::new(16 << 20);
    let first = solve_with(&mut s, sfen, MateLimits::default());
    assert!(s.hashfull() > 0);
    let again = solve_with(&mut s, sfen, MateLimits::default());
    assert_eq!(first.outcome, again.outcome);
    assert!(
        again.nodes < first.nodes / 2,
        "{} vs {}",
        again.nodes,
        first.nodes
    );
    s.clear();
    assert_eq!(s.hashfull(), 0);
    let cleared = solve_with(&mut s, sfen, MateLimits::default());
    assert_eq!(
        cleared.nodes, first.nodes,
        "a cleared table searches as a new one"
    );
}

#[test]
fn proof_tree_holds_every_defence() {
    let mut s = MateSolver::new(1 << 22);
    let stop = AtomicBool::new(false);
    for sfen in [
        BG_MATE3,
        "9/4k4/9/4P4/9/9/9/9/9 b 2G2r2b4s4n4l17p 1",
        "6kp1/8n/5R1L1/4+b2sB/6N2/9/6L2/9/9 b r4g3s2n2l17p 1",
    ] {
        let r = solve_with(&mut s, sfen, MateLimits::default());
        let n = r.mate().unwrap().len();
        let tree = s
            .proof_tree(
                &pos(sfen),
                &MateLimits::default().with_max_plies(n as u32),
                1 << 20,
                &stop,
            )
            .unwrap();
        assert_eq!(tree.depth(), n, "{sfen}");
        assert_eq!(tree.attack, r.mate().unwrap()[0]);
        assert_tree(&mut pos(sfen), &tree);
        // Too small a budget gives no tree rather than a partial one.
        assert!(
            tree.size() == 1
                || s.proof_tree(&pos(sfen), &MateLimits::default(), tree.size() - 1, &stop)
                    .is_none()
        );
    }
}

/// Positions along random games (captures preferred, so hands fill and drops abound),
/// from the start position and two with full hands ([`random::positions_along_random_games`]).
fn random_positions(seed: u64, games: usize, plies: usize) -> Vec<Position> {
    let starts = [
        "startpos",
        "4k4/9/9/9/9/9/9/9/4K4 b RBGSNLPrb3g3s3n3l17p 1",
        "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
    ]
    .map(pos);
    random::positions_along_random_games(&starts, games, plies, &mut SplitMix64::new(seed))
}

#[test]
fn checks_equal_their_slow_twin() {
    let mut total = 0;
    for p in random_positions(11, 60, 120) {
        let mut fast = Vec::new();
        checks(&p, &mut fast);
        let fast_set: BTreeSet<Move> = fast.iter().copied().collect();
        let slow: BTreeSet<Move> = checks_slow(&p).into_iter().collect();
        assert_eq!(
            fast.len(),
            fast_set.len(),
            "a move twice in {}",
            p.to_sfen()
        );
        assert_eq!(fast_set, slow, "{}", p.to_sfen());
        total += slow.len();
    }
    assert!(total > 1000, "too few checks to compare: {total}");
}

#[test]
fn mate_within_agrees_with_the_solver() {
    // Existence of a mate within 1 and 3 plies, two ways: exhaustive fixed depth, and df-pn
    // bounded by max_plies.
    let mut s = MateSolver::new(8 << 20);
    let stop = AtomicBool::new(false);
    let mut mates = [0; 2];
    for p in random_positions(12, 40, 100)
        .into_iter()
        .filter(|p| !p.in_check())
    {
        for (i, plies) in [1u32, 3].into_iter().enumerate() {
            let w = mate_within(&mut p.clone(), plies, 10_000_000);
            let r = s.search(
                &p,
                &MateLimits::nodes(1_000_000).with_max_plies(plies),
                &stop,
            );
            match (&r.outcome, w) {
                (MateOutcome::Mate(line), Some(m)) => {
                    mates[i] += 1;
                    assert_mate_line(&p.to_sfen(), line);
                    let mut q = p.clone();
                    q.do_move(m);
                    assert!(q.in_check());
                }
                (MateOutcome::NoMate, None) => {}
                other => panic!("{} within {plies}: {other:?}", p.to_sfen()),
            }
        }
    }
    assert!(mates[0] >= 20 && mates[1] > mates[0], "{mates:?}");
}

#[test]
fn a_mate_line_is_as_long_as_the_mate() {
    // When the search says its line of L plies is the shortest mate, no mate within L - 2
    // exists: the line's defence resists longest.
    let mut s = MateSolver::new(8 << 20);
    let mut checked = 0;
    let positions = random_positions(13, 30, 120);
    for p in positions.iter().step_by(9).filter(|p| !p.in_check()) {
        let r = s.search(p, &MateLimits::nodes(20_000), &AtomicBool::new(false));
        let Some(line) = r.mate() else { continue };
        assert_mate_line(&p.to_sfen(), line);
        if r.shortest && line.len() >= 3 {
            let limits = MateLimits::nodes(200_000).with_max_plies(line.len() as u32 - 2);
            let shorter = s.search(p, &limits, &AtomicBool::new(false));
            assert_eq!(
                shorter.outcome,
                MateOutcome::NoMate,
                "{}: {:?}",
                p.to_sfen(),
                usi(line)
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked}");
}

#[test]
fn mate_within_leaves_the_position_and_honours_its_limit() {
    let mut p = pos(BG_MATE3);
    let before = p.to_sfen();
    assert_eq!(mate_within(&mut p, 1, 1000), None);
    assert_eq!(
        mate_within(&mut p, 3, 1000).map(|m| m.to_usi()),
        Some("B*3c".into())
    );
    assert_eq!(
        mate_within(&mut p, 2, 1000),
        None,
        "2 plies allow only a mate in one"
    );
    assert_eq!(mate_within(&mut p, 3, 2), None, "two nodes are not enough");
    assert_eq!(p.to_sfen(), before);
    assert_eq!(p.history_len(), 0);
}
