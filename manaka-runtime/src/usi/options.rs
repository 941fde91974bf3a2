//! The engine's USI options: what `usi` announces, what `setoption` accepts, and how they
//! become a [`SearchConfig`].

use super::time::TimeSettings;
use crate::data::io::excerpt;
use crate::search::{InteriorRule, QTransform, RootNoise, SearchConfig, cache};

use crate::shogi::{Color, EnteringKingRule};

/// The most `MultiPV` lines (more than any position's legal moves, 593).
pub const MAX_MULTIPV: usize = 600;

pub use crate::loader::{Backend, Precision};

/// The engine's `BatchSize`: leaves gathered (with virtual losses) per evaluator call, also
/// with one thread. 8 against the sequential search (1), generation 6, one thread each:
/// 66–0–34 over 100 games at 300 ms and 26–1–13 over 40 at 1 s (docs/strength.md, "The
/// batched search with one thread"). `manaka go --batch-size` defaults to it too; the
/// library's [`SearchConfig::default`] stays 1, the sequential search that the mctx parity
/// tests pin.
pub const DEFAULT_BATCH_SIZE: usize = 8;

/// The `Backend` option's spelling of a backend: `cpu` is [`Backend::Auto`] (the compiled CPU
/// engine, or the reference evaluator for other shapes; docs/usi.md, docs/gpu.md).
pub const fn usi_backend_name(backend: Backend) -> &'static str {
    match backend {
        Backend::Auto => "cpu",
        b => b.name(),
    }
}

/// Option values (USI defaults on creation).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineOptions {
    /// Weight file, `builtin:material`, or empty for the embedded default network.
    pub eval_file: String,
    pub backend: Backend,
    /// `Precision`: the number format of a compiled engine's hidden-layer weights (f32, bf16,
    /// int8; docs/evaluator.md, "Precision"). Changing it reloads the network.
    pub precision: Precision,
    /// Simulation budget per move; 0 = as many as the clock allows.
    pub simulations: u32,
    pub max_considered: u32,
    pub batch_size: usize,
    pub virtual_loss: u32,
    pub policy_only: bool,
    pub gumbel_scale: f64,
    pub c_visit: f64,
    pub c_scale: f64,
    pub q_rescale: bool,
    /// `PuctC`: PUCT's exploration constant below the root (`InteriorRule::Puct::c`).
    pub puct_c: f64,
    /// `FpuReduction`: first-play urgency below the root, subtracted from an untried move's
    /// value as `r · √(visited prior)` (`search::puct::first_play_value`; 0: the mixed value).
    pub fpu_reduction: f64,
    /// `PolicyTemperature`: PUCT's prior below the root is `softmax(logit / T)`
    /// (`InteriorRule::Puct::policy_temperature`; 1: the network's own).
    pub policy_temperature: f64,
    /// Search threads on one shared tree, each with its own evaluator and batches
    /// (search/parallel.rs).
    pub threads: usize,
    /// Search memory in MiB: half bounds the tree (its recycled copy included, at most three
    /// quarters), a quarter for cached evaluations.
    pub hash_mb: usize,
    pub ponder: bool,
    /// `PonderOpponentPosition`: `go ponder` first searches the position before the expected
    /// reply (docs/usi.md, `go ponder`); off, it searches the pondered position only.
    pub ponder_opponent_position: bool,
    /// Milliseconds kept in reserve for communication on every move.
    pub move_overhead_ms: u64,
    pub entering_king: Option<EnteringKingRule>,
    pub max_depth: u16,
    /// The leaf mate check's longest mate in plies (0 off; `SearchConfig::leaf_mate_plies`).
    pub leaf_mate_plies: u32,
    /// The root mate search's node limit before each search (0 off).
    pub root_mate_nodes: u64,
    /// The mate solvers' tables (root mate search, `go mate`), MiB each.
    pub mate_hash_mb: usize,
    /// `MultiPV`: candidate lines reported (`info … multipv k …`), best first.
    pub multipv: usize,
    /// `DrawValueBlack` / `DrawValueWhite`: what a draw is worth to the engine when it plays
    /// Black / White, as a win rate in per mille (500: an even score). See [`Self::draw_value`].
    pub draw_value_black: u32,
    pub draw_value_white: u32,
    /// `ResignValue` in centipawns: resign when the score is at or below minus this;
    /// [`RESIGN_OFF`] never resigns (YaneuraOu's convention).
    pub resign_value: u32,
    /// `MaxMovesToDraw`: the game is drawn once this many moves have been played (0: off).
    pub max_moves_to_draw: u32,
    /// `NetworkDelay` (ms): kept off the move's target time, on top of `MoveOverhead`.
    pub network_delay_ms: u64,
    /// `NetworkDelay2` (ms): kept off the hard limit — the time the move may never pass —
    /// on top of `MoveOverhead` (at least `NetworkDelay`).
    pub network_delay2_ms: u64,
    /// `MinimumThinkingTime` (ms): the target time is at least this (never past the hard
    /// limit).
    pub minimum_thinking_ms: u64,
}

