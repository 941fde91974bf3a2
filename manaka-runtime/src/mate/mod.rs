//! The mate solver: a proof-number search for forced mates by continuous checks (tsume).
//!
//! [`MateSolver`] runs df-pn, the depth-first proof-number search of Nagai (*Df-pn
//! Algorithm for Searching AND/OR Trees and Its Applications*, PhD thesis, University of
//! Tokyo, 2002), with the 1+ε threshold trick of Pawlewicz and Lew (*Improving Depth-First
//! PN-Search: 1+ε Trick*, CG 2006). The attacker is the side to move at the root. At OR
//! nodes it tries only moves that give check ([`checks`]); at AND nodes the defender tries
//! every legal move. Every move comes from the rules core's exact generator
//! ([`crate::shogi::generate`]), so an illegal move — a pawn-drop mate included — is never
//! part of a search, let alone of a claimed mate.
//!
//! - `table`: the transposition table. Bounded by the bytes given to
//!   [`MateSolver::new`], buckets of four entries, the entry with the fewest searched nodes
//!   replaced first; proofs and disproofs of a board are shared across hands by dominance.
//! - `dfpn`: the search itself, with the repetition rule: a position repeated on the
//!   current path is disproven *for that path* (perpetual check never mates), and such
//!   path-dependent disproofs are never stored as facts (the GHI problem).
//! - `line`: the mate line (shortest attack, longest defence by the lengths proofs carry)
//!   and the full proof tree, which the oracle tests verify defence by defence.
//! - `within`: [`mate_within`], a small exhaustive fixed-depth check for search leaves.
//!
//! docs/mate.md explains the choices and measures the speed.

mod checks;
mod dfpn;
mod line;
mod table;
mod within;

pub use checks::{checks, checks_slow};
pub use line::ProofTree;
pub use within::mate_within;

use crate::shogi::{Move, Position};
use dfpn::{Dfpn, Status};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use table::Table;

/// The longest line the solver follows, in plies (the recursion depth). A `max_plies`
/// above it is clamped to it, and without `max_plies` it is the bound: "no mate" then
/// means none within this many plies.
pub const MAX_PLY: u32 = 511;

/// Limits of one mate search. `Default` is no limit at all (the search runs until it has
/// an answer, or the stop flag is raised).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MateLimits {
    /// Most nodes (positions expanded) to search, shortening and line extraction included.
    pub max_nodes: Option<u64>,
    /// Most wall-clock time to search.
    pub time: Option<Duration>,
    /// Longest mate to look for, in plies, attacker's and defender's moves together (so odd:
    /// 1, 3, 5…; an even value allows the odd number below it). A longer mate counts as
    /// none: the search proves [`MateOutcome::NoMate`] when no mate within this many plies
    /// exists, whatever longer mates there are. Clamped to [`MAX_PLY`].
    pub max_plies: Option<u32>,
}

impl MateLimits {
    /// At most `n` nodes.
    pub fn nodes(n: u64) -> MateLimits {
        MateLimits {
            max_nodes: Some(n),
            ..MateLimits::default()
        }
    }

    /// At most `t` of wall-clock time.
    pub fn time(t: Duration) -> MateLimits {
        MateLimits {
            time: Some(t),
            ..MateLimits::default()
        }
    }

    /// The same limits, looking for mates of at most `plies` plies.
    pub fn with_max_plies(self, plies: u32) -> MateLimits {
        MateLimits {
            max_plies: Some(plies),
            ..self
        }
    }
}

/// What a mate search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MateOutcome {
    /// A forced mate: the line from the attacker's first move to the mating move (odd
    /// length). Every attacker move gives check, every defender move is legal (the one the
    /// proof says resists longest), and the last position is checkmate.
    Mate(Vec<Move>),
    /// Proven: no mate by continuous checks within `max_plies`, or within [`MAX_PLY`] plies
    /// when that is not set (the longest line the solver follows: a longer mate is out of
    /// its reach either way).
    NoMate,
    /// A limit or the stop flag ended the search first.
    Unknown,
}

/// The answer of [`MateSolver::search`] and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MateResult {
    pub outcome: MateOutcome,
    /// With a mate: whether its length is proven shortest (a search for a mate two plies
    /// shorter proved there is none). False when the limits ended the shortening first.
    pub shortest: bool,
    /// Nodes searched (positions expanded by df-pn), shortening and line extraction
    /// included.
    pub nodes: u64,
    pub elapsed: Duration,
}

