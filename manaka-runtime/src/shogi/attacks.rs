//! Attack tables and slider attacks.
//!
//! Step pieces use per-square tables. Sliders use the classical ray method: for each of the
//! eight directions a table holds the ray from every square to the board edge; the nearest
//! blocker on a ray is its lowest set bit (directions that increase the square index) or its
//! highest (directions that decrease it), and the squares behind the blocker are removed by
//! XOR with the blocker's own ray. A sentinel bit makes this branch-free: square 80 (9i) ends
//! every increasing ray and square 0 (1a) every decreasing one, and the rays from those corners
//! in those directions are empty, so a sentinel "blocker" there changes nothing.
//!
//! All tables are built by `const fn` at compile time.

use super::bitboard::Bitboard;
use super::types::{Color, PieceKind, Square};

/// Direction `(file delta, rank delta)`; rank delta −1 is "forward" for Black.
/// Indices 0..4 increase the square index, 4..8 decrease it.
const DIRS: [(i8, i8); 8] = [
    (0, 1),
    (1, 0),
    (1, -1),
    (1, 1),
    (0, -1),
    (-1, 0),
    (-1, 1),
    (-1, -1),
];
const ROOK_DIRS: [usize; 4] = [0, 1, 4, 5];
const BISHOP_DIRS: [usize; 4] = [2, 3, 6, 7];
/// Direction a lance of each colour moves in: Black towards rank 1, White towards rank 9.
const LANCE_DIR: [usize; 2] = [4, 0];
const NO_DIRECTION: u8 = 8;

const fn offset(sq: usize, df: i8, dr: i8) -> Option<usize> {
    let f = (sq / 9) as i8 + df;
    let r = (sq % 9) as i8 + dr;
    if f >= 0 && f < 9 && r >= 0 && r < 9 {
        Some((f * 9 + r) as usize)
    } else {
        None
    }
}

const fn build_rays() -> [[u128; 81]; 8] {
    let mut t = [[0u128; 81]; 8];
    let mut d = 0;
    while d < 8 {
        let mut sq = 0;
        while sq < 81 {
            let mut b = 0u128;
            let mut cur = sq;
            while let Some(n) = offset(cur, DIRS[d].0, DIRS[d].1) {
                b |= 1u128 << n;
                cur = n;
            }
            t[d][sq] = b;
            sq += 1;
        }
        d += 1;
    }
    t
}

static RAYS: [[u128; 81]; 8] = build_rays();

/// The union of a slider's four rays from each square (its moves on an empty board).
const fn build_union(dirs: [usize; 4]) -> [u128; 81] {
    let rays = build_rays();
    let mut t = [0u128; 81];
    let mut sq = 0;
    while sq < 81 {
        t[sq] = rays[dirs[0]][sq] | rays[dirs[1]][sq] | rays[dirs[2]][sq] | rays[dirs[3]][sq];
        sq += 1;
    }
    t
}

static BISHOP_RAYS: [u128; 81] = build_union(BISHOP_DIRS);
static ROOK_RAYS: [u128; 81] = build_union(ROOK_DIRS);

const fn build_directions() -> [[u8; 81]; 81] {
    let mut t = [[NO_DIRECTION; 81]; 81];
    let mut sq = 0;
    while sq < 81 {
        let mut d = 0;
        while d < 8 {
            let mut cur = sq;
            while let Some(n) = offset(cur, DIRS[d].0, DIRS[d].1) {
                t[sq][n] = d as u8;
                cur = n;
            }
            d += 1;
        }
        sq += 1;
    }
    t
}

static DIRECTIONS: [[u8; 81]; 81] = build_directions();

/// Step-move offsets as seen by Black; White's are the same rotated by 180°.
const fn step_offsets(kind: usize) -> &'static [(i8, i8)] {
    match kind {
        0 => &[(0, -1)],
        1 => &[(-1, -2), (1, -2)],
        2 => &[(-1, -1), (0, -1), (1, -1), (-1, 1), (1, 1)],
        3 => &[(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (0, 1)],
        _ => &[
            (-1, -1),
            (0, -1),
            (1, -1),
            (-1, 0),
            (1, 0),
            (-1, 1),
            (0, 1),
            (1, 1),
        ],
    }
}