/// The `ResignValue` that never resigns.
pub const RESIGN_OFF: u32 = 99_999;

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            eval_file: String::new(),
            backend: Backend::Auto,
            precision: Precision::F32,
            simulations: 0,
            max_considered: 16,
            batch_size: DEFAULT_BATCH_SIZE,
            virtual_loss: 1,
            policy_only: false,
            gumbel_scale: 0.0,
            c_visit: 50.0,
            c_scale: 1.0,
            q_rescale: false,
            puct_c: InteriorRule::PLAY_PUCT.0,
            fpu_reduction: InteriorRule::PLAY_PUCT.1,
            policy_temperature: InteriorRule::PLAY_PUCT.2,
            threads: 1,
            hash_mb: 256,
            ponder: false,
            ponder_opponent_position: true,
            move_overhead_ms: 100,
            entering_king: Some(EnteringKingRule::Csa27),
            max_depth: 128,
            leaf_mate_plies: SearchConfig::default().leaf_mate_plies,
            root_mate_nodes: SearchConfig::default().root_mate_nodes,
            mate_hash_mb: 16,
            multipv: 1,
            draw_value_black: 500,
            draw_value_white: 500,
            resign_value: RESIGN_OFF,
            max_moves_to_draw: 0,
            network_delay_ms: 0,
            network_delay2_ms: 0,
            minimum_thinking_ms: 0,
        }
    }
}

/// The combo values of `EnteringKingRule`.
const EK_CSA27: &str = "CSARule27";
const EK_JSA24: &str = "JSARule24";
const EK_NONE: &str = "NoEnteringKing";

