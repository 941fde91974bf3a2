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

#[test]
fn the_turning_point_of_a_lost_game_is_where_the_opponent_first_saw_it() {
    let dir = target_scratch("where_lost_script");
    let csa = dir.join("games.csa");
    std::fs::write(&csa, GAMES).unwrap();
    let json = dir.join("where.json");
    let out = Command::new("python3")
        .arg(repo().join("scripts/where_lost.py"))
        .arg(&csa)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
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
