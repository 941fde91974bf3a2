//! A small exhaustive mate check for search leaves, as dlshogi runs a mate-in-3 at its
//! leaves: every check, every evasion, to a fixed depth, no table.

use super::checks::checks;
use crate::shogi::{Move, Position, generate};

/// The first move of a mate of at most `plies` plies (1, 3, 5…; an even number allows the
/// odd one below it) by the side to move, the shortest such mate first; `None` when there is
/// none, or when `node_limit` positions were visited before one was found (so `None` is
/// "none found", not a proof). Checks only, every legal evasion, no table; a position that
/// repeats one on the line (or `pos` itself) counts as no mate. `pos` is left as it was.
pub fn mate_within(pos: &mut Position, plies: u32, node_limit: u64) -> Option<Move> {
    let mut s = Within {
        nodes: 0,
        limit: node_limit,
        path: vec![pos.key()],
        buffers: Vec::new(),
    };
    let mut depth = 1;
    while depth <= plies {
        if let Some(m) = s.attack(pos, depth) {
            return Some(m);
        }
        if s.nodes >= s.limit {
            return None;
        }
        depth += 2;
    }
    None
}

struct Within {
    nodes: u64,
    limit: u64,
    /// Keys of the positions on the current line, the root first.
    path: Vec<u64>,
    /// Move lists by depth, reused (a leaf check must not allocate at every node).
    buffers: Vec<Vec<Move>>,
}

impl Within {
    fn repeats(&self, key: u64) -> bool {
        self.path.iter().rev().skip(1).step_by(2).any(|&k| k == key)
    }

    fn take_buffer(&mut self) -> Vec<Move> {
        let depth = self.path.len();
        if self.buffers.len() <= depth {
            self.buffers.resize_with(depth + 1, Vec::new);
        }
        let mut b = std::mem::take(&mut self.buffers[depth]);
        b.clear();
        b
    }

    fn give_back(&mut self, b: Vec<Move>) {
        let depth = self.path.len();
        self.buffers[depth] = b;
    }

    /// A check after which every evasion is mated within `plies - 1`.
    fn attack(&mut self, pos: &mut Position, plies: u32) -> Option<Move> {
        let mut moves = self.take_buffer();
        checks(pos, &mut moves);
        let found = self.try_attacks(pos, plies, &moves);
        self.give_back(moves);
        found
    }

    fn try_attacks(&mut self, pos: &mut Position, plies: u32, moves: &[Move]) -> Option<Move> {
        for &m in moves {
            if self.nodes >= self.limit {
                return None;
            }
            self.nodes += 1;
            pos.do_move(m);
            let mated = !self.repeats(pos.key()) && {
                self.path.push(pos.key());
                let mated = self.defend(pos, plies - 1);
                self.path.pop();
                mated
            };
            pos.undo_move(m);
            if mated {
                return Some(m);
            }
        }
        None
    }

    /// Whether the defender to move (in check) is mated within `plies`.
    fn defend(&mut self, pos: &mut Position, plies: u32) -> bool {
        if plies < 2 {
            return !pos.has_legal_moves();
        }
        let mut evasions = self.take_buffer();
        generate(pos, &mut evasions);
        let mated = evasions.is_empty() || self.try_defences(pos, plies, &evasions);
        self.give_back(evasions);
        mated
    }

    /// Whether every evasion in `evasions` is mated within `plies - 1` more plies.
    fn try_defences(&mut self, pos: &mut Position, plies: u32, evasions: &[Move]) -> bool {
        for &e in evasions {
            if self.nodes >= self.limit {
                return false;
            }
            self.nodes += 1;
            pos.do_move(e);
            let mated = !self.repeats(pos.key()) && {
                self.path.push(pos.key());
                let mated = self.attack(pos, plies - 1).is_some();
                self.path.pop();
                mated
            };
            pos.undo_move(e);
            if !mated {
                return false;
            }
        }
        true
    }
}
