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

/// The SFEN board reflected left to right by text alone: each rank expanded to nine cells,
/// reversed, and compressed again — independent of `Square::mirror`.
fn mirror_sfen_text(sfen: &str) -> String {
    let mut fields: Vec<String> = sfen.split_whitespace().map(str::to_string).collect();
    let ranks: Vec<String> = fields[0]
        .split('/')
        .map(|rank| {
            let mut cells: Vec<String> = Vec::new();
            let mut promoted = false;
            for c in rank.chars() {
                if c == '+' {
                    promoted = true;
                } else if let Some(d) = c.to_digit(10) {
                    cells.extend((0..d).map(|_| String::new()));
                } else {
                    cells.push(if promoted {
                        format!("+{c}")
                    } else {
                        c.to_string()
                    });
                    promoted = false;
                }
            }
            cells.reverse();
            let (mut out, mut empty) = (String::new(), 0);
            for cell in cells {
                if cell.is_empty() {
                    empty += 1;
                } else {
                    if empty > 0 {
                        out += &empty.to_string();
                        empty = 0;
                    }
                    out += &cell;
                }
            }
            if empty > 0 {
                out += &empty.to_string();
            }
            out
        })
        .collect();
    fields[0] = ranks.join("/");
    fields.join(" ")
}

#[test]
fn mirroring_a_known_position() {
    // 7g7f mirrored is 3g3f; 8h2b+ (bishop takes bishop, promoting) is 2h8b+; P*5e stays.
    let sq = |s: &str| Square::from_usi(s).unwrap();
    assert_eq!(sq("7g").mirror(), sq("3g"));
    assert_eq!(sq("1a").mirror(), sq("9a"));
    assert_eq!(sq("5e").mirror(), sq("5e"));
    let mv = |s: &str| Move::parse_usi_syntax(s).unwrap();
    assert_eq!(mv("7g7f").mirror(), mv("3g3f"));
    assert_eq!(mv("8h2b+").mirror(), mv("2h8b+"));
    assert_eq!(mv("P*1e").mirror(), mv("P*9e"));
    // The start position is not symmetric: its rook and bishop change sides.
    let mut pos = Position::startpos();
    pos.do_move(mv("7g7f"));
    let expected =
        Position::from_sfen("lnsgkgsnl/1b5r1/ppppppppp/9/9/6P2/PPPPPP1PP/1R5B1/LNSGKGSNL w - 2")
            .unwrap();
    assert_eq!(pos.mirrored().to_sfen(), expected.to_sfen());
    assert_eq!(pos.mirrored().key(), expected.key());
}

#[test]
fn mirrored_positions_have_the_mirrored_legal_moves() {
    let mut rng = crate::random::SplitMix64::new(0x6d69_7272);
    let mut checked = 0;
    for _ in 0..30 {
        let mut pos = Position::startpos();
        for _ in 0..160 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = pos.mirrored();
            assert_eq!(m.to_sfen(), mirror_sfen_text(&pos.to_sfen()));
            assert_eq!(m.mirrored().to_sfen(), pos.to_sfen());
            assert_eq!(m.in_check(), pos.in_check());
            let mut want: Vec<u16> = moves.iter().map(|x| x.mirror().to_u16()).collect();
            let mut got: Vec<u16> = m.legal_moves().iter().map(|x| x.to_u16()).collect();
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want, "{}", pos.to_sfen());
            checked += 1;
            let i = rng.below(moves.len() as u64) as usize;
            pos.do_move(moves[i]);
        }
    }
    assert!(checked > 1000, "{checked}");
}
