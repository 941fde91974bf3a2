use super::*;
use crate::shogi::{Position, Square};

fn sq(s: &str) -> Square {
    Square::from_usi(s).unwrap()
}

/// Sorted copy, for multiset comparison.
fn sorted(t: &[u32]) -> Vec<u32> {
    let mut v = t.to_vec();
    v.sort_unstable();
    v
}

/// The data module's seeded generator, so the games are reproducible.
use crate::random::SplitMix64 as Rng;

#[test]
fn native_startpos_has_forty_tokens_with_spec_ids() {
    let p = Position::startpos();
    for persp in Color::ALL {
        let t = active_tokens(FeatureSpace::Native, &p, persp);
        assert_eq!(t.len(), 40);
        assert!(t.as_slice().iter().all(|&id| id < native::TOKEN_COUNT));
    }
    let t = active_tokens(FeatureSpace::Native, &p, Color::Black);
    // Black's king on 5i = sq 44: own (0), king (7) → 7·81 + 44.
    assert!(t.as_slice().contains(&(7 * 81 + 44)));
    // White's king on 5a = sq 36, opponent (1): (14 + 7)·81 + 36.
    assert!(t.as_slice().contains(&((14 + 7) * 81 + 36)));
    // From White's view its own king is on 80 − 36 = 44.
    let w = active_tokens(FeatureSpace::Native, &p, Color::White);
    assert!(w.as_slice().contains(&(7 * 81 + 44)));
    // The start position is symmetric: both perspectives see the same token set.
    assert_eq!(sorted(t.as_slice()), sorted(w.as_slice()));
}

#[test]
fn native_hand_tokens_are_unary() {
    // Black holds 2 pawns and a rook, White a gold.
    let p = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 b R2Pg 1").unwrap();
    let t = sorted(active_tokens(FeatureSpace::Native, &p, Color::Black).as_slice());
    let expect_hand = [2268, 2269, 2268 + 36, 2268 + 38 + 30];
    for id in expect_hand {
        assert!(t.contains(&id), "{id} in {t:?}");
    }
    assert_eq!(t.len(), 2 + 4);
    let w = sorted(active_tokens(FeatureSpace::Native, &p, Color::White).as_slice());
    // From White's view Black's pawns are the opponent's: 2268 + 38 + 0, + 1.
    assert!(w.contains(&(2268 + 38)) && w.contains(&(2268 + 39)) && w.contains(&(2268 + 30)));
}

/// Independent re-derivation of YaneuraOu's BonaPiece numbers from its published layout:
/// 19 slots per pawn hand, 5 per L N S G, 3 per B R (fe_hand_end = 90), then 81 squares
/// per (piece, friend/enemy) in the order P L N S G B +B R +R.
fn yaneuraou_hand(friend: bool, kind: usize, i: u32) -> u32 {
    let sizes = [19, 5, 5, 5, 5, 3, 3];
    let mut base = 1 + 2 * sizes[..kind].iter().sum::<u32>();
    if !friend {
        base += sizes[kind];
    }
    base + i - 1
}

fn yaneuraou_board(friend: bool, name: &str, sq_rel: u32) -> u32 {
    let order = ["P", "L", "N", "S", "G", "B", "+B", "R", "+R"];
    let idx = order.iter().position(|&n| n == name).unwrap() as u32;
    90 + idx * 162 + if friend { 0 } else { 81 } + sq_rel
}

#[test]
fn bona_piece_constants_match_the_published_layout() {
    assert_eq!(yaneuraou_hand(true, 6, 1), 85); // f_hand_rook
    assert_eq!(yaneuraou_hand(false, 6, 2), 89);
    assert_eq!(yaneuraou_board(false, "+R", 80) + 1, bona::FE_END);
    for kind in HandKind::ALL {
        for i in 1..=HandKind::MAX[kind as usize] {
            assert_eq!(
                bona::hand_piece(Color::Black, kind, i, Color::Black),
                yaneuraou_hand(true, kind as usize, i as u32)
            );
            assert_eq!(
                bona::hand_piece(Color::White, kind, i, Color::Black),
                yaneuraou_hand(false, kind as usize, i as u32)
            );
        }
    }
}

use crate::shogi::HandKind;