impl EngineOptions {
    /// The `option name … type …` lines answered to `usi`.
    pub fn usi_lines(&self) -> Vec<String> {
        let d = EngineOptions::default();
        let ek = match d.entering_king {
            Some(EnteringKingRule::Csa27) => EK_CSA27,
            Some(EnteringKingRule::Jsa24) => EK_JSA24,
            None => EK_NONE,
        };
        let check = |b: bool| if b { "true" } else { "false" };
        vec![
            "option name EvalFile type string default <empty>".to_string(),
            format!(
                "option name Backend type combo default {} var cpu var cuda var integer",
                usi_backend_name(d.backend)
            ),
            format!(
                "option name Precision type combo default {}{}",
                d.precision,
                Precision::ALL.map(|p| format!(" var {p}")).concat()
            ),
            format!(
                "option name Simulations type spin default {} min 0 max 100000000",
                d.simulations
            ),
            format!(
                "option name MaxConsidered type spin default {} min 1 max 600",
                d.max_considered
            ),
            format!(
                "option name BatchSize type spin default {} min 1 max 4096",
                d.batch_size
            ),
            format!(
                "option name VirtualLoss type spin default {} min 0 max 100",
                d.virtual_loss
            ),
            format!(
                "option name PolicyOnly type check default {}",
                check(d.policy_only)
            ),
            format!(
                "option name GumbelScale type string default {}",
                d.gumbel_scale
            ),
            format!("option name CVisit type string default {}", d.c_visit),
            format!("option name CScale type string default {}", d.c_scale),
            format!(
                "option name QRescale type check default {}",
                check(d.q_rescale)
            ),
            format!("option name PuctC type string default {}", d.puct_c),
            format!(
                "option name FpuReduction type string default {}",
                d.fpu_reduction
            ),
            format!(
                "option name PolicyTemperature type string default {}",
                d.policy_temperature
            ),
            format!(
                "option name Threads type spin default {} min 1 max 256",
                d.threads
            ),
            format!(
                "option name USI_Hash type spin default {} min 1 max 1048576",
                d.hash_mb
            ),
            format!(
                "option name USI_Ponder type check default {}",
                check(d.ponder)
            ),
            format!(
                "option name PonderOpponentPosition type check default {}",
                check(d.ponder_opponent_position)
            ),
            format!(
                "option name MoveOverhead type spin default {} min 0 max 10000",
                d.move_overhead_ms
            ),
            format!(
                "option name EnteringKingRule type combo default {ek} var {EK_CSA27} var {EK_JSA24} var {EK_NONE}"
            ),
            format!(
                "option name MaxDepth type spin default {} min 1 max 1024",
                d.max_depth
            ),
            format!(
                "option name LeafMatePlies type spin default {} min 0 max 7",
                d.leaf_mate_plies
            ),
            format!(
                "option name RootMateNodes type spin default {} min 0 max 100000000",
                d.root_mate_nodes
            ),
            format!(
                "option name MateHash type spin default {} min 1 max 4096",
                d.mate_hash_mb
            ),
            format!(
                "option name MultiPV type spin default {} min 1 max {MAX_MULTIPV}",
                d.multipv
            ),
            format!(
                "option name DrawValueBlack type spin default {} min 0 max 1000",
                d.draw_value_black
            ),
            format!(
                "option name DrawValueWhite type spin default {} min 0 max 1000",
                d.draw_value_white
            ),
            format!(
                "option name ResignValue type spin default {} min 0 max {RESIGN_OFF}",
                d.resign_value
            ),
            format!(
                "option name MaxMovesToDraw type spin default {} min 0 max 100000",
                d.max_moves_to_draw
            ),
            format!(
                "option name NetworkDelay type spin default {} min 0 max 10000",
                d.network_delay_ms
            ),
            format!(
                "option name NetworkDelay2 type spin default {} min 0 max 10000",
                d.network_delay2_ms
            ),
            format!(
                "option name MinimumThinkingTime type spin default {} min 0 max 100000",
                d.minimum_thinking_ms
            ),
        ]
    }

