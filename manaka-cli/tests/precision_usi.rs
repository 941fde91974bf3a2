//! The `Precision` setting as a user sets it: `manaka eval --precision` moves the evaluation
//! by at most the bound docs/evaluator.md ("Precision") documents against the reference
//! evaluator — and does move it, so the copies really run — and `manaka usi` takes the USI
//! option `Precision`, refuses a value it does not have with the choices, names the precision
//! in use in an `info string`, and plays a legal move (checked with cshogi).

mod common;

use common::{Scratch, json, manaka, oracles, refused, usi_until_bestmove};
use serde_json::Value;
use std::collections::HashMap;

/// A line of the embedded default network's favourite kind of opening, with a capture and a
/// recapture; positions after 0, 4, 8 and 11 plies of it are evaluated.
const LINE: [&str; 11] = [
    "7g7f", "3c3d", "2g2f", "8c8d", "2f2e", "8d8e", "6i7h", "4a3b", "2e2d", "2c2d", "2h2d",
];

/// The value logit and each move's policy logit `manaka eval --json` reports.
fn eval(moves: &[&str], extra: &[&str]) -> (f64, HashMap<String, f64>, Value) {
    let mut args = vec!["eval", "--json"];
    args.extend_from_slice(extra);
    if !moves.is_empty() {
        args.push("--moves");
        args.extend_from_slice(moves);
    }
    let v = json(&args);
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
    (v["value_logit"].as_f64().unwrap(), policy, v)
}

/// The largest |Δ value logit| and |Δ policy logit| of `a` against `b` over one position.
fn errors(
    a: &(f64, HashMap<String, f64>, Value),
    b: &(f64, HashMap<String, f64>, Value),
) -> (f64, f64) {
    assert_eq!(a.1.len(), b.1.len(), "the same legal moves");
    let policy =
        a.1.iter()
            .map(|(m, l)| (l - b.1[m]).abs())
            .fold(0.0, f64::max);
    ((a.0 - b.0).abs(), policy)
}

/// Each precision against the reference evaluator's f64 logits (the oracle), on the trained
/// default network: within the documented bound (value, policy), and bf16 / int8 not equal to
/// f32 (the low-precision copies are what runs).
#[test]
fn eval_precision_moves_the_evaluation_by_its_bound_and_no_more() {
    // (precision, bound on |Δ value logit|, bound on |Δ policy logit|): docs/evaluator.md.
    let bounds = [
        ("f32", 1e-3, 1e-3),
        ("bf16", 0.02, 0.1),
        ("int8", 0.08, 0.25),
    ];
    let mut moved = HashMap::new();
    for plies in [0, 4, 8, 11] {
        let moves = &LINE[..plies];
        let reference = eval(moves, &["--backend", "reference"]);
        let f32 = eval(moves, &["--precision", "f32"]);
        for (precision, value_bound, policy_bound) in bounds {
            let low = eval(moves, &["--precision", precision]);
            assert_eq!(low.2["precision"], precision, "the precision in use");
            let backend = low.2["backend"].as_str().unwrap();
            assert!(backend.contains("(compiled"), "{backend}");
            let (v, p) = errors(&low, &reference);
            eprintln!(
                "{plies} plies, {precision}: value {v:.2e}, policy {p:.2e} from the reference"
            );
            assert!(
                v <= value_bound && p <= policy_bound,
                "{precision} after {plies} plies: value {v}, policy {p} from the reference"
            );
            let (dv, dp) = errors(&low, &f32);
            *moved.entry(precision).or_insert(0.0f64) += dv + dp;
        }
    }
    assert_eq!(moved["f32"], 0.0, "--precision f32 is the default engine");
    for precision in ["bf16", "int8"] {
        assert!(
            moved[precision] > 0.0,
            "{precision} computes exactly as f32"
        );
    }
}

/// Where a precision cannot apply, the command says so: an explicit reference or integer
/// backend is refused with what to do; the material evaluator runs f32 with a note.
#[test]
fn eval_precision_is_never_silently_ignored() {
    let e = refused(&["eval", "--backend", "reference", "--precision", "bf16"]);
    assert!(
        e.contains("--precision bf16") && e.contains("--backend auto or compiled"),
        "{e}"
    );
    let e = refused(&["eval", "--precision", "int4"]);
    assert!(e.contains("int4"), "{e}");
    let out = manaka(&[
        "eval",
        "--json",
        "--weights",
        "builtin:material",
        "--precision",
        "int8",
    ]);
    assert!(out.status.success());
    let note = String::from_utf8(out.stderr).unwrap();
    assert!(
        note.starts_with("note: Precision int8 not applied: the material evaluator"),
        "{note}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["precision"], "f32");
}

#[test]
fn usi_precision_option_is_announced_refused_named_and_plays() {
    let moves = &LINE[..4];
    let position = format!("position startpos moves {}", moves.join(" "));
    let lines = usi_until_bestmove(&[
        "usi",
        "setoption name Precision value int4",
        "setoption name Precision value int8",
        "isready",
        &position,
        "go nodes 64",
    ]);
    let has = |s: &str| lines.iter().any(|l| l == s);
    assert!(
        has("option name Precision type combo default f32 var f32 var bf16 var int8"),
        "{lines:?}"
    );
    assert!(
        has("info string error: Precision must be f32, bf16 or int8, not 'int4'"),
        "{lines:?}"
    );
    let loaded = lines
        .iter()
        .find(|l| l.starts_with("info string EvalFile not set"))
        .unwrap_or_else(|| panic!("no network description: {lines:?}"));
    assert!(loaded.contains("int8 W1/W2"), "{loaded}");
    assert!(
        !lines.iter().any(|l| l.contains("not applied")),
        "{lines:?}"
    );
    let best = lines.last().unwrap();
    let mv = best.split_whitespace().nth(1).unwrap();
    if oracles::need_cshogi("precision_usi") {
        assert!(oracles::cshogi_legal(moves, mv), "{best} after {moves:?}");
    }
    // The option changed back to f32 reloads the network: the description has no precision.
    let lines = usi_until_bestmove(&[
        "setoption name Precision value bf16",
        "isready",
        "setoption name Precision value f32",
        "isready",
        "go nodes 8",
    ]);
    let loads: Vec<_> = lines
        .iter()
        .filter(|l| l.starts_with("info string EvalFile not set"))
        .collect();
    assert_eq!(loads.len(), 2, "{lines:?}");
    assert!(loads[0].contains("bf16 W1/W2"), "{}", loads[0]);
    assert!(!loads[1].contains("W1/W2"), "{}", loads[1]);
}

/// On an `nnue` shape the option does not apply (its weights are the integer engine's), and
/// the engine says so in an `info string`.
#[test]
fn usi_precision_on_an_nnue_shape_says_it_is_not_applied() {
    // A fresh directory each run (a second run must not meet the first one's file).
    let dir = Scratch::new("precision-usi");
    let file = dir.0.join("nnue.mnw");
    let out = manaka(&[
        "weights",
        "init",
        "--shape",
        "pair0_d16_o1_h8_halfkp_nnue",
        "--seed",
        "3",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let eval_file = format!("setoption name EvalFile value {}", file.display());
    let lines = usi_until_bestmove(&[
        &eval_file,
        "setoption name Precision value bf16",
        "isready",
        "go nodes 8",
    ]);
    let note = lines
        .iter()
        .find(|l| l.starts_with("info string Precision bf16 not applied"))
        .unwrap_or_else(|| panic!("no note: {lines:?}"));
    assert!(note.contains("nnue shape"), "{note}");
    assert!(lines.last().unwrap().starts_with("bestmove "), "{lines:?}");
}
