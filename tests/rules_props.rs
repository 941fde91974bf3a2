//! Property tests of the rules core: do/undo restores everything, incremental keys equal keys
//! computed from scratch, SFEN and move encodings round-trip, `do_move` reports exactly what
//! changed, and malformed SFEN/USI text never panics.

mod support;

use manaka::runtime::shogi::{HandKind, Move, MoveEffect, Position, Square};
use proptest::prelude::*;

/// Everything about a position that undo must restore, observed through the public API.
#[derive(Debug, PartialEq)]
struct Snapshot {
    sfen: String,
    key: u64,
    board_key: u64,
    checkers: Vec<Square>,
    legal: usize,
}

fn snapshot(pos: &Position) -> Snapshot {
    Snapshot {
        sfen: pos.to_sfen(),
        key: pos.key(),
        board_key: pos.board_key(),
        checkers: pos.checkers().into_iter().collect(),
        legal: pos.count_legal_moves() as usize,
    }
}

/// The key of the same position set up from its SFEN (a from-scratch computation). The move
/// number differs from a played position's history, but keys do not include it.
fn fresh(pos: &Position) -> Position {
    Position::from_sfen(&pos.to_sfen()).expect("a printed SFEN parses")
}

/// Checks `effect` against the position before (`pre`) and after (`post`) the move.
fn check_effect(
    pre: &Position,
    post: &Position,
    m: Move,
    e: &MoveEffect,
) -> Result<(), TestCaseError> {
    let us = pre.side_to_move();
    prop_assert_eq!(e.color, us);
    prop_assert_eq!(e.to, m.to());
    prop_assert_eq!(e.from, m.from());
    let landed = post
        .piece_at(m.to())
        .expect("the moved piece stands on its destination");
    prop_assert_eq!(landed.color, us);
    prop_assert_eq!(e.kind_after, landed.kind);
    match m.from() {
        Some(from) => {
            let moved = pre.piece_at(from).expect("a piece on the origin");
            prop_assert_eq!(e.kind, moved.kind);
            prop_assert!(post.piece_at(from).is_none());
            prop_assert_eq!(e.captured, pre.piece_at(m.to()));
            prop_assert_eq!(e.kind_after != e.kind, m.is_promotion());
        }
        None => {
            prop_assert_eq!(Some(e.kind), m.drop_kind().map(HandKind::piece_kind));
            prop_assert_eq!(e.kind_after, e.kind);
            prop_assert!(e.captured.is_none());
        }
    }
    // Exactly the hand kinds whose counts changed are reported, with both counts.
    let changed: Vec<(HandKind, u8, u8)> = HandKind::ALL
        .into_iter()
        .map(|k| (k, pre.hand(us).count(k), post.hand(us).count(k)))
        .filter(|(_, a, b)| a != b)
        .collect();
    prop_assert_eq!(changed, e.hand_change.into_iter().collect::<Vec<_>>());
    prop_assert_eq!(pre.hand(us.flip()), post.hand(us.flip()));
    Ok(())
}

