//! Df-pn (Nagai 2002): depth-first proof-number search with thresholds, over OR
//! nodes (attacker to move, checking moves only) and AND nodes (defender to move, every
//! legal move).
//!
//! A node's proof number `pn` is the least number of leaves still to prove for it to be
//! proven, its disproof number `dn` the same for a disproof: at OR nodes `pn = min pn(c)`,
//! `dn = Σ dn(c)`; at AND nodes `pn = Σ pn(c)`, `dn = min dn(c)`. MID expands a node and
//! keeps descending into its most-proving child while the node's numbers stay below its
//! thresholds; the child's thresholds are the second-best child's number grown by the 1+ε
//! trick (Pawlewicz & Lew 2006; ε = 1/4) and the node's own threshold less the other
//! children's share. Each frame keeps its children's numbers (from the table when it
//! starts, from the recursion afterwards), as in Nagai's MID with a table.
//!
//! Initial numbers (heuristic ones, as df-pn+ allows): a defender's node first seen gets
//! `pn = number of evasions, dn = 1` (each evasion needs its own proof) and is proven at once
//! when there is none (checkmate: a mate in one at the OR node above); an attacker's node
//! first seen gets `(1, 1)`.
//!
//! Interpositions (delayed expansion, as tsume solvers do it): when a slider checks from
//! afar, the defender may drop any piece in hand on any square between, and each drop is a
//! child the AND node must see proven. Counting them all makes a
//! distant check look hopeless (pn = number of drops) although one proof usually carries
//! over to the other pieces. So among the drops on one square only the first not yet proven
//! enters the AND node's numbers and can be chosen; the next one takes its place once it is
//! proven. Every child still has to be proven, and any disproven child refutes the node.
//!
//! Proofs carry the length of the mate found (OR: 1 + the shortest proven child, AND: 1 +
//! the longest child); disproofs carry the longest mate they exclude, so a search limited
//! to `r` plies treats a node with no plies left as disproven "up to `r`" and the table
//! keeps that bound.
//!
//! Repetition. A child whose position already stands on the current path (the root
//! included) is disproven for this path: a mate that repeats a position can be cut short,
//! so looking for acyclic mates loses none, and the perpetual check a repetition would
//! mean is lost for the attacker anyway. Such a disproof depends on the path — the graph
//! history interaction (GHI) problem — so it carries the path index of the repeated
//! position, and so does every disproof that rests on it. A node stores its disproof in
//! the table only when that index is not above it (a cycle back to the node itself or
//! below it holds from any path); otherwise the disproof lives only in the frames above,
//! which share the path, and the next visit searches the node again. Proofs never rest on
//! a repetition. The history of the root position is not consulted.

use super::checks::checks;
use super::table::{Key, Lookup, Record, Table};
use super::{MAX_PLY, MateLimits};
use crate::shogi::{Bitboard, Color, Move, Position, generate};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub(crate) const INF: u32 = u32::MAX;
/// The largest threshold: the root's. Above every open number, so the root's MID only
/// returns with a proof, a disproof or a spent limit.
const MAX_FINITE: u32 = u32::MAX - 1;
/// The largest open proof or disproof number; sums saturate here. Sums over AND nodes grow
/// exponentially along long lines of checks (and a DAG counts shared nodes twice), so
/// without this cap a root could reach its threshold unsettled; below it, such a subtree is
/// simply searched on until it settles.
const MAX_OPEN: u32 = 1 << 28;
/// A disproof for mates of any length.
pub(crate) const UNBOUNDED: u16 = u16::MAX;
/// A disproof that rests on no repetition.
const NO_REP: u16 = u16::MAX;
/// Salt for the board key when White attacks: a position means something else (OR or AND
/// node, whose hand is whose) with the other attacker.
const WHITE_ATTACKS: u64 = 0x9e37_79b9_7f4a_7c15;
/// Nodes a re-search may take when the mate line needs a proof the table lost.
pub(crate) const EXTRACT_BUDGET: u64 = 200_000;
/// Shortening searches take at most this many times the nodes of the first proof (a
/// disproof within fewer plies often costs more than the proof did)…
const SHORTEN_FACTOR: u64 = 4;
/// …and at least this many nodes.
const SHORTEN_MIN: u64 = 1_000_000;

/// A search's verdict on a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Mate in this many plies (an upper bound on the shortest).
    Proven(u16),
    /// No mate of at most this many plies ([`UNBOUNDED`]: none at all).
    Disproven(u16),
    Open,
}

