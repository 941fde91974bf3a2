//! When a search ends: the simulation budget, a wall-clock limit and an external stop.
//!
//! [`SearchLimits`] is what a caller asks for; [`SearchControl`] is the shared, lock-free
//! state the search polls between descents, which another thread may change while the search
//! runs (USI `stop` sets the stop flag; `ponderhit` turns an open-ended ponder search into a
//! timed one by setting a deadline and making the budget final).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a search may spend.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchLimits {
    /// The simulation budget `n` that the Sequential Halving schedule is laid out for
    /// (at least 1).
    pub simulations: u32,
    /// Stop once the budget is spent. `false` keeps searching past it — the schedule's last
    /// phase continues — until stopped from outside (`go infinite`, pondering).
    pub stop_at_budget: bool,
    /// Stop when this much time has passed since the [`SearchControl`] was created.
    pub time_limit: Option<Duration>,
    /// How often the search reports progress to its callback (`None`: never).
    pub report_every: Option<Duration>,
    /// Search only these root moves (USI `go searchmoves`); the legal ones among them, or all
    /// legal moves when none of them is legal. `None`: every legal move.
    pub searchmoves: Option<Vec<crate::shogi::Move>>,
}

impl SearchLimits {
    /// A fixed budget of `n` simulations, no clock.
    pub fn simulations(n: u32) -> SearchLimits {
        SearchLimits {
            simulations: n.max(1),
            stop_at_budget: true,
            time_limit: None,
            report_every: None,
            searchmoves: None,
        }
    }
}

/// Shared stop state, polled by the search between descents.
#[derive(Debug)]
pub struct SearchControl {
    start: Instant,
    stop: AtomicBool,
    stop_at_budget: AtomicBool,
    /// Microseconds after `start`; `u64::MAX` for none.
    deadline_us: AtomicU64,
}

impl SearchControl {
    /// Starts the clock now, with the limits' budget rule and time limit.
    pub fn new(limits: &SearchLimits) -> SearchControl {
        let c = SearchControl {
            start: Instant::now(),
            stop: AtomicBool::new(false),
            stop_at_budget: AtomicBool::new(limits.stop_at_budget),
            deadline_us: AtomicU64::new(u64::MAX),
        };
        c.set_time_limit(limits.time_limit);
        c
    }

    pub fn start(&self) -> Instant {
        self.start
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Ends the search at its next check (USI `stop`).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// The stop flag itself, for a search that polls a flag (the mate solver).
    pub fn stop_flag(&self) -> &AtomicBool {
        &self.stop
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sets (or clears) the time limit, measured from the control's creation.
    pub fn set_time_limit(&self, limit: Option<Duration>) {
        let us = limit.map_or(u64::MAX, |d| {
            u64::try_from(d.as_micros()).unwrap_or(u64::MAX - 1)
        });
        self.deadline_us.store(us, Ordering::SeqCst);
    }

    pub fn time_limit(&self) -> Option<Duration> {
        match self.deadline_us.load(Ordering::Relaxed) {
            u64::MAX => None,
            us => Some(Duration::from_micros(us)),
        }
    }

    pub fn set_stop_at_budget(&self, yes: bool) {
        self.stop_at_budget.store(yes, Ordering::SeqCst);
    }

    pub fn stops_at_budget(&self) -> bool {
        self.stop_at_budget.load(Ordering::Relaxed)
    }

    /// Whether a search that has completed `done` simulations (and has `in_flight` more
    /// queued) of a budget of `budget` should start no further descent.
    pub fn should_stop(&self, done: u64, in_flight: u64, budget: u64) -> bool {
        if self.is_stopped() {
            return true;
        }
        if self.stops_at_budget() && done + in_flight >= budget {
            return true;
        }
        let deadline = self.deadline_us.load(Ordering::Relaxed);
        deadline != u64::MAX && self.start.elapsed().as_micros() >= u128::from(deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_stop_and_deadline() {
        let limits = SearchLimits::simulations(10);
        let c = SearchControl::new(&limits);
        assert!(!c.should_stop(9, 0, 10));
        assert!(c.should_stop(9, 1, 10));
        c.set_stop_at_budget(false);
        assert!(!c.should_stop(100, 0, 10));
        c.set_time_limit(Some(Duration::ZERO));
        assert!(c.should_stop(0, 0, 10));
        c.set_time_limit(None);
        assert!(!c.should_stop(0, 0, 10));
        c.stop();
        assert!(c.should_stop(0, 0, 10));
        assert_eq!(SearchLimits::simulations(0).simulations, 1);
    }
}
