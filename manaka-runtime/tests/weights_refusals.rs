//! Every way SPEC §7 lets a weight file be wrong is refused with its own error, which says
//! where. Files are edited at fields found by an independent walk of the header, and the
//! checksum is recomputed where the test is about a structural check rather than the checksum.

use manaka_runtime::weights::{self, WeightFile, WeightsError, init};
use manaka_shapes::Shape;
use xxhash_rust::xxh64::xxh64;

const SHAPE: &str = "pair0_d2_o1_h2_kp";

/// Byte positions of one tensor record's fields.
#[derive(Clone, Copy, Debug)]
struct Record {
    start: usize,
    name: usize,
    name_len: usize,
    dtype: usize,
    rank: usize,
    dims: usize,
    offset: usize,
    byte_len: usize,
}

struct Header {
    count: usize,
    records: Vec<Record>,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Walks a valid file's header as SPEC §7 describes it.
fn walk(b: &[u8]) -> Header {
    assert_eq!(&b[..4], b"MNW1");
    let name_len = u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize;
    let count_at = 12 + name_len;
    let count = u32::from_le_bytes(b[count_at..count_at + 4].try_into().unwrap()) as usize;
    let mut at = count_at + 4;
    let mut records = Vec::new();
    for _ in 0..count {
        let start = at;
        let len = u16::from_le_bytes(b[at..at + 2].try_into().unwrap()) as usize;
        let rank = b[at + 2 + len + 1] as usize;
        let r = Record {
            start,
            name: at + 2,
            name_len: len,
            dtype: at + 2 + len,
            rank: at + 3 + len,
            dims: at + 4 + len,
            offset: at + 4 + len + 8 * rank,
            byte_len: at + 12 + len + 8 * rank,
        };
        records.push(r);
        at = r.byte_len + 8;
    }
    Header {
        count: count_at,
        records,
    }
}

/// A valid file, and where its records are.
fn valid() -> (Vec<u8>, Header) {
    let shape = Shape::parse(SHAPE).unwrap();
    let bytes = weights::encode(&init::random_weights(&shape, 5)).unwrap();
    let header = walk(&bytes);
    (bytes, header)
}

fn record(h: &Header, name_prefix: &str, bytes: &[u8]) -> Record {
    *h.records
        .iter()
        .find(|r| &bytes[r.name..r.name + r.name_len] == name_prefix.as_bytes())
        .unwrap_or_else(|| panic!("no record {name_prefix}"))
}

/// Recomputes the trailer so that only the structural edit is wrong.
fn rehash(b: &mut [u8]) {
    let n = b.len() - 8;
    let digest = xxh64(&b[..n], 0);
    put_u64(b, n, digest);
}

/// Applies `edit`, fixes the checksum, and returns the reader's refusal.
fn refuse(edit: impl FnOnce(&mut Vec<u8>, &Header)) -> WeightsError {
    let (mut bytes, header) = valid();
    edit(&mut bytes, &header);
    rehash(&mut bytes);
    WeightFile::from_bytes(&bytes).expect_err("edited file must be refused")
}

fn says(err: &WeightsError, words: &[&str]) {
    let text = err.to_string();
    for w in words {
        assert!(text.contains(w), "`{text}` lacks `{w}`");
    }
}

#[test]
fn the_valid_file_is_accepted() {
    let (bytes, header) = valid();
    assert!(WeightFile::from_bytes(&bytes).is_ok());
    assert_eq!(
        header.records.len(),
        Shape::parse(SHAPE).unwrap().tensors().len()
    );
}

#[test]
fn bad_magic() {
    let err = refuse(|b, _| b[0] = b'X');
    assert!(matches!(err, WeightsError::BadMagic { .. }), "{err}");
    says(&err, &["MNW1"]);
}

#[test]
fn unsupported_version() {
    let err = refuse(|b, _| b[4] = 4);
    assert!(
        matches!(err, WeightsError::UnsupportedVersion { found: 4 }),
        "{err}"
    );
    says(&err, &["version 4", "byte 4"]);
}

#[test]
fn shape_name_not_utf8() {
    let err = refuse(|b, _| b[12] = 0xff);
    assert!(
        matches!(err, WeightsError::BadUtf8 { offset: 12, .. }),
        "{err}"
    );
    says(&err, &["shape name", "byte 12"]);
}

#[test]
fn shape_name_invalid() {
    // `pair0_d2_o1_h2_kp` → `pair0_x2_o1_h2_kp`.
    let err = refuse(|b, _| b[18] = b'x');
    assert!(matches!(err, WeightsError::BadShapeName { .. }), "{err}");
    says(&err, &["`x2`", "byte 12"]);
}

#[test]
fn shape_other_than_the_engines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.mnw");
    let file_shape = Shape::parse(SHAPE).unwrap();
    weights::write_file(&path, &init::random_weights(&file_shape, 1)).unwrap();
    let engine = Shape::parse("pair16_d128_o3_h512").unwrap();
    let err = WeightFile::open_expecting(&path, &engine).unwrap_err();
    assert!(matches!(err, WeightsError::ShapeMismatch { .. }), "{err}");
    says(&err, &[SHAPE, "pair16_d128_o3_h512"]);
    assert!(WeightFile::open_expecting(&path, &file_shape).is_ok());
}

