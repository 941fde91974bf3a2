//! Fully legal move generation.
//!
//! Legality is settled per position, not per move. Once per node we know the checkers
//! (kept in the state by `do_move`) and compute the pinned pieces; then
//! - a piece that is not pinned cannot expose its king, and a pinned one is held to the ray
//!   from its king through it (which still lets it take the pinner);
//! - in single check every non-king move must take the checker or interpose, and drops must
//!   interpose; in double check only the king moves;
//! - each king destination is tested with the king removed from the occupancy, so it cannot
//!   hide behind itself from a slider.
//! Pawn-drop mate (uchifuzume) is the one rule that needs a look ahead; it can only occur on
//! the square in front of the enemy king, so that single square is tested.
//!
//! Moves reach a [`MoveSink`] grouped by origin with destinations still as bitboards, so a
//! counter (perft) never materialises a `Move`.

use super::attacks::{
    between, bishop_attacks, gold_attacks, king_attacks, knight_attacks, lance_attacks,
    pawn_attacks, ray_through, rook_attacks, silver_attacks,
};
use super::bitboard::Bitboard;
use super::moves::Move;
use super::position::Position;
use super::types::{Color, HandKind, PieceKind, Square};

/// Receives legal moves as they are generated.
pub trait MoveSink {
    /// Board moves of the piece `kind` on `from`. A square in `promote` is reached by a
    /// promoting move, one in `plain` by a non-promoting move; a square in both has both.
    fn board(&mut self, kind: PieceKind, from: Square, promote: Bitboard, plain: Bitboard);
    /// Drops of `kind` onto each square of `to`.
    fn drops(&mut self, kind: HandKind, to: Bitboard);
}

/// Counts moves without building them.
pub(crate) struct Counter(pub u64);

impl MoveSink for Counter {
    #[inline(always)]
    fn board(&mut self, _: PieceKind, _: Square, promote: Bitboard, plain: Bitboard) {
        self.0 += (promote.count() + plain.count()) as u64;
    }
    #[inline(always)]
    fn drops(&mut self, _: HandKind, to: Bitboard) {
        self.0 += to.count() as u64;
    }
}

impl MoveSink for Vec<Move> {
    #[inline]
    fn board(&mut self, _: PieceKind, from: Square, promote: Bitboard, plain: Bitboard) {
        for to in promote {
            self.push(Move::normal(from, to, true));
        }
        for to in plain {
            self.push(Move::normal(from, to, false));
        }
    }
    #[inline]
    fn drops(&mut self, kind: HandKind, to: Bitboard) {
        for sq in to {
            self.push(Move::drop(kind, sq));
        }
    }
}

/// Per colour: the promotion zone, the last rank, the last two ranks.
static ZONE: [Bitboard; 2] = [Bitboard::far_ranks(Color::Black, 3), Bitboard::far_ranks(Color::White, 3)];
static LAST1: [Bitboard; 2] = [Bitboard::far_ranks(Color::Black, 1), Bitboard::far_ranks(Color::White, 1)];
static LAST2: [Bitboard; 2] = [Bitboard::far_ranks(Color::Black, 2), Bitboard::far_ranks(Color::White, 2)];

const fn build_file_masks() -> [Bitboard; 9] {
    let mut t = [Bitboard::EMPTY; 9];
    let mut f = 0;
    while f < 9 {
        t[f] = Bitboard::file_mask(f as u8 + 1);
        f += 1;
    }
    t
}
static FILE_MASKS: [Bitboard; 9] = build_file_masks();

/// The most legal moves any position has (the 593-move position).
pub const MAX_MOVES: usize = 600;

