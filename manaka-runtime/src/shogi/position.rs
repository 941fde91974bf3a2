//! The position: a mailbox board plus bitboards by colour and kind, both hands, the side to
//! move, and a stack of per-ply states (keys, checkers, captured piece, check streaks) that
//! lets `undo_move` restore everything exactly and repetition look back through the game.

use super::attacks::{
    between, bishop_attacks, bishop_rays, gold_attacks, king_attacks, knight_attacks,
    lance_attacks, lance_rays, pawn_attacks, rook_attacks, rook_rays, silver_attacks,
};
use super::bitboard::Bitboard;
use super::moves::Move;
use super::types::{Color, Hand, HandKind, Piece, PieceKind, Square};
use super::zobrist;

/// Per-ply state, pushed by `do_move` and popped by `undo_move`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct State {
    /// Zobrist key of the board and side to move.
    pub board_key: u64,
    /// Zobrist key of both hands.
    pub hand_key: u64,
    /// The hands in this position (for superior/inferior repetition).
    pub hands: [Hand; 2],
    /// Pieces giving check to the side to move.
    pub checkers: Bitboard,
    /// Piece captured by the move that led here.
    pub captured: Option<Piece>,
    /// The move that led here (`None` at the start of the history and after a null move).
    pub last_move: Option<Move>,
    /// For each colour, how many consecutive plies its moves have all given check, counted
    /// in plies (each checking move adds 2), as YaneuraOu counts them. Perpetual check is a
    /// repetition whose cycle length is at most this.
    pub check_streak: [u16; 2],
}

/// What a move changed, for deriving token deltas (SPEC §3) without re-reading the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveEffect {
    /// Who moved.
    pub color: Color,
    /// The moving or dropped piece's kind before promotion.
    pub kind: PieceKind,
    /// Origin square, `None` for a drop.
    pub from: Option<Square>,
    pub to: Square,
    /// The kind now standing on `to` (differs from `kind` exactly when promoting).
    pub kind_after: PieceKind,
    /// The opponent's piece captured on `to`, if any.
    pub captured: Option<Piece>,
    /// The mover's hand change: `(kind, count before, count after)`. A capture adds one of
    /// the captured piece's base kind; a drop removes one of the dropped kind.
    pub hand_change: Option<(HandKind, u8, u8)>,
}

#[derive(Clone)]
pub struct Position {
    board: [Option<Piece>; 81],
    by_color: [Bitboard; 2],
    by_kind: [Bitboard; 14],
    hands: [Hand; 2],
    side: Color,
    /// SFEN move number of this position (1 in the start position, +1 per ply).
    ply: u32,
    king: [Option<Square>; 2],
    pub(crate) states: Vec<State>,
}

impl Position {
    /// An empty board, Black to move, no hands. Used by the SFEN parser.
    pub(crate) fn empty() -> Position {
        Position {
            board: [None; 81],
            by_color: [Bitboard::EMPTY; 2],
            by_kind: [Bitboard::EMPTY; 14],
            hands: [Hand::EMPTY; 2],
            side: Color::Black,
            ply: 1,
            king: [None; 2],
            states: Vec::with_capacity(256),
        }
    }

    /// Places a piece on an empty square (board set-up only; keys are computed afterwards
    /// by [`Position::finish_setup`]).
    pub(crate) fn setup_put(&mut self, sq: Square, piece: Piece) {
        debug_assert!(self.board[sq.index()].is_none());
        self.put(sq, piece);
    }

    pub(crate) fn setup_hand(&mut self, color: Color, hand: Hand) {
        self.hands[color.index()] = hand;
    }

    pub(crate) fn setup_side(&mut self, side: Color, ply: u32) {
        self.side = side;
        self.ply = ply;
    }

    /// The position reflected left to right (every piece from file `f` to file `10 − f`,
    /// [`Square::mirror`]), hands, side to move and move number unchanged, with a fresh
    /// history. Shogi's rules are symmetric under the reflection, so its legal moves are this
    /// position's mirrored ([`Move::mirror`]) and its value is the same: the trainer's
    /// `--mirror` doubles its data this way.
    pub fn mirrored(&self) -> Position {
        let mut m = Position::empty();
        for sq in Square::all() {
            if let Some(p) = self.board[sq.index()] {
                m.setup_put(sq.mirror(), p);
            }
        }
        for c in Color::ALL {
            m.setup_hand(c, self.hands[c.index()]);
        }
        m.setup_side(self.side, self.ply);
        m.finish_setup();
        m
    }

