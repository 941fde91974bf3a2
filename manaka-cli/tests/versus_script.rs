//! `scripts/versus.py`, games of Manaka against fairy-stockfish kept as positions to label, as
//! a user runs it: four quick games in two files, then the records read back with cshogi —
//! every record a position, each game's records one legal move apart from the start after the
//! opening plies to its end, the game's result on every one of its records and in the
//! summary — and the resume: run again, nothing is replayed; lose a file, it is played again
//! to the same bytes. Needs fairy-stockfish and cshogi; skipped with a message when one is
//! missing, unless MANAKA_REQUIRE_ORACLES=1.

mod common;

use common::{oracles, repo, target_scratch};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const TEST: &str = "versus_script";

fn versus(fairy: &Path, out: &Path, json: &Path) -> Output {
    Command::new("python3")
        .arg(repo().join("scripts/versus.py"))
        .args(["--manaka", env!("CARGO_BIN_EXE_manaka"), "--engine"])
        .arg(fairy)
        .args(["--engine-go", "depth 1", "--engine-option", "Threads=1"])
        .args(["--nodes", "16", "--games", "4", "--games-per-file", "2"])
        .args(["--opening-plies", "4", "--max-plies", "60", "--seed", "5"])
        .arg("--out")
        .arg(out)
        .arg("--json")
        .arg(json)
        .output()
        .unwrap()
}

/// Splits a file's records into games with cshogi: a record starts a new game when no legal
/// move of the one before leads to it. Prints one line per game: its record count, its
/// gameResult values, and whether its first position is the seed's opening.
const READ_BACK: &str = r#"
import sys, random
import numpy as np, cshogi
rows = np.fromfile(sys.argv[1], dtype=cshogi.HuffmanCodedPosAndEval)
first_game = int(sys.argv[2])
def opening(seed, index, plies):
    rng = random.Random(seed * 1_000_003 + index)
    b = cshogi.Board()
    for _ in range(plies):
        b.push(rng.choice([m for m in b.legal_moves if not cshogi.move_cap(m)]))
    return b
games, prev = [], None
for r in rows:
    b = cshogi.Board()
    b.set_hcp(r["hcp"])
    sfen = " ".join(b.sfen().split()[:3])
    follows = False
    if prev is not None:
        for m in prev.legal_moves:
            prev.push(m)
            follows = follows or " ".join(prev.sfen().split()[:3]) == sfen
            prev.pop()
    if not follows:
        games.append([])
    games[-1].append((sfen, int(r["gameResult"]), int(r["eval"]), int(r["bestMove16"])))
    prev = b
for k, g in enumerate(games):
    o = opening(5, first_game + k, 4)
    starts = " ".join(o.sfen().split()[:3]) == g[0][0]
    print(len(g), sorted({x[1] for x in g}), starts, sorted({(x[2], x[3]) for x in g}))
"#;

#[test]
fn games_against_an_engine_become_positions_to_label_and_resume() {
    let Some(fairy) = oracles::need_fairy_stockfish(TEST) else {
        return;
    };
    if !oracles::need_cshogi(TEST) {
        return;
    }
    let dir = target_scratch(TEST);
    let out = dir.join("vs");
    let json = dir.join("vs.json");
    let o = versus(&fairy, &out, &json);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{stderr}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (w, d, l) = (
        summary["wins"].as_u64().unwrap(),
        summary["draws"].as_u64().unwrap(),
        summary["losses"].as_u64().unwrap(),
    );
    assert_eq!(w + d + l, 4, "{summary}");

    let mut records = 0u64;
    let mut games = Vec::new();
    for c in 0..2u64 {
        let file = out.join(format!("versus-{c:06}.hcpe"));
        let bytes = std::fs::metadata(&file).unwrap().len();
        assert_eq!(bytes % 38, 0, "{}: not whole HCPE records", file.display());
        records += bytes / 38;
        let read = Command::new("python3")
            .args(["-c", READ_BACK])
            .arg(&file)
            .arg((c * 2).to_string())
            .output()
            .unwrap();
        assert!(
            read.status.success(),
            "{}",
            String::from_utf8_lossy(&read.stderr)
        );
        games.extend(
            String::from_utf8_lossy(&read.stdout)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(summary["positions"].as_u64(), Some(records));
    assert_eq!(
        games.len(),
        4,
        "four games, each one chain of moves: {games:?}"
    );
    for g in &games {
        // One result per game (0 draw, 1 Black, 2 White), the seed's opening as its first
        // position, and no teacher's label yet (eval 0, no move).
        assert!(
            g.contains(" [0] ") || g.contains(" [1] ") || g.contains(" [2] "),
            "{g}"
        );
        assert!(
            g.contains(" True "),
            "the game does not start at its opening: {g}"
        );
        assert!(g.ends_with("[(0, 0)]"), "{g}");
    }

    let drawn = games.iter().filter(|g| g.contains(" [0] ")).count() as u64;
    assert_eq!(
        drawn, d,
        "drawn games in the records against the summary: {games:?}"
    );

    // Run again: nothing to play. Lose a file: it is played again, to the same bytes.
    let o = versus(&fairy, &out, &json);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        stderr.contains("2 of 2 files already written, 0 to play"),
        "{stderr}"
    );
    let lost = out.join("versus-000001.hcpe");
    let before = std::fs::read(&lost).unwrap();
    std::fs::remove_file(&lost).unwrap();
    let o = versus(&fairy, &out, &json);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        stderr.contains("1 of 2 files already written, 1 to play"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&lost).unwrap(),
        before,
        "the replayed file differs"
    );
}