/// Index into [`STEPS`]: pawn, knight, silver, gold (and gold movers), king.
const STEP_PAWN: usize = 0;
const STEP_KNIGHT: usize = 1;
const STEP_SILVER: usize = 2;
const STEP_GOLD: usize = 3;
const STEP_KING: usize = 4;

const fn build_steps() -> [[[u128; 81]; 5]; 2] {
    let mut t = [[[0u128; 81]; 5]; 2];
    let mut c = 0;
    while c < 2 {
        let mut k = 0;
        while k < 5 {
            let offs = step_offsets(k);
            let mut sq = 0;
            while sq < 81 {
                let mut b = 0u128;
                let mut i = 0;
                while i < offs.len() {
                    let (df, dr) = offs[i];
                    let (df, dr) = if c == 0 { (df, dr) } else { (-df, -dr) };
                    if let Some(n) = offset(sq, df, dr) {
                        b |= 1u128 << n;
                    }
                    i += 1;
                }
                t[c][k][sq] = b;
                sq += 1;
            }
            k += 1;
        }
        c += 1;
    }
    t
}

static STEPS: [[[u128; 81]; 5]; 2] = build_steps();

#[inline(always)]
fn ray_attack(dir: usize, sq: Square, occupied: Bitboard) -> u128 {
    let ray = RAYS[dir][sq.index()];
    let blockers = ray & occupied.0;
    let nearest = if dir < 4 {
        (blockers | 1u128 << 80).trailing_zeros()
    } else {
        127 - (blockers | 1).leading_zeros()
    };
    ray ^ RAYS[dir][nearest as usize]
}

#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(STEPS[color.index()][STEP_PAWN][sq.index()])
}

#[inline(always)]
pub fn knight_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(STEPS[color.index()][STEP_KNIGHT][sq.index()])
}

#[inline(always)]
pub fn silver_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(STEPS[color.index()][STEP_SILVER][sq.index()])
}

/// Gold and the four pieces that move like it (+P +L +N +S).
#[inline(always)]
pub fn gold_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(STEPS[color.index()][STEP_GOLD][sq.index()])
}

#[inline(always)]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(STEPS[0][STEP_KING][sq.index()])
}

#[inline(always)]
pub fn lance_attacks(color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(ray_attack(LANCE_DIR[color.index()], sq, occupied))
}

#[inline(always)]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(
        ray_attack(BISHOP_DIRS[0], sq, occupied)
            | ray_attack(BISHOP_DIRS[1], sq, occupied)
            | ray_attack(BISHOP_DIRS[2], sq, occupied)
            | ray_attack(BISHOP_DIRS[3], sq, occupied),
    )
}

#[inline(always)]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(
        ray_attack(ROOK_DIRS[0], sq, occupied)
            | ray_attack(ROOK_DIRS[1], sq, occupied)
            | ray_attack(ROOK_DIRS[2], sq, occupied)
            | ray_attack(ROOK_DIRS[3], sq, occupied),
    )
}

/// Squares a lance of `color` on `sq` could reach on an empty board.
#[inline(always)]
pub fn lance_rays(color: Color, sq: Square) -> Bitboard {
    Bitboard(RAYS[LANCE_DIR[color.index()]][sq.index()])
}

#[inline(always)]
pub fn bishop_rays(sq: Square) -> Bitboard {
    Bitboard(BISHOP_RAYS[sq.index()])
}

#[inline(always)]
pub fn rook_rays(sq: Square) -> Bitboard {
    Bitboard(ROOK_RAYS[sq.index()])
}

/// Squares strictly between `a` and `b` when they share a line; empty otherwise.
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    let d = DIRECTIONS[a.index()][b.index()] as usize;
    if d == NO_DIRECTION as usize {
        return Bitboard::EMPTY;
    }
    Bitboard((RAYS[d][a.index()] ^ RAYS[d][b.index()]) & !(1u128 << b.index()))
}