#[test]
fn unknown_tensor() {
    let err = refuse(|b, h| {
        let r = h.records[0];
        b[r.name + 4] = b'x'; // `embed` → `embex`
    });
    assert!(
        matches!(err, WeightsError::UnknownTensor { index: 0, .. }),
        "{err}"
    );
    says(&err, &["`embex`", "`embed`"]);
}

#[test]
fn tensors_out_of_order() {
    // Rename `w1` to `b1` (same length): `b1` exists, later in the table.
    let err = refuse(|b, h| {
        let r = record(h, "w1", b);
        b[r.name] = b'b';
    });
    assert!(matches!(err, WeightsError::TensorOrder { .. }), "{err}");
    says(&err, &["`b1`", "expected `w1`"]);
}

#[test]
fn missing_tensor() {
    let err = refuse(|b, h| b[h.count] -= 1);
    assert!(matches!(err, WeightsError::MissingTensor { .. }), "{err}");
    says(&err, &["`policy.from`"]);
}

#[test]
fn extra_tensors() {
    let err = refuse(|b, h| b[h.count] += 1);
    assert!(matches!(err, WeightsError::ExtraTensors { .. }), "{err}");
}

#[test]
fn unsupported_dtype() {
    let err = refuse(|b, h| {
        let at = record(h, "b1", b).dtype;
        b[at] = 1;
    });
    assert!(
        matches!(err, WeightsError::UnsupportedDtype { dtype: 1, .. }),
        "{err}"
    );
    says(&err, &["`b1`"]);
}

#[test]
fn wrong_rank() {
    let err = refuse(|b, h| {
        let at = record(h, "w1", b).rank;
        b[at] = 3;
    });
    assert!(
        matches!(
            err,
            WeightsError::WrongRank {
                found: 3,
                expected: 2,
                ..
            }
        ),
        "{err}"
    );
    says(&err, &["`w1`"]);
}

#[test]
fn wrong_dims() {
    let err = refuse(|b, h| {
        let r = record(h, "w1", b);
        put_u64(b, r.dims, 3);
    });
    assert!(matches!(err, WeightsError::WrongDims { .. }), "{err}");
    says(&err, &["`w1`", "[3, 4]", "[2, 4]"]);
}

