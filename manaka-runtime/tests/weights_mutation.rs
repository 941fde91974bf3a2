//! Mutation test of the MNW1 reader: truncations and byte flips of a valid file each give an
//! error or the identical tensor set, never a panic (SPEC §7: "Nothing panics on a bad file").

use manaka_runtime::weights::{self, TensorSource, WeightFile, WeightSet, init};
use manaka_shapes::Shape;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use xxhash_rust::xxh64::xxh64;

/// The test's own choices (positions, masks); any generator will do, so `rand`'s.
struct Rng(StdRng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(StdRng::seed_from_u64(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }

    /// A nonzero xor mask.
    fn mask(&mut self) -> u8 {
        self.0.random_range(1..=255)
    }

    fn byte(&mut self) -> u8 {
        self.0.random()
    }
}

fn original() -> (WeightSet, Vec<u8>) {
    // Small (about 36 KB: no pair table, no field) but with many kinds of record.
    let shape = Shape::parse("pair0_d1_o2_h1_h21_m1_ks_kp").unwrap();
    let set = init::random_weights(&shape, 11);
    let bytes = weights::encode(&set).unwrap();
    (set, bytes)
}

/// Outcome of reading mutated bytes: refused, or accepted with the original tensors.
fn check(bytes: &[u8], set: &WeightSet, what: &str) -> bool {
    match WeightFile::from_bytes(bytes) {
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
        Ok(file) => {
            assert_eq!(file.shape(), set.shape(), "{what}");
            for (spec, values) in set.iter() {
                let got = file.tensor(&spec.name).expect("tensor present");
                assert!(
                    got.len() == values.len()
                        && got
                            .iter()
                            .zip(values)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{what}: accepted with different `{}`",
                    spec.name
                );
            }
            true
        }
    }
}

fn header_len(bytes: &[u8]) -> usize {
    // The first tensor's data offset bounds the header from above.
    let file = WeightFile::from_bytes(bytes).unwrap();
    file.entries()[0].offset as usize
}

#[test]
fn every_truncation_is_refused() {
    let (set, bytes) = original();
    for len in 0..bytes.len() {
        assert!(
            !check(&bytes[..len], &set, &format!("truncated to {len}")),
            "truncation to {len} bytes accepted"
        );
    }
    // Appending bytes moves the trailer: refused too.
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0; 8]);
    assert!(!check(&longer, &set, "extended"));
}

#[test]
fn random_byte_flips_are_refused_or_harmless() {
    let (set, bytes) = original();
    let mut rng = Rng::new(1);
    let mut refused = 0;
    for i in 0..12_000 {
        let mut m = bytes.clone();
        // Flip one to three bytes anywhere.
        for _ in 0..=rng.below(3) {
            let at = rng.below(m.len());
            m[at] ^= rng.mask();
        }
        if !check(&m, &set, &format!("flip {i}")) {
            refused += 1;
        }
    }
    // xxh64 catches every one of these in practice.
    assert_eq!(refused, 12_000);
}

#[test]
fn header_flips_with_a_fixed_checksum_are_refused_or_harmless() {
    // With the trailer recomputed, only the structural checks stand between a corrupt header
    // and the caller: flips in padding are harmless, anything else must be refused.
    let (set, bytes) = original();
    let header = header_len(&bytes);
    let mut rng = Rng::new(2);
    let mut accepted = 0;
    let mut total = 0;
    let mut run = |m: &mut Vec<u8>, what: String| {
        let n = m.len() - 8;
        let digest = xxh64(&m[..n], 0);
        m[n..].copy_from_slice(&digest.to_le_bytes());
        total += 1;
        if check(m, &set, &what) {
            accepted += 1;
        }
    };
    // Every header byte with every single-bit flip...
    for at in 0..header {
        for bit in 0..8 {
            let mut m = bytes.clone();
            m[at] ^= 1 << bit;
            run(&mut m, format!("bit {bit} of byte {at}"));
        }
    }
    // ...and random multi-byte damage.
    for i in 0..6_000 {
        let mut m = bytes.clone();
        for _ in 0..=rng.below(4) {
            let at = rng.below(header);
            m[at] ^= rng.mask();
        }
        run(&mut m, format!("header damage {i}"));
    }
    assert!(total >= 10_000, "{total} mutations");
    // Only flips in the zero padding between the header and the first tensor are harmless.
    assert!(accepted < total / 10, "{accepted} of {total} accepted");
}

#[test]
fn garbage_is_refused() {
    let mut rng = Rng::new(3);
    let (set, _) = original();
    for i in 0..2_000 {
        let len = rng.below(600);
        let mut m: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
        if i % 2 == 0 && len >= 8 {
            // Get past the magic and the version, into the length fields.
            m[..8].copy_from_slice(b"MNW1\x05\0\0\0");
        }
        assert!(!check(&m, &set, &format!("garbage {i}")));
    }
}
