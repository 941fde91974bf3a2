//! Replays the saved fuzz corpora (`fuzz/corpus/<target>/`) through the checks the cargo-fuzz
//! targets run (`fuzz/checks.rs`), so that every input the fuzzers kept — crashes once found
//! and fixed among them — keeps passing without a nightly toolchain (docs/fuzzing.md).

#[path = "../fuzz/checks.rs"]
mod checks;

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{target}: {} fails", path.display());
        n += 1;
    }
    assert!(n > 0, "{target}: the corpus {} is empty", dir.display());
}

#[test]
fn sfen_moves_corpus() {
    replay("sfen_moves", checks::sfen_moves);
}

#[test]
fn usi_lines_corpus() {
    replay("usi_lines", checks::usi_lines);
}

#[test]
fn nnue_corpus() {
    replay("nnue", checks::nnue);
}

#[test]
fn records_corpus() {
    replay("records", checks::records);
}

#[test]
fn shape_corpus() {
    replay("shape", checks::shape);
}

#[test]
fn mnw_reader_corpus() {
    replay("mnw_reader", checks::mnw_reader);
}
