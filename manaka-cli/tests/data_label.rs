//! `manaka positions` and `manaka label` as a user meets them, with fairy-stockfish as the
//! teacher engine (skipped with a message when it is missing, unless
//! MANAKA_REQUIRE_ORACLES=1).
//!
//! The expectations come from the positions, not from Manaka: a side to move that mates in
//! one must get a mate score above every centipawn score, a side to move two major pieces
//! up must get a clearly positive score and the same board with the other side to move a
//! clearly negative one (USI scores are from the side to move), and every stored move must
//! be legal in its position (our readers replay them; cshogi agrees with those readers,
//! see tests/data_cshogi.rs).

mod common;

use common::oracles;
use manaka_runtime::data::{HcpeRecord, PsvRecord, read_records};
use manaka_runtime::runs::label::sampled;
use manaka_runtime::shogi::Position;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TEST: &str = "data_label";

fn manaka(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(args)
        .output()
        .expect("run manaka")
}

fn scratch(name: &str) -> PathBuf {
    common::target_scratch(&format!("{TEST}-{name}"))
}

/// `manaka positions --random N --seed S` into DIR/in.sfen, and the positions it wrote.
fn random_positions(dir: &Path, n: usize, seed: u64) -> (PathBuf, Vec<Position>) {
    let input = dir.join("in.sfen");
    ok(
        &manaka(&[
            "positions",
            "--random",
            &n.to_string(),
            "--seed",
            &seed.to_string(),
            "-o",
            input.to_str().unwrap(),
        ]),
        "positions",
    );
    let inputs: Vec<Position> = std::fs::read_to_string(&input)
        .unwrap()
        .lines()
        .map(|l| Position::from_sfen(l).unwrap())
        .collect();
    assert_eq!(inputs.len(), n);
    (input, inputs)
}

/// The teacher engine, as `label --engine` takes it; `None` after the skip message.
fn fairy_stockfish() -> Option<String> {
    oracles::need_fairy_stockfish(TEST).map(|p| p.display().to_string())
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Refused input: status 2, one line on stderr.
fn refused(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "stderr {stderr:?}");
    assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr:?}");
    stderr
}

/// Hand-made positions with the full 40 pieces (packed formats store no other):
/// 0: Black mates at once with G*1b (the gold is protected by the pawn on 1c).
/// 1: the same idea rotated, White to move mates with G*9h.
/// 2: Black to move, holding White's rook and bishop.  3: the same board, White to move.
const HAND_MADE: [&str; 4] = [
    "8k/9/8P/9/9/9/9/9/K8 b G2r2b3g4s4n4l17p 1",
    "8k/9/9/9/9/9/p8/9/K8 w 2R2B3G4S4N4L17Pg 1",
    "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b RB 1",
    "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w RB 1",
];

fn sfen3(p: &Position) -> String {
    p.to_sfen().rsplit_once(' ').unwrap().0.to_string()
}

