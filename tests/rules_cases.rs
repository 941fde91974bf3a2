//! Hand-written rules cases, one rule each, with the expected outcome reasoned from the rules
//! of shogi (and each position cross-checked with cshogi when it was written): uchifuzume,
//! nifu, dead-piece drops, forced promotion, pins, double check, check evasion, repetition
//! (fourth occurrence, perpetual check, superior/inferior), entering king, mate in one.

use manaka::runtime::shogi::{
    Color, EnteringKingRule, HandKind, Move, Position, Repetition, SfenError, Square,
};
use std::collections::BTreeSet;

fn pos(sfen: &str) -> Position {
    Position::from_sfen(sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}

fn legal(p: &Position) -> BTreeSet<String> {
    p.legal_moves().into_iter().map(Move::to_usi).collect()
}

/// Asserts which of `moves` are legal in `sfen`, through the move list, `is_legal` and USI
/// parsing alike.
fn assert_legality(sfen: &str, moves: &[(&str, bool)]) {
    let p = pos(sfen);
    let list = legal(&p);
    for &(text, want) in moves {
        assert_eq!(list.contains(text), want, "{text} in {sfen}: move list");
        assert_eq!(
            p.parse_usi_move(text).is_ok(),
            want,
            "{text} in {sfen}: parse_usi_move"
        );
        let m = Move::parse_usi_syntax(text).expect("well-formed USI");
        assert_eq!(p.is_legal(m), want, "{text} in {sfen}: is_legal");
    }
}

fn sq(s: &str) -> Square {
    Square::from_usi(s).unwrap()
}

fn play(p: &mut Position, moves: &str) {
    p.play_usi_moves(moves.split_whitespace())
        .unwrap_or_else(|e| panic!("{e}"));
}

// ----- drops ------------------------------------------------------------------------------

#[test]
fn pawn_drop_mate_is_illegal_but_pawn_push_mate_is_legal() {
    // White king 1a; Black gold 2c guards 1b and 2b, knight 3c guards 2a. A pawn on 1b mates.
    // Dropped, it is uchifuzume: illegal. Pushed from 1c, it is an ordinary legal mate.
    assert_legality(
        "8k/9/6NG1/9/9/9/9/9/K8 b P 1",
        &[("P*1b", false), ("P*5e", true)],
    );
    assert_legality(
        "8k/9/6NGP/9/9/9/9/9/K8 b - 1",
        &[("1c1b", true), ("1c1b+", true)],
    );
    let mut p = pos("8k/9/6NGP/9/9/9/9/9/K8 b - 1");
    play(&mut p, "1c1b");
    assert!(p.is_checkmate());
    // Not mate, so legal: the king takes the unprotected pawn...
    assert_legality("8k/9/9/9/9/9/9/9/K8 b P 1", &[("P*1b", true)]);
    // ...or the white gold on 2a takes it.
    assert_legality("7gk/9/6S2/7N1/9/9/9/9/K8 b P 1", &[("P*1b", true)]);
    // Same, but the gold is pinned by the rook on 5a: nothing can take the pawn, so mate,
    // so illegal.
    assert_legality("4R2gk/9/6S2/7N1/9/9/9/9/K8 b P 1", &[("P*1b", false)]);
    // The rule binds White too (mirror of the first case).
    assert_legality(
        "8k/9/9/9/9/9/1gn6/9/K8 w p 1",
        &[("P*9h", false), ("P*5e", true)],
    );
}

#[test]
fn nifu_counts_unpromoted_pawns_only() {
    // Black pawn on 5g: no pawn drop on file 5. A tokin on 4c does not block file 4; the white
    // pawn on 3c does not block file 3 for Black.
    let sfen = "4k4/9/5+Pp2/9/9/9/4P4/9/4K4 b P 1";
    assert_legality(
        sfen,
        &[
            ("P*5e", false),
            ("P*5b", false),
            ("P*4e", true),
            ("P*3e", true),
        ],
    );
    // The tokin's file still takes other drops, and White's own nifu is separate.
    assert_legality(
        "4k4/9/5+Pp2/9/9/9/4P4/9/4K4 w p 1",
        &[("P*3e", false), ("P*5e", true), ("P*4e", true)],
    );
}

#[test]
fn no_drop_where_a_piece_could_never_move() {
    let black = "4k4/9/9/9/9/9/9/9/4K4 b PLN 1";
    assert_legality(
        black,
        &[
            ("P*1a", false),
            ("L*1a", false),
            ("N*1a", false),
            ("N*1b", false),
            ("P*1b", true),
            ("L*1b", true),
            ("N*1c", true),
        ],
    );
    let white = "4k4/9/9/9/9/9/9/9/4K4 w pln 1";
    assert_legality(
        white,
        &[
            ("P*9i", false),
            ("L*9i", false),
            ("N*9i", false),
            ("N*9h", false),
            ("P*9h", true),
            ("L*9h", true),
            ("N*9g", true),
        ],
    );
    // Gold, silver, bishop and rook may be dropped anywhere empty.
    let p = pos("4k4/9/9/9/9/9/9/9/4K4 b GSBR 1");
    for k in ["G", "S", "B", "R"] {
        assert!(p.parse_usi_move(&format!("{k}*1a")).is_ok(), "{k}*1a");
    }
    // 81 squares less the two kings, four kinds.
    assert_eq!(
        p.legal_moves().iter().filter(|m| m.is_drop()).count(),
        4 * 79
    );
}

// ----- promotion --------------------------------------------------------------------------

#[test]
fn promotion_is_forced_only_where_the_piece_could_not_move_again() {
    // Black pawn 5b, lance 1c, knight 3d, silver 7b; White king far away.
    let sfen = "9/2S1P4/8L/6N2/9/9/9/9/k3K4 b - 1";
    assert_legality(
        sfen,
        &[
            ("5b5a", false),
            ("5b5a+", true),
            ("1c1a", false),
            ("1c1a+", true),
            ("1c1b", true),
            ("1c1b+", true),
            ("3d2b", false),
            ("3d2b+", true),
            ("3d4b+", true),
            ("7b7a", true),
            ("7b7a+", true),
        ],
    );
    // A move out of the zone may promote (silver 7c to 8d), a move outside it may not (6e to
    // 6d); a gold and the king never promote.
    assert_legality(
        "4k4/9/2S6/9/3S5/9/9/9/4K1G2 b - 1",
        &[
            ("7c8d+", true),
            ("7c8d", true),
            ("6e6d+", false),
            ("6e6d", true),
            ("3i3h+", false),
            ("5i5h+", false),
        ],
    );
}

// ----- checks and pins --------------------------------------------------------------------

#[test]
fn pinned_pieces_move_only_along_the_pin() {
    // The white rook on 5a pins the black bishop on 5e to the king on 5i: a bishop cannot
    // move along a file, so it has no move at all.
    let p = pos("1k2r4/9/9/9/4B4/9/9/9/4K4 b - 1");
    assert!(
        !p.legal_moves().iter().any(|m| m.from() == Some(sq("5e"))),
        "a file-pinned bishop has no move"
    );
    // A rook pinned on the file moves along it, up to taking the pinner, never sideways.
    let p = pos("1k2r4/9/9/9/4R4/9/9/9/4K4 b - 1");
    let rook: BTreeSet<String> = legal(&p)
        .into_iter()
        .filter(|m| m.starts_with("5e"))
        .collect();
    let want: BTreeSet<String> = [
        "5e5a", "5e5a+", "5e5b", "5e5b+", "5e5c", "5e5c+", "5e5d", "5e5f", "5e5g", "5e5h",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(rook, want);
    // A diagonal pin: the silver on 4h (white bishop 1e, black king 5i) keeps to the
    // diagonal, where its only step is 3g.
    let p = pos("4k4/9/9/9/8b/9/9/5S3/4K4 b - 1");
    let silver: BTreeSet<String> = legal(&p)
        .into_iter()
        .filter(|m| m.starts_with("4h"))
        .collect();
    assert_eq!(silver, ["4h3g"].iter().map(|s| s.to_string()).collect());
    assert_eq!(
        p.pinned(Color::Black).into_iter().collect::<Vec<_>>(),
        vec![sq("4h")]
    );
}

#[test]
fn double_check_allows_only_king_moves() {
    // White rook 5a and bishop 1e both check the black king on 5i; a gold dropped or moved
    // could block one line, never both.
    let p = pos("k3r4/9/9/9/8b/9/9/2G6/4K4 b G 1");
    assert_eq!(p.checkers().count(), 2);
    assert!(p.in_check());
    let moves = p.legal_moves();
    assert!(!moves.is_empty());
    for m in &moves {
        assert_eq!(
            m.from(),
            Some(sq("5i")),
            "{m} is not a king move under double check"
        );
    }
    // The king cannot step back along the rook's file or the bishop's diagonal.
    let list = legal(&p);
    assert!(!list.contains("5i5h"));
    assert!(list.contains("5i6h") && list.contains("5i4i") && list.contains("5i6i"));
}

#[test]
fn check_evasions_are_exactly_the_moves_that_leave_no_check() {
    // The white rook on 5a checks the black king on 5i from afar: capture is impossible, so
    // the answers are king steps off the file and interpositions on 5b..5h (by the gold, or
    // by a drop).
    let p = pos("k3r4/9/9/9/9/9/9/3G5/4K4 b P 1");
    assert_eq!(p.checkers().into_iter().collect::<Vec<_>>(), vec![sq("5a")]);
    let list = legal(&p);
    let mut want: BTreeSet<String> = ["5i4h", "5i4i", "5i6i", "6h5h", "6h5g"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // (6h holds the gold itself.) Pawn drops on 5b..5h interpose too.
    for r in ['b', 'c', 'd', 'e', 'f', 'g', 'h'] {
        want.insert(format!("P*5{r}"));
    }
    assert_eq!(list, want);
    // Whatever is played, the mover's king is no longer attacked; and stepping along the
    // checking line (5i5h) is refused even though the rook's ray "stops" at the king today.
    for m in p.legal_moves() {
        let mut q = p.clone();
        q.do_move(m);
        let k = q.king_square(Color::Black).unwrap();
        assert!(
            !q.is_attacked(k, Color::White, q.occupied()),
            "{m} leaves the king attacked"
        );
    }
    assert!(!list.contains("5i5h"));
}

#[test]
fn every_legal_move_leaves_the_king_safe_and_no_safe_move_is_missing() {
    // Brute force on positions full of pins and checks: a pseudo-move (any piece to any
    // square its attacks reach, or any drop on an empty square) is legal iff the rules allow
    // it. Here we check the half of that which needs no move-shape knowledge: every legal
    // move leaves the mover's king unattacked.
    for sfen in [
        "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
        "k3r4/9/9/9/8b/9/9/2G6/4K4 b G 1",
        "k3r4/9/9/9/8b/9/9/5S3/4K4 b GP 1",
        "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
    ] {
        let p = pos(sfen);
        let us = p.side_to_move();
        for m in p.legal_moves() {
            let mut q = p.clone();
            q.do_move(m);
            let k = q.king_square(us).unwrap();
            assert!(!q.is_attacked(k, us.flip(), q.occupied()), "{m} in {sfen}");
        }
    }
}

// ----- repetition -------------------------------------------------------------------------

#[test]
fn fourth_occurrence_is_a_draw() {
    // Both rooks shuffle: the start position recurs after 4, 8 and 12 plies. The fourth
    // occurrence (ply 12) ends the game as a draw; the engine-style check sees the first
    // repetition already at ply 4.
    let mut p = Position::startpos();
    let cycle = ["2h3h", "8b7b", "3h2h", "7b8b"];
    for ply in 1..=12 {
        play(&mut p, cycle[(ply - 1) % 4]);
        let expect = if ply == 12 {
            Some(Repetition::Draw)
        } else {
            None
        };
        assert_eq!(p.sennichite(), expect, "ply {ply}");
        let engine = if ply >= 4 {
            Repetition::Draw
        } else {
            Repetition::None
        };
        assert_eq!(p.repetition(usize::MAX), engine, "ply {ply}");
    }
    // The look-back limit: the previous occurrence is 4 plies back.
    assert_eq!(p.repetition(3), Repetition::None);
    assert_eq!(p.repetition(4), Repetition::Draw);
}

#[test]
fn perpetual_check_loses_for_the_checking_side() {
    // Black's rook checks from 9b and 9a in turn while White's king steps 1b-1a-1b: every
    // black move is check. At ply 12 the start position occurs for the fourth time with
    // Black (the checker) to move: Black loses. One ply on, the position after Black's
    // first check occurs for the fourth time with White to move: White wins.
    let mut p = pos("R8/8k/9/9/9/9/9/9/4K4 b - 1");
    let cycle = ["9a9b", "1b1a", "9b9a", "1a1b"];
    for ply in 1..=13 {
        play(&mut p, cycle[(ply - 1) % 4]);
        assert_eq!(
            p.in_check(),
            ply % 2 == 1,
            "ply {ply}: every black move checks"
        );
        let expect = match ply {
            12 => Some(Repetition::Lose),
            13 => Some(Repetition::Win),
            _ => None,
        };
        assert_eq!(p.sennichite(), expect, "ply {ply}");
        if ply >= 4 {
            let engine = if ply % 2 == 0 {
                Repetition::Lose
            } else {
                Repetition::Win
            };
            assert_eq!(p.repetition(usize::MAX), engine, "ply {ply}");
        }
    }
}

#[test]
fn same_board_with_different_hands_is_superior_or_inferior() {
    // White drops a pawn on 9c, Black's rook takes it and goes home, both kings wander back:
    // at ply 8 the board and side to move are those of ply 0 but Black holds a pawn more
    // (superior for Black); at ply 9, White faces the board of ply 1 a pawn short (inferior).
    let mut p = pos("4k4/9/9/9/9/9/9/R8/4K4 b p 1");
    play(&mut p, "5i4i P*9c 9h9c 5a4a 9c9h 4a4b 4i5i 4b5a");
    assert_eq!(p.repetition(usize::MAX), Repetition::Superior);
    assert_eq!(p.sennichite(), None, "hands differ: not the same position");
    play(&mut p, "5i4i");
    assert_eq!(p.repetition(usize::MAX), Repetition::Inferior);
    assert_eq!(
        p.repetition(7),
        Repetition::None,
        "the earlier board is 8 plies back"
    );
}

// ----- entering king ----------------------------------------------------------------------

#[test]
fn entering_king_points_and_thresholds() {
    // Black: king 5b, ten tokins in the zone (10 points), rook and bishop in hand (10), pawns.
    let with_pawns = |n: u8| format!("9/4K3+P/+P+P+P+P+P+P+P+P+P/9/9/9/9/9/8k b RB{n}P 1");
    let p = pos(&with_pawns(8));
    assert_eq!(p.entering_king_points(Color::Black), (28, 10));
    assert!(
        p.can_declare_win(EnteringKingRule::Csa27),
        "28 points suffice for Black"
    );
    assert!(
        !p.can_declare_win(EnteringKingRule::Jsa24),
        "the 24-point rule wins from 31"
    );
    let p = pos(&with_pawns(7));
    assert_eq!(p.entering_king_points(Color::Black), (27, 10));
    assert!(
        !p.can_declare_win(EnteringKingRule::Csa27),
        "27 points are one short for Black"
    );
    let p = pos("9/4K3+P/+P+P+P+P+P+P+P+P+P/9/9/9/9/9/8k b RB2G8P 1");
    assert_eq!(p.entering_king_points(Color::Black).0, 30);
    assert!(
        !p.can_declare_win(EnteringKingRule::Jsa24),
        "30 points are one short under the 24-point rule"
    );
    let p = pos("9/4K3+P/+P+P+P+P+P+P+P+P+P/9/9/9/9/9/8k b RB3G8P 1");
    assert_eq!(p.entering_king_points(Color::Black).0, 31);
    assert!(
        p.can_declare_win(EnteringKingRule::Jsa24) && p.can_declare_win(EnteringKingRule::Csa27)
    );

    // White needs only 27 under the CSA rule.
    let white = |n: u8| format!("8K/9/9/9/9/9/+p+p+p+p+p+p+p+p+p/+p3k4/9 w rb{n}p 1");
    assert!(pos(&white(7)).can_declare_win(EnteringKingRule::Csa27));
    assert!(!pos(&white(6)).can_declare_win(EnteringKingRule::Csa27));

    // Nine pieces in the zone are too few, whatever the points.
    let p = pos("9/4K4/+P+P+P+P+P+P+P+P+P/9/9/9/9/9/8k b RB2G9P 1");
    assert_eq!(p.entering_king_points(Color::Black), (9 + 10 + 2 + 9, 9));
    assert!(!p.can_declare_win(EnteringKingRule::Csa27));
    // In check: no declaration (the white gold on 5a checks the king on 5b).
    let p = pos("4g4/4K3+P/+P+P+P+P+P+P+P+P+P/9/9/9/9/9/8k b RB8P 1");
    assert!(p.in_check() && !p.can_declare_win(EnteringKingRule::Csa27));
    // King outside the zone: no declaration.
    let p = pos("9/8+P/+P+P+P+P+P+P+P+P+P/4K4/9/9/9/9/8k b RB8P 1");
    assert!(!p.can_declare_win(EnteringKingRule::Csa27));
    // Big pieces in the zone count 5, promoted or not.
    let p = pos("+B+R7/4K3+P/+P+P+P+P+P+P+P+P1/9/9/9/9/9/8k b 2P 1");
    assert_eq!(p.entering_king_points(Color::Black), (10 + 9 + 2, 11));
    assert_eq!(p.hand(Color::Black).count(HandKind::Pawn), 2);
}

// ----- mate in one ------------------------------------------------------------------------

#[test]
fn mate_in_one_finds_legal_mates_only() {
    let p = pos("8k/9/6NGP/9/9/9/9/9/K8 b - 1");
    let m = p.mate_in_one().expect("1c1b, 1c1b+ and 2c1b mate");
    let mut q = p.clone();
    q.do_move(m);
    assert!(q.is_checkmate());
    // The only mate would be the pawn drop: no mate in one.
    assert_eq!(pos("8k/9/6NG1/9/9/9/9/9/K8 b P 1").mate_in_one(), None);
    assert_eq!(Position::startpos().mate_in_one(), None);
}

// ----- input errors -----------------------------------------------------------------------

#[test]
fn impossible_positions_are_refused_with_a_named_reason() {
    type Expect = fn(&SfenError) -> bool;
    let cases: &[(&str, Expect)] = &[
        ("", |e| matches!(e, SfenError::Empty)),
        ("4k4/9/9/9/9/9/9/9/4K4", |e| {
            matches!(e, SfenError::FieldCount { .. })
        }),
        ("4k4/9/9/9/9/9/9/4K4 b - 1", |e| {
            matches!(e, SfenError::RankCount { .. })
        }),
        ("4k5/9/9/9/9/9/9/9/4K4 b - 1", |e| {
            matches!(e, SfenError::RankLength { .. })
        }),
        ("4x4/9/9/9/9/9/9/9/4K4 b - 1", |e| {
            matches!(e, SfenError::PieceLetter { .. })
        }),
        ("4k4/9/9/9/9/9/9/9/3+K4 b - 1", |e| {
            matches!(e, SfenError::Promotion { .. })
        }),
        ("4k4/9/9/9/9/9/9/9/4K4 x - 1", |e| {
            matches!(e, SfenError::SideToMove(_))
        }),
        ("4k4/9/9/9/9/9/9/9/4K4 b 3K 1", |e| {
            matches!(e, SfenError::Hand(..))
        }),
        ("4k4/9/9/9/9/9/9/9/4K4 b - 0", |e| {
            matches!(e, SfenError::MoveNumber(_))
        }),
        ("4k4/9/9/9/9/9/9/R8/4K4 b 2R 1", |e| {
            matches!(e, SfenError::TooManyPieces { .. })
        }),
        ("4k4/9/9/9/9/9/9/9/3KK4 b - 1", |e| {
            matches!(e, SfenError::TwoKings(Color::Black))
        }),
        ("P3k4/9/9/9/9/9/9/9/4K4 b - 1", |e| {
            matches!(e, SfenError::DeadPiece { .. })
        }),
        ("4k4/9/9/9/9/9/9/n8/4K4 b - 1", |e| {
            matches!(e, SfenError::DeadPiece { .. })
        }),
        ("4k4/9/9/4P4/4P4/9/9/9/4K4 b - 1", |e| {
            matches!(
                e,
                SfenError::Nifu {
                    color: Color::Black,
                    file: 5
                }
            )
        }),
        ("4k4/4R4/9/9/9/9/9/9/4K4 b - 1", |e| {
            matches!(e, SfenError::OpponentInCheck(Color::White))
        }),
    ];
    for (sfen, ok) in cases {
        match Position::from_sfen(sfen) {
            Ok(p) => panic!("{sfen:?} accepted as {p:?}"),
            Err(e) => {
                assert!(ok(&e), "{sfen:?}: unexpected error {e:?}");
                let msg = e.to_string();
                assert!(!msg.is_empty() && !msg.contains('\n'), "{sfen:?}: {msg:?}");
            }
        }
    }
    // A knight on its own second rank, or a lance on its first, can still move: accepted.
    for sfen in [
        "4k4/n8/9/9/9/9/9/9/4K4 b - 1",
        "4k4/9/9/9/9/9/9/N8/4K4 w - 1",
        "L3k4/9/9/9/9/9/9/9/4K4 w - 1",
    ] {
        let r = Position::from_sfen(sfen);
        if sfen.starts_with('L') {
            assert!(
                matches!(r, Err(SfenError::DeadPiece { .. })),
                "{sfen}: a black lance on rank a is dead"
            );
        } else {
            assert!(r.is_ok(), "{sfen}: {r:?}");
        }
    }
    // Bad USI: a syntax error and an illegal move are told apart.
    let p = Position::startpos();
    assert!(matches!(
        p.parse_usi_move("7g7"),
        Err(manaka::runtime::shogi::MoveError::Syntax(_))
    ));
    assert!(matches!(
        p.parse_usi_move("7g7e"),
        Err(manaka::runtime::shogi::MoveError::Illegal { .. })
    ));
    assert!(matches!(
        p.parse_usi_move("P*5e"),
        Err(manaka::runtime::shogi::MoveError::Illegal { .. })
    ));
}
