//! Time management: from the clock in `go` to a soft target and a hard limit for one move.
//!
//! - `soft` is the time the move should take. With `Simulations 0` the engine turns it into
//!   a simulation budget (measured simulations per second × soft), so the Sequential Halving
//!   schedule is laid out for the time actually available and finishes near it.
//! - `hard` is the limit the search never passes, whatever the budget (an estimate of the
//!   speed may be wrong, a fixed `Simulations` may be too large for the clock).
//!
//! With `R` our remaining main time, `I` our increment, `B` the byoyomi, `M` an estimate of
//! the moves we still have to play (`60 − ply/2`, at least 16; with `go movestogo N`, at
//! most `N + 1`, keeping one move's share in reserve for the control), `O` the
//! `MoveOverhead`, `D₁` the `NetworkDelay` and `D₂` the `NetworkDelay2`:
//!
//! ```text
//! soft = R/M + 3I/4 + B                 reduced by O + D₁
//! hard = min(4R/M + I + B, R + B)       reduced by O + max(D₁, D₂)
//! soft = min(max(soft, MinimumThinkingTime), hard)
//! ```
//!
//! "Reduced by x" is `t − x`, or `t/2` when `t < 2x`, so a small byoyomi still gets thought.
//! The two delays are YaneuraOu's: `NetworkDelay` is the delay expected on every move (taken
//! off the time the move is planned to take), `NetworkDelay2` the larger margin kept where
//! running out loses the game — the hard limit, which with byoyomi alone is the end of the
//! byoyomi. `MoveOverhead` is kept off both. Byoyomi alone (R = 0) gives `soft = hard = B −
//! O − max(D₁, D₂)`: the whole byoyomi. Sudden death (B = 0) never counts on the increment for
//! the hard limit beyond `I`, and never spends more than `R` minus the margin. `go movetime
//! T` gives `soft = hard = T` reduced by the hard margin. `MinimumThinkingTime` raises the
//! target, never the hard limit.

use super::command::GoParams;
use std::time::Duration;

/// The time a move may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimePlan {
    pub soft: Duration,
    pub hard: Duration,
}

/// The engine's clock options, in milliseconds (`MoveOverhead`, `NetworkDelay`,
/// `NetworkDelay2`, `MinimumThinkingTime`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeSettings {
    pub move_overhead: u64,
    pub network_delay: u64,
    pub network_delay2: u64,
    pub minimum_thinking: u64,
}

impl TimeSettings {
    /// Only a `MoveOverhead` (the other settings 0).
    pub fn overhead(ms: u64) -> TimeSettings {
        TimeSettings {
            move_overhead: ms,
            ..TimeSettings::default()
        }
    }

    /// What is kept off the target time.
    pub fn soft_margin(&self) -> u64 {
        self.move_overhead.saturating_add(self.network_delay)
    }

    /// What is kept off the hard limit (never less than the soft margin).
    pub fn hard_margin(&self) -> u64 {
        self.move_overhead
            .saturating_add(self.network_delay.max(self.network_delay2))
    }
}

