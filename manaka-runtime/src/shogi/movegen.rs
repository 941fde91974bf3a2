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
//! counter (perft) never materialises a `Move`; a sink can stop the generation early
//! ([`generate_until`]), so `has_legal_moves` and `is_legal` look no further than they must.
//! The generator is one small function per piece class (`PieceClass` for the kinds that
//! move by one attack function), called in a fixed order.

use super::attacks::{
    between, bishop_attacks, gold_attacks, king_attacks, knight_attacks, lance_attacks,
    pawn_attacks, ray_through, rook_attacks, silver_attacks,
};
use super::bitboard::Bitboard;
use super::moves::Move;
use super::position::Position;
use super::types::{Color, HandKind, PieceKind, Square};
use std::ops::ControlFlow::{self, Break, Continue};

/// Receives legal moves as they are generated. Every method answers whether to go on:
/// [`ControlFlow::Break`] stops the generation at once (a sink that only needs one move, or one
/// given move, looks no further; cozy-chess's listeners do the same).
pub trait MoveSink {
    /// Board moves of the piece `kind` on `from`. A square in `promote` is reached by a
    /// promoting move, one in `plain` by a non-promoting move; a square in both has both.
    /// Each origin square is handed over at most once per generation.
    fn board(
        &mut self,
        kind: PieceKind,
        from: Square,
        promote: Bitboard,
        plain: Bitboard,
    ) -> ControlFlow<()>;
    /// Drops of `kind` onto each square of `to` (possibly none). Each kind is handed over at
    /// most once per generation.
    fn drops(&mut self, kind: HandKind, to: Bitboard) -> ControlFlow<()>;
    /// One-step pawn moves of `color`, given by destination (the origin is the square
    /// behind): the same promote/plain split as [`MoveSink::board`].
    fn pawn_pushes(&mut self, color: Color, promote: Bitboard, plain: Bitboard) -> ControlFlow<()> {
        for to in promote | plain {
            let from = pawn_origin(color, to);
            let one = Bitboard::from_square(to);
            self.board(PieceKind::Pawn, from, promote & one, plain & one)?;
        }
        Continue(())
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
    fn board(
        &mut self,
        _: PieceKind,
        _: Square,
        promote: Bitboard,
        plain: Bitboard,
    ) -> ControlFlow<()> {
        self.0 += (promote.count() + plain.count()) as u64;
        Continue(())
    }
    #[inline(always)]
    fn drops(&mut self, _: HandKind, to: Bitboard) -> ControlFlow<()> {
        self.0 += to.count() as u64;
        Continue(())
    }
    #[inline(always)]
    fn pawn_pushes(&mut self, _: Color, promote: Bitboard, plain: Bitboard) -> ControlFlow<()> {
        self.0 += (promote.count() + plain.count()) as u64;
        Continue(())
    }
}

impl MoveSink for Vec<Move> {
    #[inline]
    fn board(
        &mut self,
        _: PieceKind,
        from: Square,
        promote: Bitboard,
        plain: Bitboard,
    ) -> ControlFlow<()> {
        for to in promote {
            self.push(Move::normal(from, to, true));
        }
        for to in plain {
            self.push(Move::normal(from, to, false));
        }
        Continue(())
    }
    #[inline]
    fn drops(&mut self, kind: HandKind, to: Bitboard) -> ControlFlow<()> {
        for sq in to {
            self.push(Move::drop(kind, sq));
        }
        Continue(())
    }
    #[inline]
    fn pawn_pushes(&mut self, color: Color, promote: Bitboard, plain: Bitboard) -> ControlFlow<()> {
        for to in promote {
            self.push(Move::normal(pawn_origin(color, to), to, true));
        }
        for to in plain {
            self.push(Move::normal(pawn_origin(color, to), to, false));
        }
        Continue(())
    }
}

/// Stops at the first legal move ([`Position::has_legal_moves`]).
struct AnyMove;

impl MoveSink for AnyMove {
    #[inline(always)]
    fn board(
        &mut self,
        _: PieceKind,
        _: Square,
        promote: Bitboard,
        plain: Bitboard,
    ) -> ControlFlow<()> {
        stop_if((promote | plain).is_nonempty())
    }
    #[inline(always)]
    fn drops(&mut self, _: HandKind, to: Bitboard) -> ControlFlow<()> {
        stop_if(to.is_nonempty())
    }
    #[inline(always)]
    fn pawn_pushes(&mut self, _: Color, promote: Bitboard, plain: Bitboard) -> ControlFlow<()> {
        stop_if((promote | plain).is_nonempty())
    }
}

#[inline(always)]
fn stop_if(stop: bool) -> ControlFlow<()> {
    if stop { Break(()) } else { Continue(()) }
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
    let _ = generate_until(pos, sink);
}

/// Generates the legal moves of the side to move into `sink` until it answers
/// [`ControlFlow::Break`] (then `Break` is returned). Moves come king first, then the unpinned
/// pieces class by class (pawns, lances, knights, silvers, bishops, rooks, gold movers, horses,
/// dragons), the pinned pieces, and drops: a fixed order, so a list of moves is reproducible.
pub fn generate_until<S: MoveSink>(pos: &Position, sink: &mut S) -> ControlFlow<()> {
    king_moves(pos, sink)?;
    // In double check only the king moves.
    let Some(node) = Node::new(pos) else {
        return Continue(());
    };
    pawn_pushes(&node, sink)?;
    class::<Lance, S>(&node, sink)?;
    class::<Knight, S>(&node, sink)?;
    class::<Silver, S>(&node, sink)?;
    class::<Bishop, S>(&node, sink)?;
    class::<Rook, S>(&node, sink)?;
    gold_movers(&node, sink)?;
    class::<Horse, S>(&node, sink)?;
    class::<Dragon, S>(&node, sink)?;
    pinned_moves(&node, sink)?;
    drops(&node, sink)
}

/// The king's legal steps: each destination is tested with the king lifted off the board,
/// so it cannot hide behind itself from a slider.
fn king_moves<S: MoveSink>(pos: &Position, sink: &mut S) -> ControlFlow<()> {
    let us = pos.side_to_move();
    let Some(k) = pos.king_square(us) else {
        return Continue(());
    };
    let occ_no_king = pos.occupied().without(k);
    let mut legal = Bitboard::EMPTY;
    for t in king_attacks(k).and_not(pos.pieces(us)) {
        if !pos.is_attacked(t, us.flip(), occ_no_king) {
            legal = legal.with(t);
        }
    }
    if legal.is_nonempty() {
        sink.board(PieceKind::King, k, Bitboard::EMPTY, legal)?;
    }
    Continue(())
}

/// What the non-king moves of one node share, computed once.
struct Node<'a> {
    pos: &'a Position,
    us: Color,
    occ: Bitboard,
    /// Where a non-king move may go: anywhere not our own out of check; in single check,
    /// onto the checker or between it and the king.
    target: Bitboard,
    /// Where a drop may go: empty squares out of check; interpositions in single check.
    drop_target: Bitboard,
    pinned: Bitboard,
    /// Our pieces that are not pinned: they cannot expose the king.
    free: Bitboard,
    zone: Bitboard,
    last1: Bitboard,
    last2: Bitboard,
}

