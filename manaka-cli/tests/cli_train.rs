//! `manaka train` as a user meets it: a trained file evaluates in `manaka eval` (reference and
//! compiled backends) exactly as the trainer's own forward pass computes it, progress and the
//! JSON log, resumption, and refused input.

use manaka_runtime::data::records::{GameResult, HcpeRecord, write_records};
use manaka_runtime::eval::MaterialEvaluator;
use manaka_runtime::random::{RandomPositions, random_positions};
use manaka_runtime::shogi::Position;
use manaka_runtime::train::{self, trainer::load_model};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{manaka, ok};

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("manaka-cli-train-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn positions(count: usize, seed: u64) -> Vec<Position> {
    random_positions(&RandomPositions {
        count,
        seed,
        min_ply: 10,
        max_ply: 80,
    })
    .unwrap()
}

/// HCPE records with the material balance as the teacher's score and the first legal move as
/// the best move.
fn write_data(path: &Path, count: usize, seed: u64) -> Vec<Position> {
    let pos = positions(count, seed);
    let records: Vec<HcpeRecord> = pos
        .iter()
        .map(|p| {
            let cp = MaterialEvaluator::material_cp(p).clamp(-30000, 30000) as i16;
            HcpeRecord::new(p, cp, p.legal_moves().first().copied(), GameResult::Draw).unwrap()
        })
        .collect();
    write_records(path, &records).unwrap();
    pos
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The value logit and the logit of each move (by USI) that `manaka eval` reports.
fn eval(weights: &Path, sfen: &str, backend: &str) -> (f64, Vec<(String, f64)>) {
    let out = ok(&[
        "eval",
        "--weights",
        s(weights),
        "--sfen",
        sfen,
        "--backend",
        backend,
        "--json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let policy = v["policy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["usi"].as_str().unwrap().to_string(),
                m["logit"].as_f64().unwrap(),
            )
        })
        .collect();
    (v["value_logit"].as_f64().unwrap(), policy)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * (1.0 + a.abs().max(b.abs()))
}

/// Train a few steps, then compare `manaka eval` on the file written with the trainer's own
/// forward pass (f32, as in training) on positions it trained on and positions it did not.
#[test]
fn a_trained_file_evaluates_as_the_trainer_computed() {
    // Two compiled-in shapes (Manaka and NNUE arithmetic) and one only the reference runs.
    for (shape, compiled) in [
        ("pair4_d16_o2_h32", true),
        ("pair0_d16_o1_h8_halfkp_nnue", true),
        ("pair2_d4_o2_h8_m2_f1_lse1_ks", false),
    ] {
        let d = dir(shape);
        let data = d.join("train.hcpe");
        let val = d.join("val.hcpe");
        let trained_on = write_data(&data, 120, 1);
        let unseen = write_data(&val, 40, 2);
        let out = d.join("net.mnw");
        let log = d.join("log.jsonl");
        let o = ok(&[
            "train",
            "--shape",
            shape,
            "--data",
            s(&data),
            "--val",
            s(&val),
            "--out",
            s(&out),
            "--epochs",
            "2",
            "--batch",
            "16",
            "--threads",
            "2",
            "--lr",
            "0.01",
            "--report-every",
            "0s",
            "--log",
            s(&log),
            "--json",
        ]);
        let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(summary["stop"], "finished", "{summary}");
        assert_eq!(summary["steps"], 16);
        assert_eq!(summary["samples"], 240);
        assert!(summary["val_value_loss"].as_f64().unwrap().is_finite());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains("/s") && stderr.contains("validation") && stderr.contains("checkpoint"),
            "{stderr}"
        );
        let events: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for kind in ["start", "report", "validation", "checkpoint"] {
            assert!(
                events.iter().any(|e| e["event"] == kind),
                "no {kind} event in the log"
            );
        }

        let model = load_model(&out).unwrap();
        for p in trained_on.iter().take(3).chain(unseen.iter().take(2)) {
            let moves = p.legal_moves();
            let f = train::forward(&model, &[(p, moves.as_slice())]);
            let backends: &[&str] = if compiled {
                &["reference", "compiled"]
            } else {
                &["reference"]
            };
            for backend in backends {
                let (value, policy) = eval(&out, &p.to_sfen(), backend);
                assert!(
                    close(value, f64::from(f.value[0])),
                    "{shape} {backend}: value {value} vs {}",
                    f.value[0]
                );
                assert_eq!(policy.len(), moves.len());
                for (m, &z) in moves.iter().zip(&f.logits[0]) {
                    let (_, logit) = policy.iter().find(|(u, _)| *u == m.to_usi()).unwrap();
                    assert!(
                        close(*logit, f64::from(z)),
                        "{shape} {backend} {m}: {logit} vs {z}"
                    );
                }
            }
        }
    }
}

