//! What a network computes for a position, step by step, for `manaka lab`'s inspector
//! (docs/lab.md): the active tokens of both perspectives with their meaning, the last move's
//! token delta, the accumulator blocks before and after RMS normalisation, and every hidden
//! layer.
//!
//! Every number is the reference evaluator's own (`reference::head`, `reference::Accumulator`,
//! `tokens`): this module only reads them out and names them. The value and policy the page
//! shows come from the same path as `manaka eval`, not from here.

use crate::reference::head::{self, RMS_EPS};
use crate::reference::{NetState, ReferenceNet};
use crate::shogi::{Color, HandKind, Move, Position, Square};
use crate::tokens::{self, bona, native};
use manaka_shapes::{FeatureSpace, Shape};

/// One active token and what it stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub id: u32,
    /// E.g. `own S 7g`, `opp hand P #2`, `own K 5i × opp G 4a`.
    pub meaning: String,
}

/// One head block of one perspective (SPEC §5): its raw values, its RMS and the normalised
/// values `g·x / rms` the first layer reads. For `nnue` shapes the one block is the
/// accumulator `b_ft + Σ E` and "normalised" is its clip to [0, 1] (SPEC §6).
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub name: String,
    pub raw: Vec<f64>,
    /// `sqrt(mean(x²) + 1e-6)` (Manaka arithmetic); the plain RMS for `nnue`.
    pub rms: f64,
    pub input: Vec<f64>,
}

/// One perspective's part of the forward pass.
#[derive(Clone, Debug, PartialEq)]
pub struct Perspective {
    pub color: Color,
    /// In the order the accumulator holds them.
    pub tokens: Vec<Token>,
    /// The power sums `p_k` per group (`p1`.., or `own.p1`.. / `opp.p1`.. with `split`),
    /// before Newton's identities turn them into the `e_k` blocks.
    pub power_sums: Vec<(String, Vec<f64>)>,
    pub blocks: Vec<Block>,
}

/// How the last move changed one perspective's tokens (SPEC §3).
#[derive(Clone, Debug, PartialEq)]
pub struct Delta {
    pub color: Color,
    pub removed: Vec<Token>,
    pub added: Vec<Token>,
    /// HalfKP, own king moved: every id changed, the perspective was rebuilt.
    pub refresh: bool,
}

/// The whole inspection of one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Inspection {
    /// Side to move first, then the other side: the order of the head's input `u`.
    pub perspectives: [Perspective; 2],
    /// The last move's delta per perspective (Black, White), if moves were played.
    pub last_move: Option<(Move, [Delta; 2])>,
    /// Every hidden layer's activations, first to last.
    pub hidden: Vec<Vec<f64>>,
    /// The reference evaluator's value logit (the page's value comes from `manaka eval`'s
    /// path; the two agree to 1e-4, docs/evaluator.md).
    pub value_logit: f64,
}

/// Plays `moves` from `start` with incremental updates, as `manaka eval` does, and reads the
/// reference evaluator's intermediate values off the final position. The moves must be
/// legal (callers parse them with `Position::parse_usi_move`).
pub fn inspect(net: &ReferenceNet, start: &Position, moves: &[Move]) -> (Position, Inspection) {
    let shape = *net.shape();
    let mut pos = start.clone();
    let mut state = net.refresh(&pos);
    let mut last_move = None;
    for &m in moves {
        let effect = pos.do_move(m);
        net.update(&mut state, &effect, &pos);
        let delta = Color::ALL.map(|c| {
            let d = tokens::delta(shape.features, &effect, &pos, c);
            let named = |ids: &[u32]| ids.iter().map(|&id| token(&shape, id, c)).collect();
            Delta {
                color: c,
                removed: named(d.removed.as_slice()),
                added: named(d.added.as_slice()),
                refresh: d.refresh,
            }
        });
        last_move = Some((m, delta));
    }
    let stm = pos.side_to_move();
    let params = net.params();
    let (a, b) = (&state.acc[stm.index()], &state.acc[stm.flip().index()]);
    let hidden = head::hidden_layers(&shape, &params, a, b);
    let value_logit = head::value_logit(&params, hidden.last().expect("one layer at least"));
    let perspectives = [stm, stm.flip()].map(|c| perspective(net, &state, c));
    (
        pos,
        Inspection {
            perspectives,
            last_move,
            hidden,
            value_logit,
        },
    )
}