/// The ray from `from` through `through` to the board edge (excluding `from`); empty when
/// they share no line. A piece pinned against its king on `from` may move only along it.
#[inline(always)]
pub fn ray_through(from: Square, through: Square) -> Bitboard {
    let d = DIRECTIONS[from.index()][through.index()] as usize;
    if d == NO_DIRECTION as usize {
        Bitboard::EMPTY
    } else {
        Bitboard(RAYS[d][from.index()])
    }
}

/// Attacks of any piece (used off the hot path: SFEN validation, tests).
pub fn piece_attacks(kind: PieceKind, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match kind {
        PieceKind::Pawn => pawn_attacks(color, sq),
        PieceKind::Lance => lance_attacks(color, sq, occupied),
        PieceKind::Knight => knight_attacks(color, sq),
        PieceKind::Silver => silver_attacks(color, sq),
        PieceKind::Gold
        | PieceKind::ProPawn
        | PieceKind::ProLance
        | PieceKind::ProKnight
        | PieceKind::ProSilver => gold_attacks(color, sq),
        PieceKind::Bishop => bishop_attacks(sq, occupied),
        PieceKind::Rook => rook_attacks(sq, occupied),
        PieceKind::King => king_attacks(sq),
        PieceKind::Horse => bishop_attacks(sq, occupied) | king_attacks(sq),
        PieceKind::Dragon => rook_attacks(sq, occupied) | king_attacks(sq),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        Square::from_usi(s).unwrap()
    }

    /// Slow twin: walk each direction square by square.
    fn slow_slider(dirs: &[usize], s: Square, occ: Bitboard) -> Bitboard {
        let mut b = Bitboard::EMPTY;
        for &d in dirs {
            let mut cur = s.index();
            while let Some(n) = offset(cur, DIRS[d].0, DIRS[d].1) {
                b = b.with(Square::new(n as u8).unwrap());
                if occ.contains(Square::new(n as u8).unwrap()) {
                    break;
                }
                cur = n;
            }
        }
        b
    }

    #[test]
    fn sliders_equal_walking_on_random_occupancy() {
        let mut rng = crate::random::SplitMix64::new(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let (x, y) = (rng.next_u64(), rng.next_u64());
            let occ = Bitboard(((x as u128) << 64 | y as u128) & (x as u128 | (y as u128) << 40))
                & Bitboard::ALL;
            for s in Square::all() {
                assert_eq!(rook_attacks(s, occ), slow_slider(&ROOK_DIRS, s, occ));
                assert_eq!(bishop_attacks(s, occ), slow_slider(&BISHOP_DIRS, s, occ));
                assert_eq!(
                    lance_attacks(Color::Black, s, occ),
                    slow_slider(&[4], s, occ)
                );
                assert_eq!(
                    lance_attacks(Color::White, s, occ),
                    slow_slider(&[0], s, occ)
                );
            }
        }
    }

    #[test]
    fn step_tables() {
        assert_eq!(
            pawn_attacks(Color::Black, sq("7g")),
            Bitboard::from_square(sq("7f"))
        );
        assert_eq!(
            pawn_attacks(Color::White, sq("3c")),
            Bitboard::from_square(sq("3d"))
        );
        assert_eq!(knight_attacks(Color::Black, sq("2i")).count(), 2);
        assert!(knight_attacks(Color::Black, sq("2i")).contains(sq("1g")));
        assert!(knight_attacks(Color::Black, sq("2i")).contains(sq("3g")));
        assert_eq!(king_attacks(sq("1a")).count(), 3);
        assert_eq!(gold_attacks(Color::Black, sq("5e")).count(), 6);
        assert!(!gold_attacks(Color::Black, sq("5e")).contains(sq("4f")));
        assert!(silver_attacks(Color::Black, sq("5e")).contains(sq("4f")));
    }

    #[test]
    fn between_and_lines() {
        assert_eq!(between(sq("5i"), sq("5a")).count(), 7);
        assert_eq!(between(sq("1a"), sq("9i")).count(), 7);
        assert_eq!(between(sq("1a"), sq("2c")), Bitboard::EMPTY);
        assert_eq!(between(sq("5e"), sq("5f")), Bitboard::EMPTY);
        assert_eq!(ray_through(sq("5i"), sq("5h")).count(), 8);
    }
}