#[test]
fn runs_resume_and_bad_input_is_refused() {
    let d = dir("resume");
    let data = d.join("train.hcpe");
    write_data(&data, 64, 3);
    let out = d.join("net.mnw");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "train",
            "--shape",
            "pair2_d4_o1_h4",
            "--data",
            s(&data),
            "--out",
            s(&out),
            "--batch",
            "16",
            "--threads",
            "2",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        manaka(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let json = |o: &Output| -> Value { serde_json::from_slice(&o.stdout).unwrap() };
    let o = run(&["--max-steps", "3", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&o)["stop"], "step limit");
    assert!(Path::new(&format!("{}.state", s(&out))).exists());
    // Running again over it without --resume or --force: refused, one line, exit 2.
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--resume") && err.trim().lines().count() == 1,
        "{err}"
    );
    let o = run(&["--resume", "--epochs", "2", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    assert_eq!(
        (
            v["stop"].as_str(),
            v["steps"].as_u64(),
            v["epochs"].as_u64()
        ),
        (Some("finished"), Some(8), Some(2))
    );

    for (extra, says) in [
        (vec!["--shape", "pair2_d4_o1"], "--shape"),
        (vec!["--lambda", "2", "--force"], "lambda"),
        (vec!["--init", "/nonexistent.mnw", "--force"], "nonexistent"),
        (vec!["--resume", "--init", s(&out)], "--init"),
        (vec!["--time-limit", "5 minutes", "--force"], "time"),
    ] {
        let o = run(&extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // An extension that names no format needs --format.
    let txt = d.join("train.txt");
    std::fs::copy(&data, &txt).unwrap();
    let o = manaka(&[
        "train",
        "--shape",
        "pair2_d4_o1_h4",
        "--data",
        s(&txt),
        "--out",
        s(&d.join("t.mnw")),
        "--max-steps",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--format"));
    ok(&[
        "train",
        "--shape",
        "pair2_d4_o1_h4",
        "--data",
        s(&txt),
        "--format",
        "hcpe",
        "--out",
        s(&d.join("t.mnw")),
        "--max-steps",
        "1",
    ]);
}

/// `--teacher-only` files train on the teacher alone: at --lambda 0 they give the bytes that
/// --data gives at --lambda 1, where --data at --lambda 0 trains on their (draw) results.
#[test]
fn teacher_only_data_ignores_the_game_result() {
    let d = dir("teacher-only");
    let data = d.join("children.hcpe");
    write_data(&data, 48, 9);
    let train = |flag: &str, lambda: &str, out: &str| -> Vec<u8> {
        let out = d.join(out);
        let o = ok(&[
            "train",
            "--shape",
            "pair2_d4_o1_h4",
            flag,
            s(&data),
            "--lambda",
            lambda,
            "--out",
            s(&out),
            "--batch",
            "16",
            "--threads",
            "1",
            "--max-steps",
            "6",
        ]);
        if flag == "--teacher-only" {
            assert!(String::from_utf8_lossy(&o.stderr).contains("(teacher only)"));
        }
        std::fs::read(out).unwrap()
    };
    let teacher_only = train("--teacher-only", "0", "a.mnw");
    assert_eq!(teacher_only, train("--data", "1", "b.mnw"));
    assert_ne!(teacher_only, train("--data", "0", "c.mnw"));
}

#[test]
fn help_is_the_manual() {
    let o = ok(&["train", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "--resume",
        "--lambda",
        "HCPE3",
        "PackedSfenValue",
        "756.0864962951762",
        "OUT.state",
        "--time-limit",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}");
    }
}