    /// Applies `setoption name <name> value <value>`. Names are case-insensitive (USI GUIs
    /// differ). The error says what was wrong and what is accepted; `Ok(Some(note))` says
    /// that the value was applied otherwise than asked and why (a `USI_Hash` larger than the
    /// machine can give). The engine prints both as `info string`, the error as `error: …`.
    pub fn set(&mut self, name: &str, value: &str) -> Result<Option<String>, OptionError> {
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "evalfile" => {
                self.eval_file = if value == "<empty>" {
                    String::new()
                } else {
                    value.to_string()
                }
            }
            "backend" => {
                self.backend = match value {
                    v if v.eq_ignore_ascii_case("cpu") => Backend::Auto,
                    v if v.eq_ignore_ascii_case("cuda") => Backend::Cuda,
                    v if v.eq_ignore_ascii_case("integer") => Backend::Integer,
                    _ => return Err(OptionError::bad(name, value, "cpu, cuda or integer")),
                }
            }
            "precision" => {
                self.precision = value
                    .parse()
                    .map_err(|_| OptionError::bad(name, value, "f32, bf16 or int8"))?
            }
            "simulations" => self.simulations = spin(name, value, 0, 100_000_000)? as u32,
            "maxconsidered" => self.max_considered = spin(name, value, 1, 600)? as u32,
            "batchsize" => self.batch_size = spin(name, value, 1, 4096)? as usize,
            "virtualloss" => self.virtual_loss = spin(name, value, 0, 100)? as u32,
            "policyonly" => self.policy_only = check(name, value)?,
            "gumbelscale" => self.gumbel_scale = real(name, value, 0.0, 100.0)?,
            "cvisit" => self.c_visit = real(name, value, 0.0, 1e6)?,
            "cscale" => self.c_scale = real(name, value, 0.0, 1e6)?,
            "qrescale" => self.q_rescale = check(name, value)?,
            "puctc" => self.puct_c = real_in(name, value, InteriorRule::C_RANGE)?,
            "fpureduction" => {
                self.fpu_reduction = real_in(name, value, InteriorRule::FPU_REDUCTION_RANGE)?
            }
            "policytemperature" => {
                self.policy_temperature =
                    real_in(name, value, InteriorRule::POLICY_TEMPERATURE_RANGE)?
            }
            "threads" => self.threads = spin(name, value, 1, 256)? as usize,
            "usi_hash" => {
                let asked = spin(name, value, 1, 1_048_576)? as usize;
                let (mib, note) = affordable_hash_mb(asked, cache::available_memory_bytes());
                self.hash_mb = mib;
                return Ok(note);
            }
            "usi_ponder" => self.ponder = check(name, value)?,
            "ponderopponentposition" => self.ponder_opponent_position = check(name, value)?,
            "moveoverhead" => self.move_overhead_ms = spin(name, value, 0, 10_000)? as u64,
            "enteringkingrule" => {
                self.entering_king = match value {
                    v if v.eq_ignore_ascii_case(EK_CSA27) => Some(EnteringKingRule::Csa27),
                    v if v.eq_ignore_ascii_case(EK_JSA24) => Some(EnteringKingRule::Jsa24),
                    v if v.eq_ignore_ascii_case(EK_NONE) => None,
                    _ => {
                        let expected = format!("{EK_CSA27}, {EK_JSA24} or {EK_NONE}");
                        return Err(OptionError::bad(name, value, expected));
                    }
                }
            }
            "maxdepth" => self.max_depth = spin(name, value, 1, 1024)? as u16,
            "leafmateplies" => self.leaf_mate_plies = spin(name, value, 0, 7)? as u32,
            "rootmatenodes" => self.root_mate_nodes = spin(name, value, 0, 100_000_000)? as u64,
            "matehash" => self.mate_hash_mb = spin(name, value, 1, 4096)? as usize,
            "multipv" => self.multipv = spin(name, value, 1, MAX_MULTIPV as i64)? as usize,
            "drawvalueblack" => self.draw_value_black = spin(name, value, 0, 1000)? as u32,
            "drawvaluewhite" => self.draw_value_white = spin(name, value, 0, 1000)? as u32,
            "resignvalue" => self.resign_value = spin(name, value, 0, RESIGN_OFF.into())? as u32,
            "maxmovestodraw" => self.max_moves_to_draw = spin(name, value, 0, 100_000)? as u32,
            "networkdelay" => self.network_delay_ms = spin(name, value, 0, 10_000)? as u64,
            "networkdelay2" => self.network_delay2_ms = spin(name, value, 0, 10_000)? as u64,
            "minimumthinkingtime" => {
                self.minimum_thinking_ms = spin(name, value, 0, 100_000)? as u64
            }
            _ => {
                return Err(OptionError::Unknown {
                    name: excerpt(name),
                });
            }
        }
        Ok(None)
    }

    /// The value of a draw for the side to move at the root — the engine's side — in the
    /// search's value scale (−1 lost … 1 won): `2·w/1000 − 1` for the per-mille win rate `w`
    /// of `DrawValueBlack` or `DrawValueWhite`.
    pub fn draw_value(&self, engine: Color) -> f64 {
        let w = match engine {
            Color::Black => self.draw_value_black,
            Color::White => self.draw_value_white,
        };
        2.0 * f64::from(w) / 1000.0 - 1.0
    }

    /// The score at or below which the engine resigns (`-ResignValue` cp); `None` when off.
    pub fn resign_below_cp(&self) -> Option<i32> {
        (self.resign_value < RESIGN_OFF).then(|| -(self.resign_value as i32))
    }

    /// The clock settings of the time plan (time.rs).
    pub fn time_settings(&self) -> TimeSettings {
        TimeSettings {
            move_overhead: self.move_overhead_ms,
            network_delay: self.network_delay_ms,
            network_delay2: self.network_delay2_ms,
            minimum_thinking: self.minimum_thinking_ms,
        }
    }

    /// The tree's share of `USI_Hash`.
    pub fn tree_bytes(&self) -> usize {
        // Half: a full tree is recycled into half of its bound, and the copy and the old tree
        // live side by side for a moment, so the tree never holds more than ¾ of USI_Hash;
        // the evaluation cache takes the last quarter.
        self.hash_mb.saturating_mul(1 << 20) / 2
    }

    /// The search settings these options describe.
    pub fn search_config(&self) -> SearchConfig {
        let cache_bytes = self.hash_mb.saturating_mul(1 << 20) / 4;
        SearchConfig {
            max_considered: self.max_considered,
            q_transform: QTransform {
                c_visit: self.c_visit,
                c_scale: self.c_scale,
                rescale: self.q_rescale,
            },
            noise: RootNoise::Sampled {
                scale: self.gumbel_scale,
                seed: None,
            },
            batch_size: self.batch_size,
            virtual_loss: self.virtual_loss,
            max_depth: self.max_depth,
            entering_king: self.entering_king,
            policy_only: self.policy_only,
            cache_entries: cache_bytes / cache::APPROX_ENTRY_BYTES,
            max_tree_bytes: self.tree_bytes(),
            leaf_mate_plies: self.leaf_mate_plies,
            root_mate_nodes: self.root_mate_nodes,
            mate_table_bytes: self.mate_hash_mb.saturating_mul(1 << 20),
            // The next position of the game keeps its subtree (docs/search.md, "Tree
            // reuse"); `usinewgame` clears it.
            reuse_tree: true,
            multipv: self.multipv,
            interior: InteriorRule::Puct {
                c: self.puct_c,
                fpu_reduction: self.fpu_reduction,
                policy_temperature: self.policy_temperature,
            },
            ..SearchConfig::default()
        }
    }
}

