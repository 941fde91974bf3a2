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
//!
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
    /// One-step pawn moves of `color`, given by destination (the origin is the square
    /// behind): the same promote/plain split as [`MoveSink::board`].
    fn pawn_pushes(&mut self, color: Color, promote: Bitboard, plain: Bitboard) {
        for to in promote | plain {
            let from = pawn_origin(color, to);
            let one = Bitboard::from_square(to);
            self.board(PieceKind::Pawn, from, promote & one, plain & one);
        }
    }
}

/// The square a pawn of `color` came from to reach `to` with one step.
#[inline(always)]
fn pawn_origin(color: Color, to: Square) -> Square {
    let i = to.index() as u8;
    Square::from_index_unchecked(match color {
        Color::Black => i + 1,
        Color::White => i - 1,
    })
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
    #[inline(always)]
    fn pawn_pushes(&mut self, _: Color, promote: Bitboard, plain: Bitboard) {
        self.0 += (promote.count() + plain.count()) as u64;
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
    #[inline]
    fn pawn_pushes(&mut self, color: Color, promote: Bitboard, plain: Bitboard) {
        for to in promote {
            self.push(Move::normal(pawn_origin(color, to), to, true));
        }
        for to in plain {
            self.push(Move::normal(pawn_origin(color, to), to, false));
        }
    }
}

/// Per colour: the promotion zone, the last rank, the last two ranks.
static ZONE: [Bitboard; 2] = [
    Bitboard::far_ranks(Color::Black, 3),
    Bitboard::far_ranks(Color::White, 3),
];
static LAST1: [Bitboard; 2] = [
    Bitboard::far_ranks(Color::Black, 1),
    Bitboard::far_ranks(Color::White, 1),
];
static LAST2: [Bitboard; 2] = [
    Bitboard::far_ranks(Color::Black, 2),
    Bitboard::far_ranks(Color::White, 2),
];

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
    let zone = ZONE[us.index()];
    let last1 = LAST1[us.index()];
    let last2 = LAST2[us.index()];
    let free = own.and_not(pinned);

    // Pawns that are not pinned move together: one shift for all of them. A pawn never
    // stands on its last rank, so the shift never crosses into the next file.
    let pawns = pos.pieces_of(PieceKind::Pawn, us) & free;
    let pushed = match us {
        Color::Black => Bitboard(pawns.0 >> 1),
        Color::White => Bitboard(pawns.0 << 1),
    } & target;
    if pushed.is_nonempty() {
        sink.pawn_pushes(us, pushed & zone, pushed.and_not(last1));
    }
    for from in pos.pieces_of(PieceKind::Lance, us) & free {
        emit(
            sink,
            PieceKind::Lance,
            from,
            lance_attacks(us, from, occ) & target,
            zone,
            last1,
            last2,
        );
    }
    for from in pos.pieces_of(PieceKind::Knight, us) & free {
        emit(
            sink,
            PieceKind::Knight,
            from,
            knight_attacks(us, from) & target,
            zone,
            last1,
            last2,
        );
    }
    for from in pos.pieces_of(PieceKind::Silver, us) & free {
        emit(
            sink,
            PieceKind::Silver,
            from,
            silver_attacks(us, from) & target,
            zone,
            last1,
            last2,
        );
    }
    for from in pos.pieces_of(PieceKind::Bishop, us) & free {
        emit(
            sink,
            PieceKind::Bishop,
            from,
            bishop_attacks(from, occ) & target,
            zone,
            last1,
            last2,
        );
    }
    for from in pos.pieces_of(PieceKind::Rook, us) & free {
        emit(
            sink,
            PieceKind::Rook,
            from,
            rook_attacks(from, occ) & target,
            zone,
            last1,
            last2,
        );
    }
    for from in pos.gold_movers() & free {
        let d = gold_attacks(us, from) & target;
        if d.is_nonempty() {
            let kind = pos.piece_at(from).expect("gold mover on its square").kind;
            sink.board(kind, from, Bitboard::EMPTY, d);
        }
    }
    for from in pos.pieces_of(PieceKind::Horse, us) & free {
        let d = (bishop_attacks(from, occ) | king_attacks(from)) & target;
        if d.is_nonempty() {
            sink.board(PieceKind::Horse, from, Bitboard::EMPTY, d);
        }
    }
    for from in pos.pieces_of(PieceKind::Dragon, us) & free {
        let d = (rook_attacks(from, occ) | king_attacks(from)) & target;
        if d.is_nonempty() {
            sink.board(PieceKind::Dragon, from, Bitboard::EMPTY, d);
        }
    }
    // Pinned pieces (rare) may move only along the ray from their king through them.
    if pinned.is_nonempty() {
        let k = king.expect("pinned implies a king");
        for from in pinned {
            let kind = pos.piece_at(from).expect("pinned piece on its square").kind;
            let d =
                super::attacks::piece_attacks(kind, us, from, occ) & target & ray_through(k, from);
            emit(sink, kind, from, d, zone, last1, last2);
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
            if let Some(s) = (pawn_attacks(them, ek) & to).first()
                && pawn_drop_mates(pos, s, ek)
            {
                to = to.without(s);
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
    for k in [
        HandKind::Silver,
        HandKind::Gold,
        HandKind::Bishop,
        HandKind::Rook,
    ] {
        if hand.count(k) > 0 {
            sink.drops(k, drop_target);
        }
    }
}

/// Hands one piece's destinations `d` to the sink with its promotion options: pawns and
/// lances must promote on the last rank, knights on the last two; silver, bishop and rook may
/// promote when either end of the move is in the zone and never have to; the rest never
/// promote.
#[inline(always)]
fn emit<S: MoveSink>(
    sink: &mut S,
    kind: PieceKind,
    from: Square,
    d: Bitboard,
    zone: Bitboard,
    last1: Bitboard,
    last2: Bitboard,
) {
    if d.is_empty() {
        return;
    }
    match kind {
        PieceKind::Pawn | PieceKind::Lance => sink.board(kind, from, d & zone, d.and_not(last1)),
        PieceKind::Knight => sink.board(kind, from, d & zone, d.and_not(last2)),
        PieceKind::Silver | PieceKind::Bishop | PieceKind::Rook => {
            let promote = if zone.contains(from) { d } else { d & zone };
            sink.board(kind, from, promote, d)
        }
        _ => sink.board(kind, from, Bitboard::EMPTY, d),
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
    // Most often the king simply takes an undefended pawn: test that square first.
    if !pos.is_attacked(s, us, occ_no_king) {
        return false;
    }
    for t in king_attacks(ek).and_not(pos.pieces(them)).without(s) {
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
        let mut probe = LegalProbe {
            target: m,
            found: &mut ok,
        };
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
            let set = if self.target.is_promotion() {
                promote
            } else {
                plain
            };
            *self.found |= set.contains(self.target.to());
        }
    }
    fn drops(&mut self, kind: HandKind, to: Bitboard) {
        if self.target.drop_kind() == Some(kind) {
            *self.found |= to.contains(self.target.to());
        }
    }
}
