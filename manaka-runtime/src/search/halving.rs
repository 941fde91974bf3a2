//! The Sequential Halving visit schedule at the root (Karnin, Koren, Somekh 2013; the paper
//! §3, "Sequential Halving"), exactly as mctx's `seq_halving.get_sequence_of_considered_visits`
//! tabulates it.
//!
//! For simulation `i` the schedule gives a *considered visit count*: the root may only send
//! simulation `i` to a move whose visit count equals it, and among those it takes the one
//! with the best `g + logit + σ(q)`. Elimination is therefore implicit — a move that lost a
//! round is never again at the considered count — and no survivor set is stored (the seed's
//! design). With `m` considered moves and a budget of `n` simulations: phases halve the
//! considered set (never below 2); each phase gives every considered move
//! `max(1, ⌊n / (⌈log2 m⌉ · k)⌋)` more visits, `k` the phase's considered count. For
//! `m = 16, n = 32`: sixteen 0s, eight 1s, four 2s, four 3s (SPEC §8).
//!
//! Past the budget the schedule simply continues its last phase (two moves, one visit each
//! per round), so an unbounded search (`go infinite`, pondering) keeps refining the final
//! pair; the first `n` entries are mctx's table unchanged.

/// One phase: `considered` moves each get `rounds` more visits, starting at `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Phase {
    /// Simulation index at which the phase starts.
    start: u64,
    considered: u64,
    rounds: u64,
    base: u64,
}

/// The schedule for `m` considered moves and a budget of `n` simulations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequentialHalving {
    considered: u32,
    budget: u32,
    /// The phases up to and including the first with two considered moves (after it, every
    /// phase is the same two moves, so it extends without end).
    phases: Vec<Phase>,
}

impl SequentialHalving {
    /// `considered` is the number of moves the root considers, already limited to the number
    /// of legal moves (mctx: `min(max_num_considered_actions, num_valid_actions)`).
    pub fn new(considered: u32, budget: u32) -> SequentialHalving {
        let mut phases = Vec::new();
        if considered > 1 {
            let m = u64::from(considered);
            let n = u64::from(budget);
            // ⌈log2 m⌉, as mctx's int(math.ceil(math.log2(m))).
            let log2max = u64::from(64 - (m - 1).leading_zeros());
            let mut k = m;
            let mut start = 0;
            let mut base = 0;
            loop {
                let rounds = (n / (log2max * k)).max(1);
                phases.push(Phase {
                    start,
                    considered: k,
                    rounds,
                    base,
                });
                start += k * rounds;
                base += rounds;
                if k == 2 {
                    break;
                }
                k = (k / 2).max(2);
            }
        }
        SequentialHalving {
            considered,
            budget,
            phases,
        }
    }

    pub fn considered(&self) -> u32 {
        self.considered
    }

    pub fn budget(&self) -> u32 {
        self.budget
    }

    /// The visit count a move must have to receive simulation `index` (0-based).
    pub fn considered_visit(&self, index: u64) -> u32 {
        if self.phases.is_empty() {
            // One considered move (mctx: `range(num_simulations)`): it takes every visit.
            return u32::try_from(index).unwrap_or(u32::MAX);
        }
        // The last phase (two moves) continues past the budget.
        let phase = self
            .phases
            .iter()
            .rev()
            .find(|p| p.start <= index)
            .expect("phase 0 starts at 0");
        let v = phase.base + (index - phase.start) / phase.considered;
        u32::try_from(v).unwrap_or(u32::MAX)
    }

    /// The first `len` entries (mctx's table row when `len` = the budget).
    pub fn sequence(&self, len: usize) -> Vec<u32> {
        (0..len as u64).map(|i| self.considered_visit(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mctx's generator transcribed as a test oracle (the loop of
    /// `get_sequence_of_considered_visits`, untruncated when `extra` > 0).
    fn mctx_sequence(m: u64, n: u64, extra: u64) -> Vec<u32> {
        if m <= 1 {
            return (0..n + extra).map(|i| i as u32).collect();
        }
        let log2max = (m as f64).log2().ceil() as u64;
        let mut seq = Vec::new();
        let mut visits = vec![0u32; m as usize];
        let mut k = m;
        while (seq.len() as u64) < n + extra {
            let rounds = (n / (log2max * k)).max(1);
            for _ in 0..rounds {
                seq.extend_from_slice(&visits[..k as usize]);
                for v in visits.iter_mut().take(k as usize) {
                    *v += 1;
                }
            }
            k = (k / 2).max(2);
        }
        seq.truncate((n + extra) as usize);
        seq
    }

    #[test]
    fn spec_example_m16_n32() {
        let s = SequentialHalving::new(16, 32).sequence(32);
        let mut want = vec![0; 16];
        want.extend([1; 8]);
        want.extend([2; 4]);
        want.extend([3; 4]);
        assert_eq!(s, want);
    }

    #[test]
    fn equals_mctx_for_many_settings_and_extends_its_last_phase() {
        for m in 0..=40u64 {
            for n in [1u64, 2, 3, 7, 8, 16, 17, 32, 50, 64, 100, 200, 800] {
                let s = SequentialHalving::new(m as u32, n as u32);
                assert_eq!(
                    s.sequence(n as usize),
                    mctx_sequence(m, n, 0),
                    "m={m} n={n}"
                );
                // Past the budget: mctx's loop left running.
                assert_eq!(
                    s.sequence((n + 50) as usize),
                    mctx_sequence(m, n, 50),
                    "m={m} n={n} extended"
                );
            }
        }
    }
}
