//! Helpers shared by the rules tests: random legal play, and the rule for external oracles
//! (cshogi, fairy-stockfish): a missing oracle skips its test with a message, unless
//! `MANAKA_REQUIRE_ORACLES=1` (set by `scripts/test` and CI), where it fails instead.

#![allow(dead_code)]

use manaka::runtime::random::{self, SplitMix64};
use manaka::runtime::shogi::Position;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::path::PathBuf;
use std::process::Command;

/// Whether a missing oracle must fail the test instead of skipping it.
pub fn oracles_required() -> bool {
    std::env::var("MANAKA_REQUIRE_ORACLES").is_ok_and(|v| v == "1")
}

/// Reports a missing oracle: panics when oracles are required, else prints a skip message.
/// Returns normally only when the caller should skip.
pub fn missing_oracle(test: &str, why: &str) {
    if oracles_required() {
        panic!("{test}: oracle unavailable ({why}) and MANAKA_REQUIRE_ORACLES=1");
    }
    // Written to the stderr handle directly: libtest captures `eprintln!` of passing tests,
    // and a skip should be seen.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: oracle unavailable ({why}); set MANAKA_REQUIRE_ORACLES=1 to fail instead"
    );
}

/// `tests/oracles/<name>` in this checkout.
pub fn oracle_script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("oracles")
        .join(name)
}

/// Whether `python3` runs and can import `module`; `Err` says why not.
pub fn python_with(module: &str) -> Result<(), String> {
    match Command::new("python3")
        .arg("-c")
        .arg(format!("import {module}"))
        .output()
    {
        Err(e) => Err(format!("cannot run python3: {e}")),
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "python3 cannot import {module}: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
    }
}

/// An environment variable parsed as a number, or `default`.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Seeded RNG; `MANAKA_RULES_SEED` changes the seed to explore beyond the fixed one.
pub fn rng(salt: u64) -> StdRng {
    StdRng::seed_from_u64(env_or("MANAKA_RULES_SEED", 0x6d61_6e61_6b61u64) ^ salt)
}

/// Positions along random games ([`random::positions_along_random_games`]: captures
/// preferred, so hands fill and drops abound), every position on the way, history dropped.
pub fn random_positions(
    rng: &mut StdRng,
    starts: &[&str],
    games: usize,
    max_plies: usize,
) -> Vec<Position> {
    let starts: Vec<Position> = starts
        .iter()
        .map(|s| Position::from_sfen(s).expect("start SFEN is valid"))
        .collect();
    let mut walk = SplitMix64::new(rng.random());
    random::positions_along_random_games(&starts, games, max_plies, &mut walk)
}

/// Positions worth trying beyond the start position: the perft positions of issue 2 and a few
/// with full hands.
pub const EXTRA_STARTS: &[&str] = &[
    "startpos",
    "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
    "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
    "8k/6G2/9/7N1/9/9/9/9/K8 b P 1",
    "4k4/9/9/9/9/9/9/9/4K4 b RBGSNLPrb3g3s3n3l17p 1",
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
];

/// Mismatches of an oracle test, the first few kept in full.
#[derive(Default)]
pub struct Report {
    pub count: usize,
    pub shown: Vec<String>,
}

impl Report {
    pub fn fail(&mut self, msg: String) {
        self.count += 1;
        if self.shown.len() < 12 {
            self.shown.push(msg);
        }
    }
}

/// Starts fairy-stockfish (on the PATH, or Debian's /usr/games) with piped stdin and stdout;
/// the error says why it could not run.
pub fn spawn_fairy_stockfish() -> Result<std::process::Child, String> {
    use std::process::{Command, Stdio};
    let mut last = String::new();
    for bin in ["fairy-stockfish", "/usr/games/fairy-stockfish"] {
        match Command::new(bin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => return Ok(child),
            Err(e) => last = format!("cannot run {bin}: {e}"),
        }
    }
    Err(last)
}
