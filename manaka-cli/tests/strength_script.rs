//! `scripts/strength.py` as a user runs it from a work directory: a relative `--evalfile` is
//! the file in that directory (cshogi starts engines in their own directory, so the script
//! must hand the engine an absolute path; before it did, every game ended with the engine
//! resigning at its first move and a match read as an even score), and a missing file is
//! refused before any game. Needs cshogi; skipped with a message when it is missing, unless
//! MANAKA_REQUIRE_ORACLES=1.

mod common;

use common::{Scratch, ok, oracles};
use std::path::Path;
use std::process::Command;

const TEST: &str = "strength_script";

fn strength(dir: &Scratch, args: &[&str]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/strength.py");
    Command::new("python3")
        .arg(script)
        .args(["--manaka", env!("CARGO_BIN_EXE_manaka")])
        .args(args)
        .current_dir(&dir.0)
        .output()
        .unwrap()
}

#[test]
fn a_relative_evalfile_is_the_file_in_the_work_directory() {
    if !oracles::need_cshogi(TEST) {
        return;
    }
    let dir = Scratch::new(TEST);
    let weights = dir.file("random.mnw");
    ok(&[
        "weights",
        "init",
        "--shape",
        "pair0_d128_o2_h256_kp",
        "--seed",
        "1",
        "-o",
        &weights,
    ]);
    let out = strength(
        &dir,
        &[
            "--evalfile",
            "random.mnw",
            "--opponent",
            "manaka",
            "--games",
            "2",
            "--byoyomi",
            "40",
            "--opening-plies",
            "0",
            "--csa",
            "games.csa",
            "--json",
            "summary.json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Each game is a CSA record: both engines must have moved (a failed EvalFile answers
    // `bestmove resign` at once, leaving at most one move in the record).
    let csa = std::fs::read_to_string(dir.0.join("games.csa")).unwrap();
    let games: Vec<&str> = csa.split("\n/\n").filter(|g| g.contains("V2")).collect();
    assert_eq!(games.len(), 2, "{csa}");
    for game in games {
        let moves = game
            .lines()
            .filter(|l| l.starts_with(['+', '-']) && l.len() > 1)
            .count();
        assert!(
            moves >= 4,
            "a game of {moves} moves: the engine did not play\n{game}"
        );
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.0.join("summary.json")).unwrap()).unwrap();
    let evalfile = summary["evalfile"].as_str().unwrap();
    assert!(
        Path::new(evalfile).is_absolute() && evalfile.ends_with("random.mnw"),
        "{summary}"
    );
}

#[test]
fn a_missing_evalfile_is_refused_before_any_game() {
    if !oracles::need_cshogi(TEST) {
        return;
    }
    let dir = Scratch::new("strength_script_missing");
    let out = strength(&dir, &["--evalfile", "nope.mnw", "--games", "2"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--evalfile nope.mnw: no such file"),
        "{stderr}"
    );
}
