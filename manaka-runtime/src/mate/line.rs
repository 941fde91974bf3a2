//! From a proven root to what the caller sees: the mate line and the whole proof tree.
//!
//! Both follow the table's proofs: the attacker plays the proven check with the shortest
//! mate (an immediate mate first), the defender the evasion whose proof is longest. A proof
//! the table has lost (replaced) is found again by a bounded re-search from that position,
//! along the same path, so repetitions count the same way. A line only ever takes a child
//! whose proof fits in the plies left, so its length never exceeds the bound it was asked
//! for.

use super::checks::checks;
use super::dfpn::{Dfpn, Status};
use super::table::Lookup;
use crate::shogi::{Move, Position};

/// A proof that the attacker mates: the attacking move, and after it every legal defence
/// with the proof that continues from it. No defences: the attacking move mates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofTree {
    pub attack: Move,
    pub defences: Vec<(Move, ProofTree)>,
}

impl ProofTree {
    /// The longest line in plies (odd): the mate's length with the longest defence.
    pub fn depth(&self) -> usize {
        1 + self
            .defences
            .iter()
            .map(|(_, t)| 1 + t.depth())
            .max()
            .unwrap_or(0)
    }

    /// Attacking moves in the tree.
    pub fn size(&self) -> usize {
        1 + self.defences.iter().map(|(_, t)| t.size()).sum::<usize>()
    }
}

impl Dfpn<'_> {
    /// The proven length of the position `pos` (the end of the path, `attacker_to_move`
    /// says which kind of node) within `plies`, re-searching once when the table lost it.
    fn proven_len(
        &mut self,
        pos: &mut Position,
        attacker_to_move: bool,
        plies: u16,
    ) -> Option<u16> {
        if !attacker_to_move && pos.count_legal_moves() == 0 {
            return Some(0);
        }
        if let Lookup::Proven(len) = self.table.probe(&self.key(pos), self.attacker, plies) {
            return Some(len);
        }
        self.begin_extract_pass();
        match self.solve_at(pos, attacker_to_move, plies) {
            Status::Proven(len) => Some(len),
            _ => None,
        }
    }

    /// The attacker's move at the end of the path (an OR node proven within `plies`): the
    /// check whose proof in the table is shortest; when the table holds none (it lost
    /// them, or there is no table), the first check a re-search proves.
    fn best_attack(&mut self, pos: &mut Position, plies: u16) -> Option<Move> {
        if plies == 0 {
            return None;
        }
        let mut moves = Vec::new();
        checks(pos, &mut moves);
        let mut best: Option<(u16, Move)> = None;
        for &m in &moves {
            pos.do_move(m);
            let len = if pos.count_legal_moves() == 0 {
                Some(0)
            } else if let Lookup::Proven(len) =
                self.table.probe(&self.key(pos), self.attacker, plies - 1)
            {
                Some(len)
            } else {
                None
            };
            pos.undo_move(m);
            if let Some(len) = len
                && best.is_none_or(|(b, _)| len < b)
            {
                best = Some((len, m));
            }
        }
        if let Some((_, m)) = best {
            return Some(m);
        }
        for &m in &moves {
            pos.do_move(m);
            self.path.push(pos.key());
            let len = self.proven_len(pos, false, plies - 1);
            self.path.pop();
            pos.undo_move(m);
            if len.is_some() {
                return Some(m);
            }
        }
        None
    }

    /// The defender's move at the end of the path (an AND node proven within `plies`): the
    /// evasion whose proof is longest. `None` if some evasion cannot be proven within
    /// `plies - 1` (which would contradict the node's proof). With `exact`, the node's mate
    /// is known to take all of `plies`: the evasion chosen is one that no search mates
    /// within `plies - 3`, so it resists that long (by parity, exactly `plies - 1`).
    fn longest_defence(&mut self, pos: &mut Position, plies: u16, exact: bool) -> Option<Move> {
        let mut ranked: Vec<(u16, Move)> = Vec::new();
        for e in pos.legal_moves() {
            pos.do_move(e);
            self.path.push(pos.key());
            let len = self.proven_len(pos, true, plies.saturating_sub(1));
            self.path.pop();
            pos.undo_move(e);
            ranked.push((len?, e));
        }
        // Longest first; among equals, the first generated.
        ranked.sort_by_key(|&(len, _)| std::cmp::Reverse(len));
        if exact && plies >= 5 && !self.stop_raised() {
            for &(_, e) in &ranked {
                pos.do_move(e);
                self.path.push(pos.key());
                self.begin_extract_pass();
                let st = self.solve_at(pos, true, plies - 3);
                self.path.pop();
                pos.undo_move(e);
                if matches!(st, Status::Disproven(_)) {
                    return Some(e);
                }
            }
        }
        ranked.first().map(|&(_, e)| e)
    }

    /// The mate line from the root `pos` (proven within `plies`).
    pub fn mate_line(&mut self, pos: &mut Position, plies: u16) -> Option<Vec<Move>> {
        self.line(pos, plies, false)
    }

    /// The mate line from the root `pos` when its mate is known to take exactly `plies`
    /// (proven within `plies`, disproven within `plies - 2`): every defence lasts as long as
    /// any, so the line has `plies` plies.
    pub fn exact_line(&mut self, pos: &mut Position, plies: u16) -> Option<Vec<Move>> {
        self.line(pos, plies, true)
    }

    fn line(&mut self, pos: &mut Position, plies: u16, exact: bool) -> Option<Vec<Move>> {
        self.path.clear();
        self.path.push(pos.key());
        let mut line = Vec::new();
        let mut left = plies;
        let mated = loop {
            let Some(m) = self.best_attack(pos, left) else {
                break false;
            };
            pos.do_move(m);
            self.path.push(pos.key());
            line.push(m);
            if pos.count_legal_moves() == 0 {
                break true;
            }
            let Some(d) = self.longest_defence(pos, left - 1, exact) else {
                break false;
            };
            pos.do_move(d);
            self.path.push(pos.key());
            line.push(d);
            left -= 2;
        };
        for &m in line.iter().rev() {
            pos.undo_move(m);
        }
        self.path.truncate(1);
        mated.then_some(line)
    }

    /// The whole proof tree from the root `pos` (proven within `plies`), at most `budget`
    /// attacking moves.
    pub fn proof_tree(
        &mut self,
        pos: &mut Position,
        plies: u16,
        budget: usize,
    ) -> Option<ProofTree> {
        self.path.clear();
        self.path.push(pos.key());
        let mut left = budget;
        self.tree_below(pos, plies, &mut left)
    }

    fn tree_below(
        &mut self,
        pos: &mut Position,
        plies: u16,
        left: &mut usize,
    ) -> Option<ProofTree> {
        if *left == 0 {
            return None;
        }
        *left -= 1;
        let attack = self.best_attack(pos, plies)?;
        pos.do_move(attack);
        self.path.push(pos.key());
        let mut defences = Vec::new();
        let mut complete = true;
        for e in pos.legal_moves() {
            pos.do_move(e);
            self.path.push(pos.key());
            let sub = if plies >= 3 && self.proven_len(pos, true, plies - 2).is_some() {
                self.tree_below(pos, plies - 2, left)
            } else {
                None
            };
            self.path.pop();
            pos.undo_move(e);
            match sub {
                Some(t) => defences.push((e, t)),
                None => {
                    complete = false;
                    break;
                }
            }
        }
        self.path.pop();
        pos.undo_move(attack);
        complete.then_some(ProofTree { attack, defences })
    }
}
