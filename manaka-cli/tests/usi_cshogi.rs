//! `manaka usi` against fairy-stockfish under cshogi's match runner (`cshogi.cli.main`):
//! complete games with a short byoyomi, then sudden death with increment and pondering; no
//! protocol error, no illegal move, no time loss (the checks are in cshogi_match.py).
//!
//! Skips with a message when python3, cshogi or fairy-stockfish is missing, unless
//! MANAKA_REQUIRE_ORACLES=1 (scripts/test sets it), which turns a missing oracle into a
//! failure.

mod common;

use common::oracles;
use std::path::Path;
use std::process::Command;

const TEST: &str = "usi_cshogi";

#[test]
fn games_against_fairy_stockfish_under_cshogi() {
    let Some(fairy) = oracles::need_fairy_stockfish(TEST) else {
        return;
    };
    if !oracles::need_cshogi(TEST) {
        return;
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
