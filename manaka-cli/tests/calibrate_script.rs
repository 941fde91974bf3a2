//! `scripts/calibrate.py`, the fit of a teacher's score scale to game results, on HCPE files
//! written here: a hand-computed log loss for one record, and the scale recovered from
//! records whose results follow σ(eval / 1200) exactly in proportion, and the side-to-move
//! bit as cshogi encodes it. Needs python3 with numpy and cshogi (scripts/test installs them).

mod common;

use common::{oracles, repo, target_scratch};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const TEST: &str = "calibrate_script";

/// One 38-byte HCPE record: only the side-to-move bit of the position matters to the script.
fn record(white_to_move: bool, eval: i16, result: u8) -> Vec<u8> {
    let mut r = vec![0u8; 38];
    r[0] = u8::from(white_to_move);
    r[32..34].copy_from_slice(&eval.to_le_bytes());
    r[36] = result;
    r
}

fn calibrate(args: &[&Path]) -> std::process::Output {
    Command::new("python3")
        .arg(repo().join("scripts/calibrate.py"))
        .args(args)
        .arg("--json")
        .output()
        .unwrap()
}

fn calibrate_json(args: &[&Path]) -> Value {
    let out = calibrate(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_fitted_scale_is_the_one_the_results_follow() {
    if !oracles::python_imports("numpy") {
        oracles::skip(TEST, "python3 with numpy (pip install numpy)");
        return;
    }
    let dir = target_scratch(TEST);

    // One record, Black to move at +600, Black won: loss ln(1 + e^−1) = 0.313262 at 600.
    // A mate score (32000 − 5) and a clamped one (−30000) are left out.
    let one = dir.join("one.hcpe");
    let mut bytes = record(false, 600, 1);
    bytes.extend(record(true, 31995, 2));
    bytes.extend(record(false, -30000, 2));
    std::fs::write(&one, &bytes).unwrap();
    let v = calibrate_json(&[&one]);
    let row = &v["files"][0];
    assert_eq!(row["records"], 1, "{v}");
    let at600 = row["log_loss_at_600"].as_f64().unwrap();
    assert!((at600 - 0.31326).abs() < 1e-4, "{v}");
    // A single won game is best explained by the most confident scale the search allows.
    assert!(row["scale"].as_f64().unwrap() < 25.0, "{v}");

    // Scores −3000 … 3000 by 20, 200 games each, wins in proportion σ(e / 1200) (rounded),
    // from both sides to move; White's wins are gameResult 2. Draws: a score of 0 has as
    // many draws as decisive games, which count half and leave the fit alone.
    let scale = 1200.0f64;
    let mut bytes = Vec::new();
    for e in (-3000i16..=3000).step_by(20) {
        let wins = (200.0 / (1.0 + (-f64::from(e) / scale).exp())).round() as usize;
        for white in [false, true] {
            let (won, lost) = if white { (2, 1) } else { (1, 2) };
            for g in 0..200 {
                bytes.extend(record(white, e, if g < wins { won } else { lost }));
            }
        }
        if e == 0 {
            for _ in 0..100 {
                bytes.extend(record(false, 0, 0));
            }
        }
    }
    let games = dir.join("games.hcpe");
    std::fs::write(&games, &bytes).unwrap();
    let v = calibrate_json(&[&games, &one]);
    let fitted = v["files"][0]["scale"].as_f64().unwrap();
    assert!(
        (fitted - scale).abs() < 0.01 * scale,
        "fitted {fitted}: {v}"
    );
    assert!(
        v["files"][0]["log_loss"].as_f64().unwrap()
            < v["files"][0]["log_loss_at_600"].as_f64().unwrap(),
        "{v}"
    );
    assert_eq!(
        v["all"]["records"].as_u64().unwrap(),
        v["files"][0]["records"].as_u64().unwrap() + 1,
        "{v}"
    );

    // A file that is not whole records is refused with its name.
    let torn = dir.join("torn.hcpe");
    std::fs::write(&torn, &bytes[..50]).unwrap();
    let out = calibrate(&[&torn]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("torn.hcpe") && err.contains("38-byte"),
        "{err}"
    );
}

/// The side to move is read as cshogi writes it: records that cshogi encodes (the start
/// position, Black to move, and the position after 7g7f, White to move), each at +600 for
/// the side to move and won by it, cost ln(1 + e^−1) = 0.313262 each at 600; with the side
/// misread, the White-to-move record would cost ln(1 + e) = 1.313262.
#[test]
fn the_side_to_move_is_read_as_cshogi_writes_it() {
    if !oracles::python_imports("cshogi, numpy") {
        oracles::skip(
            TEST,
            "python3 with cshogi and numpy (pip install cshogi numpy)",
        );
        return;
    }
    let dir = target_scratch(&format!("{TEST}-cshogi"));
    let path = dir.join("cshogi.hcpe");
    let script = r#"
import sys, numpy as np, cshogi
records = np.zeros(2, dtype=cshogi.HuffmanCodedPosAndEval)
board = cshogi.Board()
board.to_hcp(records[0]["hcp"])
records[0]["eval"], records[0]["gameResult"] = 600, cshogi.BLACK_WIN
board.push_usi("7g7f")
assert board.turn == cshogi.WHITE
board.to_hcp(records[1]["hcp"])
records[1]["eval"], records[1]["gameResult"] = 600, cshogi.WHITE_WIN
records.tofile(sys.argv[1])
"#;
    oracles::python_ok(script, &[&path]);
    let v = calibrate_json(&[&path]);
    let row = &v["files"][0];
    assert_eq!(row["records"], 2, "{v}");
    let at600 = row["log_loss_at_600"].as_f64().unwrap();
    assert!((at600 - 0.31326).abs() < 1e-4, "{v}");
}
