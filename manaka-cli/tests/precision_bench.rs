//! `manaka bench --precision f32,bf16,int8`: one row per shape and precision, each with the
//! bytes of its W1 copy (hand-computed here), the time to stream them once (the floor of a
//! batch-of-one head at that precision) and the head over that floor. Speed itself is
//! measured, never asserted.

mod common;

use common::{json, refused};

#[test]
fn bench_reports_each_precisions_w1_floor_beside_its_head() {
    let v = json(&[
        "bench",
        "--shapes",
        "pair4_d16_o2_h32",
        "--precision",
        "f32,bf16,int8",
        "--time",
        "0.02",
        "--scaling-simulations",
        "0",
        "--json",
    ]);
    assert_eq!(v["precision"], "f32,bf16,int8");
    let rows = v["rows"].as_array().unwrap();
    // pair4_d16_o2_h32: head input 2 × (2·16 + 4) = 72, hidden 32, so W1 is 72 × 32 = 2304
    // weights: 4, 2 and 1 bytes each; bf16 is stored in tiles of 8 rows × 32 inputs, so its
    // 72 inputs take 3 chunks (96) and its 32 rows 4 groups: 96 × 32 × 2 bytes; int8 adds one
    // f32 scale and one i32 sum of steps per row (32 × 8 bytes).
    let expected = [("f32", 9216), ("bf16", 96 * 32 * 2), ("int8", 2304 + 256)];
    assert_eq!(rows.len(), expected.len());
    for (r, (precision, bytes)) in rows.iter().zip(expected) {
        assert_eq!(r["shape"], "pair4_d16_o2_h32");
        assert_eq!(r["precision"], precision);
        assert_eq!(r["w1_bytes"], 9216, "{precision}: the f32 W1");
        assert_eq!(r["w1_precision_bytes"], bytes, "{precision}");
        let head = r["head_ns"].as_f64().unwrap();
        let floor = r["w1_floor_ns"].as_f64().unwrap();
        let ratio = r["head_over_floor"].as_f64().unwrap();
        assert!(floor > 0.0 && head > 0.0, "{r}");
        assert!(
            (ratio - head / floor).abs() <= 0.01 * ratio + 0.001,
            "{precision}: {ratio} vs {head} / {floor}"
        );
    }
    assert!(refused(&["bench", "--precision", "f32,int4"]).contains("int4"));
}