#[test]
fn wrong_byte_length() {
    let err = refuse(|b, h| {
        let r = record(h, "b1", b);
        put_u64(b, r.byte_len, 12);
    });
    assert!(
        matches!(
            err,
            WeightsError::WrongByteLength {
                found: 12,
                expected: 8,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn misaligned_tensor() {
    let err = refuse(|b, h| {
        let r = record(h, "b1", b);
        let o = u64_at(b, r.offset);
        put_u64(b, r.offset, o + 4);
    });
    assert!(matches!(err, WeightsError::Misaligned { .. }), "{err}");
    says(&err, &["`b1`", "64-byte"]);
}

#[test]
fn data_inside_the_header() {
    let err = refuse(|b, h| {
        let r = record(h, "b1", b);
        put_u64(b, r.offset, 64);
    });
    assert!(
        matches!(
            err,
            WeightsError::DataInHeader {
                data_offset: 64,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn data_past_the_end() {
    let err = refuse(|b, h| {
        let r = record(h, "b1", b);
        put_u64(b, r.offset, 1 << 40);
    });
    assert!(matches!(err, WeightsError::OutOfBounds { .. }), "{err}");
    says(&err, &["`b1`"]);
    // An offset so large that offset + length overflows u64 is out of bounds too.
    let err = refuse(|b, h| {
        let r = record(h, "b1", b);
        put_u64(b, r.offset, u64::MAX - 63);
    });
    assert!(matches!(err, WeightsError::OutOfBounds { .. }), "{err}");
}

#[test]
fn overlapping_tensors() {
    let err = refuse(|b, h| {
        let w1 = record(h, "w1", b);
        let b1 = record(h, "b1", b);
        let o = u64_at(b, w1.offset);
        put_u64(b, b1.offset, o);
    });
    assert!(matches!(err, WeightsError::Overlap { .. }), "{err}");
    says(&err, &["`w1`", "`b1`"]);
}

#[test]
fn checksum_mismatch() {
    let (mut bytes, header) = valid();
    let r = record(&header, "policy.w", &bytes);
    let o = u64_at(&bytes, r.offset) as usize;
    bytes[o + 5] ^= 0x10;
    let err = WeightFile::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(err, WeightsError::ChecksumMismatch { .. }),
        "{err}"
    );
    says(&err, &[&format!("byte {}", bytes.len() - 8)]);
}

#[test]
fn truncated() {
    let (bytes, header) = valid();
    let err = WeightFile::from_bytes(&bytes[..10]).unwrap_err();
    assert!(
        matches!(err, WeightsError::Truncated { offset: 8, .. }),
        "{err}"
    );
    says(&err, &["truncated", "shape name length"]);
    // Cut inside a record.
    let r = header.records[2];
    let err = WeightFile::from_bytes(&bytes[..r.dims + 3]).unwrap_err();
    assert!(matches!(err, WeightsError::Truncated { .. }), "{err}");
    // Cut inside the data: the records are complete, the data is not.
    let err = WeightFile::from_bytes(&bytes[..bytes.len() - 100]).unwrap_err();
    assert!(matches!(err, WeightsError::OutOfBounds { .. }), "{err}");
    says(&err, &["truncated"]);
    let err = WeightFile::from_bytes(&[]).unwrap_err();
    assert!(matches!(err, WeightsError::Truncated { .. }), "{err}");
    let _ = r.start;
}

#[test]
fn unreadable_path() {
    let err = WeightFile::open("/nonexistent/dir/net.mnw".as_ref()).unwrap_err();
    assert!(
        matches!(err, WeightsError::Io { action: "open", .. }),
        "{err}"
    );
    says(&err, &["/nonexistent/dir/net.mnw"]);
}

#[test]
fn every_refusal_names_a_position() {
    // Messages are one line and carry a byte offset or a tensor name.
    let errors = [
        refuse(|b, _| b[4] = 9),
        refuse(|b, h| {
            let at = record(h, "b1", b).dtype;
            b[at] = 2;
        }),
        refuse(|b, h| b[h.count] += 1),
    ];
    for err in errors {
        let text = err.to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(text.contains("byte") || text.contains('`'), "{text}");
    }
}
