//! Unit tests that need several modules at once.

use super::*;

fn perft_of(sfen: &str, depth: u32) -> u64 {
    Position::from_sfen(sfen).unwrap().perft(depth)
}

#[test]
fn perft_small_depths() {
    assert_eq!(perft_of("startpos", 1), 30);
    assert_eq!(perft_of("startpos", 2), 900);
    assert_eq!(perft_of("startpos", 3), 25_470);
    assert_eq!(perft_of("8k/6G2/9/7N1/9/9/9/9/K8 b P 1", 1), 78);
    assert_eq!(perft_of("8k/6G2/9/7N1/9/9/9/9/K8 b P 1", 2), 9);
    assert_eq!(perft_of("8k/6G2/9/7N1/9/9/9/9/K8 b P 1", 3), 698);
    assert_eq!(
        perft_of("R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1", 1),
        593
    );
    assert_eq!(
        perft_of(
            "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
            1
        ),
        207
    );
}

#[test]
fn last_move_effect_equals_what_do_move_reported() {
    let mut rng = crate::random::SplitMix64::new(0x1234_5678);
    for _ in 0..40 {
        let mut pos = Position::startpos();
        assert!(pos.last_move_effect().is_none() && pos.previous_key().is_none());
        for _ in 0..200 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let before = pos.key();
            let m = moves[rng.below(moves.len() as u64) as usize];
            let e = pos.do_move(m);
            assert_eq!(pos.last_move(), Some(m));
            assert_eq!(pos.last_move_effect(), Some(e), "{m} in {}", pos.to_sfen());
            assert_eq!(pos.previous_key(), Some(before));
        }
    }
}
