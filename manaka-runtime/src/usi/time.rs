//! Time management: from the clock in `go` to a soft target and a hard limit for one move.
//!
//! - `soft` is the time the move should take. With `Simulations 0` the engine turns it into
//!   a simulation budget (measured simulations per second × soft), so the Sequential Halving
//!   schedule is laid out for the time actually available and finishes near it.
//! - `hard` is the limit the search never passes, whatever the budget (an estimate of the
//!   speed may be wrong, a fixed `Simulations` may be too large for the clock).
//!
//! With `R` our remaining main time, `I` our increment, `B` the byoyomi, `M` an estimate of
//! the moves we still have to play (`60 − ply/2`, at least 16) and `O` the `MoveOverhead`:
//!
//! ```text
//! soft = R/M + 3I/4 + B
//! hard = min(4R/M + I + B, R + B)
//! ```
//!
//! each then reduced by the overhead — `x − O`, or `x/2` when `x < 2·O` — so a small byoyomi
//! still gets thought. Byoyomi alone (R = 0) gives `soft = hard = B − O`: the whole byoyomi.
//! Sudden death (B = 0) never counts on the increment for the hard limit beyond `I`, and
//! never spends more than `R − O`. `go movetime T` gives `soft = hard = T − O`.

use super::command::GoParams;
use std::time::Duration;

/// The time a move may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimePlan {
    pub soft: Duration,
    pub hard: Duration,
}

/// The part of `x` ms usable after keeping `overhead` ms for communication.
pub fn usable(x: u64, overhead: u64) -> u64 {
    if x >= 2 * overhead {
        x - overhead
    } else {
        x / 2
    }
}

/// How many more moves we expect to play at SFEN move number `ply`.
pub fn moves_left(ply: u32) -> u64 {
    60u64.saturating_sub(u64::from(ply) / 2).max(16)
}

/// The plan for a `go` with a clock, for the side `black_to_move`; `None` when `go` has no
/// clock (no main time, increment, byoyomi or movetime for us).
pub fn plan(go: &GoParams, black_to_move: bool, ply: u32, overhead: u64) -> Option<TimePlan> {
    if let Some(t) = go.movetime {
        let t = Duration::from_millis(usable(t, overhead));
        return Some(TimePlan { soft: t, hard: t });
    }
    let (time, inc) = if black_to_move {
        (go.btime, go.binc)
    } else {
        (go.wtime, go.winc)
    };
    let inc = inc.unwrap_or(0);
    let byoyomi = go.byoyomi.unwrap_or(0);
    if time.is_none() && inc == 0 && byoyomi == 0 {
        return None;
    }
    let r = time.unwrap_or(0);
    let base = r / moves_left(ply);
    let soft = base + inc * 3 / 4 + byoyomi;
    let hard = (4 * base + inc + byoyomi).min(r + byoyomi);
    let hard = usable(hard, overhead);
    let soft = usable(soft, overhead).min(hard);
    Some(TimePlan {
        soft: Duration::from_millis(soft),
        hard: Duration::from_millis(hard),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(f: impl FnOnce(&mut GoParams)) -> GoParams {
        let mut g = GoParams::default();
        f(&mut g);
        g
    }

    fn ms(p: TimePlan) -> (u128, u128) {
        (p.soft.as_millis(), p.hard.as_millis())
    }

    #[test]
    fn byoyomi_only_uses_the_whole_byoyomi() {
        let g = go(|g| {
            g.btime = Some(0);
            g.wtime = Some(0);
            g.byoyomi = Some(1000);
        });
        assert_eq!(ms(plan(&g, true, 1, 100).unwrap()), (900, 900));
        // A tiny byoyomi still gets half of itself.
        let g = go(|g| g.byoyomi = Some(150));
        assert_eq!(ms(plan(&g, false, 1, 100).unwrap()), (75, 75));
    }

    #[test]
    fn main_time_with_byoyomi() {
        let g = go(|g| {
            g.btime = Some(60_000);
            g.wtime = Some(1);
            g.byoyomi = Some(1000);
        });
        // M = 60 at the start: base 1000; soft 2000 − 100; hard min(5000, 61000) − 100.
        assert_eq!(ms(plan(&g, true, 1, 100).unwrap()), (1900, 4900));
        // White's clock is nearly empty: the byoyomi is what it has.
        assert_eq!(ms(plan(&g, false, 2, 100).unwrap()), (900, 900));
    }

    #[test]
    fn sudden_death_with_and_without_increment() {
        let g = go(|g| {
            g.btime = Some(10_000);
            g.binc = Some(100);
        });
        // base 166; soft 166 + 75 − 100 = 141; hard min(664 + 100, 10000) − 100 = 664.
        assert_eq!(ms(plan(&g, true, 1, 100).unwrap()), (141, 664));
        // Late in the game M = 16.
        assert_eq!(moves_left(200), 16);
        // Almost no time left: never more than the clock holds.
        let g = go(|g| g.btime = Some(300));
        let p = plan(&g, true, 100, 100).unwrap();
        assert!(p.hard.as_millis() < 300 && p.soft <= p.hard);
        // Zero time and nothing else: answer at once.
        let g = go(|g| g.btime = Some(0));
        assert_eq!(ms(plan(&g, true, 1, 100).unwrap()), (0, 0));
    }

    #[test]
    fn movetime_and_no_clock() {
        let g = go(|g| g.movetime = Some(500));
        assert_eq!(ms(plan(&g, true, 1, 100).unwrap()), (400, 400));
        assert_eq!(plan(&GoParams::default(), true, 1, 100), None);
        assert_eq!(plan(&go(|g| g.nodes = Some(10)), true, 1, 100), None);
    }
}
