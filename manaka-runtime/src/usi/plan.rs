//! What one `go` searches and how its result is reported: the root moves (`searchmoves`),
//! the move limit (`MaxMovesToDraw`: the last two plies decided exactly, the tree capped at
//! the game's end, where its leaves are draws), the depth cap, the simulation budget and the clock (time.rs).

use super::command::GoParams;
use super::game::{self, LastPlies};
use super::info::{Output, Scoring};
use super::options::EngineOptions;
use super::time;
use crate::search::{SearchLimits, cp_from_value};
use crate::shogi::{Color, Move, Position};
use std::time::Duration;

/// The budget when nothing else sets one: no `Simulations`, no clock, speed unknown.
pub const DEFAULT_SIMULATIONS: u32 = 800;
/// The smallest budget the clock may set (`Simulations 0`).
pub const MIN_AUTO_SIMULATIONS: u32 = 8;
/// The largest budget the clock may set.
pub const MAX_AUTO_SIMULATIONS: u32 = 50_000_000;
/// `go infinite` with `Simulations 0` lays its schedule out for this much search time at the
/// measured speed (after it, the last two candidates keep being refined).
pub const INFINITE_SCHEDULE: Duration = Duration::from_secs(10);
/// A move with a single legal reply spends at most this many simulations (for a score).
pub const FORCED_MOVE_SIMULATIONS: u32 = 8;
/// How often a running search prints `info`.
pub const INFO_EVERY: Duration = Duration::from_millis(1000);

/// What [`plan`] decided for one `go`.
pub struct Plan {
    pub limits: SearchLimits,
    /// The hard limit a `ponderhit` starts.
    pub ponder_hard: Option<Duration>,
    pub scoring: Scoring,
    /// One move allowed.
    pub forced: bool,
    pub max_depth: u16,
}

/// What a `go` in `position` searches, and how its result is reported; `nps` is the measured
/// speed (simulations per second), `out` takes the `info string`s the decisions print.
pub fn plan(
    options: &EngineOptions,
    nps: Option<f64>,
    out: &Output,
    go: &GoParams,
    position: &Position,
) -> Plan {
    let legal = position.legal_moves();
    let mut searchmoves = searchmoves(out, go, position);
    let allowed = searchmoves.clone().unwrap_or_else(|| legal.clone());
    let mut scoring = Scoring {
        draw_cp: cp_from_value(options.draw_value(position.side_to_move())),
        plies_left: game::plies_left(options.max_moves_to_draw, position),
        settled_draw: false,
        multipv: options.multipv,
    };
    let mut max_depth = go
        .depth
        .map_or(options.max_depth, |d| d.clamp(1, 1024) as u16);
    let mut quick = allowed.len() == 1;
    if let Some(k) = scoring.plies_left {
        // Nothing after the game's last ply is part of the game.
        max_depth = max_depth.min(k.min(1024) as u16);
        let limit = options.max_moves_to_draw;
        match game::last_plies(position, k, &allowed) {
            LastPlies::Draw(moves) => {
                out.info_string(&format!(
                    "MaxMovesToDraw {limit}: {k} plies left and no mate can come before \
                     the limit: the game is drawn"
                ));
                scoring.settled_draw = true;
                quick = true;
                if moves.len() < legal.len() {
                    searchmoves = Some(moves);
                }
            }
            LastPlies::Lost => out.info_string(&format!(
                "MaxMovesToDraw {limit}: {k} plies left and every move allows a mate \
                 before the limit"
            )),
            LastPlies::Mate | LastPlies::Open => {}
        }
    }
    let (limits, ponder_hard) = limits(options, nps, go, position, quick, searchmoves);
    Plan {
        limits,
        ponder_hard,
        scoring,
        forced: allowed.len() == 1,
        max_depth,
    }
}

/// The legal moves of `go searchmoves`; the others are named in an `info string` and
/// left out, and when none is legal every legal move is searched (saying so).
fn searchmoves(out: &Output, go: &GoParams, position: &Position) -> Option<Vec<Move>> {
    let words = go.searchmoves.as_ref()?;
    let mut moves = Vec::new();
    let mut refused = Vec::new();
    for w in words {
        match position.parse_usi_move(w) {
            Ok(m) if !moves.contains(&m) => moves.push(m),
            Ok(_) => {}
            Err(_) => refused.push(w.as_str()),
        }
    }
    if !refused.is_empty() {
        out.info_string(&format!(
            "warning: go searchmoves: {} not legal here; left out",
            refused.join(" ")
        ));
    }
    if moves.is_empty() {
        out.info_string(
            "warning: go searchmoves: none of the moves is legal; searching every legal move",
        );
        return None;
    }
    Some(moves)
}

/// The search limits for `go` in `position` (`quick`: a forced move or a settled draw,
/// answered after a handful of simulations unless `go nodes` asks for more), and the hard
/// limit that a `ponderhit` would start.
fn limits(
    options: &EngineOptions,
    nps: Option<f64>,
    go: &GoParams,
    position: &Position,
    quick: bool,
    searchmoves: Option<Vec<Move>>,
) -> (SearchLimits, Option<Duration>) {
    let black = position.side_to_move() == Color::Black;
    let plan = time::plan(go, black, position.ply(), &options.time_settings());
    let open_ended = go.infinite || go.ponder;
    let from_speed = |t: Duration| {
        nps.map(|n| {
            (n * t.as_secs_f64()).clamp(
                f64::from(MIN_AUTO_SIMULATIONS),
                f64::from(MAX_AUTO_SIMULATIONS),
            ) as u32
        })
    };
    let mut simulations = if let Some(n) = go.nodes {
        n.clamp(1, u64::from(u32::MAX)) as u32
    } else if options.simulations > 0 {
        options.simulations
    } else if go.infinite {
        from_speed(INFINITE_SCHEDULE).unwrap_or(DEFAULT_SIMULATIONS)
    } else if let Some(p) = plan {
        from_speed(p.soft).unwrap_or(DEFAULT_SIMULATIONS)
    } else {
        DEFAULT_SIMULATIONS
    };
    // `go nodes` is an explicit request (analysis); a game's forced move saves its clock.
    if !open_ended && quick && go.nodes.is_none() {
        simulations = simulations.min(FORCED_MOVE_SIMULATIONS);
    }
    // An estimated budget may be wrong: the hard limit guards the clock. With the speed
    // unknown (the first timed move), the default budget is laid out and the search runs
    // on past it until the soft target.
    let calibrating =
        plan.is_some() && options.simulations == 0 && go.nodes.is_none() && nps.is_none() && !quick;
    let time_limit = plan.map(|p| if calibrating { p.soft } else { p.hard });
    let limits = SearchLimits {
        simulations,
        stop_at_budget: !open_ended && !calibrating,
        time_limit: if open_ended { None } else { time_limit },
        report_every: Some(INFO_EVERY),
        searchmoves,
    };
    (limits, if go.ponder { time_limit } else { None })
}
