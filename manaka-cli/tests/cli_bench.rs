//! `manaka bench` as scripts meet it: the JSON row of every requested shape with every
//! documented field, the readable table, and refused input (exit status 2, one line on
//! stderr). Speed itself is measured, never asserted.

use serde_json::Value;
use std::process::{Command, Output};

fn manaka(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(args)
        .output()
        .expect("run manaka")
}

const SHAPES: &str = "pair4_d16_o2_h32,pair0_d16_o1_h8_halfkp_nnue";

#[test]
fn json_has_one_row_per_shape_with_every_field() {
    let out = manaka(&[
        "bench", "--shapes", SHAPES, "--time", "0.02", "--simd", "scalar", "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["simd"], "scalar");
    let rows = v["rows"].as_array().expect("rows");
    let names: Vec<&str> = rows.iter().map(|r| r["shape"].as_str().unwrap()).collect();
    assert_eq!(names, SHAPES.split(',').collect::<Vec<_>>());
    for r in rows {
        let shape = manaka::shapes::Shape::parse(r["shape"].as_str().unwrap()).unwrap();
        assert_eq!(r["params"], shape.param_count());
        assert_eq!(r["bytes"], shape.bytes());
        assert_eq!(r["simd"], "scalar");
        for key in [
            "update_ns",
            "head_ns",
            "policy_ns",
            "evals_per_s",
            "speedup_vs_reference",
            "batch_head_ns",
            "refresh_ns",
            "reference_ns",
            "w1_stream_ns",
        ] {
            let x = r[key]
                .as_f64()
                .unwrap_or_else(|| panic!("{key} missing in {r}"));
            assert!(x.is_finite() && x >= 0.0, "{key} = {x}");
        }
        // Full evaluations per second is the inverse of update + head + policy.
        let ns = r["update_ns"].as_f64().unwrap()
            + r["head_ns"].as_f64().unwrap()
            + r["policy_ns"].as_f64().unwrap();
        let eps = r["evals_per_s"].as_f64().unwrap();
        assert!(
            (eps * ns / 1e9 - 1.0).abs() < 0.01,
            "evals_per_s {eps} vs {ns} ns"
        );
    }
    // Progress goes to stderr, never into the JSON.
    assert!(String::from_utf8_lossy(&out.stderr).contains("bench:"));
}

#[test]
fn table_has_a_header_and_a_row_per_shape() {
    let out = manaka(&["bench", "--shapes", "pair4_d16_o2_h32", "--time", "0.02"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("shape") && l.contains("evals/s")),
        "{text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("pair4_d16_o2_h32 "))
            .count(),
        1,
        "{text}"
    );
}

#[test]
fn refuses_bad_shapes_and_levels() {
    for (args, needle) in [
        (
            &["bench", "--shapes", "pair4_d16_o2_h33"][..],
            "build-engine",
        ),
        (
            &["bench", "--shapes", "pair4_d16_o2_hh32"][..],
            "pair4_d16_o2_hh32",
        ),
        (&["bench", "--simd", "avx9"][..], "avx9"),
        (&["bench", "--time", "0"][..], "--time"),
    ] {
        let out = manaka(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