/// The `USI_Hash` to use when `asked` MiB are asked for and the machine has `available`
/// bytes (`None`: unknown, taken as asked): at most three quarters of what is available, so
/// that the tree and the cache it sizes (and the network, the mate tables and the rest of
/// the process beside them) fit in memory instead of aborting the process on an allocation.
/// The note says what was reduced and why.
pub fn affordable_hash_mb(asked: usize, available: Option<u64>) -> (usize, Option<String>) {
    let Some(available) = available else {
        return (asked, None);
    };
    let most = usize::try_from((available / 4 * 3) >> 20)
        .unwrap_or(usize::MAX)
        .max(1);
    if asked <= most {
        return (asked, None);
    }
    let note = format!(
        "USI_Hash {asked} MiB is more than this machine can give ({} MiB available); using \
         {most} MiB, three quarters of it",
        available >> 20
    );
    (most, Some(note))
}

/// Why `setoption` was refused. Names and values are repeated as excerpts (a 120 KB line is
/// not worth repeating, `data::io::excerpt`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("unknown option '{name}' (see the option list answered to 'usi')")]
    Unknown { name: String },
    /// A value outside what the option takes (`expected` says what it takes).
    #[error("{name} must be {expected}, not '{value}'")]
    BadValue {
        name: String,
        value: String,
        expected: String,
    },
}