impl MateResult {
    /// The mate line, if one was found.
    pub fn mate(&self) -> Option<&[Move]> {
        match &self.outcome {
            MateOutcome::Mate(line) => Some(line),
            _ => None,
        }
    }

    /// Nodes per second (0 when no time was measured).
    pub fn nps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 { self.nodes as f64 / s } else { 0.0 }
    }
}

/// A df-pn mate solver with its own bounded transposition table. The table survives
/// between searches (what is proven stays proven: proofs and disproofs do not depend on
/// the path or on earlier searches), until [`MateSolver::clear`].
pub struct MateSolver {
    table: Table,
}

impl MateSolver {
    /// A solver whose table takes at most `table_bytes` bytes. When the allocator refuses
    /// that much, the table halves until it gets memory (down to none at all, which still
    /// searches correctly, only slowly). [`MateSolver::table_bytes`] says what it got.
    pub fn new(table_bytes: usize) -> MateSolver {
        MateSolver {
            table: Table::new(table_bytes),
        }
    }

    /// The bytes the table holds (never more than asked for).
    pub fn table_bytes(&self) -> usize {
        self.table.bytes()
    }

    /// Per mille of the table in use (sampled; USI `info hashfull`).
    pub fn hashfull(&self) -> u32 {
        self.table.hashfull()
    }

    /// Forgets everything the table learned.
    pub fn clear(&mut self) {
        self.table.clear();
    }

    /// Looks for a forced mate of the side to move's opponent, the side to move attacking.
    /// `stop` is polled every few hundred nodes (the USI `stop`); raising it ends the search
    /// with what is known ([`MateOutcome::Unknown`] unless a mate line was already found).
    ///
    /// A found mate is then shortened while the limits allow, by searching again for a mate
    /// two plies shorter until none exists, within at most four times the nodes the first
    /// proof took (and at least a million); once the length is known exactly, the line shows it: the
    /// defender's moves resist that long (docs/mate.md). The history of `pos` before it is not consulted:
    /// repetition counts along the solver's own lines only.
    pub fn search(&mut self, pos: &Position, limits: &MateLimits, stop: &AtomicBool) -> MateResult {
        let start = Instant::now();
        let mut pos = pos.clone();
        let root_plies = limits.max_plies.unwrap_or(MAX_PLY).min(MAX_PLY) as u16;
        let mut dfpn = Dfpn::new(&mut self.table, &pos, limits, stop, start);
        let mut shortest = false;
        let outcome = match dfpn.solve_root(&mut pos, root_plies) {
            Status::Proven(_) => match dfpn.mate_line(&mut pos, root_plies) {
                Some(line) => {
                    let (line, exact) = dfpn.shorten(&mut pos, line, root_plies);
                    shortest = exact;
                    MateOutcome::Mate(line)
                }
                None => MateOutcome::Unknown,
            },
            // A root disproven within r plies always holds for at least r (dfpn.rs).
            Status::Disproven(v) if v >= root_plies => MateOutcome::NoMate,
            _ => MateOutcome::Unknown,
        };
        MateResult {
            outcome,
            shortest,
            nodes: dfpn.nodes(),
            elapsed: start.elapsed(),
        }
    }

    /// Proves a mate and returns its whole proof tree: an attacking move for every position
    /// where the attacker is to move and every legal defence after it, down to checkmate.
    /// `None` when no mate within `limits` is found or the tree would have more than
    /// `max_tree_nodes` attacking moves. This is what the oracle tests hand to cshogi to
    /// check defence by defence.
    pub fn proof_tree(
        &mut self,
        pos: &Position,
        limits: &MateLimits,
        max_tree_nodes: usize,
        stop: &AtomicBool,
    ) -> Option<ProofTree> {
        let start = Instant::now();
        let mut pos = pos.clone();
        let root_plies = limits.max_plies.unwrap_or(MAX_PLY).min(MAX_PLY) as u16;
        let mut dfpn = Dfpn::new(&mut self.table, &pos, limits, stop, start);
        match dfpn.solve_root(&mut pos, root_plies) {
            Status::Proven(_) => dfpn.proof_tree(&mut pos, root_plies, max_tree_nodes),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
