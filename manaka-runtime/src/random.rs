//! Seeded randomness for data generation, and random positions from playouts.
//!
//! The generator is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014), written out here so that a seed names the same positions and
//! the same self-play games whatever version of any random-number crate is in use.

use crate::shogi::{Move, Position};
use std::collections::HashSet;

/// SplitMix64: a 64-bit state advanced by the golden-ratio increment and mixed.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// A generator for stream `index` of `seed` (e.g. one per game), independent of how
    /// many numbers other streams drew.
    pub fn stream(seed: u64, index: u64) -> SplitMix64 {
        let mut g = SplitMix64::new(seed ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03));
        g.next_u64();
        g
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by Lemire's multiply-shift (the bias is below 2⁻³²
    /// for the small `n` used here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Settings for [`random_positions`].
#[derive(Clone, Copy, Debug)]
pub struct RandomPositions {
    pub count: usize,
    pub seed: u64,
    /// Playout lengths are uniform in `min_ply..=max_ply` plies from the start position.
    pub min_ply: u32,
    pub max_ply: u32,
}

/// `count` distinct positions, each reached by a playout of uniformly random legal moves
/// from the start position. Playouts that end in mate before their length are discarded,
/// as are positions without a legal move and repeats (same board, hands and side to move,
/// whatever the move number). Deterministic for a seed. Fails if `count` distinct positions
/// do not turn up within `50 × count + 1000` playouts (e.g. `max_ply` 1 has only 31).
pub fn random_positions(settings: &RandomPositions) -> Result<Vec<Position>, String> {
    let RandomPositions {
        count,
        seed,
        min_ply,
        max_ply,
    } = *settings;
    if min_ply > max_ply {
        return Err(format!("min ply {min_ply} is above max ply {max_ply}"));
    }
    let mut rng = SplitMix64::new(seed);
    let mut seen = HashSet::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    let attempts = 50 * count as u64 + 1000;
    let start = Position::startpos();
    let mut moves = Vec::new();
    for _ in 0..attempts {
        if out.len() == count {
            break;
        }
        let plies = min_ply + rng.below(u64::from(max_ply - min_ply) + 1) as u32;
        let mut pos = start.clone();
        let mut ok = true;
        for _ in 0..plies {
            moves.clear();
            moves.extend(pos.legal_moves());
            if moves.is_empty() {
                ok = false;
                break;
            }
            let m = moves[rng.below(moves.len() as u64) as usize];
            pos.do_move(m);
        }
        if !ok || !pos.has_legal_moves() || !seen.insert(pos.key()) {
            continue;
        }
        // A fresh position (no history): it is a start position of its own.
        let fresh = Position::from_sfen(&pos.to_sfen()).map_err(|e| e.to_string())?;
        out.push(fresh);
    }
    if out.len() < count {
        return Err(format!(
            "found only {} distinct positions in {attempts} playouts of {min_ply}..={max_ply} \
             plies; ask for fewer or widen the ply range",
            out.len()
        ));
    }
    Ok(out)
}

/// A legal move of `pos` drawn from `rng`, or `None` when there is none. Half of the draws
/// take a capture when there is one (uniform among the captures), the rest are uniform over
/// all legal moves: random games then fill the hands, so drops abound — the walk the rules
/// and mate tests need, where uniform play rarely captures.
pub fn capture_preferring_move(pos: &Position, rng: &mut SplitMix64) -> Option<Move> {
    let moves = pos.legal_moves();
    if rng.below(2) == 0 {
        let captures: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|m| m.from().is_some() && pos.piece_at(m.to()).is_some())
            .collect();
        if !captures.is_empty() {
            return Some(captures[rng.below(captures.len() as u64) as usize]);
        }
    }
    if moves.is_empty() {
        return None;
    }
    Some(moves[rng.below(moves.len() as u64) as usize])
}

/// Whether item `index` of a file is in a one-in-`one_in` sample (all when `one_in` ≤ 1):
/// a hash of the index, so the same items every run. Not every K-th item: in a file of games
/// that would take one side to move, at the same plies, from every game of even K.
/// `manaka label --sample` and `manaka positions --children-of … --sample` choose with it.
///
/// Why sample at all: the positions of one game are alike (neighbouring plies, nearly the same
/// value), so a labelled set taken sparsely from K times as many games teaches the value head
/// more than the same number of positions taken densely — self-play is cheap and the teacher
/// is not (docs/history.md, "Mirrored positions, and positions from more games").
pub fn sampled(one_in: u64, index: u64) -> bool {
    one_in <= 1 || SplitMix64::stream(0x7361_6d70_6c65, index).below(one_in) == 0
}

/// For about one in `one_in` of `positions` ([`sampled`]), the position after a uniformly
/// random legal move (seeded by `seed` and the index), without history; positions without a
/// legal move, and children without one, are left out.
///
/// Why: a search also evaluates the positions after the moves it will not play, and there the
/// network is least like its teacher (docs/history.md, "Positions one move off the games"),
/// while the games' own positions are all a training set from self-play holds.
pub fn random_children(positions: &[Position], one_in: u64, seed: u64) -> Vec<Position> {
    let mut out = Vec::new();
    for (i, p) in positions.iter().enumerate() {
        if !sampled(one_in, i as u64) {
            continue;
        }
        let moves = p.legal_moves();
        if moves.is_empty() {
            continue;
        }
        let mut rng = SplitMix64::stream(seed, i as u64);
        let mut child = Position::from_sfen(&p.to_sfen()).expect("a printed SFEN parses");
        child.do_move(moves[rng.below(moves.len() as u64) as usize]);
        if !child.legal_moves().is_empty() {
            out.push(Position::from_sfen(&child.to_sfen()).expect("a printed SFEN parses"));
        }
    }
    out
}