impl<'a> Node<'a> {
    /// `None` in double check.
    fn new(pos: &'a Position) -> Option<Node<'a>> {
        let us = pos.side_to_move();
        let own = pos.pieces(us);
        let occ = pos.occupied();
        let checkers = pos.checkers();
        if checkers.has_more_than_one() {
            return None;
        }
        let (target, drop_target) = match (checkers.first(), pos.king_square(us)) {
            (Some(c), Some(k)) => {
                let b = between(k, c);
                (b.with(c), b)
            }
            // No checker, or (impossible: a checker exists only if our king does) no king.
            _ => (!own, !occ),
        };
        let pinned = pos.pinned(us);
        Some(Node {
            pos,
            us,
            occ,
            target,
            drop_target,
            pinned,
            free: own.and_not(pinned),
            zone: ZONE[us.index()],
            last1: LAST1[us.index()],
            last2: LAST2[us.index()],
        })
    }

    #[inline(always)]
    fn emit<S: MoveSink>(
        &self,
        sink: &mut S,
        kind: PieceKind,
        from: Square,
        d: Bitboard,
    ) -> ControlFlow<()> {
        emit(sink, kind, from, d, self.zone, self.last1, self.last2)
    }
}

/// Unpinned pawns move together: one shift for all of them. A pawn never stands on its last
/// rank, so the shift never crosses into the next file.
fn pawn_pushes<S: MoveSink>(n: &Node<'_>, sink: &mut S) -> ControlFlow<()> {
    let pawns = n.pos.pieces_of(PieceKind::Pawn, n.us) & n.free;
    let pushed = match n.us {
        Color::Black => Bitboard(pawns.0 >> 1),
        Color::White => Bitboard(pawns.0 << 1),
    } & n.target;
    if pushed.is_nonempty() {
        sink.pawn_pushes(n.us, pushed & n.zone, pushed.and_not(n.last1))?;
    }
    Continue(())
}

/// A kind of piece whose unpinned members all move by one attack function (the gold movers,
/// several kinds moving alike, have [`gold_movers`]).
trait PieceClass {
    const KIND: PieceKind;
    /// The squares a piece of this class on `from` attacks, with `occ` blocking sliders.
    fn reach(us: Color, from: Square, occ: Bitboard) -> Bitboard;
}

struct Lance;
struct Knight;
struct Silver;
struct Bishop;
struct Rook;
struct Horse;
struct Dragon;

impl PieceClass for Lance {
    const KIND: PieceKind = PieceKind::Lance;
    #[inline(always)]
    fn reach(us: Color, from: Square, occ: Bitboard) -> Bitboard {
        lance_attacks(us, from, occ)
    }
}

impl PieceClass for Knight {
    const KIND: PieceKind = PieceKind::Knight;
    #[inline(always)]
    fn reach(us: Color, from: Square, _: Bitboard) -> Bitboard {
        knight_attacks(us, from)
    }
}

impl PieceClass for Silver {
    const KIND: PieceKind = PieceKind::Silver;
    #[inline(always)]
    fn reach(us: Color, from: Square, _: Bitboard) -> Bitboard {
        silver_attacks(us, from)
    }
}

impl PieceClass for Bishop {
    const KIND: PieceKind = PieceKind::Bishop;
    #[inline(always)]
    fn reach(_: Color, from: Square, occ: Bitboard) -> Bitboard {
        bishop_attacks(from, occ)
    }
}

impl PieceClass for Rook {
    const KIND: PieceKind = PieceKind::Rook;
    #[inline(always)]
    fn reach(_: Color, from: Square, occ: Bitboard) -> Bitboard {
        rook_attacks(from, occ)
    }
}

impl PieceClass for Horse {
    const KIND: PieceKind = PieceKind::Horse;
    #[inline(always)]
    fn reach(_: Color, from: Square, occ: Bitboard) -> Bitboard {
        bishop_attacks(from, occ) | king_attacks(from)
    }
}

impl PieceClass for Dragon {
    const KIND: PieceKind = PieceKind::Dragon;
    #[inline(always)]
    fn reach(_: Color, from: Square, occ: Bitboard) -> Bitboard {
        rook_attacks(from, occ) | king_attacks(from)
    }
}

/// The moves of the unpinned pieces of class `P`.
#[inline(always)]
fn class<P: PieceClass, S: MoveSink>(n: &Node<'_>, sink: &mut S) -> ControlFlow<()> {
    for from in n.pos.pieces_of(P::KIND, n.us) & n.free {
        n.emit(sink, P::KIND, from, P::reach(n.us, from, n.occ) & n.target)?;
    }
    Continue(())
}

/// Golds and the promoted minor pieces, which move as golds (and never promote).
fn gold_movers<S: MoveSink>(n: &Node<'_>, sink: &mut S) -> ControlFlow<()> {
    for from in n.pos.gold_movers() & n.free {
        let d = gold_attacks(n.us, from) & n.target;
        if d.is_nonempty() {
            let kind = n.pos.piece_at(from).expect("gold mover on its square").kind;
            sink.board(kind, from, Bitboard::EMPTY, d)?;
        }
    }
    Continue(())
}

/// Pinned pieces (rare) may move only along the ray from their king through them, which
/// still lets them take the pinner.
fn pinned_moves<S: MoveSink>(n: &Node<'_>, sink: &mut S) -> ControlFlow<()> {
    if n.pinned.is_empty() {
        return Continue(());
    }
    let k = n.pos.king_square(n.us).expect("pinned implies a king");
    for from in n.pinned {
        let kind = n
            .pos
            .piece_at(from)
            .expect("pinned piece on its square")
            .kind;
        let d = super::attacks::piece_attacks(kind, n.us, from, n.occ)
            & n.target
            & ray_through(k, from);
        n.emit(sink, kind, from, d)?;
    }
    Continue(())
}

/// Drops: never onto the last rank(s) a piece could not leave, no second pawn on a file
/// (nifu), and no pawn drop that mates (uchifuzume, [`pawn_drop_mates`]).
fn drops<S: MoveSink>(n: &Node<'_>, sink: &mut S) -> ControlFlow<()> {
    let pos = n.pos;
    let hand = pos.hand(n.us);
    if hand.is_empty() || n.drop_target.is_empty() {
        return Continue(());
    }
    if hand.count(HandKind::Pawn) > 0 {
        let mut pawn_files = Bitboard::EMPTY;
        for p in pos.pieces_of(PieceKind::Pawn, n.us) {
            pawn_files |= FILE_MASKS[p.file() as usize - 1];
        }
        let mut to = n.drop_target.and_not(n.last1).and_not(pawn_files);
        if let Some(ek) = pos.king_square(n.us.flip()) {
            // The only square where a dropped pawn checks: in front of the enemy king.
            if let Some(s) = (pawn_attacks(n.us.flip(), ek) & to).first()
                && pawn_drop_mates(pos, s, ek)
            {
                to = to.without(s);
            }
        }
        if to.is_nonempty() {
            sink.drops(HandKind::Pawn, to)?;
        }
    }
    if hand.count(HandKind::Lance) > 0 {
        sink.drops(HandKind::Lance, n.drop_target.and_not(n.last1))?;
    }
    if hand.count(HandKind::Knight) > 0 {
        sink.drops(HandKind::Knight, n.drop_target.and_not(n.last2))?;
    }
    for k in [
        HandKind::Silver,
        HandKind::Gold,
        HandKind::Bishop,
        HandKind::Rook,
    ] {
        if hand.count(k) > 0 {
            sink.drops(k, n.drop_target)?;
        }
    }
    Continue(())
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
) -> ControlFlow<()> {
    if d.is_empty() {
        return Continue(());
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
    /// shogi also loses). Generation stops at the first move: the king's steps come first,
    /// and they settle most positions.
    pub fn has_legal_moves(&self) -> bool {
        generate_until(self, &mut AnyMove).is_break()
    }

    /// Whether `m` is a legal move here. Generation stops once the moves of `m`'s piece (or
    /// its drops) have been handed over: each origin square and each dropped kind comes once.
    pub fn is_legal(&self, m: Move) -> bool {
        let mut probe = LegalProbe {
            target: m,
            found: false,
        };
        let _ = generate_until(self, &mut probe);
        probe.found
    }
}

/// A sink that only asks whether one given move is generated, and stops when its piece or
/// its drop kind has been handed over.
struct LegalProbe {
    target: Move,
    found: bool,
}

impl MoveSink for LegalProbe {
    fn board(
        &mut self,
        _: PieceKind,
        from: Square,
        promote: Bitboard,
        plain: Bitboard,
    ) -> ControlFlow<()> {
        if self.target.from() != Some(from) {
            return Continue(());
        }
        let set = if self.target.is_promotion() {
            promote
        } else {
            plain
        };
        self.found = set.contains(self.target.to());
        Break(())
    }
    fn drops(&mut self, kind: HandKind, to: Bitboard) -> ControlFlow<()> {
        if self.target.drop_kind() != Some(kind) {
            return Continue(());
        }
        self.found = to.contains(self.target.to());
        Break(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    /// Every move of a position's side to move that could be written: each own piece to each
    /// square, with and without promotion, and each hand kind dropped on each square.
    fn candidates(pos: &Position) -> Vec<Move> {
        let mut out = Vec::new();
        let squares = || (0..Square::NUM as u8).filter_map(Square::new);
        for from in pos.pieces(pos.side_to_move()) {
            for to in squares().filter(|&to| to != from) {
                out.push(Move::normal(from, to, false));
                out.push(Move::normal(from, to, true));
            }
        }
        for kind in HandKind::ALL {
            out.extend(squares().map(|to| Move::drop(kind, to)));
        }
        out
    }

    /// Positions along random playouts (mates included when a playout reaches one), and
    /// mated positions by hand.
    fn positions() -> Vec<Position> {
        let mut out = vec![
            // White's king on 5a, Black's gold on 5b guarded by the pawn on 5c: mate.
            Position::from_sfen("4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1").unwrap(),
            // The same with White to drop: still mate (a drop cannot take the gold).
            Position::from_sfen("4k4/4G4/4P4/9/9/9/9/9/4K4 w RBGSNLP 1").unwrap(),
            // Pinned pieces, drops and promotions on both sides.
            Position::from_sfen(
                "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
            )
            .unwrap(),
        ];
        let mut rng = SplitMix64::new(16);
        for _ in 0..12 {
            let mut pos = Position::startpos();
            for _ in 0..120 {
                out.push(pos.clone());
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                pos.do_move(legal[rng.below(legal.len() as u64) as usize]);
            }
        }
        out
    }

    /// The early-stopping sinks answer as the full generation does: `has_legal_moves` is
    /// "the list is not empty" and `is_legal` is "the list holds it", for every writable
    /// move, on positions with checks, pins, drops, promotions and mates.
    #[test]
    fn early_stops_agree_with_the_full_list() {
        let mut mated = 0;
        for pos in positions() {
            let legal = pos.legal_moves();
            assert_eq!(
                pos.has_legal_moves(),
                !legal.is_empty(),
                "{}",
                pos.to_sfen()
            );
            mated += usize::from(legal.is_empty());
            for m in candidates(&pos) {
                assert_eq!(
                    pos.is_legal(m),
                    legal.contains(&m),
                    "{} in {}",
                    m.to_usi(),
                    pos.to_sfen()
                );
            }
        }
        assert!(mated >= 2, "the mated positions were tested");
    }

    /// A sink that stops after `n` board or drop calls gets exactly `n` of them.
    #[test]
    fn a_break_stops_the_generation() {
        struct Stop {
            calls: usize,
            after: usize,
        }
        impl MoveSink for Stop {
            fn board(
                &mut self,
                _: PieceKind,
                _: Square,
                _: Bitboard,
                _: Bitboard,
            ) -> ControlFlow<()> {
                self.calls += 1;
                stop_if(self.calls == self.after)
            }
            fn drops(&mut self, _: HandKind, _: Bitboard) -> ControlFlow<()> {
                self.calls += 1;
                stop_if(self.calls == self.after)
            }
        }
        let pos = Position::startpos();
        for after in 1..=5 {
            let mut s = Stop { calls: 0, after };
            assert!(generate_until(&pos, &mut s).is_break());
            assert_eq!(s.calls, after);
        }
        let mut all = Stop {
            calls: 0,
            after: usize::MAX,
        };
        assert!(generate_until(&pos, &mut all).is_continue());
        assert!(all.calls > 5);
    }
}
