//! Perft: leaf counts of the legal-move tree, the standard proof of a move generator. The
//! expected numbers are the published ones (issue 2; they agree with YaneuraOu, cshogi and
//! shunsai), not values Manaka printed, so any generation bug on these trees fails here.

use manaka::runtime::shogi::Position;

const STARTPOS: &str = "startpos";
/// "Matsuri": a middle game with every kind of move, promotions and drops.
const MATSURI: &str = "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1";
/// The position with the most legal moves known (593).
const MAX_MOVES: &str = "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1";
/// Black can mate by dropping a pawn on 1b, which is illegal (uchifuzume): 78 moves, not 79.
const PAWN_DROP_MATE: &str = "8k/6G2/9/7N1/9/9/9/9/K8 b P 1";

fn perft(sfen: &str, depth: u32) -> u64 {
    Position::from_sfen(sfen).expect("valid SFEN").perft(depth)
}

#[test]
fn startpos_depths_1_to_4() {
    for (depth, nodes) in [(1, 30), (2, 900), (3, 25_470), (4, 719_731)] {
        assert_eq!(perft(STARTPOS, depth), nodes, "startpos depth {depth}");
    }
}

#[test]
fn startpos_depth_5() {
    assert_eq!(perft(STARTPOS, 5), 19_861_490);
}

#[test]
fn matsuri_depths_1_to_3() {
    for (depth, nodes) in [(1, 207), (2, 28_684), (3, 4_809_015)] {
        assert_eq!(perft(MATSURI, depth), nodes, "matsuri depth {depth}");
    }
}

#[test]
fn max_moves_depths_1_to_2() {
    for (depth, nodes) in [(1, 593), (2, 105_677)] {
        assert_eq!(
            perft(MAX_MOVES, depth),
            nodes,
            "593-move position depth {depth}"
        );
    }
}

#[test]
fn max_moves_depth_3() {
    assert_eq!(perft(MAX_MOVES, 3), 53_393_368);
}

#[test]
fn pawn_drop_mate_depths_1_to_3() {
    for (depth, nodes) in [(1, 78), (2, 9), (3, 698)] {
        assert_eq!(
            perft(PAWN_DROP_MATE, depth),
            nodes,
            "pawn-drop-mate position depth {depth}"
        );
    }
    // The missing 79th move is exactly the mating pawn drop.
    let pos = Position::from_sfen(PAWN_DROP_MATE).unwrap();
    assert!(pos.parse_usi_move("P*1b").is_err());
}

/// The bulk-counting fast path (last ply counted, not played) and the divide split must add up
/// to the same totals as a plain walk that plays every move, and depth 0 is one node.
#[test]
fn divide_and_plain_walk_agree_with_perft() {
    fn walk(pos: &mut Position, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let mut n = 0;
        for m in pos.legal_moves() {
            pos.do_move(m);
            n += walk(pos, depth - 1);
            pos.undo_move(m);
        }
        n
    }
    for (sfen, depth) in [
        (STARTPOS, 3),
        (MATSURI, 2),
        (MAX_MOVES, 2),
        (PAWN_DROP_MATE, 3),
    ] {
        let mut pos = Position::from_sfen(sfen).unwrap();
        let before = pos.to_sfen();
        let total = pos.perft(depth);
        assert_eq!(walk(&mut pos, depth), total, "{sfen} depth {depth}");
        let divide = pos.perft_divide(depth);
        assert_eq!(divide.len() as u64, pos.count_legal_moves());
        assert_eq!(
            divide.iter().map(|(_, n)| n).sum::<u64>(),
            total,
            "{sfen} divide"
        );
        assert_eq!(pos.perft(0), 1);
        assert_eq!(pos.to_sfen(), before, "perft left the position changed");
    }
}
