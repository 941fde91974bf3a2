//! Fuzz the MNW1 reader (SPEC §7: nothing panics on a bad file).
//!
//! Input byte 0 picks the mode:
//! - even: the rest is a whole file, read as is (mostly refused at the magic or a length);
//! - odd: the rest is a list of (position, byte) overwrites of the header of a small valid
//!   file, whose checksum is then repaired, so that only the structural checks stand between the
//!   damage and the caller.

#![no_main]

use libfuzzer_sys::fuzz_target;
use manaka_runtime::weights::{self, TensorSource, WeightFile, WeightSet, init};
use manaka_shapes::Shape;
use std::sync::OnceLock;

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

fuzz_target!(|data: &[u8]| {
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
});
