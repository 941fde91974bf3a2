//! `scripts/generation.py`, one generation of the training loop, as a user runs it on a tiny
//! shape: the parent's self-play, fairy-stockfish labels, the split, the fine-tuned child, its
//! matches against the parent and against fairy-stockfish, and the report. Then the resume:
//! run again, nothing is redone; lose one match's result, only that match is played again.
//! Needs fairy-stockfish (the teacher and an opponent) and cshogi (the matches); skipped with
//! a message when one is missing, unless MANAKA_REQUIRE_ORACLES=1.

mod common;

use common::{oracles, repo, target_scratch};
use serde_json::Value;
use std::process::{Command, Output};

const TEST: &str = "generation_script";
const SHAPE: &str = "pair4_d16_o2_h32";
const HCPE: u64 = 38;

#[test]
fn a_generation_plays_labels_trains_measures_and_resumes() {
    let Some(fairy) = oracles::need_fairy_stockfish(TEST) else {
        return;
    };
    if !oracles::need_cshogi(TEST) {
        return;
    }
    let manaka = env!("CARGO_BIN_EXE_manaka");
    let dir = target_scratch(TEST);
    let parent = dir.join("parent.mnw");
    let init = Command::new(manaka)
        .args(["weights", "init", "--shape", SHAPE, "--seed", "1", "-o"])
        .arg(&parent)
        .output()
        .unwrap();
    assert!(init.status.success());
    let generation = dir.join("g1");
    let run = || -> Output {
        Command::new("python3")
            .arg(repo().join("scripts/generation.py"))
            .args(["--manaka", manaka, "--parent"])
            .arg(&parent)
            .arg("--out")
            .arg(&generation)
            .args(["--games", "8", "--simulations", "8", "--selfplay-seed", "3"])
            .args(["--depth", "1", "--val-records", "50", "--epochs", "1"])
            .args(["--label-sample", "2", "--train-arg=--mirror"])
            .args([
                "--match-games",
                "2",
                "--match-seeds",
                "1,2",
                "--byoyomi",
                "100",
            ])
            .args(["--fairy-skills", "0", "--fairy"])
            .arg(&fairy)
            .output()
            .unwrap()
    };
    let out = run();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "generation failed: {stderr}");

    let file = |name: &str| generation.join(name);
    let size = |name: &str| std::fs::metadata(file(name)).unwrap().len();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(file("generation.json")).unwrap()).unwrap();
    assert_eq!(
        report["shape"], SHAPE,
        "the parent's shape, read from its file"
    );
    // Every labelled record is either validation (the first 50) or training, nothing lost.
    assert_eq!(size("labels-d1-s2.hcpe") % HCPE, 0);
    assert_eq!(size("val.hcpe"), 50 * HCPE);
    assert_eq!(
        size("val.hcpe") + size("train.hcpe"),
        size("labels-d1-s2.hcpe")
    );
    assert_eq!(
        report["records"].as_u64(),
        Some(size("labels-d1-s2.hcpe") / HCPE)
    );
    let labels = std::fs::read(file("labels-d1-s2.hcpe")).unwrap();
    assert_eq!(
        std::fs::read(file("val.hcpe")).unwrap(),
        labels[..50 * HCPE as usize],
        "validation is the leading records"
    );
    // One position in two labelled, and trained with mirrored positions, as asked.
    let commands = &report["commands"];
    assert!(
        commands["label"].as_str().unwrap().ends_with("--sample 2"),
        "{commands}"
    );
    assert!(
        commands["train"].as_str().unwrap().ends_with("--mirror"),
        "{commands}"
    );
    // The child was trained from the parent and differs from it.
    assert!(report["training"]["samples"].as_u64().unwrap() > 0);
    assert!(
        report["training"]["val_value_loss"]
            .as_f64()
            .unwrap()
            .is_finite()
    );
    assert_ne!(
        std::fs::read(file("net.mnw")).unwrap(),
        std::fs::read(&parent).unwrap()
    );

    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "the parent and one Skill Level");
    assert_eq!(results[0]["opponent"], "its parent");
    assert_eq!(results[1]["opponent"], "fairy-stockfish Skill Level 0");
    for (r, games) in results.iter().zip([4, 2]) {
        common::check_match_totals(r, games);
    }
    // The verdict follows the interval against the parent.
    let (low, high) = (
        results[0]["elo_low"].as_f64(),
        results[0]["elo_high"].as_f64(),
    );
    let verdict = report["verdict"].as_str().unwrap();
    let want = if low.is_some_and(|v| v > 0.0) {
        "better"
    } else if high.is_some_and(|v| v < 0.0) {
        "worse"
    } else {
        "no measurable difference"
    };
    assert!(
        verdict.starts_with(want),
        "{verdict} for [{low:?}, {high:?}]"
    );
    let md = std::fs::read_to_string(file("generation.md")).unwrap();
    assert!(md.contains("| g1 | its parent (seeds 1,2: "), "{md}");
    // Each seed's record as the docs write it: wins–draws–losses with en dashes.
    let record = common::summary_record(&file("vs-parent-s1.json"));
    assert!(
        md.contains(&format!("(seeds 1,2: {record}, ")),
        "{record} in {md}"
    );
    assert!(
        md.contains("| g1 | fairy-stockfish Skill Level 0 (seed 1: "),
        "{md}"
    );
    assert!(md.contains("scripts/generation.py --manaka"), "{md}");

    // Run again: every step is kept, nothing is played, labelled or trained twice.
    let trained = std::fs::metadata(file("net.mnw"))
        .unwrap()
        .modified()
        .unwrap();
    let out = run();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !stderr.contains("$ "),
        "a resumed generation redid a step: {stderr}"
    );
    assert_eq!(
        std::fs::metadata(file("net.mnw"))
            .unwrap()
            .modified()
            .unwrap(),
        trained
    );
    // A lost match result: that match alone is played again.
    std::fs::remove_file(file("vs-parent-s2.json")).unwrap();
    let out = run();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let steps: Vec<&str> = stderr.lines().filter(|l| l.contains("$ ")).collect();
    assert_eq!(steps.len(), 1, "{stderr}");
    assert!(
        steps[0].contains("strength.py") && steps[0].contains("--seed 2"),
        "{stderr}"
    );
    assert!(file("vs-parent-s2.json").exists());

    // The archive (scripts/dataset.py): a second generation trains on the first one's labels
    // as an archived .hcpe.xz, unpacked and checked, and archives its own.
    let archive = dir.join("archive");
    let packed = Command::new("python3")
        .arg(repo().join("scripts/dataset.py"))
        .arg("--archive")
        .arg(&archive)
        .args(["pack"])
        .arg(file("labels-d1-s2.hcpe"))
        .args(["--name", "g1-d1"])
        .output()
        .unwrap();
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let second = dir.join("g2");
    let out = Command::new("python3")
        .arg(repo().join("scripts/generation.py"))
        .args(["--manaka", manaka, "--parent"])
        .arg(&parent)
        .arg("--out")
        .arg(&second)
        .args(["--games", "4", "--simulations", "8", "--selfplay-seed", "4"])
        .args(["--depth", "1", "--val-records", "20", "--epochs", "1"])
        .args(["--match-games", "0", "--fairy"])
        .arg(&fairy)
        .arg("--extra-data")
        .arg(archive.join("g1-d1.hcpe.xz"))
        .arg("--extra-teacher-only")
        .arg(file("val.hcpe"))
        .args(["--archive", "g2-d1", "--archive-dir"])
        .arg(&archive)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let unpacked = second.join("extra/g1-d1.hcpe");
    assert_eq!(std::fs::read(&unpacked).unwrap(), labels, "byte for byte");
    let log = std::fs::read_to_string(second.join("train.jsonl")).unwrap();
    let start: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    let own = std::fs::metadata(second.join("train.hcpe")).unwrap().len() / HCPE;
    let teacher_only = std::fs::metadata(file("val.hcpe")).unwrap().len() / HCPE;
    assert_eq!(
        start["train"].as_u64(),
        Some(own + labels.len() as u64 / HCPE + teacher_only),
        "trained on its own records, the archived set's and the teacher-only set's"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(second.join("generation.json")).unwrap())
            .unwrap();
    let train = report["commands"]["train"].as_str().unwrap();
    let teacher_flag = format!("--teacher-only {}", file("val.hcpe").display());
    assert!(
        train.contains(&teacher_flag) && train.find(&teacher_flag) > train.find("--data"),
        "{train}"
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(archive.join("manifest.json")).unwrap())
            .unwrap();
    let names: Vec<&str> = manifest["sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["g1-d1", "g2-d1"]);
    assert_eq!(
        manifest["sets"][1]["bytes"].as_u64(),
        Some(
            std::fs::metadata(second.join("labels-d1.hcpe"))
                .unwrap()
                .len()
        )
    );
}
