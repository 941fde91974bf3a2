//! One self-play game: Gumbel search every move, the rules judged by the game loop, the game
//! recorded for HCPE3.

use crate::data::hcpe3::{GameOutcome, Hcpe3Game, Hcpe3Move, eval_from_value};
use crate::data::records::GameResult;
use crate::eval::Evaluator;
use crate::random::SplitMix64;
use crate::search::{
    GumbelSearch, InteriorRule, Outcome, RootNoise, SearchConfig, SearchLimits, SearchResult,
};
use crate::shogi::{EnteringKingRule, Move, Position, Repetition};

/// The root mate search's node limit in self-play (see `SearchConfig::root_mate_nodes`).
pub const SELFPLAY_ROOT_MATE_NODES: u64 = 1_000;

/// The rules and search settings of a game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameSettings {
    /// Simulations per move: the full Sequential Halving schedule is spent every move.
    pub simulations: u32,
    pub max_considered: u32,
    /// Scale of the root's Gumbel noise (> 0 in self-play, so games differ).
    pub gumbel_scale: f64,
    /// A game that reaches this many moves without ending is a draw.
    pub max_moves: u32,
    /// The entering-king declaration rule (the side to move declares as soon as it may).
    pub entering_king: EnteringKingRule,
    /// Evaluations each game's search caches (by position key).
    pub cache_entries: usize,
    /// When the side to move resigns (`None`: every game is played out).
    pub resign: Option<Resign>,
}

/// Resigning hopeless games saves the moves that teach little (KataGo and lc0 self-play do
/// the same); a share of games is played out anyway so that the cost — resignations that
/// would have been wrong — is measured, not assumed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resign {
    /// The side to move resigns when the search's win probability for it, (1 + v) / 2 of
    /// the root value v, is below this.
    pub below: f64,
    /// The share of games (chosen by game number, from the run's seed) played out whatever
    /// their value, in which a resignation is only noted.
    pub check_share: f64,
}

/// Salt of the stream that picks the games played out for the resignation check.
const RESIGN_STREAM: u64 = 0x7265_7369_676e_2121; // "resign!!"

/// The largest visit count written; the improved policy is scaled so that its largest
/// entry gets this many.
pub const VISIT_SCALE: f64 = 65535.0;

/// Candidates for HCPE3 from a search: each legal root move with a count proportional to the
/// improved policy π' (the largest π' gets [`VISIT_SCALE`]); moves whose count rounds to 0
/// are left out. A reader normalising the counts recovers π' to within 1/65535 of its
/// largest entry.
pub fn candidates(result: &SearchResult) -> Vec<(Move, u16)> {
    let max = result
        .root_moves
        .iter()
        .map(|m| m.improved_policy)
        .fold(0.0f64, f64::max);
    if max.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || !max.is_finite() {
        return result
            .best_move
            .map(|m| vec![(m, u16::MAX)])
            .unwrap_or_default();
    }
    result
        .root_moves
        .iter()
        .filter_map(|m| {
            let c = (m.improved_policy / max * VISIT_SCALE).round();
            (c >= 1.0).then(|| (m.mv, c.min(VISIT_SCALE) as u16))
        })
        .collect()
}

/// How a played game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The side to move had no legal move.
    Checkmate,
    /// The side to move declared an entering-king win.
    Declaration,
    /// Fourfold repetition: a draw, or a loss for the side that gave perpetual check.
    Repetition(Repetition),
    /// The move limit: a draw.
    MaxMoves,
    /// The side to move resigned (its win probability was below the threshold).
    Resignation,
}

/// Whether the game is over in `pos` (which carries the game as its history) after
/// `moves_played` moves, and how: fourfold repetition (a draw, or a win for the side that
/// was perpetually checked), the side to move mated, the side to move able to declare an
/// entering-king win (it does), or the move limit reached (a draw) — in that order.
pub fn judge(
    pos: &Position,
    moves_played: usize,
    settings: &GameSettings,
) -> Option<(Ending, GameResult)> {
    let stm = pos.side_to_move();
    if let Some(rep) = pos.sennichite() {
        let result = match rep {
            Repetition::Win => GameResult::win_for(stm),
            Repetition::Lose => GameResult::win_for(stm.flip()),
            _ => GameResult::Draw,
        };
        return Some((Ending::Repetition(rep), result));
    }
    if !pos.has_legal_moves() {
        return Some((Ending::Checkmate, GameResult::win_for(stm.flip())));
    }
    if pos.can_declare_win(settings.entering_king) {
        return Some((Ending::Declaration, GameResult::win_for(stm)));
    }
    if moves_played >= settings.max_moves as usize {
        return Some((Ending::MaxMoves, GameResult::Draw));
    }
    None
}

