//! `manaka eval` as a user meets it: JSON keys, a policy over exactly the legal moves sorted by
//! probability and summing to one, compiled and reference backends agreeing, moves played
//! incrementally giving the same result as the SFEN they lead to, and refused input.

use std::collections::BTreeSet;
use std::path::PathBuf;

mod common;
use common::{json, manaka};

/// A small weight file made with `manaka weights init`, in a per-test directory.
fn weights(shape: &str, tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("manaka-cli-eval-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{shape}.mnw"));
    let out = manaka(&[
        "weights",
        "init",
        "--shape",
        shape,
        "--seed",
        "7",
        "-o",
        path.to_str().unwrap(),
        "--force",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

fn legal(sfen: &str, moves: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["moves", "--sfen", sfen, "--json"];
    if !moves.is_empty() {
        args.push("--moves");
        args.extend(moves);
    }
    json(&args)["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["usi"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn eval_json_covers_exactly_the_legal_moves() {
    let w = weights("pair4_d16_o2_h32", "keys");
    let v = json(&[
        "eval",
        "--weights",
        w.to_str().unwrap(),
        "--sfen",
        "startpos",
        "--moves",
        "7g7f",
        "3c3d",
        "--json",
    ]);
    for k in [
        "value_logit",
        "win_prob",
        "cp",
        "policy",
        "shape",
        "backend",
        "sfen",
    ] {
        assert!(v.get(k).is_some(), "missing {k}: {v}");
    }
    let l = v["value_logit"].as_f64().unwrap();
    // SPEC §5: win probability σ(ℓ), cp = round(600ℓ).
    assert!((v["win_prob"].as_f64().unwrap() - 1.0 / (1.0 + (-l).exp())).abs() < 1e-9);
    assert_eq!(v["cp"].as_i64().unwrap(), (600.0 * l).round() as i64);
    let policy = v["policy"].as_array().unwrap();
    let usi: BTreeSet<String> = policy
        .iter()
        .map(|p| p["usi"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(usi, legal("startpos", &["7g7f", "3c3d"]));
    let probs: Vec<f64> = policy.iter().map(|p| p["prob"].as_f64().unwrap()).collect();
    assert!(
        probs.windows(2).all(|w| w[0] >= w[1]),
        "sorted by probability"
    );
    assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-6);
    assert!(policy.iter().all(|p| p["label"].as_u64().unwrap() < 2187));
}

#[test]
fn backends_agree_and_moves_equal_their_sfen() {
    let w = weights("pair4_d16_o2_h32", "agree");
    let w = w.to_str().unwrap();
    let moves = [
        "2g2f", "8c8d", "2f2e", "8d8e", "2e2d", "2c2d", "2h2d", "P*2c",
    ];
    let compiled = json(&[
        "eval",
        "--weights",
        w,
        "--backend",
        "compiled",
        "--moves",
        "2g2f",
        "8c8d",
        "2f2e",
        "8d8e",
        "2e2d",
        "2c2d",
        "2h2d",
        "P*2c",
        "--json",
    ]);
    let mut args = vec![
        "eval",
        "--weights",
        w,
        "--backend",
        "reference",
        "--json",
        "--moves",
    ];
    args.extend(moves);
    let reference = json(&args);
    assert!(compiled["backend"].as_str().unwrap().contains("compiled"));
    assert!(reference["backend"].as_str().unwrap().contains("reference"));
    let (a, b) = (
        compiled["value_logit"].as_f64().unwrap(),
        reference["value_logit"].as_f64().unwrap(),
    );
    assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "{a} vs {b}");
    // The same position given directly as SFEN (no incremental updates) evaluates the same.
    let sfen = reference["sfen"].as_str().unwrap();
    let direct = json(&[
        "eval",
        "--weights",
        w,
        "--backend",
        "reference",
        "--sfen",
        sfen,
        "--json",
    ]);
    assert!((direct["value_logit"].as_f64().unwrap() - b).abs() < 1e-9);
}

#[test]
fn bad_input_is_refused_with_one_line() {
    let w = weights("pair4_d16_o2_h32", "bad");
    let w = w.to_str().unwrap();
    for args in [
        vec!["eval", "--weights", "/nonexistent/x.mnw"],
        vec!["eval", "--weights", w, "--sfen", "not an sfen"],
        vec!["eval", "--weights", w, "--moves", "7g7f", "7g7f"],
        vec!["eval", "--weights", w, "--backend", "gpu"],
    ] {
        let out = manaka(&args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}
