//! Game-ending rules beyond checkmate: repetition (sennichite) and entering-king
//! declaration (nyugyoku), plus exact mate-in-one detection.

use super::bitboard::Bitboard;
use super::moves::Move;
use super::position::Position;
use super::types::{Color, HandKind, PieceKind};

/// How a repetition ends, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Repetition {
    /// No earlier occurrence found.
    None,
    /// Sennichite: a draw.
    Draw,
    /// The opponent gave check with every move of the cycle: perpetual check, which the
    /// checking side loses, so the side to move wins.
    Win,
    /// The side to move gave check with every move of the cycle: it loses.
    Lose,
    /// Same board and side to move, and the side to move now holds at least as much in
    /// hand as before (and more of something): engines score this as a gain.
    Superior,
    /// Same board and side to move, and the side to move now holds less.
    Inferior,
}

/// Which entering-king declaration rule applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnteringKingRule {
    /// CSA's 27-point rule: Black needs 28 points, White 27.
    Csa27,
    /// The JSA 24-point rule as engines implement a declaration win: 31 points, either side.
    Jsa24,
}

impl Position {
    /// Engine-style repetition check, as YaneuraOu and cshogi do it: looks back at most
    /// `max_ply` plies for an earlier position with the same board and side to move and
    /// classifies the first one found. One earlier occurrence suffices (a search treats the
    /// first repetition as final).
    pub fn repetition(&self, max_ply: usize) -> Repetition {
        let n = self.states.len() - 1; // index of the current state
        let cur = self.states[n];
        let us = self.side_to_move();
        let end = max_ply.min(n);
        let mut i = 4;
        while i <= end {
            let past = &self.states[n - i];
            if past.board_key == cur.board_key {
                let (now, then) = (cur.hands[us.index()], past.hands[us.index()]);
                if now == then {
                    return self.classify_cycle(i);
                }
                if now.dominates(then) {
                    return Repetition::Superior;
                }
                if then.dominates(now) {
                    return Repetition::Inferior;
                }
            }
            i += 2;
        }
        Repetition::None
    }

    /// The repetition rule as the laws of shogi state it: when the same position (board,
    /// hands, side to move) occurs for the fourth time the game ends — a draw, unless one
    /// side gave check with every move since the first occurrence, which that side loses.
    /// Returns `None` while the game goes on.
    pub fn sennichite(&self) -> Option<Repetition> {
        let n = self.states.len() - 1;
        let key = self.key();
        let mut seen = 1;
        let mut i = 4;
        let mut first = 0;
        while i <= n {
            let past = &self.states[n - i];
            if past.board_key ^ past.hand_key == key {
                seen += 1;
                first = i;
            }
            i += 2;
        }
        (seen >= 4).then(|| self.classify_cycle(first))
    }

    /// Draw, or a perpetual-check win/loss, for a cycle of `plies` plies ending here.
    fn classify_cycle(&self, plies: usize) -> Repetition {
        let streak = self.state().check_streak;
        let us = self.side_to_move();
        if plies <= streak[us.index()] as usize {
            Repetition::Lose
        } else if plies <= streak[us.flip().index()] as usize {
            Repetition::Win
        } else {
            Repetition::Draw
        }
    }

    /// Entering-king declaration points of `color`: in its promotion zone, excluding the
    /// king, bishops and rooks (promoted or not) count 5 and other pieces 1; pieces in hand
    /// count the same. Also returns how many pieces (not the king) stand in the zone.
    pub fn entering_king_points(&self, color: Color) -> (u32, u32) {
        let zone = Bitboard::far_ranks(color, 3);
        let ours = self.pieces(color) & zone;
        let big = (self.bishop_movers() | self.rook_movers()) & ours;
        let kings = self.pieces_of(PieceKind::King, color);
        let in_zone = ours.and_not(kings).count();
        let big_in_zone = big.count();
        let hand = self.hand(color);
        let big_hand = (hand.count(HandKind::Bishop) + hand.count(HandKind::Rook)) as u32;
        let small_hand = hand.total() - big_hand;
        let points = (in_zone - big_in_zone) + 5 * big_in_zone + small_hand + 5 * big_hand;
        (points, in_zone)
    }

    /// Whether the side to move may declare a win by entering king under `rule`: its king is
    /// in the promotion zone, it is not in check, at least ten of its other pieces are in the
    /// zone, and it has enough points (see [`Position::entering_king_points`]).
    pub fn can_declare_win(&self, rule: EnteringKingRule) -> bool {
        let us = self.side_to_move();
        let Some(k) = self.king_square(us) else {
            return false;
        };
        if !Bitboard::far_ranks(us, 3).contains(k) || self.in_check() {
            return false;
        }
        let (points, pieces) = self.entering_king_points(us);
        let needed = match (rule, us) {
            (EnteringKingRule::Csa27, Color::Black) => 28,
            (EnteringKingRule::Csa27, Color::White) => 27,
            (EnteringKingRule::Jsa24, _) => 31,
        };
        pieces >= 10 && points >= needed
    }

    /// A move that mates at once, if there is one. Exact: every legal move is tried, so a
    /// pawn-drop mate (illegal) is never returned and no mate is missed.
    pub fn mate_in_one(&self) -> Option<Move> {
        let mut p = self.clone();
        for m in self.legal_moves() {
            p.do_move(m);
            let mate = p.in_check() && !p.has_legal_moves();
            p.undo_move(m);
            if mate {
                return Some(m);
            }
        }
        None
    }

    /// Whether the side to move is checkmated (in check with no legal move).
    pub fn is_checkmate(&self) -> bool {
        self.in_check() && !self.has_legal_moves()
    }
}
