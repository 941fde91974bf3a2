//! The MNW1 version 5 byte layout (SPEC §7), shared by the writer and the reader.
//!
//! ```text
//! b"MNW1"  u32 version = 5  u32 len, shape name (UTF-8, canonical)  u32 count
//! count × { u16 len, name (UTF-8)  u8 dtype (0 = f32)  u8 rank  rank × u64 dims
//!           u64 offset (from file start, 64-byte aligned)  u64 byte_len }
//! zero padding, then each tensor's f32 data at its offset (64-byte aligned)
//! u64 xxh64 (seed 0) of every byte before it
//! ```
//!
//! Everything is little-endian. The writer places the tensors in table order, each at the next
//! 64-byte boundary; the reader accepts any placement that is aligned, inside the data and free
//! of overlaps, so that other writers may pad differently.

use manaka_shapes::{Shape, TensorSpec};

/// The first four bytes of every weight file.
pub const MAGIC: [u8; 4] = *b"MNW1";
/// The format version this build reads and writes.
pub const VERSION: u32 = 5;
/// Tensor data alignment, in bytes from the start of the file.
pub const ALIGN: u64 = 64;
/// The only dtype defined so far: little-endian IEEE f32.
pub const DTYPE_F32: u8 = 0;
/// Bytes of the xxh64 trailer.
pub const TRAILER_LEN: u64 = 8;

/// Rounds `offset` up to the next multiple of [`ALIGN`].
pub fn align_up(offset: u64) -> u64 {
    offset.div_ceil(ALIGN) * ALIGN
}

/// A tensor and where its data goes in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    pub spec: TensorSpec,
    /// Offset of the first byte of data, from the start of the file.
    pub offset: u64,
    /// Bytes of data: 4 per value.
    pub byte_len: u64,
}

/// Where everything of a shape's weight file goes, as this crate's writer lays it out.
#[derive(Clone, Debug)]
pub struct Layout {
    pub shape: Shape,
    pub tensors: Vec<Placed>,
    /// Bytes of the header (magic to the last tensor record), before padding.
    pub header_len: u64,
    /// Offset of the trailer: the end of the last tensor's data.
    pub data_end: u64,
}

impl Layout {
    pub fn new(shape: &Shape) -> Layout {
        let name_len = shape.to_string().len() as u64;
        let specs = shape.tensors();
        let records: u64 = specs
            .iter()
            .map(|t| 2 + t.name.len() as u64 + 1 + 1 + 8 * t.dims.len() as u64 + 8 + 8)
            .sum();
        let header_len = 4 + 4 + 4 + name_len + 4 + records;
        let mut offset = align_up(header_len);
        let mut tensors = Vec::with_capacity(specs.len());
        for spec in specs {
            let byte_len = spec.bytes();
            tensors.push(Placed {
                spec,
                offset,
                byte_len,
            });
            offset = align_up(offset + byte_len);
        }
        let data_end = tensors
            .last()
            .map_or(align_up(header_len), |t| t.offset + t.byte_len);
        Layout {
            shape: *shape,
            tensors,
            header_len,
            data_end,
        }
    }

    /// Total file size: data and trailer.
    pub fn file_len(&self) -> u64 {
        self.data_end + TRAILER_LEN
    }

    /// The header bytes, magic to the last tensor record.
    pub fn encode_header(&self) -> Vec<u8> {
        let name = self.shape.to_string();
        let mut out = Vec::with_capacity(self.header_len as usize);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(self.tensors.len() as u32).to_le_bytes());
        for t in &self.tensors {
            // Tensor names are short table constants (`norm.own.e8` is the longest).
            out.extend_from_slice(&(t.spec.name.len() as u16).to_le_bytes());
            out.extend_from_slice(t.spec.name.as_bytes());
            out.push(DTYPE_F32);
            out.push(t.spec.dims.len() as u8);
            for d in &t.spec.dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&t.offset.to_le_bytes());
            out.extend_from_slice(&t.byte_len.to_le_bytes());
        }
        out
    }
}
