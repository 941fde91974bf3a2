//! The training-data formats against cshogi, the library dlshogi's trainer reads them with.
//!
//! About 2,000 positions from seeded random games (capture-hungry, so hands fill and
//! promoted pieces appear), each with a random legal best move (drops favoured), eval,
//! result and move number:
//!
//! 1. Our HCPE and PackedSfenValue files are decoded by cshogi (`Board.set_hcp`,
//!    `Board.set_psfen`, `move_from_move16`, `move_from_psv`, the numpy dtypes
//!    `HuffmanCodedPosAndEval` and `PackedSfenValue`); every field must be what we meant.
//! 2. cshogi encodes the same cases (`Board.to_hcp`, `to_psfen`, `move16`, `move16_to_psv`);
//!    our readers must decode its files to the same positions and moves, and our HCP bytes
//!    must equal cshogi's byte for byte (cshogi writes YaneuraOu's PackedSfen hands in a
//!    different order, so there the check is on decoded positions).
//!
//! Nothing expected comes from Manaka alone: each direction is judged by the other library.

mod support;

use manaka::runtime::data::{
    GameResult, HcpeRecord, PsvRecord, Record, read_records, write_records,
};
use manaka::runtime::shogi::{Move, Position};
use rand::RngExt;
use rand::seq::IndexedRandom;
use std::fmt::Write as _;
use std::process::Command;

const TEST: &str = "data_cshogi";

/// Board, side and hands: the SFEN without its move number.
fn sfen3(pos: &Position) -> String {
    let sfen = pos.to_sfen();
    sfen.rsplit_once(' ')
        .map_or(sfen.as_str(), |(head, _)| head)
        .to_string()
}

/// A fresh directory under Cargo's scratch space for integration tests.
fn scratch_dir() -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{TEST}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Case {
    pos: Position,
    best: Move,
    eval: i16,
    result: GameResult,
    psv_result: i8,
}

fn cases() -> Vec<Case> {
    let mut rng = support::rng(0xda7a);
    let starts = [
        "startpos",
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
        support::EXTRA_STARTS[1],
        support::EXTRA_STARTS[4],
    ];
    let positions = support::random_positions(&mut rng, &starts, 36, 70);
    let mut out = Vec::new();
    for pos in positions {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            continue;
        }
        let drops: Vec<Move> = moves.iter().copied().filter(|m| m.is_drop()).collect();
        let best = if !drops.is_empty() && rng.random_bool(0.4) {
            *drops.choose(&mut rng).unwrap()
        } else {
            *moves.choose(&mut rng).unwrap()
        };
        let result =
            [GameResult::Draw, GameResult::BlackWin, GameResult::WhiteWin][rng.random_range(0..3)];
        out.push(Case {
            pos,
            best,
            eval: rng.random_range(-32000i16..=32000),
            result,
            psv_result: rng.random_range(-1i8..=1),
        });
    }
    out
}

#[test]
fn hcpe_and_psv_agree_with_cshogi_both_ways() {
    if let Err(why) = support::python_with("cshogi") {
        support::missing_oracle(TEST, &why);
        return;
    }
    let cases = cases();
    assert!(cases.len() >= 1000, "only {} cases", cases.len());
    let hands = cases
        .iter()
        .filter(|c| c.pos.to_sfen().split(' ').nth(2) != Some("-"))
        .count();
    let drops = cases.iter().filter(|c| c.best.is_drop()).count();
    let promos = cases.iter().filter(|c| c.best.is_promotion()).count();
    assert!(
        hands > 500 && drops > 200 && promos > 20,
        "weak coverage: {hands} hands, {drops} drops, {promos} promotions"
    );

    let dir = scratch_dir();
    let mut text = String::new();
    let mut hcpe = Vec::new();
    let mut psv = Vec::new();
    for c in &cases {
        let _ = writeln!(
            text,
            "{}\t{}\t{}\t{}\t{}\t{}",
            sfen3(&c.pos),
            c.pos.ply(),
            c.best,
            c.eval,
            c.result as u8,
            c.psv_result
        );
        hcpe.push(HcpeRecord::new(&c.pos, c.eval, Some(c.best), c.result).unwrap());
        psv.push(PsvRecord::new(&c.pos, c.eval, Some(c.best), c.psv_result).unwrap());
    }
    std::fs::write(dir.join("cases.txt"), text).unwrap();
    write_records(dir.join("ours.hcpe"), &hcpe).unwrap();
    write_records(dir.join("ours.psv"), &psv).unwrap();

    let out = Command::new("python3")
        .arg(support::oracle_script("data_cshogi.py"))
        .arg(&dir)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("oracle JSON");
    assert_eq!(report["checked"], cases.len());
    assert_eq!(
        report["mismatch_count"], 0,
        "cshogi disagrees with our files: {:#}",
        report["mismatches"]
    );

    // Direction 2: cshogi's files through our readers.
    let theirs_hcpe: Vec<HcpeRecord> = read_records(dir.join("theirs.hcpe")).unwrap();
    let theirs_psv: Vec<PsvRecord> = read_records(dir.join("theirs.psv")).unwrap();
    assert_eq!(
        (theirs_hcpe.len(), theirs_psv.len()),
        (cases.len(), cases.len())
    );
    let mut psv_bytes_equal = 0;
    for (i, c) in cases.iter().enumerate() {
        let (h, p) = (&theirs_hcpe[i], &theirs_psv[i]);
        assert_eq!(
            h.hcp,
            hcpe[i].hcp,
            "case {i}: HCP bytes differ from cshogi's for {}",
            c.pos.to_sfen()
        );
        assert_eq!(
            sfen3(&h.position().unwrap()),
            sfen3(&c.pos),
            "case {i}: HCPE position"
        );
        assert_eq!(h.best_move(), Some(c.best), "case {i}: HCPE move");
        assert_eq!(
            (h.eval, h.game_result),
            (c.eval, c.result as u8),
            "case {i}"
        );
        let pp = p.position().unwrap();
        assert_eq!(sfen3(&pp), sfen3(&c.pos), "case {i}: PSV position");
        assert_eq!(pp.ply(), c.pos.ply(), "case {i}: gamePly");
        assert_eq!(p.best_move(), Some(c.best), "case {i}: PSV move");
        assert_eq!((p.score, p.game_result), (c.eval, c.psv_result), "case {i}");
        let mut ours = Vec::new();
        psv[i].write_bytes(&mut ours);
        let mut theirs = Vec::new();
        p.write_bytes(&mut theirs);
        psv_bytes_equal += usize::from(ours == theirs);
    }
    eprintln!(
        "{TEST}: {} cases agree both ways ({hands} with pieces in hand, {drops} drops, \
         {promos} promotions; {psv_bytes_equal} PSV records byte-identical to cshogi's)",
        cases.len()
    );
}