fn perspective(net: &ReferenceNet, state: &NetState, color: Color) -> Perspective {
    let shape = net.shape();
    let params = net.params();
    let acc = &state.acc[color.index()];
    let tokens = acc
        .tokens
        .iter()
        .map(|&id| token(shape, id, color))
        .collect();
    let rms =
        |x: &[f64], eps: f64| (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64 + eps).sqrt();
    let mut power_sums = Vec::new();
    let blocks = if shape.nnue {
        vec![Block {
            name: "acc".into(),
            raw: acc.nnue.clone(),
            rms: rms(&acc.nnue, 0.0),
            input: head::perspective_input(shape, &params, acc),
        }]
    } else {
        for (g, group) in acc.power.iter().enumerate() {
            let prefix = match (shape.split, g) {
                (false, _) => "",
                (true, 0) => "own.",
                (true, _) => "opp.",
            };
            for (k, p) in group.iter().enumerate() {
                power_sums.push((format!("{prefix}p{}", k + 1), p.clone()));
            }
        }
        // The same normalisation as `head::perspective_input`, block by block; the test
        // below checks the concatenation equals it.
        head::raw_blocks(shape, acc)
            .into_iter()
            .zip(shape.blocks())
            .zip(&params.norms)
            .map(|((raw, block), gains)| {
                let r = rms(&raw, RMS_EPS);
                let input = raw
                    .iter()
                    .zip(gains.iter())
                    .map(|(&v, &g)| g as f64 * v / r)
                    .collect();
                Block {
                    name: block.name(),
                    raw,
                    rms: r,
                    input,
                }
            })
            .collect()
    };
    Perspective {
        color,
        tokens,
        power_sums,
        blocks,
    }
}

fn token(shape: &Shape, id: u32, perspective: Color) -> Token {
    Token {
        id,
        meaning: token_meaning(shape.features, id, perspective),
    }
}

/// The square a perspective-relative index stands for on the real board.
fn board_square(rel: u32, perspective: Color) -> String {
    match Square::new(rel as u8) {
        Some(sq) => sq.relative(perspective).to_string(),
        None => format!("?{rel}"),
    }
}

/// What token `id` of `space` means from `perspective` (SPEC §3, docs/tokens.md): the owner
/// relative to the perspective (`own` / `opp`), the piece, and the square on the real board
/// (so both perspectives name a piece the same way).
pub fn token_meaning(space: FeatureSpace, id: u32, perspective: Color) -> String {
    match space {
        FeatureSpace::Native => native_meaning(id, perspective),
        FeatureSpace::Kp => {
            if id < bona::FE_END {
                bona_meaning(id, perspective)
            } else if id < bona::FE_END + 81 {
                format!("own K {}", board_square(id - bona::FE_END, perspective))
            } else {
                format!(
                    "opp K {}",
                    board_square(id - bona::FE_END - 81, perspective)
                )
            }
        }
        FeatureSpace::HalfKp => format!(
            "own K {} × {}",
            board_square(id / bona::FE_END, perspective),
            bona_meaning(id % bona::FE_END, perspective)
        ),
    }
}

const KIND_NAMES: [&str; 14] = [
    "P", "L", "N", "S", "G", "B", "R", "K", "+P", "+L", "+N", "+S", "+B", "+R",
];

fn owner(friend: bool) -> &'static str {
    if friend { "own" } else { "opp" }
}

fn native_meaning(id: u32, perspective: Color) -> String {
    let board = native::HAND_BASE;
    if id < board {
        let (owner_rel, kind, sq) = (id / (14 * 81), (id / 81) % 14, id % 81);
        return format!(
            "{} {} {}",
            owner(owner_rel == 0),
            KIND_NAMES[kind as usize],
            board_square(sq, perspective)
        );
    }
    let (o, slot) = ((id - board) / 38, (id - board) % 38);
    let (kind, i) = hand_slot(slot, &native::HAND_KIND_BASE);
    format!("{} hand {} #{}", owner(o == 0), kind.letter(), i)
}

/// The hand kind and 1-based count of slot `slot` in a layout whose kinds start at `base`
/// (`P L N S G B R`).
fn hand_slot(slot: u32, base: &[u32; 7]) -> (HandKind, u32) {
    let k = (0..7).rev().find(|&k| slot >= base[k]).unwrap_or(0);
    (
        HandKind::from_index(k).expect("seven hand kinds"),
        slot - base[k] + 1,
    )
}

