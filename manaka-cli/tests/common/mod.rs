//! What the CLI tests share: running `manaka` and the three outcomes a user or script relies
//! on — success, one JSON object, a refusal (exit status 2, one line on stderr, nothing on
//! stdout) — and a scratch directory. Each test binary uses part of it.
#![allow(dead_code)]

pub mod oracles;

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs the `manaka` binary under test.
pub fn manaka(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(args)
        .output()
        .expect("run manaka")
}

/// Runs a command that must succeed.
pub fn ok(args: &[&str]) -> Output {
    let out = manaka(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs a command that must succeed and print one JSON object on one line.
pub fn json(args: &[&str]) -> Value {
    let text = String::from_utf8(ok(args).stdout).unwrap();
    assert_eq!(
        text.trim().lines().count(),
        1,
        "{args:?}: one JSON line expected, got {text:?}"
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

/// Runs a command that must be refused: status 2, one line on stderr, empty stdout.
pub fn refused(args: &[&str]) -> String {
    let out = manaka(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: status {:?}, stderr {stderr:?}",
        out.status
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: stderr must be one line: {stderr:?}"
    );
    assert!(!stderr.trim().is_empty());
    assert!(
        out.stdout.is_empty(),
        "{args:?}: stdout {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// The en dash the docs (and the scripts' per-seed records) put between wins, draws and losses.
pub const RECORD_DASH: char = '\u{2013}';

/// `W–D–L` of the `scripts/strength.py` summary at `path`, as the scripts' reports write each
/// seed's record (study.py's `record_text`).
pub fn summary_record(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let r: Value = serde_json::from_str(&text).unwrap();
    let d = RECORD_DASH;
    format!("{}{d}{}{d}{}", r["wins"], r["draws"], r["losses"])
}

/// Checks one row of a script's report against the `scripts/strength.py` summaries it adds
/// up: `games` games (W + D + L of them), per-seed `W–D–L` strings ([`summary_record`]) that sum to its totals, and its Elo recomputed
/// here by hand as −400·log10(1/s − 1) (docs/strength.md), unbounded (null) for a sweep.
pub fn check_match_totals(r: &Value, games: u64) {
    let n = |k: &str| r[k].as_u64().unwrap();
    assert_eq!(n("games"), games, "{r}");
    assert_eq!(n("wins") + n("draws") + n("losses"), games, "{r}");
    let mut sum = [0u64; 3];
    for s in r["per_seed"].as_array().unwrap() {
        for (k, v) in s.as_str().unwrap().split(RECORD_DASH).enumerate() {
            sum[k] += v.parse::<u64>().unwrap();
        }
    }
    assert_eq!(sum, [n("wins"), n("draws"), n("losses")], "{r}");
    let (w, d, l) = (n("wins") as f64, n("draws") as f64, n("losses") as f64);
    if (w > 0.0 && l > 0.0) || d > 0.0 {
        let s = (w + d / 2.0) / (w + d + l);
        let elo = -400.0 * (1.0 / s - 1.0).log10();
        assert!((r["elo"].as_f64().unwrap() - elo).abs() < 1e-6, "{r}");
    } else {
        assert!(r["elo"].is_null(), "a sweep's Elo is unbounded: {r}");
    }
}

/// The repository's root, where `scripts/` is.
pub fn repo() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A fresh directory `NAME-PID` in the target's scratch space for integration tests, kept
/// after the test so that a failure's files can be looked at.
pub fn target_scratch(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A scratch directory, removed at the end of the test.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("manaka-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `manaka usi` session: sends `commands`, reads the engine's lines up to the first
/// `bestmove`, then sends `quit` and checks the engine exits cleanly.
pub fn usi_until_bestmove<S: AsRef<str>>(commands: &[S]) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_manaka"))
        .arg("usi")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for c in commands {
        writeln!(stdin, "{}", c.as_ref()).unwrap();
    }
    stdin.flush().unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.starts_with("bestmove");
        lines.push(line);
        if done {
            break;
        }
    }
    writeln!(stdin, "quit").unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    lines
}