    /// Computes keys and checkers from scratch and starts a fresh history.
    pub(crate) fn finish_setup(&mut self) {
        let mut board_key = 0;
        for sq in Square::all() {
            if let Some(p) = self.board[sq.index()] {
                board_key ^= zobrist::piece_square(p, sq);
            }
        }
        if self.side == Color::White {
            board_key ^= zobrist::side_to_move();
        }
        let mut hand_key = 0;
        for c in Color::ALL {
            for k in HandKind::ALL {
                hand_key ^= zobrist::hand_count(c, k, self.hands[c.index()].count(k));
            }
        }
        self.states.clear();
        let checkers = self.compute_checkers(self.side);
        self.states.push(State {
            board_key,
            hand_key,
            hands: self.hands,
            checkers,
            captured: None,
            last_move: None,
            check_streak: [0; 2],
        });
    }

    #[inline(always)]
    fn put(&mut self, sq: Square, piece: Piece) {
        self.board[sq.index()] = Some(piece);
        let b = Bitboard::from_square(sq);
        self.by_color[piece.color.index()] |= b;
        self.by_kind[piece.kind.index()] |= b;
        if piece.kind == PieceKind::King {
            self.king[piece.color.index()] = Some(sq);
        }
    }

    #[inline(always)]
    fn remove(&mut self, sq: Square, piece: Piece) {
        self.board[sq.index()] = None;
        let b = Bitboard::from_square(sq);
        self.by_color[piece.color.index()] ^= b;
        self.by_kind[piece.kind.index()] ^= b;
    }

    // ----- queries -------------------------------------------------------------------

    #[inline(always)]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    #[inline(always)]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }

    #[inline(always)]
    pub fn hand(&self, color: Color) -> Hand {
        self.hands[color.index()]
    }

