//! The outside programs some CLI tests compare against — fairy-stockfish, python3 with cshogi
//! or selenium, NVRTC — and the one rule for a missing one: the test prints `SKIPPED …` and
//! passes, except under `MANAKA_REQUIRE_ORACLES=1` (scripts/test and CI set it), where it
//! fails, so that a CI run never passes by skipping what it is meant to check.

use std::path::PathBuf;
use std::process::Command;

/// Whether a missing oracle fails the test (`MANAKA_REQUIRE_ORACLES=1`).
pub fn required() -> bool {
    std::env::var_os("MANAKA_REQUIRE_ORACLES").is_some_and(|v| v == "1")
}

/// Reports that `test` cannot run because `missing` is missing: panics when oracles are
/// required, else says it skips.
pub fn skip(test: &str, missing: &str) {
    assert!(
        !required(),
        "{test}: {missing} is missing and MANAKA_REQUIRE_ORACLES=1 (scripts/test installs it)"
    );
    eprintln!("SKIPPED {test}: {missing} is missing; set MANAKA_REQUIRE_ORACLES=1 to fail instead");
}

/// fairy-stockfish: where Debian's package puts it, or on PATH.
pub fn fairy_stockfish() -> Option<PathBuf> {
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

/// Whether `python3 -c "import MODULES"` succeeds.
pub fn python_imports(modules: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// fairy-stockfish for `test`, or `None` after [`skip`].
pub fn need_fairy_stockfish(test: &str) -> Option<PathBuf> {
    let found = fairy_stockfish();
    if found.is_none() {
        skip(test, "fairy-stockfish");
    }
    found
}

/// Whether python3 with cshogi (and its match runner) is there for `test`; `false` after
/// [`skip`].
pub fn need_cshogi(test: &str) -> bool {
    let found = python_imports("cshogi, cshogi.cli");
    if !found {
        skip(test, "python3 with cshogi (pip install cshogi)");
    }
    found
}

/// Runs `python3 -c SCRIPT ARGS…`, which must succeed, and returns what it printed.
pub fn python_ok<S: AsRef<std::ffi::OsStr>>(script: &str, args: &[S]) -> String {
    let out = Command::new("python3")
        .args(["-c", script])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether `mv` is legal after `moves` from the start position, by cshogi (call after
/// [`need_cshogi`]).
pub fn cshogi_legal(moves: &[&str], mv: &str) -> bool {
    let script = format!(
        "import cshogi\nb = cshogi.Board()\nfor m in {moves:?}: b.push_usi(m)\n\
         print('{mv}' in [cshogi.move_to_usi(m) for m in b.legal_moves])"
    );
    python_ok::<&str>(&script, &[]).trim() == "True"
}
