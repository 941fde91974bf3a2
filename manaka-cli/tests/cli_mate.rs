//! `manaka mate` as a user and a script meet it: the text answer, the JSON object, the
//! three outcomes, and refused input (exit status 2, one line on stderr, nothing on stdout).
//! The mates expected here were checked with cshogi's `mate_move`.

mod common;
use common::{json, manaka, ok, refused};

const MATE3: &str = "8k/9/7pp/9/9/9/9/9/K8 b BG 1";

#[test]
fn text_answer_names_the_mate_its_length_and_the_work() {
    let out = ok(&["mate", "--sfen", MATE3]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("mate      in 3 plies: B*3c "),
        "the mate line: {text}"
    );
    for field in ["position  8k/9/7pp", "nodes ", "time ", "nps "] {
        assert!(text.contains(field), "{field}: {text}");
    }
    let out = ok(&["mate", "--sfen", "startpos", "--moves", "7g7f", "3c3d"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\nno mate\n"), "{text}");
}

#[test]
fn json_has_outcome_line_plies_and_counts() {
    let v = json(&["mate", "--sfen", MATE3, "--json"]);
    assert_eq!(v["outcome"], "mate");
    assert_eq!(v["plies"], 3);
    assert_eq!(v["shortest"], true);
    let line: Vec<&str> = v["mate"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!((line.len(), line[0]), (3, "B*3c"));
    assert_eq!(v["sfen"], MATE3);
    assert!(v["nodes"].as_u64().unwrap() > 0);
    assert!(v["elapsed_ms"].as_f64().unwrap() >= 0.0);
    assert!(v["nps"].as_u64().is_some());
    // The line is legal: playing it leaves the defender without a move.
    let mut args = vec!["moves", "--sfen", MATE3, "--moves"];
    args.extend(&line);
    args.push("--json");
    let after = json(&args);
    assert_eq!(after["in_check"], true);
    assert_eq!(after["moves"].as_array().unwrap().len(), 0);

    // --moves first, then the mate: a tsume position.
    let v = json(&[
        "mate",
        "--sfen",
        "9/4k4/9/4P4/9/9/9/9/9 b 2G2r2b4s4n4l17p 1",
        "--json",
    ]);
    assert_eq!(
        (v["outcome"].as_str(), v["plies"].as_u64()),
        (Some("mate"), Some(3))
    );
}

#[test]
fn no_mate_and_unknown_are_answers_too() {
    let v = json(&["mate", "--sfen", MATE3, "--max-plies", "1", "--json"]);
    assert_eq!(v["outcome"], "nomate", "no mate within one ply");
    assert_eq!(v["plies"], serde_json::Value::Null);
    assert_eq!(v["mate"], serde_json::json!([]));
    // Shogi Zukō 79 as transcribed: far more than 50 nodes.
    let hard = "9/5lB2/9/4n1+b2/3+P5/3+pk+rG2/3p2S2/3s2s2/5Ns2 b R2Gg2n3l15p 1";
    let v = json(&["mate", "--sfen", hard, "--nodes", "50", "--json"]);
    assert_eq!(v["outcome"], "unknown");
    assert!(v["nodes"].as_u64().unwrap() <= 50, "{v}");
    let out = ok(&["mate", "--sfen", hard, "--nodes", "50", "--hash", "1"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("unknown (limit reached)"), "{text}");
}

#[test]
fn bad_input_is_refused_with_one_line() {
    let e = refused(&["mate", "--sfen", "garbage"]);
    assert!(e.contains("--sfen"), "{e}");
    refused(&["mate", "--sfen", MATE3, "--moves", "7g7f"]);
    refused(&["mate"]);
    refused(&["mate", "--sfen", MATE3, "--nodes", "0"]);
    refused(&["mate", "--sfen", MATE3, "--max-plies", "0"]);
    refused(&["mate", "--sfen", MATE3, "--max-plies", "600"]);
    refused(&["mate", "--sfen", MATE3, "--hash", "0"]);
    refused(&["mate", "--sfen", MATE3, "--time", "soon"]);
    // The side not to move in check is refused like any impossible position.
    let e = refused(&["mate", "--sfen", "8k/6G2/9/9/9/9/9/9/K7L b P 1"]);
    assert!(e.contains("check"), "{e}");
}

#[test]
fn help_is_the_manual() {
    let out = manaka(&["mate", "--help"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--sfen",
        "--moves",
        "--time",
        "--nodes",
        "--max-plies",
        "--hash",
        "--json",
        "Examples:",
        "Exit status",
        "pawn-drop",
    ] {
        assert!(
            text.to_lowercase().contains(&needle.to_lowercase()),
            "{needle}: {text}"
        );
    }
}
