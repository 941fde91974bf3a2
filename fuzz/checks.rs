//! What each fuzz target checks, one function per parser of outside input (issue 16,
//! "Fuzzing"). The cargo-fuzz targets in `fuzz_targets/` call these, and the test suite
//! replays the saved corpora through them (`tests/fuzz_corpora.rs`), so a crash once found
//! stays fixed without a nightly toolchain in CI.
//!
//! Every function takes arbitrary bytes and must neither panic nor allocate without bound;
//! where a parser accepts the input, it also checks what acceptance promises (a round trip).

use manaka_runtime::data::hcpe3::parse_hcpe3;
use manaka_runtime::data::records::{HcpeRecord, PsvRecord, Record, parse_records};
use manaka_runtime::nnue::file as nnue_file;
use manaka_runtime::shogi::Position;
use manaka_runtime::usi::command;
use manaka_runtime::usi::options::EngineOptions;
use manaka_runtime::weights::{self, TensorSource, WeightFile, WeightSet, init};
use manaka_shapes::Shape;
use std::sync::OnceLock;

/// The most moves of a move list played (the rest of a long input is parsed only).
const MAX_PLAYED: usize = 512;

/// SFEN and USI move text: the first line is an SFEN (or `startpos`), the words after it
/// USI moves played while legal. An accepted SFEN writes back to an SFEN that reads as the
/// same position.
pub fn sfen_moves(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(2, '\n');
    let sfen = lines.next().unwrap_or("");
    let Ok(mut pos) = Position::from_sfen(sfen.trim()) else {
        return;
    };
    let again = Position::from_sfen(&pos.to_sfen()).expect("a written SFEN reads back");
    assert_eq!(again.key(), pos.key(), "SFEN round trip");
    let _ = pos.legal_moves();
    for word in lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .take(MAX_PLAYED)
    {
        match pos.parse_usi_move(word) {
            Ok(m) => {
                assert!(pos.is_legal(m), "parse_usi_move returned an illegal move");
                assert_eq!(pos.parse_usi_move(&m.to_usi()).ok(), Some(m));
                pos.do_move(m);
            }
            Err(_) => break,
        }
    }
    let _ = pos.mate_in_one();
    let _ = pos.to_sfen();
}

/// USI command lines: every line parsed; `setoption` lines applied to a fresh option set.
pub fn usi_lines(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut options = EngineOptions::default();
    for line in text.lines().take(256) {
        if let Ok(command::Command::SetOption { name, value }) = command::parse(line) {
            let _ = options.set(&name, &value);
        }
    }
    let _ = options.usi_lines();
    let _ = options.search_config();
}

/// YaneuraOu NNUE files (`nn.bin`).
pub fn nnue(data: &[u8]) {
    let _ = nnue_file::decode(data);
}

/// HCPE, PackedSfenValue and HCPE3 records: every accepted record decodes (or refuses) its
/// position without panicking; every accepted HCPE3 game replays (or refuses) its moves.
pub fn records(data: &[u8]) {
    if let Ok(records) = parse_records::<HcpeRecord>(data) {
        assert_eq!(records.len() * HcpeRecord::SIZE, data.len());
        for r in records.iter().take(64) {
            let _ = r.position();
        }
    }
    if let Ok(records) = parse_records::<PsvRecord>(data) {
        for r in records.iter().take(64) {
            let _ = r.position();
        }
    }
    if let Ok(games) = parse_hcpe3(data) {
        for g in games.iter().take(16) {
            let _ = g.replay();
        }
    }
}

/// Shape strings: an accepted shape prints as a string that parses back to it.
pub fn shape(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(shape) = Shape::parse(&text) {
        let again = Shape::parse(&shape.to_string()).expect("a printed shape parses");
        assert_eq!(again, shape, "shape round trip");
        let _ = (shape.param_count(), shape.bytes());
    }
}

/// A small valid file, its weights, and where its first tensor's data starts.
fn original() -> &'static (WeightSet, Vec<u8>, usize) {
    static ORIGINAL: OnceLock<(WeightSet, Vec<u8>, usize)> = OnceLock::new();
    ORIGINAL.get_or_init(|| {
        let shape = Shape::parse("pair0_d1_o2_h1_h21_m1_ks_kp").expect("valid shape");
        let set = init::random_weights(&shape, 1);
        let bytes = weights::encode(&set).expect("encode");
        let file = WeightFile::from_bytes(&bytes).expect("valid file");
        let header = file.entries()[0].offset as usize;
        (set, bytes, header)
    })
}

/// MNW1 weight files (the mode byte and the two modes are described in
/// `fuzz_targets/mnw_reader.rs`).
pub fn mnw_reader(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let _ = WeightFile::from_bytes(rest);
        return;
    }
    let (set, bytes, header) = original();
    let mut m = bytes.clone();
    // Positions fall in the header and its padding, where the structure lives: damage to
    // the data with a repaired checksum would be a valid file with other weights.
    let region = *header;
    for edit in rest.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % region;
        m[at] = edit[2];
    }
    let n = m.len() - 8;
    let digest = xxhash_rust::xxh64::xxh64(&m[..n], 0);
    m[n..].copy_from_slice(&digest.to_le_bytes());
    if let Ok(file) = WeightFile::from_bytes(&m) {
        // Accepted: the header may still differ from the original in ways SPEC §7 allows
        // (padding, or two equally long tensors trading offsets), so check what an accepted
        // file promises: the original shape, every tensor complete, and a faithful rewrite.
        assert_eq!(file.shape(), set.shape());
        let copy = WeightSet::from_source(&file).expect("accepted file has every tensor");
        let again = WeightFile::from_bytes(&weights::encode(&copy).expect("encode"))
            .expect("a rewritten file is valid");
        for (spec, values) in copy.iter() {
            let reread = again.tensor(&spec.name).expect("tensor");
            assert!(
                reread
                    .iter()
                    .map(|v| v.to_bits())
                    .eq(values.iter().map(|v| v.to_bits()))
            );
        }
    }
}
