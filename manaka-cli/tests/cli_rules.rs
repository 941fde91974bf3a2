//! The rules commands as a user and a script meet them: `manaka perft` and `manaka moves`,
//! their JSON, and the contract for refused input (exit status 2, exactly one line on
//! stderr, nothing on stdout). Expected numbers are the published perft counts and positions
//! worked out by hand, not output captured from the program.

mod common;
use common::{json, manaka, refused};

#[test]
fn perft_json_reports_nodes_seconds_and_nps() {
    let v = json(&["perft", "--sfen", "startpos", "--depth", "3", "--json"]);
    assert_eq!(v["nodes"], 25_470);
    assert!(v["seconds"].as_f64().is_some_and(|s| s >= 0.0), "{v}");
    assert!(v["nps"].as_u64().is_some(), "{v}");
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["nodes", "nps", "seconds"],
        "no divide without --divide"
    );

    let v = json(&[
        "perft",
        "--sfen",
        "8k/6G2/9/7N1/9/9/9/9/K8 b P 1",
        "--depth",
        "3",
        "--json",
    ]);
    assert_eq!(v["nodes"], 698);
    let v = json(&["perft", "--sfen", "startpos", "--depth", "0", "--json"]);
    assert_eq!(v["nodes"], 1);
}

#[test]
fn perft_divide_splits_the_count_by_first_move() {
    let v = json(&[
        "perft", "--sfen", "startpos", "--depth", "2", "--divide", "--json",
    ]);
    assert_eq!(v["nodes"], 900);
    let divide = v["divide"].as_object().expect("a divide object");
    assert_eq!(divide.len(), 30);
    // No first move of Black's touches White's 30 replies.
    for (m, n) in divide {
        assert_eq!(n, 30, "{m}");
    }
    assert!(divide.contains_key("7g7f") && divide.contains_key("2h1h"));

    // The text form lists "move: count" lines, then the totals.
    let out = manaka(&["perft", "--sfen", "startpos", "--depth", "3", "--divide"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().filter(|l| l.contains(": ")).count(), 30);
    assert!(text.lines().any(|l| l == "nodes 25470"), "{text}");
    let sum: u64 = text
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(_, n)| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 25_470);
}

#[test]
fn perft_plays_moves_before_counting() {
    let v = json(&[
        "perft", "--sfen", "startpos", "--moves", "7g7f", "--depth", "1", "--json",
    ]);
    assert_eq!(v["nodes"], 30, "White's replies to 7g7f");
}

#[test]
fn moves_json_lists_legal_moves() {
    let v = json(&["moves", "--sfen", "startpos", "--json"]);
    assert_eq!(
        v["sfen"],
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
    );
    assert_eq!(v["in_check"], false);
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 30);
    let usi: Vec<&str> = moves
        .iter()
        .map(|m| m["usi"].as_str().expect("each move has usi"))
        .collect();
    for m in ["7g7f", "2g2f", "1i1h", "5i4h", "6i7h"] {
        assert!(usi.contains(&m), "{m} missing from {usi:?}");
    }

    // The pawn-drop-mate position: 78 moves, and not the mating drop.
    let v = json(&["moves", "--sfen", "8k/6G2/9/7N1/9/9/9/9/K8 b P 1", "--json"]);
    let usi: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["usi"].as_str().unwrap())
        .collect();
    assert_eq!(usi.len(), 78);
    assert!(!usi.contains(&"P*1b") && usi.contains(&"P*1c"));

    // After moves, with the side to move in check: the rook on 5a checks the king on 5i.
    let v = json(&[
        "moves",
        "--sfen",
        "k4r3/9/9/9/9/9/9/3G5/4K4 w - 1",
        "--moves",
        "4a5a",
        "--json",
    ]);
    assert_eq!(v["sfen"], "k3r4/9/9/9/9/9/9/3G5/4K4 b - 2");
    assert_eq!(v["in_check"], true);
    let mut usi: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["usi"].as_str().unwrap())
        .collect();
    usi.sort();
    assert_eq!(usi, ["5i4h", "5i4i", "5i6i", "6h5g", "6h5h"]);
}

#[test]
fn moves_text_output() {
    let out = manaka(&["moves", "--sfen", "startpos"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("30 legal moves"), "{text}");
    assert!(text.split_whitespace().any(|w| w == "7g7f"));
}

#[test]
fn refused_input_exits_2_with_one_line() {
    // Bad SFEN: the message names what is wrong.
    let e = refused(&[
        "perft",
        "--sfen",
        "4k4/9/9/9/9/9/9/9/3KK4 b - 1",
        "--depth",
        "1",
    ]);
    assert!(e.to_lowercase().contains("king"), "{e}");
    let e = refused(&[
        "moves",
        "--sfen",
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL x - 1",
    ]);
    assert!(e.contains("sfen") || e.contains("SFEN"), "{e}");
    refused(&["moves", "--sfen", "not an sfen at all"]);
    refused(&["moves", "--sfen", ""]);
    // Illegal or malformed moves.
    let e = refused(&["moves", "--sfen", "startpos", "--moves", "7g7f", "7g7e"]);
    assert!(e.contains("7g7e"), "{e}");
    refused(&[
        "perft", "--sfen", "startpos", "--moves", "P*5e", "--depth", "1",
    ]);
    refused(&["moves", "--moves", "xyz"]);
    // Bad flags and values.
    refused(&["perft", "--sfen", "startpos", "--depht", "3"]);
    refused(&["perft", "--sfen", "startpos"]);
    refused(&["perft", "--depth", "13"]);
    refused(&["perft", "--depth", "three"]);
    refused(&["moves", "--json", "--bogus"]);
    refused(&["no-such-command"]);
}

#[test]
fn help_succeeds() {
    for args in [&["--help"][..], &["perft", "--help"], &["moves", "--help"]] {
        let out = manaka(args);
        assert!(out.status.success(), "{args:?}");
        assert!(!out.stdout.is_empty());
    }
}