/// A finished game and its statistics.
pub struct PlayedGame {
    pub record: Hcpe3Game,
    pub ending: Ending,
    pub simulations: u64,
    /// In a game played out for the resignation check: `Some(true)` if the side that would
    /// first have resigned did lose, `Some(false)` if it drew or won (a resignation would have
    /// been wrong); `None` if no resignation was due or the game was not a check game.
    pub resign_check: Option<bool>,
}

/// Plays game number `index` of a run seeded `seed` from `start` (a position without
/// history), searching with `search` and `evaluator`. The Gumbel noise of move `k` is drawn
/// from a seed that depends only on `(seed, index, k)`, so a game is the same whichever
/// thread plays it and whatever else is in the batch. `Err` if the evaluator failed.
pub fn play(
    start: &Position,
    settings: &GameSettings,
    seed: u64,
    index: u64,
    search: &mut GumbelSearch,
    evaluator: &mut dyn Evaluator,
    failed: &dyn Fn() -> bool,
) -> Result<PlayedGame, String> {
    let mut rng = SplitMix64::stream(seed, index);
    let mut pos = start.clone();
    let mut moves = Vec::new();
    let mut simulations = 0u64;
    let checked = settings
        .resign
        .is_some_and(|r| SplitMix64::stream(seed ^ RESIGN_STREAM, index).unit() < r.check_share);
    let mut would_resign = None;
    search.clear_cache();
    let (ending, result) = loop {
        if let Some(end) = judge(&pos, moves.len(), settings) {
            break end;
        }
        let config = SearchConfig {
            max_considered: settings.max_considered,
            noise: RootNoise::Sampled {
                scale: settings.gumbel_scale,
                seed: Some(rng.next_u64()),
            },
            batch_size: 1,
            entering_king: Some(settings.entering_king),
            cache_entries: settings.cache_entries,
            // A short root mate search: a mate found is an exact target, and a node limit
            // (no clock) keeps games reproducible; a small one keeps self-play fast.
            root_mate_nodes: SELFPLAY_ROOT_MATE_NODES,
            // SPEC §8's rule: self-play budgets are small, where it is exact (docs/search.md).
            interior: InteriorRule::Gumbel,
            ..SearchConfig::default()
        };
        search.set_config(config);
        let r = search.run(
            &pos,
            evaluator,
            &SearchLimits::simulations(settings.simulations),
        );
        if failed() {
            return Err("the batch evaluator stopped answering".into());
        }
        simulations += r.stats.simulations;
        let mv = match (r.outcome, r.best_move) {
            (_, Some(m)) => m,
            // Declaration and no-move are judged above; a search that still has no move is
            // a bug worth stopping for.
            (o, None) => {
                return Err(format!(
                    "search returned no move ({o:?}) in {}",
                    pos.to_sfen()
                ));
            }
        };
        if let Some(resign) = settings.resign {
            let stm = pos.side_to_move();
            if (1.0 + r.root_value) * 0.5 < resign.below {
                if !checked {
                    break (Ending::Resignation, GameResult::win_for(stm.flip()));
                }
                would_resign.get_or_insert(stm);
            }
        }
        let cands = if matches!(r.outcome, Outcome::MateInOne | Outcome::MateFound) {
            vec![(mv, u16::MAX)]
        } else {
            candidates(&r)
        };
        moves.push(Hcpe3Move::new(mv, eval_from_value(r.root_value), &cands));
        pos.do_move(mv);
    };
    let outcome = GameOutcome {
        result,
        sennichite: matches!(ending, Ending::Repetition(_)),
        nyugyoku: ending == Ending::Declaration,
        max_moves: ending == Ending::MaxMoves,
    };
    let mut record = Hcpe3Game::new(start, outcome).map_err(|e| format!("start position: {e}"))?;
    record.moves = moves;
    Ok(PlayedGame {
        record,
        ending,
        simulations,
        resign_check: would_resign.map(|side| result == GameResult::win_for(side.flip())),
    })
}