impl OptionError {
    fn bad(name: &str, value: &str, expected: impl Into<String>) -> OptionError {
        OptionError::BadValue {
            name: excerpt(name),
            value: excerpt(value),
            expected: expected.into(),
        }
    }
}

fn spin(name: &str, value: &str, min: i64, max: i64) -> Result<i64, OptionError> {
    match value.parse::<i64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(OptionError::bad(
            name,
            value,
            format!("an integer from {min} to {max}"),
        )),
    }
}

fn real(name: &str, value: &str, min: f64, max: f64) -> Result<f64, OptionError> {
    match value.parse::<f64>() {
        Ok(v) if v.is_finite() && (min..=max).contains(&v) => Ok(v),
        _ => Err(OptionError::bad(
            name,
            value,
            format!("a number from {min} to {max}"),
        )),
    }
}

fn real_in(name: &str, value: &str, (min, max): (f64, f64)) -> Result<f64, OptionError> {
    real(name, value, min, max)
}

fn check(name: &str, value: &str) -> Result<bool, OptionError> {
    match value.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(OptionError::bad(name, value, "true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_announced_option_is_accepted_with_its_default() {
        let mut o = EngineOptions::default();
        for line in o.clone().usi_lines() {
            let rest = line.strip_prefix("option name ").unwrap();
            let (name, rest) = rest.split_once(" type ").unwrap();
            let default = rest
                .split(" default ")
                .nth(1)
                .unwrap()
                .split(" min ")
                .next()
                .unwrap();
            let default = default.split(" var ").next().unwrap();
            o.set(name, default)
                .unwrap_or_else(|e| panic!("{line}: {e}"));
            assert!(line.is_ascii());
        }
        assert_eq!(o, EngineOptions::default());
    }

    #[test]
    fn bad_values_are_refused_with_a_reason() {
        let mut o = EngineOptions::default();
        assert_eq!(
            o.set("Simulations", "-1").unwrap_err().to_string(),
            "Simulations must be an integer from 0 to 100000000, not '-1'"
        );
        assert!(o.set("GumbelScale", "nan").is_err());
        assert_eq!(
            o.set("USI_Ponder", "yes"),
            Err(OptionError::BadValue {
                name: "USI_Ponder".into(),
                value: "yes".into(),
                expected: "true or false".into()
            })
        );
        assert_eq!(
            o.set("NoSuchOption", "1"),
            Err(OptionError::Unknown {
                name: "NoSuchOption".into()
            })
        );
        assert!(o.set("EnteringKingRule", "x").is_err());
        assert!(
            o.set("Backend", "tpu")
                .unwrap_err()
                .to_string()
                .contains("cpu, cuda or integer")
        );
        // A huge value is repeated as an excerpt, not whole.
        let long = "9".repeat(100_000);
        let e = o.set("Threads", &long).unwrap_err().to_string();
        assert!(e.len() < 200 && e.contains("9999..."), "{e}");
        assert_eq!(
            o.set("Precision", "int4").unwrap_err().to_string(),
            "Precision must be f32, bf16 or int8, not 'int4'"
        );
        o.set("precision", "INT8").unwrap();
        assert_eq!(o.precision, Precision::Int8);
        o.set("Backend", "integer").unwrap();
        assert_eq!(o.backend, Backend::Integer);
        o.set("backend", "CUDA").unwrap();
        assert_eq!(o.backend, Backend::Cuda);
        o.set("usi_hash", "64").unwrap();
        o.set("GUMBELSCALE", "1.5").unwrap();
        o.set("EnteringKingRule", "JSARule24").unwrap();
        o.set("EvalFile", "/tmp/some file.mnw").unwrap();
        assert_eq!(o.hash_mb, 64);
        assert_eq!(o.gumbel_scale, 1.5);
        assert_eq!(o.entering_king, Some(EnteringKingRule::Jsa24));
        assert_eq!(o.eval_file, "/tmp/some file.mnw");
        o.set("MultiPV", "3").unwrap();
        o.set("DrawValueBlack", "450").unwrap();
        o.set("ResignValue", "2000").unwrap();
        o.set("networkdelay2", "1120").unwrap();
        assert!(o.set("MultiPV", "0").is_err());
        assert!(o.set("DrawValueWhite", "1001").is_err());
        assert!(o.set("ResignValue", "-1").is_err());
        assert_eq!(o.resign_below_cp(), Some(-2000));
        assert_eq!(EngineOptions::default().resign_below_cp(), None);
        assert!((o.draw_value(Color::Black) + 0.1).abs() < 1e-12);
        assert_eq!(o.draw_value(Color::White), 0.0);
        assert_eq!(o.time_settings().network_delay2, 1120);
        let c = o.search_config();
        assert_eq!(c.multipv, 3);
        assert_eq!(c.max_tree_bytes, 32 << 20);
        assert!(c.cache_entries > 10_000);
        assert_eq!(
            c.noise,
            RootNoise::Sampled {
                scale: 1.5,
                seed: None
            }
        );
    }

    #[test]
    fn puct_options_reach_the_interior_rule() {
        let mut o = EngineOptions::default();
        // The defaults are the rule for play.
        assert_eq!(o.search_config().interior, InteriorRule::PLAY);
        o.set("PuctC", "1.5").unwrap();
        o.set("fpureduction", "0.25").unwrap();
        o.set("PolicyTemperature", "1.6").unwrap();
        assert_eq!(
            o.search_config().interior,
            InteriorRule::Puct {
                c: 1.5,
                fpu_reduction: 0.25,
                policy_temperature: 1.6
            }
        );
        for bad in ["0", "0.05", "11", "nan", "warm"] {
            assert!(o.set("PolicyTemperature", bad).is_err(), "{bad}");
        }
        assert_eq!(
            o.set("FpuReduction", "3").unwrap_err().to_string(),
            "FpuReduction must be a number from 0 to 2, not '3'"
        );
        for bad in ["-1", "nan", "inf", "two"] {
            assert!(o.set("PuctC", bad).is_err(), "{bad}");
        }
        assert_eq!(o.puct_c, 1.5);
    }

    /// Issue 16, fault 3: a `USI_Hash` beyond the machine's memory is reduced to three
    /// quarters of what is available, with a note saying so; one that fits is kept as is.
    #[test]
    fn usi_hash_is_capped_by_the_memory_available() {
        let gib = 1u64 << 30;
        assert_eq!(affordable_hash_mb(1_048_576, None), (1_048_576, None));
        assert_eq!(affordable_hash_mb(4096, Some(16 * gib)), (4096, None));
        let (mib, note) = affordable_hash_mb(1_048_576, Some(16 * gib));
        assert_eq!(mib, 12 << 10);
        assert_eq!(
            note.unwrap(),
            "USI_Hash 1048576 MiB is more than this machine can give (16384 MiB available); \
             using 12288 MiB, three quarters of it"
        );
        assert_eq!(affordable_hash_mb(64, Some(1 << 20)).0, 1);
        // Through `setoption`: the value is applied, reduced, and the note is the answer.
        let mut o = EngineOptions::default();
        match o
            .set("USI_Hash", "1048576")
            .expect("USI_Hash 1048576 is accepted")
        {
            None => assert_eq!(o.hash_mb, 1_048_576), // the machine has a petabyte
            Some(note) => {
                assert!(
                    note.starts_with("USI_Hash 1048576 MiB is more than"),
                    "{note}"
                );
                assert!(o.hash_mb < 1_048_576 && o.hash_mb >= 1);
            }
        }
    }
}