/// Generates every legal move of the side to move into `sink`.
pub fn generate<S: MoveSink>(pos: &Position, sink: &mut S) {
    let us = pos.side_to_move();
    let them = us.flip();
    let own = pos.pieces(us);
    let occ = pos.occupied();
    let checkers = pos.checkers();
    let king = pos.king_square(us);

    if let Some(k) = king {
        let occ_no_king = occ.without(k);
        let mut legal = Bitboard::EMPTY;
        for t in king_attacks(k).and_not(own) {
            if !pos.is_attacked(t, them, occ_no_king) {
                legal = legal.with(t);
            }
        }
        if legal.is_nonempty() {
            sink.board(PieceKind::King, k, Bitboard::EMPTY, legal);
        }
    }
    if checkers.has_more_than_one() {
        return;
    }
    let (target, drop_target) = match checkers.first() {
        Some(c) => {
            // Single check: a checker exists only if our king does.
            let b = between(king.expect("checked king"), c);
            (b.with(c), b)
        }
        None => (!own, !occ),
    };
    let pinned = pos.pinned(us);
    // Destinations allowed for the piece on `from`: the check mask, narrowed to the pin ray.
    let allowed = |from: Square| -> Bitboard {
        if pinned.contains(from) {
            target & ray_through(king.expect("pinned implies a king"), from)
        } else {
            target
        }
    };
    let zone = ZONE[us.index()];
    let last1 = LAST1[us.index()];
    let last2 = LAST2[us.index()];

    for from in pos.pieces_of(PieceKind::Pawn, us) {
        let d = pawn_attacks(us, from) & allowed(from);
        if d.is_nonempty() {
            sink.board(PieceKind::Pawn, from, d & zone, d.and_not(last1));
        }
    }
    for from in pos.pieces_of(PieceKind::Lance, us) {
        let d = lance_attacks(us, from, occ) & allowed(from);
        if d.is_nonempty() {
            sink.board(PieceKind::Lance, from, d & zone, d.and_not(last1));
        }
    }
    for from in pos.pieces_of(PieceKind::Knight, us) {
        let d = knight_attacks(us, from) & allowed(from);
        if d.is_nonempty() {
            sink.board(PieceKind::Knight, from, d & zone, d.and_not(last2));
        }
    }
    // Silver, bishop and rook may promote when either end of the move is in the zone, and
    // never have to.
    let optional = |from: Square, d: Bitboard| if zone.contains(from) { d } else { d & zone };
    for from in pos.pieces_of(PieceKind::Silver, us) {
        let d = silver_attacks(us, from) & allowed(from);
        if d.is_nonempty() {
            sink.board(PieceKind::Silver, from, optional(from, d), d);
        }
    }
    for from in pos.pieces_of(PieceKind::Bishop, us) {
        let d = bishop_attacks(from, occ) & allowed(from);
        if d.is_nonempty() {
            sink.board(PieceKind::Bishop, from, optional(from, d), d);
        }
    }
    for from in pos.pieces_of(PieceKind::Rook, us) {
        let d = rook_attacks(from, occ) & allowed(from);
        if d.is_nonempty() {
            sink.board(PieceKind::Rook, from, optional(from, d), d);
        }
    }
    for from in pos.gold_movers() & own {
        let d = gold_attacks(us, from) & allowed(from);
        if d.is_nonempty() {
            let kind = pos.piece_at(from).expect("gold mover on its square").kind;
            sink.board(kind, from, Bitboard::EMPTY, d);
        }
    }
    for from in pos.pieces_of(PieceKind::Horse, us) {
        let d = (bishop_attacks(from, occ) | king_attacks(from)) & allowed(from);
        if d.is_nonempty() {
            sink.board(PieceKind::Horse, from, Bitboard::EMPTY, d);
        }
    }
    for from in pos.pieces_of(PieceKind::Dragon, us) {
        let d = (rook_attacks(from, occ) | king_attacks(from)) & allowed(from);
        if d.is_nonempty() {
            sink.board(PieceKind::Dragon, from, Bitboard::EMPTY, d);
        }
    }

    let hand = pos.hand(us);
    if hand.is_empty() || drop_target.is_empty() {
        return;
    }
    if hand.count(HandKind::Pawn) > 0 {
        let mut pawn_files = Bitboard::EMPTY;
        for p in pos.pieces_of(PieceKind::Pawn, us) {
            pawn_files |= FILE_MASKS[p.file() as usize - 1];
        }
        let mut to = drop_target.and_not(last1).and_not(pawn_files);
        if let Some(ek) = pos.king_square(them) {
            // The only square where a dropped pawn checks: in front of the enemy king.
            if let Some(s) = (pawn_attacks(them, ek) & to).first() {
                if pawn_drop_mates(pos, s, ek) {
                    to = to.without(s);
                }
            }
        }
        if to.is_nonempty() {
            sink.drops(HandKind::Pawn, to);
        }
    }
    if hand.count(HandKind::Lance) > 0 {
        sink.drops(HandKind::Lance, drop_target.and_not(last1));
    }
    if hand.count(HandKind::Knight) > 0 {
        sink.drops(HandKind::Knight, drop_target.and_not(last2));
    }
    for k in [HandKind::Silver, HandKind::Gold, HandKind::Bishop, HandKind::Rook] {
        if hand.count(k) > 0 {
            sink.drops(k, drop_target);
        }
    }
}