/// Every position along `games` random games of [`capture_preferring_move`]s: game `g`
/// starts from `starts[g % starts.len()]` and stops at mate or after `max_plies` moves; each
/// position (the start included) is returned fresh, rebuilt from its SFEN with no history.
pub fn positions_along_random_games(
    starts: &[Position],
    games: usize,
    max_plies: usize,
    rng: &mut SplitMix64,
) -> Vec<Position> {
    let fresh = |p: &Position| Position::from_sfen(&p.to_sfen()).expect("a printed SFEN parses");
    let mut out = Vec::new();
    for g in 0..games {
        let mut pos = starts[g % starts.len()].clone();
        out.push(fresh(&pos));
        for _ in 0..max_plies {
            let Some(m) = capture_preferring_move(&pos, rng) else {
                break;
            };
            pos.do_move(m);
            out.push(fresh(&pos));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_children_are_one_legal_move_from_their_parents() {
        let starts = [Position::startpos()];
        let parents = positions_along_random_games(&starts, 6, 60, &mut SplitMix64::new(3));
        let all = random_children(&parents, 1, 7);
        assert!(
            all.len() + 12 >= parents.len(),
            "{} of {}",
            all.len(),
            parents.len()
        );
        // In order: each child is one legal move from a parent after the previous child's.
        let is_child = |p: &Position, c: &Position| {
            p.legal_moves().iter().any(|&m| {
                let mut q = p.clone();
                q.do_move(m);
                q.to_sfen() == c.to_sfen()
            })
        };
        let mut j = 0;
        for c in &all {
            while !is_child(&parents[j], c) {
                j += 1;
                assert!(j < parents.len(), "{} is no parent's child", c.to_sfen());
            }
            assert!(!c.legal_moves().is_empty());
            j += 1;
        }
        let sfens = |v: &[Position]| v.iter().map(Position::to_sfen).collect::<Vec<_>>();
        assert_eq!(
            sfens(&all),
            sfens(&random_children(&parents, 1, 7)),
            "seeded"
        );
        assert_ne!(sfens(&all), sfens(&random_children(&parents, 1, 8)));
        let quarter = random_children(&parents, 4, 7);
        let kept = (0..parents.len() as u64).filter(|&i| sampled(4, i)).count();
        assert!(
            quarter.len() <= kept && kept < parents.len() / 2,
            "{kept} of {}",
            parents.len()
        );
    }

    #[test]
    fn random_games_are_legal_seeded_and_fill_hands() {
        let starts = [Position::startpos()];
        let walk = |seed| positions_along_random_games(&starts, 4, 80, &mut SplitMix64::new(seed));
        let a = walk(5);
        let sfens = |v: &[Position]| v.iter().map(Position::to_sfen).collect::<Vec<_>>();
        assert_eq!(sfens(&a), sfens(&walk(5)), "a seed names its games");
        assert_ne!(sfens(&a), sfens(&walk(6)));
        // Consecutive positions of a game differ by one legal move.
        for w in a.windows(2) {
            let reached = w[0].legal_moves().iter().any(|&m| {
                let mut p = w[0].clone();
                p.do_move(m);
                p.to_sfen() == w[1].to_sfen()
            });
            assert!(
                reached || w[1].to_sfen() == Position::startpos().to_sfen(),
                "{} -> {}",
                w[0].to_sfen(),
                w[1].to_sfen()
            );
        }
        // Preferring captures fills the hands: some position has a piece in hand.
        assert!(
            a.iter().any(|p| !p.to_sfen().contains(" - ")),
            "no piece was ever captured"
        );
    }

    #[test]
    fn splitmix_reference_values() {
        // SplitMix64 with seed 0: the published first outputs (as in Vigna's splitmix64.c).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(g.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(g.next_u64(), 0x06c4_5d18_8009_454f);
        let mut g = SplitMix64::new(7);
        for n in [1u64, 2, 7, 593] {
            for _ in 0..100 {
                assert!(g.below(n) < n);
            }
        }
        let u = g.unit();
        assert!((0.0..1.0).contains(&u));
    }

    #[test]
    fn random_positions_are_distinct_seeded_and_within_range() {
        let s = RandomPositions {
            count: 200,
            seed: 5,
            min_ply: 2,
            max_ply: 30,
        };
        let a = random_positions(&s).unwrap();
        let b = random_positions(&s).unwrap();
        assert_eq!(a.len(), 200);
        let keys: HashSet<u64> = a.iter().map(Position::key).collect();
        assert_eq!(keys.len(), 200);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_sfen() == y.to_sfen()));
        assert!(
            a.iter()
                .all(|p| (3..=31).contains(&p.ply()) && p.has_legal_moves())
        );
        let c = random_positions(&RandomPositions { seed: 6, ..s }).unwrap();
        assert!(a.iter().zip(&c).any(|(x, y)| x.to_sfen() != y.to_sfen()));
        // One ply from the start: 30 moves, so 31 distinct positions at most with ply 0..=1.
        let few = RandomPositions {
            count: 40,
            seed: 1,
            min_ply: 0,
            max_ply: 1,
        };
        assert!(
            random_positions(&few)
                .unwrap_err()
                .contains("found only 31")
        );
    }
}