/// The part of `x` ms usable after keeping `overhead` ms for communication.
pub fn usable(x: u64, overhead: u64) -> u64 {
    if x >= overhead.saturating_mul(2) {
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
pub fn plan(
    go: &GoParams,
    black_to_move: bool,
    ply: u32,
    settings: &TimeSettings,
) -> Option<TimePlan> {
    if let Some(t) = go.movetime {
        let t = Duration::from_millis(usable(t, settings.hard_margin()));
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
    let mut m = moves_left(ply);
    if let Some(n) = go.movestogo.filter(|&n| n > 0) {
        m = m.min(n.saturating_add(1));
    }
    let base = r / m;
    let soft = base.saturating_add(inc * 3 / 4).saturating_add(byoyomi);
    let hard = base
        .saturating_mul(4)
        .saturating_add(inc)
        .saturating_add(byoyomi)
        .min(r.saturating_add(byoyomi));
    let hard = usable(hard, settings.hard_margin());
    let soft = usable(soft, settings.soft_margin())
        .max(settings.minimum_thinking)
        .min(hard);
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

    /// `MoveOverhead` 100, nothing else.
    const O: TimeSettings = TimeSettings {
        move_overhead: 100,
        network_delay: 0,
        network_delay2: 0,
        minimum_thinking: 0,
    };

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
        assert_eq!(ms(plan(&g, true, 1, &O).unwrap()), (900, 900));
        // A tiny byoyomi still gets half of itself.
        let g = go(|g| g.byoyomi = Some(150));
        assert_eq!(ms(plan(&g, false, 1, &O).unwrap()), (75, 75));
    }

    #[test]
    fn main_time_with_byoyomi() {
        let g = go(|g| {
            g.btime = Some(60_000);
            g.wtime = Some(1);
            g.byoyomi = Some(1000);
        });
        // M = 60 at the start: base 1000; soft 2000 − 100; hard min(5000, 61000) − 100.
        assert_eq!(ms(plan(&g, true, 1, &O).unwrap()), (1900, 4900));
        // White's clock is nearly empty: the byoyomi is what it has.
        assert_eq!(ms(plan(&g, false, 2, &O).unwrap()), (900, 900));
    }

    #[test]
    fn sudden_death_with_and_without_increment() {
        let g = go(|g| {
            g.btime = Some(10_000);
            g.binc = Some(100);
        });
        // base 166; soft 166 + 75 − 100 = 141; hard min(664 + 100, 10000) − 100 = 664.
        assert_eq!(ms(plan(&g, true, 1, &O).unwrap()), (141, 664));
        // Late in the game M = 16.
        assert_eq!(moves_left(200), 16);
        // Almost no time left: never more than the clock holds.
        let g = go(|g| g.btime = Some(300));
        let p = plan(&g, true, 100, &O).unwrap();
        assert!(p.hard.as_millis() < 300 && p.soft <= p.hard);
        // Zero time and nothing else: answer at once.
        let g = go(|g| g.btime = Some(0));
        assert_eq!(ms(plan(&g, true, 1, &O).unwrap()), (0, 0));
    }

    #[test]
    fn movetime_and_no_clock() {
        let g = go(|g| g.movetime = Some(500));
        assert_eq!(ms(plan(&g, true, 1, &O).unwrap()), (400, 400));
        assert_eq!(plan(&GoParams::default(), true, 1, &O), None);
        assert_eq!(plan(&go(|g| g.nodes = Some(10)), true, 1, &O), None);
    }

    #[test]
    fn movestogo_spreads_the_clock_over_the_moves_to_the_control() {
        let g = go(|g| {
            g.btime = Some(1000);
            g.wtime = Some(1000);
            g.movestogo = Some(10);
        });
        // M = min(60, 11): base 90; soft 90/2 (< 2·100); hard 360 − 100.
        assert_eq!(ms(plan(&g, true, 1, &O).unwrap()), (45, 260));
        // movestogo 0 is no information.
        let g0 = go(|g| {
            g.btime = Some(60_000);
            g.movestogo = Some(0);
        });
        assert_eq!(ms(plan(&g0, true, 1, &O).unwrap()), (900, 3900));
        // More moves to the control than the estimate: the estimate stands.
        let g = go(|g| {
            g.btime = Some(60_000);
            g.movestogo = Some(100);
        });
        assert_eq!(ms(plan(&g, true, 1, &O).unwrap()), (900, 3900));
    }

    #[test]
    fn network_delays_and_minimum_thinking_time() {
        let byoyomi = go(|g| {
            g.btime = Some(0);
            g.byoyomi = Some(3000);
        });
        let s = TimeSettings {
            move_overhead: 100,
            network_delay: 120,
            network_delay2: 1120,
            minimum_thinking: 0,
        };
        assert_eq!((s.soft_margin(), s.hard_margin()), (220, 1220));
        // Thinking to the end of the byoyomi keeps the larger margin.
        assert_eq!(ms(plan(&byoyomi, true, 1, &s).unwrap()), (1780, 1780));
        // With main time the target keeps O + D1, the hard limit O + max(D1, D2).
        let main = go(|g| {
            g.btime = Some(60_000);
            g.byoyomi = Some(3000);
        });
        // base 1000: soft 4000 − 220; hard min(7000, 63000) − 1220.
        assert_eq!(ms(plan(&main, true, 1, &s).unwrap()), (3780, 5780));
        // NetworkDelay2 below NetworkDelay: the hard margin is still NetworkDelay.
        let s2 = TimeSettings {
            network_delay2: 0,
            ..s
        };
        assert_eq!(s2.hard_margin(), 220);
        // MinimumThinkingTime raises the target, never past the hard limit.
        let short = go(|g| g.btime = Some(10_000));
        let min = TimeSettings {
            minimum_thinking: 2000,
            ..TimeSettings::overhead(100)
        };
        // base 166: soft 83 → raised to 2000, but the hard limit is 664 − 100.
        assert_eq!(ms(plan(&short, true, 1, &min).unwrap()), (564, 564));
        let long = go(|g| g.btime = Some(600_000));
        // base 10000: soft 9900 is above the minimum already.
        assert_eq!(ms(plan(&long, true, 1, &min).unwrap()).0, 9900);
        let mid = go(|g| g.btime = Some(60_000));
        // base 1000: soft 900 → 2000; hard 3900.
        assert_eq!(ms(plan(&mid, true, 1, &min).unwrap()), (2000, 3900));
        // movetime keeps the hard margin.
        let mt = go(|g| g.movetime = Some(5000));
        assert_eq!(ms(plan(&mt, true, 1, &s).unwrap()), (3780, 3780));
    }
}