/// A node's numbers: `pn = 0` proven (`len` = the mate's length), `dn = 0` disproven
/// (`len` = the longest mate excluded, `rep` = the path index the disproof depends on).
#[derive(Clone, Copy, Debug)]
pub(super) struct Value {
    pn: u32,
    dn: u32,
    len: u16,
    rep: u16,
}

impl Value {
    fn proven(len: u16) -> Value {
        Value {
            pn: 0,
            dn: INF,
            len,
            rep: NO_REP,
        }
    }

    fn disproven(len: u16, rep: u16) -> Value {
        Value {
            pn: INF,
            dn: 0,
            len,
            rep,
        }
    }

    fn open(pn: u32, dn: u32) -> Value {
        Value {
            pn: pn.clamp(1, MAX_OPEN),
            dn: dn.clamp(1, MAX_OPEN),
            len: 0,
            rep: NO_REP,
        }
    }

    fn is_proven(self) -> bool {
        self.pn == 0
    }

    fn is_disproven(self) -> bool {
        self.dn == 0
    }

    pub(super) fn status(self) -> Status {
        if self.is_proven() {
            Status::Proven(self.len)
        } else if self.is_disproven() {
            Status::Disproven(self.len)
        } else {
            Status::Open
        }
    }

    fn from_lookup(l: Lookup) -> Option<Value> {
        match l {
            Lookup::Proven(len) => Some(Value::proven(len)),
            Lookup::Disproven(len) => Some(Value::disproven(len, NO_REP)),
            Lookup::Open { pn, dn } => Some(Value::open(pn, dn)),
            Lookup::Miss => None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Child {
    mv: Move,
    v: Value,
}

/// One more ply on a length, `UNBOUNDED` staying so.
fn plus_one(len: u16) -> u16 {
    if len == UNBOUNDED {
        UNBOUNDED
    } else {
        (len + 1).min(UNBOUNDED - 1)
    }
}

/// The child threshold from the second-best number: `max(x + 1, ⌈x (1 + ε)⌉)`, ε = 1/4.
fn grow(x: u32) -> u32 {
    if x >= MAX_FINITE {
        INF
    } else {
        (x + 1).max(x.saturating_add(x.div_ceil(4))).min(MAX_FINITE)
    }
}

/// Which limits a pass of the search obeys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// The caller's node limit, time and stop flag.
    Search,
    /// Re-proving what the line needs: a fixed node budget only.
    Extract,
}

/// One search: the table, the path, the frames' child lists, the counters and limits.
pub(crate) struct Dfpn<'a> {
    pub(super) table: &'a mut Table,
    stop: &'a AtomicBool,
    pub(super) attacker: Color,
    salt: u64,
    /// Full keys of the positions from the root to the current node.
    pub(super) path: Vec<u64>,
    frames: Vec<Vec<Child>>,
    scratch: Vec<Move>,
    nodes: u64,
    max_nodes: u64,
    deadline: Option<Instant>,
    pass: Pass,
    pass_limit: u64,
    /// The current pass must end (its limit was reached).
    aborted: bool,
    /// No more search passes: the caller's limits or the stop flag were reached.
    stopped: bool,
}

impl<'a> Dfpn<'a> {
    pub fn new(
        table: &'a mut Table,
        root: &Position,
        limits: &MateLimits,
        stop: &'a AtomicBool,
        start: Instant,
    ) -> Dfpn<'a> {
        let attacker = root.side_to_move();
        let max_nodes = limits.max_nodes.unwrap_or(u64::MAX);
        Dfpn {
            table,
            stop,
            attacker,
            salt: if attacker == Color::White {
                WHITE_ATTACKS
            } else {
                0
            },
            path: Vec::with_capacity(64),
            frames: Vec::new(),
            scratch: Vec::with_capacity(crate::shogi::MAX_MOVES),
            nodes: 0,
            max_nodes,
            deadline: limits.time.and_then(|t| start.checked_add(t)),
            pass: Pass::Search,
            pass_limit: max_nodes,
            aborted: max_nodes == 0,
            stopped: max_nodes == 0,
        }
    }

    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    pub(super) fn key(&self, pos: &Position) -> Key {
        Key {
            board: pos.board_key() ^ self.salt,
            hands: [pos.hand(Color::Black), pos.hand(Color::White)],
        }
    }