#[test]
fn kp_and_halfkp_ids_on_hand_built_positions() {
    // Promoted pieces, a full-ish hand, missing pieces (a lance and a knight are nowhere:
    // 36 non-king pieces), both perspectives.
    let sfen = "7n1/4k1+P2/9/9/4+B4/9/9/4K2+r1/9 b RG2S3L2N17Pb3g2s 1";
    let p = Position::from_sfen(sfen).unwrap();
    let kp_b = sorted(active_tokens(FeatureSpace::Kp, &p, Color::Black).as_slice());
    let kp_w = sorted(active_tokens(FeatureSpace::Kp, &p, Color::White).as_slice());
    assert_eq!(kp_b.len(), 40);
    // 38 non-king pieces exist in a full set; this position has 36 → two entries of id 0.
    assert_eq!(kp_b.iter().filter(|&&x| x == 0).count(), 2);
    // Black's +P on 3b (sq 19) counts as a friend gold: f_gold + 19.
    assert!(kp_b.contains(&yaneuraou_board(true, "G", 19)));
    // White's +R on 2h (sq 16): enemy dragon from Black's view, friend dragon from White's
    // (square 80 − 16 = 64).
    assert!(kp_b.contains(&yaneuraou_board(false, "+R", 16)));
    assert!(kp_w.contains(&yaneuraou_board(true, "+R", 64)));
    // Black's horse on 5e (sq 40, its own rotation).
    assert!(kp_b.contains(&yaneuraou_board(true, "+B", 40)));
    // Hands: Black's 17 pawns → f_hand_pawn + 0..16; White's bishop → e_hand_bishop.
    for i in 1..=17 {
        assert!(kp_b.contains(&yaneuraou_hand(true, 0, i)));
        assert!(kp_w.contains(&yaneuraou_hand(false, 0, i)));
    }
    assert!(kp_b.contains(&yaneuraou_hand(false, 5, 1)));
    assert!(kp_w.contains(&yaneuraou_hand(true, 5, 1)));
    // Kings: Black's on 5h (sq 43), White's on 5b (sq 37).
    assert!(kp_b.contains(&(1548 + 43)) && kp_b.contains(&(1548 + 81 + 37)));
    assert!(kp_w.contains(&(1548 + (80 - 37))) && kp_w.contains(&(1548 + 81 + (80 - 43))));
    // HalfKP: the same BonaPieces offset by the perspective's own king square.
    let hk_b = sorted(active_tokens(FeatureSpace::HalfKp, &p, Color::Black).as_slice());
    let expect: Vec<u32> = sorted(
        &kp_b
            .iter()
            .filter(|&&x| x < 1548)
            .map(|&x| 43 * 1548 + x)
            .collect::<Vec<_>>(),
    );
    assert_eq!(hk_b, expect);
    let hk_w = sorted(active_tokens(FeatureSpace::HalfKp, &p, Color::White).as_slice());
    assert!(hk_w.iter().all(|&x| x / 1548 == 80 - 37));
    assert_eq!(hk_w.len(), 38);
}

fn apply(list: &mut Vec<u32>, d: &TokenDelta) {
    for &r in d.removed.as_slice() {
        let i = list
            .iter()
            .position(|&x| x == r)
            .unwrap_or_else(|| panic!("removed {r} not active"));
        list.swap_remove(i);
    }
    list.extend_from_slice(d.added.as_slice());
}

#[test]
fn deltas_equal_refresh_along_random_games() {
    let mut rng = Rng::new(0x5eed_1234_abcd_ef01);
    let mut king_refreshes = 0;
    for game in 0..120 {
        let mut p = if game % 3 == 0 {
            // A handicap start: missing pieces exercise BonaPiece 0.
            Position::from_sfen("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1")
                .unwrap()
        } else {
            Position::startpos()
        };
        let mut lists: Vec<[Vec<u32>; 2]> = FeatureSpace::ALL
            .iter()
            .map(|&s| [0, 1].map(|c| active_tokens(s, &p, Color::ALL[c]).as_slice().to_vec()))
            .collect();
        for _ply in 0..300 {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.below(moves.len() as u64) as usize];
            let e = p.do_move(m);
            for (&space, views) in FeatureSpace::ALL.iter().zip(lists.iter_mut()) {
                for (list, persp) in views.iter_mut().zip(Color::ALL) {
                    let d = delta(space, &e, &p, persp);
                    if d.refresh {
                        king_refreshes += 1;
                        *list = active_tokens(space, &p, persp).as_slice().to_vec();
                    } else {
                        apply(list, &d);
                    }
                    let fresh = active_tokens(space, &p, persp);
                    assert_eq!(
                        sorted(list),
                        sorted(fresh.as_slice()),
                        "{space:?} {persp:?} after {m} in {}",
                        p.to_sfen()
                    );
                }
            }
        }
    }
    assert!(
        king_refreshes > 100,
        "king moves under halfkp were exercised: {king_refreshes}"
    );
}

#[test]
fn native_split_ownership() {
    assert!(native::is_own(native::board_token(
        Color::Black,
        crate::shogi::PieceKind::Dragon,
        sq("1a"),
        Color::Black
    )));
    assert!(!native::is_own(native::board_token(
        Color::White,
        crate::shogi::PieceKind::Pawn,
        sq("1a"),
        Color::Black
    )));
    assert!(native::is_own(native::hand_token(
        Color::White,
        HandKind::Rook,
        2,
        Color::White
    )));
    assert!(!native::is_own(native::hand_token(
        Color::Black,
        HandKind::Pawn,
        1,
        Color::White
    )));
}
