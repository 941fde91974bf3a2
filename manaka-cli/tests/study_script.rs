//! `scripts/study.py` on two small shapes, as a user runs it: it trains both on the same
//! self-play games, measures them, plays a round robin and writes its table, its JSON and two
//! SVG plots. Needs cshogi (the round robin runs through scripts/strength.py); skipped with a
//! message when it is missing, unless MANAKA_REQUIRE_ORACLES=1.

mod common;

use common::{oracles, repo, target_scratch};
use std::process::Command;

const TEST: &str = "study_script";
const SHAPES: [&str; 2] = ["pair0_d128_o2_h256_kp", "pair0_d256_o1_h32_h232_kp_nnue"];

#[test]
fn a_study_of_two_shapes_writes_its_table_json_and_plots() {
    if !oracles::need_cshogi(TEST) {
        return;
    }
    let manaka = env!("CARGO_BIN_EXE_manaka");
    let dir = target_scratch(TEST);
    let sp = dir.join("sp");
    let out = Command::new(manaka)
        .args([
            "selfplay",
            "--weights",
            "builtin:material",
            "--games",
            "24",
            "--simulations",
            "8",
        ])
        .args(["--games-per-file", "24", "--out"])
        .arg(&sp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let games = sp.join("selfplay-000000.hcpe3");
    let study = dir.join("study");
    let run = || {
        Command::new("python3")
            .arg(repo().join("scripts/study.py"))
            .args(["--manaka", manaka, "--shapes", &SHAPES.join(",")])
            .arg("--data")
            .arg(&games)
            .arg("--val")
            .arg(&games)
            .args(["--samples", "2560", "--games", "2", "--byoyomi", "100"])
            .args(["--bench-time", "0.02", "--go-simulations", "500", "--out"])
            .arg(&study)
            .output()
            .unwrap()
    };
    let out = run();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "study failed: {stderr}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(study.join("study.json")).unwrap()).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, shape) in rows.iter().zip(SHAPES) {
        assert_eq!(row["shape"], shape);
        // Parameters as the shape grammar counts them, bytes as the file is.
        let params = manaka_shapes::Shape::parse(shape).unwrap().param_count();
        assert_eq!(row["params"].as_u64(), Some(params), "{shape}");
        let file = std::fs::metadata(study.join(format!("{shape}.mnw")))
            .unwrap()
            .len();
        assert_eq!(row["bytes"].as_u64(), Some(file), "{shape}");
        assert_eq!(
            row["samples"].as_u64(),
            Some(2560),
            "{shape}: 10 steps of 256"
        );
        for key in [
            "evals_per_s",
            "simulations_per_s",
            "val_value_loss",
            "val_policy_loss",
            "elo",
        ] {
            let v = row[key]
                .as_f64()
                .unwrap_or_else(|| panic!("{shape}: {key} missing"));
            assert!(v.is_finite(), "{shape}: {key} = {v}");
        }
    }
    let pair = &json["pairs"][0];
    assert_eq!(pair["games"].as_u64(), Some(2));
    // Bradley-Terry ratings have mean 0, and the better scorer is not rated lower.
    let (ea, eb) = (
        rows[0]["elo"].as_f64().unwrap(),
        rows[1]["elo"].as_f64().unwrap(),
    );
    assert!((ea + eb).abs() < 1e-6, "{ea} + {eb}");
    let (w, l) = (
        pair["wins"].as_u64().unwrap(),
        pair["losses"].as_u64().unwrap(),
    );
    assert_eq!(
        w.cmp(&l),
        ea.partial_cmp(&eb).unwrap(),
        "W {w} L {l}, Elo {ea} {eb}"
    );

    let md = std::fs::read_to_string(study.join("study.md")).unwrap();
    for shape in SHAPES {
        assert!(md.contains(&format!("| `{shape}` |")), "{md}");
    }
    // The plots: one point per shape against speed; loss curves for both shapes.
    let speed = std::fs::read_to_string(study.join("elo-vs-speed.svg")).unwrap();
    assert!(speed.starts_with("<svg") && speed.trim_end().ends_with("</svg>"));
    assert_eq!(speed.matches("class=\"point\"").count(), 2, "{speed}");
    let loss = std::fs::read_to_string(study.join("loss.svg")).unwrap();
    for shape in SHAPES {
        assert!(
            loss.contains(&format!("data-name=\"{shape} (validation)\"")),
            "{shape}"
        );
    }

    // Run again: every step is kept, nothing is trained or played twice.
    let before = std::fs::metadata(study.join(format!("{}.mnw", SHAPES[0])))
        .unwrap()
        .modified()
        .unwrap();
    let out = run();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("$ "),
        "a resumed study ran a step again: {stderr}"
    );
    let after = std::fs::metadata(study.join(format!("{}.mnw", SHAPES[0])))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}
