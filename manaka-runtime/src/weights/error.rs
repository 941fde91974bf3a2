//! Why a weight file was refused, or could not be written.
//!
//! One variant per check of SPEC §7, each saying where: the byte offset of the field that failed
//! and, for tensor records, the tensor's name and index. The CLI adds the file's path.

use manaka_shapes::ShapeError;
use std::path::PathBuf;

/// A weight file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WeightsError {
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "file is truncated: {what} at byte {offset} ends at byte {end}, but the file has \
         {file_len} bytes"
    )]
    Truncated {
        what: String,
        offset: u64,
        end: u64,
        file_len: u64,
    },

    #[error(
        "not an MNW1 weight file: bytes 0..4 are {found:02x?}, expected \"MNW1\"{}",
        nn_bin_hint(found)
    )]
    BadMagic { found: [u8; 4] },

    #[error("unsupported MNW1 version {found} at byte 4: this build reads version 5")]
    UnsupportedVersion { found: u32 },

    #[error("{what} at byte {offset} is not valid UTF-8")]
    BadUtf8 { what: String, offset: u64 },

    #[error("shape name `{name}` at byte {offset} is invalid: {source}")]
    BadShapeName {
        name: String,
        offset: u64,
        #[source]
        source: ShapeError,
    },

    #[error("shape mismatch: the file holds `{found}` weights, the loader expects `{expected}`")]
    ShapeMismatch { expected: String, found: String },

    #[error(
        "tensor record {index} at byte {offset} is `{name}`, which shape `{shape}` does not have \
         (expected `{expected}`)"
    )]
    UnknownTensor {
        name: String,
        index: usize,
        offset: u64,
        shape: String,
        expected: String,
    },

    #[error(
        "tensor record {index} at byte {offset} is `{found}`, expected `{expected}`: tensors \
         must follow the shape's table (is `{expected}` missing?)"
    )]
    TensorOrder {
        found: String,
        expected: String,
        index: usize,
        offset: u64,
    },

    #[error(
        "tensor `{name}` is missing: the file lists {count} tensors, shape `{shape}` has {expected}"
    )]
    MissingTensor {
        name: String,
        count: u32,
        expected: usize,
        shape: String,
    },

    #[error(
        "tensor count {count} at byte {offset} exceeds the {expected} tensors of shape `{shape}`"
    )]
    ExtraTensors {
        count: u32,
        offset: u64,
        expected: usize,
        shape: String,
    },

    #[error("tensor `{tensor}`: dtype {dtype} at byte {offset} is not supported (0 = f32)")]
    UnsupportedDtype {
        tensor: String,
        dtype: u8,
        offset: u64,
    },

    #[error("tensor `{tensor}`: rank {found} at byte {offset}, expected {expected}")]
    WrongRank {
        tensor: String,
        expected: usize,
        found: u8,
        offset: u64,
    },

    #[error("tensor `{tensor}`: dims {found:?} at byte {offset}, expected {expected:?}")]
    WrongDims {
        tensor: String,
        expected: Vec<u64>,
        found: Vec<u64>,
        offset: u64,
    },

    #[error(
        "tensor `{tensor}`: byte length {found} at byte {offset}, expected {expected} (4 bytes \
         per f32)"
    )]
    WrongByteLength {
        tensor: String,
        expected: u64,
        found: u64,
        offset: u64,
    },

    #[error(
        "tensor `{tensor}`: data offset {data_offset} (record at byte {offset}) is not 64-byte aligned"
    )]
    Misaligned {
        tensor: String,
        data_offset: u64,
        offset: u64,
    },

    #[error(
        "tensor `{tensor}`: data offset {data_offset} lies inside the header, which ends at \
         byte {header_end}"
    )]
    DataInHeader {
        tensor: String,
        data_offset: u64,
        header_end: u64,
    },

    #[error(
        "tensor `{tensor}`: data at bytes {start}..{end} runs past the end of the data at byte \
         {data_end} (truncated file or corrupt offset)"
    )]
    OutOfBounds {
        tensor: String,
        start: u64,
        end: u64,
        data_end: u64,
    },

    #[error("tensors `{first}` and `{second}` overlap at byte {offset}")]
    Overlap {
        first: String,
        second: String,
        offset: u64,
    },

    #[error(
        "checksum mismatch: the trailer at byte {offset} says {stored:#018x}, the file hashes \
         to {computed:#018x} (corrupt file)"
    )]
    ChecksumMismatch {
        stored: u64,
        computed: u64,
        offset: u64,
    },

    #[error("tensor `{tensor}` needs {expected} values, got {found}")]
    WrongLength {
        tensor: String,
        expected: u64,
        found: u64,
    },

    #[error("expected tensor `{expected}` next, got `{found}`")]
    WriteOrder { expected: String, found: String },

    #[error("more values than shape `{shape}` has parameters")]
    TooMuchData { shape: String },

    #[error("weights incomplete: tensor `{tensor}` has {written} of {expected} values")]
    Incomplete {
        tensor: String,
        written: u64,
        expected: u64,
    },

    #[error("tensor `{name}` is not part of shape `{shape}`")]
    NoSuchTensor { name: String, shape: String },

    #[error("`{}` is not a file path", path.display())]
    NotAFilePath { path: PathBuf },

    #[error("cannot widen `{from}` into `{to}`: {why}")]
    CannotWiden {
        from: String,
        to: String,
        why: String,
    },
}

/// What to do with a YaneuraOu nn.bin given where an MNW1 file is read: its first word is
/// [`crate::nnue::arch::VERSION`].
fn nn_bin_hint(found: &[u8; 4]) -> &'static str {
    if u32::from_le_bytes(*found) == crate::nnue::arch::VERSION {
        "; this is a YaneuraOu nn.bin: convert it with `manaka weights import-nnue FILE -o \
         FILE.mnw`, then use the .mnw (with `--backend integer` / USI `Backend integer` for \
         YaneuraOu's integer arithmetic)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    /// Issue 16, item 6: an nn.bin given where an MNW1 file is read said only "not an MNW1
    /// weight file"; it now says what it is and how to use it. Other bad magic gets no hint.
    #[test]
    fn an_nn_bin_read_as_mnw1_says_what_to_do() {
        let mut nn = crate::nnue::arch::VERSION.to_le_bytes().to_vec();
        nn.extend_from_slice(&[0; 60]);
        let e = crate::weights::WeightFile::from_bytes(&nn)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("not an MNW1 weight file"), "{e}");
        assert!(
            e.contains("this is a YaneuraOu nn.bin")
                && e.contains("manaka weights import-nnue")
                && e.contains("Backend integer"),
            "{e}"
        );
        let e = crate::weights::WeightFile::from_bytes(b"hello, world").unwrap_err();
        assert!(!e.to_string().contains("nn.bin"), "{e}");
    }
}
