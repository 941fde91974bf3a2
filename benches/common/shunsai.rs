//! shunsai 0.1.2 (the fastest Rust shogi move generator on crates.io) set up on any Manaka
//! position, and its perft with the same bulk counting as `Position::perft` (the last ply is
//! counted, not played), so the two are timed on equal terms. Shared by `benches/movegen.rs`
//! and `examples/perft_shunsai.rs`.

use manaka::runtime::shogi::{Color, HandKind, PieceKind, Position, Square};
use shunsai::shogi_core as sc;
use std::ops::ControlFlow;

fn color(c: Color) -> sc::Color {
    match c {
        Color::Black => sc::Color::Black,
        Color::White => sc::Color::White,
    }
}

/// Both crates list the fourteen kinds in the same order (P L N S G B R K, then promoted).
fn kind(k: PieceKind) -> sc::PieceKind {
    const KINDS: [sc::PieceKind; 14] = [
        sc::PieceKind::Pawn,
        sc::PieceKind::Lance,
        sc::PieceKind::Knight,
        sc::PieceKind::Silver,
        sc::PieceKind::Gold,
        sc::PieceKind::Bishop,
        sc::PieceKind::Rook,
        sc::PieceKind::King,
        sc::PieceKind::ProPawn,
        sc::PieceKind::ProLance,
        sc::PieceKind::ProKnight,
        sc::PieceKind::ProSilver,
        sc::PieceKind::ProBishop,
        sc::PieceKind::ProRook,
    ];
    KINDS[k.index()]
}

/// The same position as a shunsai position.
pub fn to_shunsai(p: &Position) -> shunsai::Position {
    let mut q = sc::PartialPosition::empty();
    for sq in Square::all() {
        if let Some(piece) = p.piece_at(sq) {
            let s = sc::Square::new(sq.file(), sq.rank()).expect("on the board");
            q.piece_set(
                s,
                Some(sc::Piece::new(kind(piece.kind), color(piece.color))),
            );
        }
    }
    for c in [Color::Black, Color::White] {
        let hand = q.hand_of_a_player_mut(color(c));
        for k in HandKind::ALL {
            for _ in 0..p.hand(c).count(k) {
                *hand = hand
                    .added(kind(k.piece_kind()))
                    .expect("hand counts within limits");
            }
        }
    }
    q.side_to_move_set(color(p.side_to_move()));
    shunsai::Position::new(q)
}

/// Leaf count, bulk-counted at the last ply.
pub fn perft(pos: &mut shunsai::Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => {
            let mut n = 0u64;
            let _ = pos.generate_moves(|s| {
                n += s.len() as u64;
                ControlFlow::Continue(())
            });
            n
        }
        _ => {
            let mut n = 0;
            for m in pos.legal_moves() {
                let u = pos.do_move(m);
                n += perft(pos, depth - 1);
                pos.undo_move(m, u);
            }
            n
        }
    }
}