/// Whether dropping a pawn of the side to move on `s`, directly in front of the enemy king
/// on `ek`, would mate (and so is illegal: uchifuzume). The king may escape — taking the
/// pawn included — or another piece may take the pawn without exposing the king; a
/// pawn's check is adjacent, so nothing can interpose.
fn pawn_drop_mates(pos: &Position, s: Square, ek: Square) -> bool {
    let us = pos.side_to_move();
    let them = us.flip();
    let occ = pos.occupied().with(s);
    // The pawn attacks only `ek`, so it never guards an escape square itself; it only
    // blocks lines. Squares are tested with the king lifted off the board.
    let occ_no_king = occ.without(ek);
    for t in king_attacks(ek).and_not(pos.pieces(them)) {
        if !pos.is_attacked(t, us, occ_no_king) {
            return false;
        }
    }
    let their_king = Bitboard::from_square(ek);
    for c in pos.attackers_to(s, them, occ).and_not(their_king) {
        // After `c` takes on `s`, `c`'s square is empty and `s` is still occupied; the
        // pawn (not in `pos`'s bitboards) is gone.
        if !pos.is_attacked(ek, us, occ.without(c)) {
            return false;
        }
    }
    true
}

impl Position {
    /// All legal moves of the side to move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::with_capacity(MAX_MOVES);
        generate(self, &mut v);
        v
    }

    /// Number of legal moves, counted without building them.
    pub fn count_legal_moves(&self) -> u64 {
        let mut c = Counter(0);
        generate(self, &mut c);
        c.0
    }

    /// Whether the side to move has any legal move (false: mated, or stalemated, which in
    /// shogi also loses).
    pub fn has_legal_moves(&self) -> bool {
        // Cheap exits first: a king step or any drop already settles it in most positions.
        self.count_legal_moves() > 0
    }

    /// Whether `m` is a legal move here.
    pub fn is_legal(&self, m: Move) -> bool {
        let mut ok = false;
        let mut probe = LegalProbe { target: m, found: &mut ok };
        generate(self, &mut probe);
        ok
    }
}

/// A sink that only asks whether one given move is generated.
struct LegalProbe<'a> {
    target: Move,
    found: &'a mut bool,
}

impl MoveSink for LegalProbe<'_> {
    fn board(&mut self, _: PieceKind, from: Square, promote: Bitboard, plain: Bitboard) {
        if self.target.from() == Some(from) {
            let set = if self.target.is_promotion() { promote } else { plain };
            *self.found |= set.contains(self.target.to());
        }
    }
    fn drops(&mut self, kind: HandKind, to: Bitboard) {
        if self.target.drop_kind() == Some(kind) {
            *self.found |= to.contains(self.target.to());
        }
    }
}
