//! `manaka usi` against fairy-stockfish under cshogi's match runner (`cshogi.cli.main`):
//! complete games with a short byoyomi, then sudden death with increment and pondering; no
//! protocol error, no illegal move, no time loss (the checks are in cshogi_match.py).
//!
//! Skips with a message when python3, cshogi or fairy-stockfish is missing, unless
//! MANAKA_REQUIRE_ORACLES=1 (scripts/test sets it), which turns a missing oracle into a
//! failure.

use std::path::{Path, PathBuf};
use std::process::Command;

fn require_oracles() -> bool {
    std::env::var("MANAKA_REQUIRE_ORACLES").is_ok_and(|v| v == "1")
}

fn skip(why: &str) {
    assert!(
        !require_oracles(),
        "oracle missing with MANAKA_REQUIRE_ORACLES=1: {why}"
    );
    eprintln!("skipping the cshogi match test: {why}");
}

fn fairy_stockfish() -> Option<PathBuf> {
    let candidates = [
        "/usr/games/fairy-stockfish",
        "/usr/bin/fairy-stockfish",
        "/usr/local/bin/fairy-stockfish",
    ];
    if let Some(p) = candidates.iter().map(PathBuf::from).find(|p| p.is_file()) {
        return Some(p);
    }
    let out = Command::new("sh")
        .args(["-c", "command -v fairy-stockfish"])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && p.is_file()).then_some(p)
}

fn has_cshogi() -> bool {
    Command::new("python3")
        .args(["-c", "import cshogi.cli"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn games_against_fairy_stockfish_under_cshogi() {
    let Some(fairy) = fairy_stockfish() else {
        return skip("fairy-stockfish not found");
    };
    if !has_cshogi() {
        return skip("python3 with cshogi not found");
    }
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cshogi-match-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // cshogi starts an engine from a single path without arguments: a wrapper script.
    let script = dir.join("manaka-usi.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nexec '{}' usi\n", env!("CARGO_BIN_EXE_manaka")),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cshogi_match.py");
    let out = Command::new("python3")
        .arg(&driver)
        .arg(&script)
        .arg(&fairy)
        .arg(&dir)
        .output()
        .unwrap();
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap_or_default();
    eprintln!("cshogi match summary: {summary}");
    eprintln!("game logs and CSA records: {}", dir.display());
    assert!(
        out.status.success(),
        "the match failed: {summary}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&summary).expect("a JSON summary");
    let games: u64 = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["games"].as_u64().unwrap())
        .sum();
    assert!(games >= 4, "{summary}");
}
