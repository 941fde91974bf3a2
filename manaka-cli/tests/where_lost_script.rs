//! `scripts/where_lost.py` on a hand-made CSA file of two games in strength.py's form (scores
//! from Black's side after each move): the game Manaka lost as Black has its turning point
//! where worked out by hand — the opponent's score reaches −600 for Manaka at ply 3 (4 plies
//! before the end) while Manaka's last score was +100, and the opponent saw the mate one ply
//! before Manaka — and the game Manaka won as White is not counted. Needs only python3.

mod common;

use common::{repo, target_scratch};
use serde_json::Value;
use std::process::Command;

const GAMES: &str = "V2
N+manaka
N-fairy-stockfish(skill 20)
P1-KY-KE-GI-KI-OU-KI-GI-KE-KY
+
+7776FU
T1
'** 50 -3334FU
-3334FU
T1
'** 0
+2726FU
T1
'** 100
-8384FU
T1
'** -600 +2625FU
+2625FU
T1
'** -700
-8485FU
T1
'** -100000
+6978KI
T1
'** -100000
%TORYO
/
V2
N+fairy-stockfish(skill 20)
N-manaka
+
+7776FU
T1
'** 30
-3334FU
T1
'** -200
+2726FU
T1
'** -900
-8384FU
T1
'** -100000
%TORYO
";

/// Runs the script on `csa` with `args`, asserts it succeeded, and reads its --json output.
fn where_lost(csa: &std::path::Path, args: &[&str], json: &std::path::Path) -> Value {
    let out = Command::new("python3")
        .arg(repo().join("scripts/where_lost.py"))
        .arg(csa)
        .args(args)
        .arg("--json")
        .arg(json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

#[test]
fn the_turning_point_of_a_lost_game_is_where_the_opponent_first_saw_it() {
    let dir = target_scratch("where_lost_script");
    let csa = dir.join("games.csa");
    std::fs::write(&csa, GAMES).unwrap();
    let v = where_lost(&csa, &[], &dir.join("where.json"));
    let games = v["games"].as_array().unwrap();
    assert_eq!(games.len(), 1, "only the lost game: {v}");
    let g = &games[0];
    assert_eq!(g["manaka"], "black");
    assert_eq!(g["plies"], 7);
    assert_eq!(g["behind_at"], 3);
    assert_eq!(g["plies_left"], 4);
    assert_eq!(g["ours_then"], 100);
    assert_eq!(g["mate_seen_first_by"], 1);
    assert_eq!(v["summary"]["lost_games"], 1);
    assert_eq!(v["summary"]["ours_then_at_or_above_0"], 1);
}

/// A game Manaka lost as Black from the standard start: the opponent's score reaches −600
/// for Manaka after its move at ply 3.
const LOST_FROM_START: &str = "V2
N+manaka
N-fairy-stockfish(skill 20)
PI
+
+7776FU
T1
'** 50
-3334FU
T1
'** 0
+2726FU
T1
'** 100
-8384FU
T1
'** -600
+2625FU
T1
'** -700
-8485FU
T1
'** -100000
%TORYO
";

/// fairy-stockfish's last reported score (side to move) for `moves` from the start at `depth`,
/// asked directly, as a GUI would (`usi` only, no variant option — as scripts/strength.py's
/// opponent and the probe start it).
fn fairy_score(fairy: &std::path::Path, moves: &str, depth: u32) -> i64 {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(fairy)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "usi\nsetoption name Threads value 1\nisready\nposition startpos moves {moves}\ngo depth {depth}"
    )
    .unwrap();
    let mut score = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let w: Vec<&str> = line.split_whitespace().collect();
        if let Some(i) = w.iter().position(|x| *x == "score")
            && w.get(i + 1) == Some(&"cp")
        {
            score = w.get(i + 2).and_then(|v| v.parse().ok());
        }
        if w.first() == Some(&"bestmove") {
            break;
        }
    }
    writeln!(stdin, "quit").unwrap();
    child.wait().unwrap();
    score.expect("fairy-stockfish reported a centipawn score")
}

#[test]
fn the_probe_scores_the_losing_decision_with_the_network_and_the_opponent() {
    const TEST: &str = "where_lost_script_probe";
    let Some(fairy) = common::oracles::need_fairy_stockfish(TEST) else {
        return;
    };
    if !common::oracles::need_cshogi(TEST) {
        return;
    }
    let dir = target_scratch(TEST);
    let csa = dir.join("lost.csa");
    std::fs::write(&csa, LOST_FROM_START).unwrap();
    let probe = [
        "--probe-engine",
        fairy.to_str().unwrap(),
        "--manaka",
        env!("CARGO_BIN_EXE_manaka"),
        "--probe-depths",
        "3,1",
    ];
    let v = where_lost(&csa, &probe, &dir.join("probe.json"));
    let g = &v["games"][0];
    assert_eq!(g["behind_at"], 3);
    // The decision that lost is Manaka's move at ply 2 (2g2f): scored before it (Manaka to
    // move, after 7g7f 3c3d) and after it (the opponent to move), always from Manaka's side.
    let (before, after) = (&g["probe"]["before"], &g["probe"]["after"]);
    assert_eq!(before["ply"], 2);
    assert_eq!(after["ply"], 3);
    let net = |moves: &[&str]| {
        let mut args = vec!["eval", "--json", "--moves"];
        args.extend_from_slice(moves);
        common::json(&args)["cp"].as_i64().unwrap()
    };
    // `manaka eval`'s cp (600 per logit) on the teacher's scale: ×1200/600 by default.
    let (b, a) = (net(&["7g7f", "3c3d"]), -net(&["7g7f", "3c3d", "2g2f"]));
    assert_eq!(before["network_usi_cp"].as_i64().unwrap(), b);
    assert_eq!(after["network_usi_cp"].as_i64().unwrap(), a);
    assert_eq!(before["network"].as_i64().unwrap(), 2 * b);
    assert_eq!(after["network"].as_i64().unwrap(), 2 * a);
    // A network of the 600 era (--network-scale 600) is compared as `manaka eval` reports it.
    let mut at600 = probe.to_vec();
    at600.extend(["--network-scale", "600"]);
    let v600 = where_lost(&csa, &at600, &dir.join("probe600.json"));
    assert_eq!(
        v600["games"][0]["probe"]["before"]["network"]
            .as_i64()
            .unwrap(),
        b
    );
    for d in [1, 3] {
        let key = format!("depth{d}");
        assert_eq!(
            before[&key].as_i64().unwrap(),
            fairy_score(&fairy, "7g7f 3c3d", d)
        );
        assert_eq!(
            after[&key].as_i64().unwrap(),
            -fairy_score(&fairy, "7g7f 3c3d 2g2f", d)
        );
    }
    // The summary: each judge's mean and mean absolute difference from the deepest search.
    let gap = |p: &Value, j: &str| p[j].as_i64().unwrap() - p["depth3"].as_i64().unwrap();
    for j in ["network", "depth1"] {
        let (a, b) = (gap(before, j), gap(after, j));
        let s = &v["summary"]["against_deepest"][j];
        assert_eq!(s["positions"], 2);
        assert_eq!(
            s["mean"].as_f64().unwrap(),
            ((a + b) as f64 / 2.0).round_ties_even()
        );
        assert_eq!(
            s["mean_abs"].as_f64().unwrap(),
            ((a.abs() + b.abs()) as f64 / 2.0).round_ties_even()
        );
    }
}
