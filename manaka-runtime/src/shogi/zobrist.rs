//! Zobrist keys. A position's key is `board_key ^ hand_key`; the board part includes the
//! side to move. Keeping the hand part separate lets repetition detection tell "same board,
//! different hands" (the superior/inferior cases) from a true repetition.
//!
//! Keys come from splitmix64 with a fixed seed, computed at compile time, so they are the
//! same in every build and every process.

use super::types::{Color, HandKind, Piece, Square};

const fn splitmix64(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (s, z ^ (z >> 31))
}

struct Keys {
    board: [[u64; 81]; 28],
    /// `hand[color][kind][n]` is xor-ed in while `color` holds exactly `n` of `kind`; n = 0
    /// contributes nothing.
    hand: [[[u64; 19]; 7]; 2],
    side: u64,
}

const fn build() -> Keys {
    let mut k = Keys {
        board: [[0; 81]; 28],
        hand: [[[0; 19]; 7]; 2],
        side: 0,
    };
    let mut s = 0x6d61_6e61_6b61_u64; // "manaka"
    let mut p = 0;
    while p < 28 {
        let mut sq = 0;
        while sq < 81 {
            let (ns, v) = splitmix64(s);
            s = ns;
            k.board[p][sq] = v;
            sq += 1;
        }
        p += 1;
    }
    let mut c = 0;
    while c < 2 {
        let mut h = 0;
        while h < 7 {
            let mut n = 1;
            while n < 19 {
                let (ns, v) = splitmix64(s);
                s = ns;
                k.hand[c][h][n] = v;
                n += 1;
            }
            h += 1;
        }
        c += 1;
    }
    let (_, v) = splitmix64(s);
    // Bit 0 of the side key is set so that keys of the two sides never coincide in bit 0:
    // board_key & 1 tells whose move it is.
    k.side = v | 1;
    let mut p2 = 0;
    while p2 < 28 {
        let mut sq = 0;
        while sq < 81 {
            k.board[p2][sq] &= !1;
            sq += 1;
        }
        p2 += 1;
    }
    k
}

static KEYS: Keys = build();

#[inline(always)]
pub fn piece_square(piece: Piece, sq: Square) -> u64 {
    KEYS.board[piece.index()][sq.index()]
}

#[inline(always)]
pub fn hand_count(color: Color, kind: HandKind, n: u8) -> u64 {
    KEYS.hand[color.index()][kind.index()][n as usize]
}

#[inline(always)]
pub fn side_to_move() -> u64 {
    KEYS.side
}