    /// Starts a pass under the caller's limits with at most `budget` more nodes; false when
    /// those limits are already spent.
    pub(super) fn begin_search_pass(&mut self, budget: u64) -> bool {
        if self.stopped || self.nodes >= self.max_nodes {
            self.stopped = true;
            return false;
        }
        self.pass = Pass::Search;
        self.pass_limit = self.max_nodes.min(self.nodes.saturating_add(budget));
        self.aborted = false;
        true
    }

    /// Starts a re-search for the mate line: [`EXTRACT_BUDGET`] nodes, whatever the caller's
    /// limits (the root is proven by then; the line must not be lost to a spent limit).
    pub(super) fn begin_extract_pass(&mut self) {
        self.pass = Pass::Extract;
        self.pass_limit = self.nodes.saturating_add(EXTRACT_BUDGET);
        self.aborted = false;
    }

    /// Whether the caller asked the search to stop (or its time is up).
    pub(super) fn stop_raised(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    #[inline]
    fn tick(&mut self) {
        self.nodes += 1;
        if self.nodes >= self.pass_limit {
            self.aborted = true;
            if self.pass == Pass::Search && self.nodes >= self.max_nodes {
                self.stopped = true;
            }
        }
        if self.pass == Pass::Search && self.nodes & 255 == 0 && self.stop_raised() {
            self.aborted = true;
            self.stopped = true;
        }
    }

    /// Solves the root (the attacker to move) for mates of at most `plies` plies.
    pub fn solve_root(&mut self, pos: &mut Position, plies: u16) -> Status {
        self.path.clear();
        self.path.push(pos.key());
        self.solve_at(pos, true, plies)
    }

    /// Solves the position at the end of the current path (its key last in `path`), an OR
    /// node when `attacker_to_move`, for mates of at most `plies` plies, within the current
    /// pass's limits.
    pub(super) fn solve_at(
        &mut self,
        pos: &mut Position,
        attacker_to_move: bool,
        plies: u16,
    ) -> Status {
        let depth = self.path.len() - 1;
        let plies = plies.min(MAX_PLY as u16);
        if self.aborted {
            return Status::Open;
        }
        let v = if attacker_to_move {
            self.or_node(pos, depth, plies, MAX_FINITE, MAX_FINITE)
        } else {
            self.and_node(pos, depth, plies, MAX_FINITE, MAX_FINITE)
        };
        v.status()
    }

    /// The index on the path of an earlier occurrence of the position `full` about to
    /// stand at `depth` (same side to move, so an even distance of at least 4).
    #[inline]
    fn repeats(&self, full: u64, depth: usize) -> Option<u16> {
        let mut j = depth.checked_sub(4)?;
        loop {
            if self.path[j] == full {
                return Some(j as u16);
            }
            j = j.checked_sub(2)?;
        }
    }

    fn take_frame(&mut self, depth: usize) -> Vec<Child> {
        if self.frames.len() <= depth {
            self.frames.resize_with(depth + 1, Vec::new);
        }
        let mut f = std::mem::take(&mut self.frames[depth]);
        f.clear();
        f
    }

    fn store(&mut self, key: &Key, v: Value, amount: u64) {
        let record = if v.is_proven() {
            Record::Proven(v.len)
        } else if v.is_disproven() {
            if v.rep != NO_REP {
                return; // rests on the path above: not a fact
            }
            Record::Disproven(v.len)
        } else {
            Record::Open { pn: v.pn, dn: v.dn }
        };
        self.table
            .store(key, record, amount.min(u32::MAX as u64) as u32);
    }

    /// What is known of a defender's node (after a check) about to stand at `depth` with
    /// `plies` left, without expanding it.
    fn first_look_and(&mut self, pos: &Position, depth: usize, plies: u16) -> Value {
        if let Some(j) = self.repeats(pos.key(), depth) {
            return Value::disproven(UNBOUNDED, j);
        }
        if let Some(v) = Value::from_lookup(self.table.probe(&self.key(pos), self.attacker, plies))
        {
            return v;
        }
        let evasions = pos.count_legal_moves();
        if evasions == 0 {
            Value::proven(0)
        } else if plies < 2 {
            Value::disproven(1, NO_REP)
        } else {
            Value::open(evasions as u32, 1)
        }
    }

    /// The same for an attacker's node (after an evasion).
    fn first_look_or(&mut self, pos: &Position, depth: usize, plies: u16) -> Value {
        if let Some(j) = self.repeats(pos.key(), depth) {
            return Value::disproven(UNBOUNDED, j);
        }
        if let Some(v) = Value::from_lookup(self.table.probe(&self.key(pos), self.attacker, plies))
        {
            return v;
        }
        if plies == 0 {
            Value::disproven(0, NO_REP)
        } else {
            Value::open(1, 1)
        }
    }

    /// MID at an attacker's node: `pos` stands at `depth` of the path with `plies` left.
    fn or_node(
        &mut self,
        pos: &mut Position,
        depth: usize,
        plies: u16,
        th_pn: u32,
        th_dn: u32,
    ) -> Value {
        self.tick();
        if plies == 0 {
            return Value::disproven(0, NO_REP);
        }
        let start = self.nodes;
        let key = self.key(pos);
        let mut children = self.take_frame(depth);
        let mut moves = std::mem::take(&mut self.scratch);
        moves.clear();
        checks(pos, &mut moves);
        for &m in &moves {
            pos.do_move(m);
            let v = self.first_look_and(pos, depth + 1, plies - 1);
            pos.undo_move(m);
            children.push(Child { mv: m, v });
            if v.is_proven() && v.len == 0 {
                break; // mate in one: nothing else to look at
            }
        }
        self.scratch = moves;

        let value = loop {
            let (mut pn, mut dn) = (INF, 0u32);
            let (mut best, mut second) = (usize::MAX, INF);
            for (i, c) in children.iter().enumerate() {
                dn = dn.saturating_add(c.v.dn).min(MAX_OPEN);
                if c.v.pn < pn {
                    second = pn;
                    pn = c.v.pn;
                    best = i;
                } else if c.v.pn < second {
                    second = c.v.pn;
                }
            }
            if pn == 0 {
                let len = children
                    .iter()
                    .filter(|c| c.v.is_proven())
                    .map(|c| c.v.len)
                    .min()
                    .unwrap_or(0);
                break Value::proven(plus_one(len));
            }
            if pn == INF {
                // Every check disproven (or none at all).
                let len = children.iter().map(|c| c.v.len).min().unwrap_or(UNBOUNDED);
                let rep = children.iter().map(|c| c.v.rep).min().unwrap_or(NO_REP);
                let rep = if rep != NO_REP && rep as usize >= depth {
                    NO_REP
                } else {
                    rep
                };
                break Value::disproven(plus_one(len), rep);
            }
            if pn >= th_pn || dn >= th_dn || self.aborted {
                break Value::open(pn, dn);
            }
            let c = children[best];
            let child_th_pn = th_pn.min(grow(second));
            let child_th_dn = th_dn
                .saturating_sub(dn)
                .saturating_add(c.v.dn)
                .min(MAX_FINITE);
            children[best].v = self.child(pos, c.mv, depth, plies, child_th_pn, child_th_dn);
        };
        self.frames[depth] = children;
        self.store(&key, value, self.nodes - start + 1);
        value
    }

    /// Plays `mv` and searches the child with its thresholds — a defender's node below an
    /// attacker's and the reverse — keeping the path of keys for the repetition rule.
    fn child(
        &mut self,
        pos: &mut Position,
        mv: Move,
        depth: usize,
        plies: u16,
        th_pn: u32,
        th_dn: u32,
    ) -> Value {
        let attacker_moved = pos.side_to_move() == self.attacker;
        pos.do_move(mv);
        self.path.push(pos.key());
        let v = if attacker_moved {
            self.and_node(pos, depth + 1, plies - 1, th_pn, th_dn)
        } else {
            self.or_node(pos, depth + 1, plies - 1, th_pn, th_dn)
        };
        self.path.pop();
        pos.undo_move(mv);
        v
    }

    /// MID at a defender's node (in check).
    fn and_node(
        &mut self,
        pos: &mut Position,
        depth: usize,
        plies: u16,
        th_pn: u32,
        th_dn: u32,
    ) -> Value {
        self.tick();
        let start = self.nodes;
        let key = self.key(pos);
        let mut moves = std::mem::take(&mut self.scratch);
        moves.clear();
        generate(pos, &mut moves);
        if moves.is_empty() {
            self.scratch = moves;
            return Value::proven(0);
        }
        if plies < 2 {
            self.scratch = moves;
            return Value::disproven(1, NO_REP);
        }
        let mut children = self.take_frame(depth);
        let mut refuted = None;
        for &m in &moves {
            pos.do_move(m);
            let v = self.first_look_or(pos, depth + 1, plies - 1);
            pos.undo_move(m);
            children.push(Child { mv: m, v });
            if v.is_disproven() && v.rep == NO_REP {
                refuted = Some(v);
                break;
            }
        }
        self.scratch = moves;

        let value = loop {
            if let Some(v) = refuted {
                break Value::disproven(plus_one(v.len), NO_REP);
            }
            let (mut pn, mut dn) = (0u32, INF);
            let (mut best, mut second) = (usize::MAX, INF);
            // Interpositions by drop are expanded lazily: of the drops on one square only the
            // first not yet proven counts and can be chosen (see the module comment).
            let mut open_drops = Bitboard::EMPTY;
            let mut any_disproven = false;
            for (i, c) in children.iter().enumerate() {
                any_disproven |= c.v.is_disproven();
                if c.mv.is_drop() && !c.v.is_proven() {
                    if open_drops.contains(c.mv.to()) {
                        continue;
                    }
                    open_drops = open_drops.with(c.mv.to());
                }
                pn = pn.saturating_add(c.v.pn).min(MAX_OPEN);
                if c.v.dn < dn {
                    second = dn;
                    dn = c.v.dn;
                    best = i;
                } else if c.v.dn < second {
                    second = c.v.dn;
                }
            }
            if any_disproven {
                dn = 0;
            }
            if dn == 0 {
                // The refutation that rests least on the path: no repetition, else the
                // deepest repeated position.
                let r = children
                    .iter()
                    .filter(|c| c.v.is_disproven())
                    .max_by_key(|c| (c.v.rep == NO_REP, c.v.rep, c.v.len))
                    .expect("a disproven child")
                    .v;
                let rep = if r.rep != NO_REP && r.rep as usize >= depth {
                    NO_REP
                } else {
                    r.rep
                };
                break Value::disproven(plus_one(r.len), rep);
            }
            if pn == 0 {
                let len = children.iter().map(|c| c.v.len).max().unwrap_or(0);
                break Value::proven(plus_one(len));
            }
            if pn >= th_pn || dn >= th_dn || self.aborted {
                break Value::open(pn, dn);
            }
            let c = children[best];
            let child_th_dn = th_dn.min(grow(second));
            let child_th_pn = th_pn
                .saturating_sub(pn)
                .saturating_add(c.v.pn)
                .min(MAX_FINITE);
            children[best].v = self.child(pos, c.mv, depth, plies, child_th_pn, child_th_dn);
        };
        self.frames[depth] = children;
        self.store(&key, value, self.nodes - start + 1);
        value
    }

    /// Shortening, after the root was proven within `bound` and `line` extracted (at most
    /// `bound` plies): searches again within fewer plies — the line's length if it is
    /// shorter than the bound, else two plies less — until a bound is disproven, so that the
    /// mate's length `hi` is known exactly (proven within `hi`, disproven within `hi - 2`);
    /// then extracts the line again with the defender held to that length
    /// ([`Dfpn::exact_line`]). Stops with the shortest line found so far when the caller's
    /// limits, or a budget of [`SHORTEN_FACTOR`] times the nodes the search took before,
    /// run out. Also says whether the length came out exact.
    pub fn shorten(
        &mut self,
        pos: &mut Position,
        mut line: Vec<Move>,
        bound: u16,
    ) -> (Vec<Move>, bool) {
        let budget = (self.nodes.saturating_mul(SHORTEN_FACTOR)).max(SHORTEN_MIN);
        let end = self.nodes.saturating_add(budget);
        let mut hi = i32::from(bound); // a mate within hi plies is proven
        let mut lo = -1; // no mate within lo plies is proven
        while hi - 2 > lo {
            let len = line.len() as i32;
            let target = if len < hi && len > lo { len } else { hi - 2 };
            if self.nodes >= end || !self.begin_search_pass(end - self.nodes) {
                return (line, false);
            }
            match self.solve_root(pos, target as u16) {
                Status::Proven(_) => {
                    hi = target;
                    if let Some(shorter) = self.mate_line(pos, target as u16)
                        && shorter.len() <= line.len()
                    {
                        line = shorter;
                    }
                }
                Status::Disproven(_) => lo = target,
                Status::Open => return (line, false),
            }
        }
        if line.len() as i32 != hi {
            // The exact line's re-searches ignore the limits; a raised stop skips them.
            if self.stop_raised() {
                return (line, false);
            }
            match self.exact_line(pos, hi as u16) {
                Some(exact) => line = exact,
                None => return (line, false),
            }
        }
        (line, true)
    }
}
