//! Where self-play games start: a list of opening positions, cycled through by game number,
//! each followed by a number of uniformly random legal plies, so that a run covers more than
//! the lines its network likes from the start position (issue 19: opening diversity).
//!
//! Game `i` starts from opening `i mod n`, then plays `random_plies` moves drawn from a
//! stream that depends only on the run's seed and `i` (never on the search's noise stream),
//! so a game's start is the same whichever thread plays it, on resume, and in every shard.

use crate::random::SplitMix64;
use crate::shogi::Position;

/// Salt of the opening plies' random stream, kept apart from the Gumbel noise's.
const OPENING_STREAM: u64 = 0x6f70_656e_696e_6773; // "openings"

/// The start positions of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Openings {
    /// Opening positions as SFEN (no history); game `i` starts from entry `i mod len`.
    sfens: Vec<String>,
    /// Random legal plies played from the opening before the first searched move.
    pub random_plies: u32,
}

impl Default for Openings {
    /// The start position, no random plies.
    fn default() -> Openings {
        Openings {
            sfens: vec![Position::startpos().to_sfen()],
            random_plies: 0,
        }
    }
}

impl Openings {
    /// Openings from positions (their histories are dropped: a game starts fresh there).
    /// `None` for an empty list.
    pub fn new(positions: &[Position], random_plies: u32) -> Option<Openings> {
        (!positions.is_empty()).then(|| Openings {
            sfens: positions.iter().map(Position::to_sfen).collect(),
            random_plies,
        })
    }

    /// The start position, then `random_plies` random plies.
    pub fn startpos(random_plies: u32) -> Openings {
        Openings {
            random_plies,
            ..Openings::default()
        }
    }

    pub fn len(&self) -> usize {
        self.sfens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sfens.is_empty()
    }

    /// True for the start position without random plies (what runs did before openings
    /// existed; their manifests say `start = startpos`).
    pub fn is_plain_startpos(&self) -> bool {
        self.random_plies == 0
            && self.sfens.len() == 1
            && self.sfens[0] == Position::startpos().to_sfen()
    }

    /// A fingerprint of the opening list for the run's manifest (xxh64 of the SFEN lines).
    pub fn fingerprint(&self) -> u64 {
        let mut text = String::new();
        for s in &self.sfens {
            text.push_str(s);
            text.push('\n');
        }
        xxhash_rust::xxh64::xxh64(text.as_bytes(), 0)
    }

    /// Where game `index` of a run seeded `seed` starts: its opening followed by the random
    /// plies, as a position without history. A random ply never mates (the game must go on)
    /// and never reaches a position the game loop would end at once; when no such move exists
    /// the plies stop early.
    pub fn start(&self, seed: u64, index: u64) -> Position {
        let base = &self.sfens[(index % self.sfens.len() as u64) as usize];
        // Validated when the list was made, so this cannot fail; fall back to the start
        // position rather than panic if it somehow does.
        let mut pos = Position::from_sfen(base).unwrap_or_else(|_| Position::startpos());
        let mut rng = SplitMix64::stream(seed ^ OPENING_STREAM, index);
        for _ in 0..self.random_plies {
            let moves = pos.legal_moves();
            let playable: Vec<_> = moves
                .into_iter()
                .filter(|&m| {
                    let mut next = pos.clone();
                    next.do_move(m);
                    next.has_legal_moves() && next.sennichite().is_none()
                })
                .collect();
            if playable.is_empty() {
                break;
            }
            let m = playable[rng.below(playable.len() as u64) as usize];
            pos.do_move(m);
        }
        Position::from_sfen(&pos.to_sfen()).unwrap_or(pos)
    }
}
