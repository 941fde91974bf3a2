//! `manaka shape` and `manaka weights` as a user and a script meet them: the JSON keys, the
//! init → inspect → verify round trip, and refused input (exit status 2, exactly one line on
//! stderr, nothing on stdout). Expected numbers come from SPEC §2 and §7, not from the program.

use serde_json::Value;
use std::path::Path;

mod common;
use common::{Scratch, json, manaka, refused};

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn shape_info_json_has_the_documented_keys() {
    let v = json(&["shape", "info", "pair16_d128_o3_h512", "--json"]);
    for key in [
        "canonical",
        "params",
        "bytes",
        "input_width",
        "flops_per_eval",
        "tensors",
    ] {
        assert!(keys(&v).contains(&key), "missing {key}: {v}");
    }
    assert_eq!(v["canonical"], "pair16_d128_o3_h512");
    assert_eq!(v["params"], 45_770_072);
    assert_eq!(v["bytes"], 4 * 45_770_072);
    assert_eq!(v["input_width"], 800);
    assert!(v["flops_per_eval"].as_u64().is_some_and(|f| f > 800_000));
    let tensors = v["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 13);
    assert_eq!(tensors[0]["name"], "embed");
    assert_eq!(tensors[0]["dims"], serde_json::json!([2344, 128]));
    assert_eq!(tensors[1]["name"], "pair");
    assert_eq!(tensors[1]["dims"], serde_json::json!([2_745_996, 16]));
    for t in tensors {
        assert_eq!(keys(t), ["dims", "name"], "{t}");
    }
}

#[test]
fn shape_info_prints_a_table() {
    let out = manaka(&["shape", "info", "pair0_d256_o1_h32_h232_halfkp_nnue"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("pair0_d256_o1_h32_h232_halfkp_nnue"),
        "{text}"
    );
    assert!(text.contains("embed.bias"), "{text}");
    assert!(text.contains("125,388"), "{text}");
}

#[test]
fn a_bad_shape_is_refused_with_a_suggestion() {
    let line = refused(&["shape", "info", "d128_pair16_o3_h512"]);
    assert!(
        line.contains("did you mean `pair16_d128_o3_h512`?"),
        "{line}"
    );
    let line = refused(&["shape", "info", "pair16_d128_o3_h512_hlafkp"]);
    assert!(line.contains("`halfkp`"), "{line}");
    let line = refused(&["weights", "init", "--shape", "pair16_d128", "-o", "x.mnw"]);
    assert!(line.contains("`oN`"), "{line}");
}

#[test]
fn bad_flags_are_refused() {
    refused(&["shape", "info", "pair16_d128_o3_h512", "--bogus"]);
    refused(&[
        "weights",
        "init",
        "--shape",
        "pair0_d4_o1_h4",
        "--seed",
        "minus-one",
        "-o",
        "x",
    ]);
    refused(&["weights", "verify"]);
    refused(&["weights", "frobnicate"]);
}

#[test]
fn init_inspect_verify_round_trip() {
    let dir = Scratch::new("roundtrip");
    let (a, b, c) = (dir.file("a.mnw"), dir.file("b.mnw"), dir.file("c.mnw"));
    let shape = "pair2_d4_o2_h8_f1_kp";
    let init = json(&[
        "weights", "init", "--shape", shape, "--seed", "5", "-o", &a, "--json",
    ]);
    assert_eq!(init["shape"], shape);
    assert_eq!(init["seed"], 5);

    let v = json(&["weights", "inspect", &a, "--json"]);
    assert_eq!(v["shape"], shape);
    assert_eq!(v["version"], 5);
    assert_eq!(v["checksum"], init["checksum"]);
    assert_eq!(v["file_bytes"], std::fs::metadata(&a).unwrap().len());
    let info = json(&["shape", "info", shape, "--json"]);
    assert_eq!(v["params"], info["params"]);
    assert_eq!(v["file_bytes"], info["file_bytes"]);
    let tensors = v["tensors"].as_array().unwrap();
    let names: Vec<&Value> = tensors.iter().map(|t| &t["name"]).collect();
    let expected: Vec<&Value> = info["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["name"])
        .collect();
    assert_eq!(names, expected);
    for t in tensors {
        assert_eq!(t["offset"].as_u64().unwrap() % 64, 0, "{t}");
        assert!(t["std"].as_f64().is_some(), "{t}");
    }

    let ok = json(&["weights", "verify", &a, "--json"]);
    assert_eq!(ok["ok"], true);
    let ok = json(&["weights", "verify", &a, "--shape", shape, "--json"]);
    assert_eq!(ok["shape"], shape);

    // Same seed, same bytes; another seed, another file.
    json(&[
        "weights", "init", "--shape", shape, "--seed", "5", "-o", &b, "--json",
    ]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let other = json(&[
        "weights", "init", "--shape", shape, "--seed", "6", "-o", &c, "--json",
    ]);
    assert_ne!(other["checksum"], init["checksum"]);

    let out = manaka(&["weights", "verify", &a]);
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("ok "));
}

#[test]
fn init_does_not_overwrite_without_force() {
    let dir = Scratch::new("force");
    let a = dir.file("a.mnw");
    json(&[
        "weights",
        "init",
        "--shape",
        "pair0_d4_o1_h4",
        "-o",
        &a,
        "--json",
    ]);
    let line = refused(&["weights", "init", "--shape", "pair0_d4_o1_h4", "-o", &a]);
    assert!(line.contains("--force"), "{line}");
    json(&[
        "weights",
        "init",
        "--shape",
        "pair0_d4_o1_h4",
        "-o",
        &a,
        "--force",
        "--json",
    ]);
}

#[test]
fn damaged_files_are_refused() {
    let dir = Scratch::new("damaged");
    let good = dir.file("good.mnw");
    json(&[
        "weights",
        "init",
        "--shape",
        "pair0_d4_o1_h8",
        "--seed",
        "1",
        "-o",
        &good,
        "--json",
    ]);
    let bytes = std::fs::read(&good).unwrap();

    let flipped = dir.file("flipped.mnw");
    let mut m = bytes.clone();
    let at = m.len() - 100;
    m[at] ^= 0x40;
    std::fs::write(&flipped, &m).unwrap();
    for cmd in ["verify", "inspect"] {
        let line = refused(&["weights", cmd, &flipped]);
        assert!(line.contains("checksum"), "{line}");
        assert!(line.contains("flipped.mnw"), "{line}");
    }

    let truncated = dir.file("truncated.mnw");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let line = refused(&["weights", "verify", &truncated]);
    assert!(line.contains("truncated"), "{line}");

    let not_mnw = dir.file("not.mnw");
    std::fs::write(&not_mnw, b"hello, world, this is not a weight file").unwrap();
    let line = refused(&["weights", "inspect", &not_mnw]);
    assert!(line.contains("MNW1"), "{line}");

    let line = refused(&["weights", "verify", &good, "--shape", "pair16_d128_o3_h512"]);
    assert!(
        line.contains("pair16_d128_o3_h512") && line.contains("pair0_d4_o1_h8"),
        "{line}"
    );

    let missing = dir.file("missing.mnw");
    let line = refused(&["weights", "verify", &missing]);
    assert!(line.contains("missing.mnw"), "{line}");
    assert!(!Path::new(&missing).exists());
}

#[test]
fn help_is_a_manual() {
    for args in [
        &["weights", "init", "--help"][..],
        &["weights", "inspect", "--help"],
        &["weights", "verify", "--help"],
        &["shape", "info", "--help"],
    ] {
        let out = manaka(args);
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Examples:"), "{args:?}: {text}");
        assert!(text.contains("manaka "), "{args:?}");
    }
    // The shared `-o FILE` says what each command writes.
    for (command, says) in [
        ("export-nnue", "The nn.bin to write"),
        ("import-nnue", "The MNW1 file to write"),
        ("init", "The file to write"),
    ] {
        let out = manaka(&["weights", command, "--help"]);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(says), "{command}: {text}");
    }
}

/// `manaka weights widen` as a user runs it: a network grown into a wider head evaluates as
/// the original (`manaka eval`, value and every policy logit, on the start position and after
/// two moves), its file verifies as the wider shape, an existing output needs --force, and a
/// shape that is not a widening is refused with the reason.
#[test]
fn widen_keeps_what_the_network_computes() {
    let dir = Scratch::new("widen");
    let (small, wide) = (dir.file("small.mnw"), dir.file("wide.mnw"));
    let (s, w) = (small.as_str(), wide.as_str());
    common::ok(&[
        "weights",
        "init",
        "--shape",
        "pair0_d16_o2_h8_kp",
        "--seed",
        "3",
        "-o",
        s,
    ]);
    let v = json(&[
        "weights",
        "widen",
        s,
        "--shape",
        "pair0_d16_o2_h24_kp",
        "--seed",
        "4",
        "-o",
        w,
        "--json",
    ]);
    assert_eq!(v["from"], "pair0_d16_o2_h8_kp");
    assert_eq!(v["shape"], "pair0_d16_o2_h24_kp");
    common::ok(&["weights", "verify", w, "--shape", "pair0_d16_o2_h24_kp"]);
    for moves in [&[][..], &["7g7f", "3c3d"][..]] {
        let eval = |file: &str| {
            let mut args = vec!["eval", "--weights", file, "--json"];
            if !moves.is_empty() {
                args.push("--moves");
                args.extend_from_slice(moves);
            }
            json(&args)
        };
        let (a, b) = (eval(s), eval(w));
        let logit = |v: &Value| v["value_logit"].as_f64().unwrap();
        assert!(
            (logit(&a) - logit(&b)).abs() < 1e-5,
            "{moves:?}: {a} against {b}"
        );
        let (pa, pb) = (
            a["policy"].as_array().unwrap(),
            b["policy"].as_array().unwrap(),
        );
        assert_eq!(pa.len(), pb.len());
        for (x, y) in pa.iter().zip(pb) {
            assert_eq!(x["usi"], y["usi"]);
            let (x, y) = (x["logit"].as_f64().unwrap(), y["logit"].as_f64().unwrap());
            assert!(
                (x - y).abs() < 1e-4,
                "{moves:?}: policy logit {x} against {y}"
            );
        }
    }
    let line = refused(&[
        "weights",
        "widen",
        s,
        "--shape",
        "pair0_d16_o2_h24_kp",
        "-o",
        w,
    ]);
    assert!(line.contains("--force"), "{line}");
    let line = refused(&[
        "weights",
        "widen",
        s,
        "--shape",
        "pair0_d32_o2_h8_kp",
        "-o",
        w,
        "--force",
    ]);
    assert!(line.contains("only the hidden widths"), "{line}");
}