#[derive(Clone, Debug)]
enum Op {
    /// Play the legal move with this index (modulo the number of moves).
    Do(usize),
    /// Take back the last move, if any.
    Undo,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![4 => any::<usize>().prop_map(Op::Do), 1 => Just(Op::Undo)],
        0..80,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::env_or("MANAKA_PROPTEST_CASES", 200), ..ProptestConfig::default() })]

    /// Any interleaving of do and undo: after each step the incremental key equals the key
    /// computed from scratch, the effect matches the board change, and each undo restores the
    /// exact earlier snapshot; at the end, undoing everything restores the start.
    #[test]
    fn do_undo_restores_position_and_keys(start in 0..support::EXTRA_STARTS.len(), ops in ops()) {
        let mut pos = Position::from_sfen(support::EXTRA_STARTS[start]).unwrap();
        let mut stack: Vec<(Move, Snapshot)> = Vec::new();
        let first = snapshot(&pos);
        for op in ops {
            match op {
                Op::Do(i) => {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        continue;
                    }
                    let m = moves[i % moves.len()];
                    let pre = pos.clone();
                    let before = snapshot(&pos);
                    let effect = pos.do_move(m);
                    check_effect(&pre, &pos, m, &effect)?;
                    let f = fresh(&pos);
                    prop_assert_eq!(pos.key(), f.key(), "incremental key after {} in {}", m, before.sfen);
                    prop_assert_eq!(pos.board_key(), f.board_key());
                    prop_assert_eq!(pos.checkers(), f.checkers());
                    stack.push((m, before));
                }
                Op::Undo => {
                    if let Some((m, before)) = stack.pop() {
                        pos.undo_move(m);
                        prop_assert_eq!(snapshot(&pos), before);
                    }
                }
            }
        }
        while let Some((m, before)) = stack.pop() {
            pos.undo_move(m);
            prop_assert_eq!(snapshot(&pos), before);
        }
        prop_assert_eq!(snapshot(&pos), first);
    }

    /// Random text: parsing SFEN or USI returns a result, never panics.
    #[test]
    fn random_text_never_panics(text in "\\PC{0,120}", usi in "[ -~]{0,8}") {
        if let Ok(p) = Position::from_sfen(&text) {
            exercise(&p);
        }
        let _ = Move::parse_usi_syntax(&usi);
        let mut p = Position::startpos();
        let _ = p.parse_usi_move(&usi);
        let _ = p.play_usi_moves(usi.split(' '));
    }

    /// Text made of SFEN's own characters, which gets much further into the parser.
    #[test]
    fn sfen_alphabet_never_panics(text in "[1-9+/plnsgbrkPLNSGBRK bw-]{0,90}( [0-9]{0,3})?") {
        if let Ok(p) = Position::from_sfen(&text) {
            exercise(&p);
        }
    }

    /// Valid SFENs with a few characters replaced, inserted or deleted: either refused with
    /// an error or accepted as a position that behaves (round-trips, generates moves).
    #[test]
    fn mutated_sfen_never_panics(
        start in 0..support::EXTRA_STARTS.len(),
        edits in prop::collection::vec((any::<usize>(), 0..3u8, prop::sample::select(
            "123456789+/plnsgbrkPLNSGBRK bw-0".chars().collect::<Vec<_>>())), 1..4),
    ) {
        let mut chars: Vec<char> = Position::from_sfen(support::EXTRA_STARTS[start]).unwrap().to_sfen().chars().collect();
        for (at, what, c) in edits {
            let i = at % (chars.len() + 1);
            match what {
                0 if i < chars.len() => chars[i] = c,
                1 => chars.insert(i, c),
                _ if i < chars.len() => { chars.remove(i); }
                _ => {}
            }
        }
        let text: String = chars.into_iter().collect();
        match Position::from_sfen(&text) {
            Ok(p) => exercise(&p),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    /// Every 16-bit value either decodes to a move that re-encodes to itself (and whose USI
    /// text parses back to it) or is refused.
    #[test]
    fn move16_decoding_round_trips(v in any::<u16>()) {
        if let Some(m) = Move::from_u16(v) {
            prop_assert_eq!(m.to_u16(), v);
            prop_assert_eq!(Move::parse_usi_syntax(&m.to_usi()), Some(m));
        }
    }
}

/// Uses an accepted position the way a caller would; nothing here may panic, and the SFEN the
/// position prints must parse back to the same position.
fn exercise(p: &Position) {
    let again =
        Position::from_sfen(&p.to_sfen()).expect("an accepted position prints a valid SFEN");
    assert_eq!(&again, p);
    assert_eq!(again.key(), p.key());
    let mut q = p.clone();
    let moves = q.legal_moves();
    assert_eq!(moves.len() as u64, q.count_legal_moves());
    let _ = q.perft(2);
    let _ = q.mate_in_one();
    let _ = q.is_checkmate();
    let _ = q.repetition(16);
    let _ = q.sennichite();
    for c in [
        manaka::runtime::shogi::Color::Black,
        manaka::runtime::shogi::Color::White,
    ] {
        let _ = q.entering_king_points(c);
    }
    let _ = q.can_declare_win(manaka::runtime::shogi::EnteringKingRule::Csa27);
    if let Some(&m) = moves.first() {
        q.do_move(m);
        q.undo_move(m);
        assert_eq!(q.to_sfen(), p.to_sfen());
    }
}

/// SFEN round trips on a few thousand positions from random games: print, parse, print again
/// gives the same text, the same position and the same key; and every legal move survives
/// USI text and the 16-bit encoding.
#[test]
fn sfen_and_move_text_round_trip_on_random_positions() {
    let mut rng = support::rng(0x5fe4);
    let positions = support::random_positions(&mut rng, support::EXTRA_STARTS, 30, 200);
    assert!(positions.len() > 3000);
    for p in &positions {
        let sfen = p.to_sfen();
        let q = Position::from_sfen(&sfen).unwrap();
        assert_eq!(q.to_sfen(), sfen);
        assert_eq!(&q, p);
        assert_eq!((q.key(), q.board_key()), (p.key(), p.board_key()), "{sfen}");
        // Without the move number, and with the `sfen ` prefix of a USI position command.
        let short: Vec<&str> = sfen.split(' ').take(3).collect();
        assert_eq!(&Position::from_sfen(&short.join(" ")).unwrap(), p);
        assert_eq!(&Position::from_sfen(&format!("sfen {sfen}")).unwrap(), p);
        for m in p.legal_moves() {
            assert_eq!(p.parse_usi_move(&m.to_usi()), Ok(m), "{sfen}");
            assert_eq!(Move::from_u16(m.to_u16()), Some(m));
        }
    }
}

/// Keys distinguish what they should: side to move, hands, and the board.
#[test]
fn keys_separate_positions_that_differ() {
    let mut rng = support::rng(0x6b65);
    let positions = support::random_positions(&mut rng, support::EXTRA_STARTS, 20, 120);
    let mut by_key = std::collections::HashMap::new();
    for p in &positions {
        let sfen = p.to_sfen();
        let without_number = sfen.rsplit_once(' ').unwrap().0.to_string();
        if let Some(other) = by_key.insert(p.key(), without_number.clone()) {
            assert_eq!(other, without_number, "two positions share a key");
        }
    }
    let a = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 b P 1").unwrap();
    let b = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 w P 1").unwrap();
    let c = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 b p 1").unwrap();
    assert_ne!(a.key(), b.key());
    assert_ne!(a.key(), c.key());
    assert_eq!(a.board_key(), c.board_key(), "board_key ignores hands");
}