    #[inline(always)]
    pub fn king_square(&self, color: Color) -> Option<Square> {
        self.king[color.index()]
    }

    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    #[inline(always)]
    pub fn pieces(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    /// Pieces of one kind, both colours.
    #[inline(always)]
    pub fn kind_bb(&self, kind: PieceKind) -> Bitboard {
        self.by_kind[kind.index()]
    }

    #[inline(always)]
    pub fn pieces_of(&self, kind: PieceKind, color: Color) -> Bitboard {
        self.by_kind[kind.index()] & self.by_color[color.index()]
    }

    /// Gold and the promoted minors, which all move like a gold.
    #[inline(always)]
    pub(crate) fn gold_movers(&self) -> Bitboard {
        self.by_kind[PieceKind::Gold.index()]
            | self.by_kind[PieceKind::ProPawn.index()]
            | self.by_kind[PieceKind::ProLance.index()]
            | self.by_kind[PieceKind::ProKnight.index()]
            | self.by_kind[PieceKind::ProSilver.index()]
    }

    #[inline(always)]
    pub(crate) fn bishop_movers(&self) -> Bitboard {
        self.by_kind[PieceKind::Bishop.index()] | self.by_kind[PieceKind::Horse.index()]
    }

    #[inline(always)]
    pub(crate) fn rook_movers(&self) -> Bitboard {
        self.by_kind[PieceKind::Rook.index()] | self.by_kind[PieceKind::Dragon.index()]
    }

    /// Pieces with a king's one-step moves: king, horse, dragon.
    #[inline(always)]
    pub(crate) fn king_steppers(&self) -> Bitboard {
        self.by_kind[PieceKind::King.index()]
            | self.by_kind[PieceKind::Horse.index()]
            | self.by_kind[PieceKind::Dragon.index()]
    }

    /// SFEN move number (ply count from 1).
    #[inline(always)]
    pub fn ply(&self) -> u32 {
        self.ply
    }

    #[inline(always)]
    pub(crate) fn state(&self) -> &State {
        self.states
            .last()
            .expect("a position always has a current state")
    }

    /// Zobrist key of the whole position (board, hands, side to move).
    #[inline(always)]
    pub fn key(&self) -> u64 {
        let st = self.state();
        st.board_key ^ st.hand_key
    }

    /// Zobrist key of the board and side to move, ignoring hands.
    #[inline(always)]
    pub fn board_key(&self) -> u64 {
        self.state().board_key
    }

    /// Pieces giving check to the side to move.
    #[inline(always)]
    pub fn checkers(&self) -> Bitboard {
        self.state().checkers
    }

    #[inline(always)]
    pub fn in_check(&self) -> bool {
        self.state().checkers.is_nonempty()
    }

    /// Number of plies played since this position's history began (the SFEN it was set up
    /// from).
    pub fn history_len(&self) -> usize {
        self.states.len() - 1
    }

    /// The key of the position `ply` plies into the history (0: the position the history
    /// starts from), if the history is that long.
    pub fn key_at(&self, ply: usize) -> Option<u64> {
        self.states.get(ply).map(|st| st.board_key ^ st.hand_key)
    }

    /// The moves played from `ply` plies into the history up to now, oldest first; `None`
    /// if `ply` is beyond the history or a null move lies in between.
    pub fn moves_since(&self, ply: usize) -> Option<Vec<Move>> {
        if ply >= self.states.len() {
            return None;
        }
        self.states[ply + 1..]
            .iter()
            .map(|st| st.last_move)
            .collect()
    }

    /// The move that led to this position, if it is in the history.
    pub fn last_move(&self) -> Option<Move> {
        self.state().last_move
    }

    /// Key of the position before the last move, if the history holds one.
    pub fn previous_key(&self) -> Option<u64> {
        let n = self.states.len();
        (n >= 2 && self.state().last_move.is_some()).then(|| {
            let st = &self.states[n - 2];
            st.board_key ^ st.hand_key
        })
    }

    /// What the last move changed, rebuilt from the board and the history: the same value
    /// `do_move` returned for it. `None` when the history holds no last move.
    pub fn last_move_effect(&self) -> Option<MoveEffect> {
        let m = self.state().last_move?;
        let color = self.side.flip();
        let to = m.to();
        let kind_after = self.board[to.index()]?.kind;
        let hand = self.hands[color.index()];
        let captured = self.state().captured;
        let (kind, hand_change) = match m.drop_kind() {
            Some(hk) => {
                let now = hand.count(hk);
                (kind_after, Some((hk, now + 1, now)))
            }
            None => {
                let kind = if m.is_promotion() {
                    kind_after.unpromote()
                } else {
                    kind_after
                };
                let change = captured.and_then(|c| c.kind.hand_kind()).map(|hk| {
                    let now = hand.count(hk);
                    (hk, now - 1, now)
                });
                (kind, change)
            }
        };
        Some(MoveEffect {
            color,
            kind,
            from: m.from(),
            to,
            kind_after,
            captured,
            hand_change,
        })
    }

    /// Pieces of `by` attacking `sq`, given the occupancy `occupied`.
    #[inline(always)]
    pub fn attackers_to(&self, sq: Square, by: Color, occupied: Bitboard) -> Bitboard {
        let ours = self.by_color[by.index()];
        let mut attackers = self.step_attackers(sq, by) & ours;
        // Sliders: a ray is only walked when a slider of `by` stands somewhere on it (on an
        // empty board); most squares see none, which saves the walk.
        let them = by.flip();
        let lances = self.by_kind[PieceKind::Lance.index()] & ours;
        if (lance_rays(them, sq) & lances).is_nonempty() {
            attackers |= lance_attacks(them, sq, occupied) & lances;
        }
        let bishops = self.bishop_movers() & ours;
        if (bishop_rays(sq) & bishops).is_nonempty() {
            attackers |= bishop_attacks(sq, occupied) & bishops;
        }
        let rooks = self.rook_movers() & ours;
        if (rook_rays(sq) & rooks).is_nonempty() {
            attackers |= rook_attacks(sq, occupied) & rooks;
        }
        attackers
    }

    /// Pieces (of both colours) that would attack `sq` by one step if they belonged to `by`.
    /// A piece of `by` attacks `sq` iff a piece of the other colour on `sq` would attack it
    /// with the same step, so we look outward from `sq` with the opposite colour's tables.
    #[inline(always)]
    fn step_attackers(&self, sq: Square, by: Color) -> Bitboard {
        let them = by.flip();
        let k = &self.by_kind;
        (pawn_attacks(them, sq) & k[PieceKind::Pawn.index()])
            | (knight_attacks(them, sq) & k[PieceKind::Knight.index()])
            | (silver_attacks(them, sq) & k[PieceKind::Silver.index()])
            | (gold_attacks(them, sq) & self.gold_movers())
            | (king_attacks(sq) & self.king_steppers())
    }

    /// Whether any piece of `by` attacks `sq`: step attackers first, then only the sliders
    /// whose empty-board rays reach `sq`.
    #[inline(always)]
    pub fn is_attacked(&self, sq: Square, by: Color, occupied: Bitboard) -> bool {
        let ours = self.by_color[by.index()];
        if (self.step_attackers(sq, by) & ours).is_nonempty() {
            return true;
        }
        let them = by.flip();
        let lances = self.by_kind[PieceKind::Lance.index()] & ours;
        if (lance_rays(them, sq) & lances).is_nonempty()
            && (lance_attacks(them, sq, occupied) & lances).is_nonempty()
        {
            return true;
        }
        let bishops = self.bishop_movers() & ours;
        if (bishop_rays(sq) & bishops).is_nonempty()
            && (bishop_attacks(sq, occupied) & bishops).is_nonempty()
        {
            return true;
        }
        let rooks = self.rook_movers() & ours;
        (rook_rays(sq) & rooks).is_nonempty() && (rook_attacks(sq, occupied) & rooks).is_nonempty()
    }

    pub(crate) fn compute_checkers(&self, side: Color) -> Bitboard {
        match self.king[side.index()] {
            Some(k) => self.attackers_to(k, side.flip(), self.occupied()),
            None => Bitboard::EMPTY,
        }
    }

    /// Enemy sliders that would attack `color`'s king on an empty board (pin candidates).
    #[inline(always)]
    pub(crate) fn snipers(&self, color: Color, king: Square) -> Bitboard {
        let them = color.flip();
        ((lance_rays(color, king) & self.by_kind[PieceKind::Lance.index()])
            | (bishop_rays(king) & self.bishop_movers())
            | (rook_rays(king) & self.rook_movers()))
            & self.by_color[them.index()]
    }

    /// Pieces of `color` pinned against its own king.
    pub fn pinned(&self, color: Color) -> Bitboard {
        let Some(king) = self.king[color.index()] else {
            return Bitboard::EMPTY;
        };
        let occ = self.occupied();
        let mut pinned = Bitboard::EMPTY;
        for s in self.snipers(color, king) {
            let b = between(king, s) & occ;
            if b.is_nonempty() && !b.has_more_than_one() {
                pinned |= b;
            }
        }
        pinned & self.by_color[color.index()]
    }

    // ----- making moves ------------------------------------------------------------------

    /// Plays `m`, which must be legal here (see [`Position::is_legal`]; USI input goes
    /// through [`Position::parse_usi_move`]). Returns what changed.
    pub fn do_move(&mut self, m: Move) -> MoveEffect {
        let us = self.side;
        let them = us.flip();
        let prev = *self.state();
        let mut board_key = prev.board_key ^ zobrist::side_to_move();
        let mut hand_key = prev.hand_key;
        let to = m.to();
        let effect = if let Some(hk) = m.drop_kind() {
            let before = self.hands[us.index()].count(hk);
            debug_assert!(before > 0, "drop of {hk:?} with none in hand");
            self.hands[us.index()].remove(hk);
            hand_key ^=
                zobrist::hand_count(us, hk, before) ^ zobrist::hand_count(us, hk, before - 1);
            let piece = Piece::new(hk.piece_kind(), us);
            self.put(to, piece);
            board_key ^= zobrist::piece_square(piece, to);
            MoveEffect {
                color: us,
                kind: piece.kind,
                from: None,
                to,
                kind_after: piece.kind,
                captured: None,
                hand_change: Some((hk, before, before - 1)),
            }
        } else {
            let from = m.from().expect("board move has an origin");
            let piece = self.board[from.index()].expect("a piece stands on the origin");
            let captured = self.board[to.index()];
            let mut hand_change = None;
            if let Some(cap) = captured {
                self.remove(to, cap);
                board_key ^= zobrist::piece_square(cap, to);
                let hk = cap.kind.hand_kind().expect("a king is never captured");
                let before = self.hands[us.index()].count(hk);
                self.hands[us.index()].add(hk);
                hand_key ^=
                    zobrist::hand_count(us, hk, before) ^ zobrist::hand_count(us, hk, before + 1);
                hand_change = Some((hk, before, before + 1));
            }
            self.remove(from, piece);
            board_key ^= zobrist::piece_square(piece, from);
            let moved = if m.is_promotion() {
                Piece::new(piece.kind.promote(), us)
            } else {
                piece
            };
            self.put(to, moved);
            board_key ^= zobrist::piece_square(moved, to);
            MoveEffect {
                color: us,
                kind: piece.kind,
                from: Some(from),
                to,
                kind_after: moved.kind,
                captured,
                hand_change,
            }
        };
        self.side = them;
        self.ply += 1;
        let checkers = self.compute_checkers(them);
        let mut check_streak = prev.check_streak;
        check_streak[us.index()] = if checkers.is_nonempty() {
            check_streak[us.index()] + 2
        } else {
            0
        };
        self.states.push(State {
            board_key,
            hand_key,
            hands: self.hands,
            checkers,
            captured: effect.captured,
            last_move: Some(m),
            check_streak,
        });
        effect
    }

    /// Takes back `m`, which must be the last move played.
    pub fn undo_move(&mut self, m: Move) {
        let st = self.states.pop().expect("undo_move without a move to undo");
        debug_assert!(
            !self.states.is_empty(),
            "undo_move past the start of the history"
        );
        self.side = self.side.flip();
        self.ply -= 1;
        let us = self.side;
        let to = m.to();
        if let Some(hk) = m.drop_kind() {
            let piece = self.board[to.index()].expect("dropped piece on its square");
            self.remove(to, piece);
            self.hands[us.index()].add(hk);
        } else {
            let from = m.from().expect("board move has an origin");
            let moved = self.board[to.index()].expect("moved piece on its square");
            self.remove(to, moved);
            let piece = if m.is_promotion() {
                Piece::new(moved.kind.unpromote(), us)
            } else {
                moved
            };
            self.put(from, piece);
            if let Some(cap) = st.captured {
                self.put(to, cap);
                let hk = cap.kind.hand_kind().expect("a king is never captured");
                self.hands[us.index()].remove(hk);
            }
        }
    }

    /// Plays a null move (passes): used by search heuristics and tests. Not legal shogi.
    pub fn do_null_move(&mut self) {
        let prev = *self.state();
        self.side = self.side.flip();
        self.ply += 1;
        let checkers = self.compute_checkers(self.side);
        self.states.push(State {
            board_key: prev.board_key ^ zobrist::side_to_move(),
            captured: None,
            last_move: None,
            checkers,
            check_streak: [0; 2],
            ..prev
        });
    }

    pub fn undo_null_move(&mut self) {
        self.states.pop();
        self.side = self.side.flip();
        self.ply -= 1;
    }

    /// Forgets the history before the current position (repetition will not look further
    /// back). The position itself is unchanged.
    pub fn clear_history(&mut self) {
        let cur = *self.state();
        self.states.clear();
        self.states.push(State {
            check_streak: [0; 2],
            last_move: None,
            ..cur
        });
    }
}

impl PartialEq for Position {
    /// Positions are equal when board, hands and side to move are (history is not compared).
    fn eq(&self, other: &Self) -> bool {
        self.board == other.board && self.hands == other.hands && self.side == other.side
    }
}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position({})", self.to_sfen())
    }
}