#[test]
fn positions_are_distinct_seeded_and_legal() {
    let dir = scratch("positions");
    let (a, b) = (dir.join("a.sfen"), dir.join("b.sfen"));
    for f in [&a, &b] {
        ok(
            &manaka(&[
                "positions",
                "--random",
                "300",
                "--seed",
                "9",
                "--min-ply",
                "4",
                "--max-ply",
                "40",
                "-o",
                f.to_str().unwrap(),
            ]),
            "positions",
        );
    }
    let text = std::fs::read_to_string(&a).unwrap();
    assert_eq!(
        text,
        std::fs::read_to_string(&b).unwrap(),
        "same seed, same file"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 300);
    let mut seen = std::collections::HashSet::new();
    for l in &lines {
        let p = Position::from_sfen(l).unwrap_or_else(|e| panic!("{l}: {e}"));
        assert!((5..=41).contains(&p.ply()), "{l}");
        assert!(p.has_legal_moves(), "{l}");
        assert!(seen.insert(sfen3(&p)), "duplicate {l}");
    }
    let e = refused(&manaka(&[
        "positions",
        "--random",
        "50",
        "--max-ply",
        "1",
        "-o",
        a.to_str().unwrap(),
    ]));
    assert!(e.contains("found only"), "{e}");
    // The refused run left the earlier file alone (atomic writes).
    assert_eq!(std::fs::read_to_string(&a).unwrap(), text);

    // --children-of: each written position is one legal move from a parent, in the parents'
    // order; --sample 3 keeps about a third.
    let children_of = |sample: &str, out: &Path| {
        manaka(&[
            "positions",
            "--children-of",
            a.to_str().unwrap(),
            "--sample",
            sample,
            "--seed",
            "4",
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let all = dir.join("children.sfen");
    ok(&children_of("1", &all), "children");
    let children: Vec<Position> = std::fs::read_to_string(&all)
        .unwrap()
        .lines()
        .map(|l| Position::from_sfen(l).unwrap())
        .collect();
    let parents: Vec<Position> = lines
        .iter()
        .map(|l| Position::from_sfen(l).unwrap())
        .collect();
    assert!(children.len() >= 290, "{}", children.len());
    let mut j = 0;
    for c in &children {
        let is_child = |p: &Position| {
            p.legal_moves().iter().any(|&m| {
                let mut q = p.clone();
                q.do_move(m);
                sfen3(&q) == sfen3(c)
            })
        };
        while !is_child(&parents[j]) {
            j += 1;
            assert!(j < parents.len(), "{} follows no parent", c.to_sfen());
        }
        j += 1;
        assert!(c.has_legal_moves());
    }
    let third = dir.join("third.sfen");
    ok(&children_of("3", &third), "a third of the children");
    let n = std::fs::read_to_string(&third).unwrap().lines().count();
    assert!((60..140).contains(&n), "{n} of 300");
    let e = refused(&manaka(&["positions", "-o", third.to_str().unwrap()]));
    assert!(e.contains("--random") && e.contains("--children-of"), "{e}");
}

#[test]
fn label_with_fairy_stockfish_has_side_to_move_scores_and_legal_moves() {
    let Some(engine) = fairy_stockfish() else {
        return;
    };
    let dir = scratch("label");
    let random = dir.join("random.sfen");
    ok(
        &manaka(&[
            "positions",
            "--random",
            "8",
            "--seed",
            "4",
            "-o",
            random.to_str().unwrap(),
        ]),
        "positions",
    );
    let mut text = HAND_MADE.join("\n");
    text.push('\n');
    text.push_str(&std::fs::read_to_string(&random).unwrap());
    let input = dir.join("in.sfen");
    std::fs::write(&input, &text).unwrap();
    let inputs: Vec<Position> = text
        .lines()
        .map(|l| Position::from_sfen(l).unwrap())
        .collect();

    let hcpe_path = dir.join("out.hcpe");
    let psv_path = dir.join("out.psv");
    let common = [
        "label",
        "--engine",
        &engine,
        "--option",
        "UCI_Variant=shogi",
        "--depth",
        "6",
        "--positions",
        input.to_str().unwrap(),
    ];
    let mut a = common.to_vec();
    a.extend(["--out", hcpe_path.to_str().unwrap(), "--threads", "2"]);
    ok(&manaka(&a), "label hcpe");
    let mut b = common.to_vec();
    b.extend(["--out", psv_path.to_str().unwrap(), "--format", "psv"]);
    ok(&manaka(&b), "label psv");

    // The readers check that every position decodes and every move is legal.
    let hcpe: Vec<HcpeRecord> = read_records(&hcpe_path).unwrap();
    let psv: Vec<PsvRecord> = read_records(&psv_path).unwrap();
    assert_eq!((hcpe.len(), psv.len()), (inputs.len(), inputs.len()));
    for (i, want) in inputs.iter().enumerate() {
        let (h, p) = (&hcpe[i], &psv[i]);
        assert_eq!(
            sfen3(&h.position().unwrap()),
            sfen3(want),
            "record {i} out of order"
        );
        assert_eq!(
            sfen3(&p.position().unwrap()),
            sfen3(want),
            "record {i} out of order"
        );
        assert_eq!(u32::from(p.game_ply), want.ply(), "record {i}");
        assert!(
            h.best_move().is_some() && p.best_move().is_some(),
            "record {i} has no move"
        );
        assert_eq!(h.game_result, 0);
    }
    for evals in [
        hcpe.iter().map(|r| r.eval).collect::<Vec<_>>(),
        psv.iter().map(|r| r.score).collect(),
    ] {
        assert!(
            evals[0] > 30000 && evals[1] > 30000,
            "mate in one for the side to move: {evals:?}"
        );
        assert!(
            evals[2] > 500 && evals[3] < -500,
            "two major pieces up / down: {evals:?}"
        );
    }
    assert_eq!(hcpe[0].best_move().unwrap().to_usi(), "G*1b");
    assert_eq!(hcpe[1].best_move().unwrap().to_usi(), "G*9h");
    assert_eq!(psv[0].best_move().unwrap().to_usi(), "G*1b");

    // Positions from an HCPE3 game (issue 8's vector: 7g7f 3c3d 2g2f, Black won) carry the
    // game's result into the records.
    let game = dir.join("game.hcpe3");
    std::fs::write(&game, hex(HCPE3_VECTOR)).unwrap();
    let from_game = dir.join("game.hcpe");
    ok(
        &manaka(&[
            "label",
            "--engine",
            &engine,
            "--nodes",
            "500",
            "--positions",
            game.to_str().unwrap(),
            "--out",
            from_game.to_str().unwrap(),
        ]),
        "label hcpe3",
    );
    let recs: Vec<HcpeRecord> = read_records(&from_game).unwrap();
    let mut pos = Position::startpos();
    assert_eq!(recs.len(), 3);
    for (r, mv) in recs.iter().zip(["7g7f", "3c3d", "2g2f"]) {
        assert_eq!(sfen3(&r.position().unwrap()), sfen3(&pos));
        assert_eq!(r.game_result, 1, "Black won the game");
        pos.play_usi_moves([mv]).unwrap();
    }
}

/// Two engine processes take the positions in runs of 64 consecutive ones (label.rs, `RUN`):
/// with more positions than two runs, and a last run cut short, every position is labelled
/// once and the records keep the input order.
#[test]
fn label_in_runs_keeps_every_position_once_in_input_order() {
    let Some(engine) = fairy_stockfish() else {
        return;
    };
    let dir = scratch("runs");
    let (input, inputs) = random_positions(&dir, 203, 11);
    let out = dir.join("out.hcpe");
    ok(
        &manaka(&[
            "label",
            "--engine",
            &engine,
            "--depth",
            "1",
            "--positions",
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            "2",
        ]),
        "label in runs",
    );
    let recs: Vec<HcpeRecord> = read_records(&out).unwrap();
    let got: Vec<String> = recs.iter().map(|r| sfen3(&r.position().unwrap())).collect();
    let want: Vec<String> = inputs.iter().map(sfen3).collect();
    assert_eq!(got, want, "every position once, in input order");
}

const HCPE3_VECTOR: &str = "58a449210cd757217e8e4d212caf427814c2ab109e4d212cd75f213e8e49210c030001003b1e320003003b1e58028e072c0122166400150aecff0200150a0100c22001008e0700000000";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn label_refuses_bad_engines_options_and_inputs() {
    let dir = scratch("refusals");
    let input = dir.join("in.sfen");
    std::fs::write(&input, "startpos\n").unwrap();
    let out = dir.join("o.hcpe");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    let e = refused(&manaka(&[
        "label",
        "--engine",
        "/nonexistent/engine",
        "--depth",
        "1",
        "--positions",
        i,
        "--out",
        o,
    ]));
    assert!(
        e.contains("cannot start engine '/nonexistent/engine'"),
        "{e}"
    );
    let e = refused(&manaka(&[
        "label",
        "--engine",
        "true",
        "--depth",
        "1",
        "--positions",
        i,
        "--out",
        o,
    ]));
    assert!(e.contains("exited while"), "{e}");
    std::fs::write(&input, "startpos\nstartpos moves 7g7f 7g7f\n").unwrap();
    let e = refused(&manaka(&[
        "label",
        "--engine",
        "true",
        "--depth",
        "1",
        "--positions",
        i,
        "--out",
        o,
    ]));
    assert!(e.contains("line 2 at byte 9"), "{e}");
    assert!(!out.exists(), "nothing written on failure");
    if let Some(engine) = fairy_stockfish() {
        std::fs::write(&input, "startpos\n").unwrap();
        let e = refused(&manaka(&[
            "label",
            "--engine",
            &engine,
            "--option",
            "NoSuchThing=1",
            "--depth",
            "1",
            "--positions",
            i,
            "--out",
            o,
        ]));
        assert!(e.contains("has no option 'NoSuchThing'"), "{e}");
    }
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(
        left.is_empty(),
        "a failed run with nothing done left {left:?}"
    );
}

/// An interrupted run resumes: with a journal holding the first 5 of 12 records (and junk
/// after them, as a crash between appending and recording would leave), the same command
/// labels only the rest, cuts the junk, and writes all 12 in input order with the first 5
/// byte for byte the journal's. A journal from other settings is refused and left alone.
#[test]
fn label_resumes_an_interrupted_run_and_refuses_a_foreign_journal() {
    let Some(engine) = fairy_stockfish() else {
        return;
    };
    let dir = scratch("resume");
    let (input, inputs) = random_positions(&dir, 12, 9);
    let label_with = |out: &PathBuf, depth: &str, extra: &[&str]| {
        let mut args = vec![
            "label",
            "--engine",
            &engine,
            "--depth",
            depth,
            "--positions",
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        manaka(&args)
    };
    let label = |out: &PathBuf, depth: &str| label_with(out, depth, &["--threads", "2"]);
    let full = dir.join("full.hcpe");
    ok(&label(&full, "3"), "full run");
    let full_bytes = std::fs::read(&full).unwrap();
    assert_eq!(full_bytes.len(), 12 * 38);

    // Three shards (positions 0-3, 4-7, 8-11), concatenated in order: the unsharded output.
    let mut sharded = Vec::new();
    for i in 0..3 {
        let out = dir.join(format!("shard-{i}.hcpe"));
        let run = label_with(&out, "3", &["--shard", &format!("{i}/3")]);
        ok(&run, "sharded run");
        sharded.extend(std::fs::read(&out).unwrap());
    }
    // The same positions in the same order (with their game results). The scores and moves
    // may differ in a few records: fairy-stockfish's search depends on its hash table and
    // histories, which hold whatever it searched before on that process.
    let positions_of = |bytes: &[u8]| -> Vec<Vec<u8>> {
        bytes
            .chunks(38)
            .map(|r| [&r[..32], &r[36..37]].concat())
            .collect()
    };
    assert_eq!(sharded.len(), full_bytes.len());
    assert_eq!(
        positions_of(&sharded),
        positions_of(&full_bytes),
        "shards in order are the unsharded run's positions"
    );
    // --sample 3: the full run's positions at the indices the hash keeps, in order; and its
    // shards concatenate to it as well.
    let kept: Vec<usize> = (0..12).filter(|&i| sampled(3, i as u64)).collect();
    assert!((1..12).contains(&kept.len()), "{kept:?}");
    let sample = dir.join("sample.hcpe");
    ok(&label_with(&sample, "3", &["--sample", "3"]), "sampled run");
    let sample_bytes = std::fs::read(&sample).unwrap();
    let full_positions = positions_of(&full_bytes);
    let want: Vec<Vec<u8>> = kept.iter().map(|&i| full_positions[i].clone()).collect();
    assert_eq!(positions_of(&sample_bytes), want, "the sampled positions");
    let mut sample_shards = Vec::new();
    for i in 0..2 {
        let out = dir.join(format!("sample-shard-{i}.hcpe"));
        ok(
            &label_with(&out, "3", &["--sample", "3", "--shard", &format!("{i}/2")]),
            "sampled shard",
        );
        sample_shards.extend(std::fs::read(&out).unwrap());
    }
    assert_eq!(positions_of(&sample_shards), want, "a sampled run's shards");
    let bad = label_with(&dir.join("x.hcpe"), "3", &["--shard", "3/3"]);
    assert!(refused(&bad).contains("not a shard"), "shard 3/3 refused");

    // The journal as docs/data.md describes it.
    let journal = |out: &PathBuf, limit: &str| {
        let settings = serde_json::json!({
            "positions": std::path::absolute(&input).unwrap(),
            "positions_bytes": std::fs::metadata(&input).unwrap().len(),
            "total": 12,
            "format": "hcpe",
            "limit": limit,
            "engine": engine,
            "options": Vec::<String>::new(),
        });
        let name = out.file_name().unwrap().to_str().unwrap();
        let mut data = full_bytes[..5 * 38].to_vec();
        data.extend_from_slice(b"half a record");
        std::fs::write(out.with_file_name(format!("{name}.partial")), &data).unwrap();
        let meta = serde_json::json!({
            "settings": settings, "records": 5, "skipped": 0,
        });
        std::fs::write(
            out.with_file_name(format!("{name}.partial.json")),
            meta.to_string(),
        )
        .unwrap();
    };

    let resumed = dir.join("resumed.hcpe");
    journal(&resumed, "depth 3");
    assert_eq!(
        manaka_runtime::runs::label::unfinished_run(&resumed),
        Some((5, dir.join("resumed.hcpe.partial"))),
        "the journal's count is what an interrupted run says it kept"
    );
    let out = label(&resumed, "3");
    ok(&out, "resumed run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("resuming at position 5/12"), "{stderr}");
    let bytes = std::fs::read(&resumed).unwrap();
    assert_eq!(bytes.len(), 12 * 38, "junk cut, the remaining 7 appended");
    assert_eq!(bytes[..5 * 38], full_bytes[..5 * 38]);
    let recs: Vec<HcpeRecord> = read_records(&resumed).unwrap();
    for (i, (r, want)) in recs.iter().zip(&inputs).enumerate() {
        assert_eq!(
            sfen3(&r.position().unwrap()),
            sfen3(want),
            "record {i} out of order"
        );
        assert!(r.best_move().is_some(), "record {i} has no move");
    }
    for leftover in ["resumed.hcpe.partial", "resumed.hcpe.partial.json"] {
        assert!(!dir.join(leftover).exists(), "{leftover} left behind");
    }

    let foreign = dir.join("foreign.hcpe");
    journal(&foreign, "depth 4");
    let err = refused(&label(&foreign, "3"));
    assert!(
        err.contains("other settings") && err.contains("foreign.hcpe.partial"),
        "{err}"
    );
    assert!(!foreign.exists());
    assert_eq!(
        std::fs::read(dir.join("foreign.hcpe.partial"))
            .unwrap()
            .len(),
        5 * 38 + 13,
        "a foreign journal is left as it was"
    );
}