/// A BonaPiece by YaneuraOu's layout (docs/tokens.md): 0 a missing piece, 1..90 hands
/// (friend P 1, L 39, …; enemy P 20, …), then 81 squares per (piece, friend/enemy) in the
/// order P L N S G B +B R +R.
fn bona_meaning(bp: u32, perspective: Color) -> String {
    if bp == 0 {
        return "missing piece (BonaPiece 0)".into();
    }
    if bp < bona::FE_HAND_END {
        // Friend and enemy ranges interleave per kind; find the range holding bp.
        for k in (0..7).rev() {
            for friend in [true, false] {
                let kind = HandKind::from_index(k).expect("seven hand kinds");
                // The first piece's id is the range's start (count-indexed hands).
                let holder = if friend {
                    perspective
                } else {
                    perspective.flip()
                };
                let start = bona::hand_piece(holder, kind, 1, perspective);
                if bp >= start && bp < start + HandKind::MAX[k] as u32 {
                    return format!(
                        "{} hand {} #{}",
                        owner(friend),
                        kind.letter(),
                        bp - start + 1
                    );
                }
            }
        }
        return format!("hand slot {bp}");
    }
    const BOARD: [&str; 9] = ["P", "L", "N", "S", "G*", "B", "+B", "R", "+R"];
    let slot = (bp - bona::FE_HAND_END) / 81;
    let sq = (bp - bona::FE_HAND_END) % 81;
    format!(
        "{} {} {}",
        owner(slot % 2 == 0),
        BOARD[(slot / 2) as usize],
        board_square(sq, perspective)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::init::random_weights;
    use std::sync::Arc;

    fn net(shape: &str) -> ReferenceNet {
        let shape = Shape::parse(shape).unwrap();
        ReferenceNet::new(Arc::new(random_weights(&shape, 7))).unwrap()
    }

    /// The meaning of every active token, decoded from its id, equals a description built
    /// from the position itself (piece by piece, hand by hand): decoding is the inverse of
    /// the numbering in `tokens`.
    #[test]
    fn every_token_names_the_piece_it_was_built_from() {
        let mut pos = Position::startpos();
        pos.play_usi_moves(["7g7f", "3c3d", "8h2b+", "3a2b", "B*5e", "5a4b"])
            .unwrap();
        for space in [
            "pair0_d4_o1_h4",
            "pair0_d4_o1_h4_kp",
            "pair0_d4_o1_h4_halfkp",
        ] {
            let shape = Shape::parse(space).unwrap();
            for c in Color::ALL {
                let mut got: Vec<String> = tokens::active_tokens(shape.features, &pos, c)
                    .as_slice()
                    .iter()
                    .map(|&id| token_meaning(shape.features, id, c))
                    .collect();
                let mut want = Vec::new();
                let king = pos.king_square(c).unwrap().to_string();
                for sq in Square::all() {
                    let Some(p) = pos.piece_at(sq) else { continue };
                    let own = owner(p.color == c);
                    let mut name = KIND_NAMES[p.kind as usize].to_string();
                    if shape.features != FeatureSpace::Native {
                        if p.kind == crate::shogi::PieceKind::King {
                            if shape.features == FeatureSpace::Kp {
                                want.push(format!("{own} K {sq}"));
                            }
                            continue;
                        }
                        if ["G", "+P", "+L", "+N", "+S"].contains(&name.as_str()) {
                            name = "G*".into();
                        }
                    }
                    want.push(format!("{own} {name} {sq}"));
                }
                for side in Color::ALL {
                    for k in HandKind::ALL {
                        for i in 1..=pos.hand(side).count(k) {
                            want.push(format!("{} hand {} #{i}", owner(side == c), k.letter()));
                        }
                    }
                }
                if shape.features == FeatureSpace::HalfKp {
                    want = want
                        .into_iter()
                        .map(|w| format!("own K {king} × {w}"))
                        .collect();
                }
                got.sort();
                want.sort();
                assert_eq!(got, want, "{space}, {c:?}");
            }
        }
    }

    /// The blocks' inputs, concatenated, are the head's input; the last hidden layer and the
    /// value are the reference evaluator's; the last move's delta is `tokens::delta`'s.
    #[test]
    fn the_inspection_is_the_reference_forward_pass() {
        for shape in [
            "pair4_d8_o3_h16_h28_m2_f2_lse1_ks",
            "pair0_d8_o2_h8_split",
            "pair0_d16_o1_h8_halfkp_nnue",
        ] {
            let net = net(shape);
            let start = Position::startpos();
            let mut replay = start.clone();
            let moves: Vec<Move> = ["7g7f", "3c3d", "5i4h"]
                .iter()
                .map(|u| {
                    let m = replay.parse_usi_move(u).unwrap();
                    replay.do_move(m);
                    m
                })
                .collect();
            let (pos, ins) = inspect(&net, &start, &moves);
            assert_eq!(pos.to_sfen(), replay.to_sfen());
            let state = net.refresh(&pos);
            let params = net.params();
            for p in &ins.perspectives {
                let input: Vec<f64> = p.blocks.iter().flat_map(|b| b.input.clone()).collect();
                let mut want =
                    head::perspective_input(net.shape(), &params, &state.acc[p.color.index()]);
                if net.shape().ks {
                    want.truncate(input.len());
                }
                assert_eq!(input.len(), want.len(), "{shape}");
                for (x, y) in input.iter().zip(&want) {
                    assert!((x - y).abs() < 1e-9, "{shape}: {x} vs {y}");
                }
            }
            let out = net.evaluate(&state, &pos, &pos.legal_moves());
            assert!((ins.value_logit - out.value_logit).abs() < 1e-9, "{shape}");
            let (m, delta) = ins.last_move.as_ref().unwrap();
            assert_eq!(m.to_usi(), "5i4h");
            let halfkp = net.shape().features == FeatureSpace::HalfKp;
            // A Black king move rebuilds Black's HalfKP view only.
            assert_eq!(delta[0].refresh, halfkp, "{shape}");
            assert!(!delta[1].refresh, "{shape}");
        }
    }
}
