//! dlshogi policy labels (SPEC §5) equal `cshogi.dlshogi.make_move_label` for every legal
//! move of at least 5,000 random positions with both colours to move. The expected labels
//! come from cshogi alone (`tests/oracles/labels_cshogi.py`).

mod support;

use manaka::runtime::labels::move_label;
use manaka::runtime::shogi::{Color, Position};
use std::collections::BTreeMap;
use std::process::Command;

const TEST: &str = "labels_cshogi";

#[test]
fn labels_equal_cshogi_make_move_label() {
    if let Err(why) = support::python_with("cshogi") {
        return support::missing_oracle(TEST, &why);
    }
    let positions: usize = support::env_or("MANAKA_LABEL_POSITIONS", 6000);
    let out = Command::new("python3")
        .arg(support::oracle_script("labels_cshogi.py"))
        .arg("20261130")
        .arg(positions.to_string())
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let (mut checked, mut moves, mut white, mut drops) = (0, 0, 0, 0);
    let mut mismatches = Vec::new();
    for line in text.lines() {
        let case: serde_json::Value = serde_json::from_str(line).expect("json line");
        let sfen = case["sfen"].as_str().expect("sfen");
        let pos = Position::from_sfen(sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"));
        let side = pos.side_to_move();
        if side == Color::White {
            white += 1;
        }
        let expected: BTreeMap<String, u64> = case["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .map(|r| {
                (
                    r[0].as_str().expect("usi").to_string(),
                    r[1].as_u64().expect("label"),
                )
            })
            .collect();
        let ours: BTreeMap<String, u64> = pos
            .legal_moves()
            .iter()
            .map(|&m| (m.to_usi(), move_label(m, side) as u64))
            .collect();
        assert_eq!(
            ours.len(),
            expected.len(),
            "legal move count differs at {sfen}"
        );
        for (usi, label) in &expected {
            moves += 1;
            drops += usi.contains('*') as usize;
            match ours.get(usi) {
                Some(l) if l == label => {}
                got => mismatches.push(format!("{sfen} {usi}: cshogi {label}, ours {got:?}")),
            }
        }
        checked += 1;
    }
    eprintln!(
        "{TEST}: {checked} positions ({white} with White to move), {moves} moves ({drops} drops)"
    );
    assert!(checked >= 5000, "only {checked} positions");
    assert!(
        white >= 1000 && drops >= 1000,
        "coverage: {white} White positions, {drops} drops"
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches, first: {:#?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(10)]
    );
}
