//! Reading MNW1 version 5: every check of SPEC §7, then zero-copy f32 views of the tensors.
//!
//! The checks run in file order, so that the error names the first thing wrong: magic,
//! version, shape name (and, for [`WeightFile::open_expecting`], that it is the engine's shape),
//! then each tensor record against the shape's table (name, order, dtype, rank, dims, byte
//! length, alignment), then where the data lies (after the header, before the trailer, no two
//! tensors overlapping), and last the xxh64 trailer. A truncated file is reported as such
//! wherever the bytes run out. Nothing here indexes or slices without checking first: any input
//! gives a `WeightsError` or a valid file, never a panic.

use super::TensorSource;
use super::error::WeightsError;
use super::format::{ALIGN, DTYPE_F32, MAGIC, Placed, TRAILER_LEN, VERSION};
use crate::data::io::{open_regular, read_bounded};
use manaka_shapes::{Shape, TensorSpec};
use memmap2::Mmap;
use std::path::Path;
use xxhash_rust::xxh64::Xxh64;

/// Files smaller than this are read into memory rather than mapped (a map costs a page anyway).
const MAP_THRESHOLD: u64 = 64 * 1024;
/// Bytes hashed between two progress reports.
const HASH_CHUNK: usize = 8 << 20;

/// The bytes of a weight file: mapped from disk, or owned with f32 alignment.
enum Storage {
    Mapped(Mmap),
    /// `words` holds the bytes (`len` of them) so that every 4-byte-aligned offset is
    /// f32-aligned in memory; a plain `Vec<u8>` would not guarantee that.
    Owned {
        words: Vec<u32>,
        len: usize,
    },
}

impl Storage {
    fn owned(bytes: &[u8]) -> Storage {
        let mut words = vec![0u32; bytes.len().div_ceil(4)];
        let view: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        view[..bytes.len()].copy_from_slice(bytes);
        Storage::Owned {
            words,
            len: bytes.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(map) => map,
            Storage::Owned { words, len } => {
                let all: &[u8] = bytemuck::cast_slice(words);
                all.get(..*len).unwrap_or(all)
            }
        }
    }
}

/// A verified MNW1 weight file. Tensors are views into the mapped (or owned) bytes: opening a
/// 700 MB pair table copies nothing.
pub struct WeightFile {
    storage: Storage,
    shape: Shape,
    tensors: Vec<Placed>,
    checksum: u64,
}

impl std::fmt::Debug for WeightFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeightFile")
            .field("shape", &self.shape.to_string())
            .field("tensors", &self.tensors.len())
            .field("file_len", &self.file_len())
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

impl WeightFile {
    /// Opens and verifies a weight file of any shape.
    pub fn open(path: &Path) -> Result<WeightFile, WeightsError> {
        WeightFile::open_with_progress(path, None, &mut |_, _| {})
    }

    /// Opens a weight file for an engine of shape `expected`; a file of another shape is
    /// refused with [`WeightsError::ShapeMismatch`], naming both.
    pub fn open_expecting(path: &Path, expected: &Shape) -> Result<WeightFile, WeightsError> {
        WeightFile::open_with_progress(path, Some(expected), &mut |_, _| {})
    }

    /// [`WeightFile::open`] / [`WeightFile::open_expecting`], reporting `(bytes hashed, total)`
    /// while the checksum is computed (the only step that reads the whole file).
    pub fn open_with_progress(
        path: &Path,
        expected: Option<&Shape>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<WeightFile, WeightsError> {
        let io = |action| {
            move |source| WeightsError::Io {
                action,
                path: path.to_path_buf(),
                source,
            }
        };
        // A regular file only: its length bounds every read (`/dev/zero` or a FIFO would
        // otherwise be read without end).
        let (file, len) = open_regular(path).map_err(io("open"))?;
        let storage = if len < MAP_THRESHOLD {
            Storage::owned(&read_bounded(file, len, MAP_THRESHOLD, "").map_err(io("read"))?)
        } else {
            // SAFETY: the map is read-only and lives as long as `WeightFile`. If another
            // process truncates or rewrites the file while it is mapped, reads may fault or
            // see new bytes; like every memory-mapped loader we accept that (the writer never
            // modifies a file in place: it writes a new one and renames it).
            Storage::Mapped(unsafe { Mmap::map(&file) }.map_err(io("map"))?)
        };
        WeightFile::verify(storage, expected, progress)
    }

    /// Verifies a weight file held in memory (tests, fuzzing, files fetched from elsewhere).
    /// The bytes are copied once, into f32-aligned storage.
    pub fn from_bytes(bytes: &[u8]) -> Result<WeightFile, WeightsError> {
        WeightFile::verify(Storage::owned(bytes), None, &mut |_, _| {})
    }

    fn verify(
        storage: Storage,
        expected: Option<&Shape>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<WeightFile, WeightsError> {
        let (shape, tensors, checksum) = check(storage.bytes(), expected, progress)?;
        Ok(WeightFile {
            storage,
            shape,
            tensors,
            checksum,
        })
    }

    /// The tensors as laid out in the file, in table order.
    pub fn entries(&self) -> &[Placed] {
        &self.tensors
    }

    /// Each tensor with its data, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (&TensorSpec, &[f32])> {
        self.tensors
            .iter()
            .map(|p| (&p.spec, self.data(p).unwrap_or(&[])))
    }

    /// The xxh64 stored in (and verified against) the trailer.
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.storage.bytes().len() as u64
    }

    /// Whether the tensors are views into a memory map (true for files of 64 KiB and more).
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped(_))
    }

    fn data(&self, placed: &Placed) -> Option<&[f32]> {
        // `check` proved the range lies inside the file and is 64-byte aligned, and the
        // storage is at least 4-byte aligned, so neither step can fail; `?` keeps it panic-free.
        let start = usize::try_from(placed.offset).ok()?;
        let end = start.checked_add(usize::try_from(placed.byte_len).ok()?)?;
        bytemuck::try_cast_slice(self.storage.bytes().get(start..end)?).ok()
    }
}

impl TensorSource for WeightFile {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn tensor(&self, name: &str) -> Option<&[f32]> {
        self.tensors
            .iter()
            .find(|p| p.spec.name == name)
            .and_then(|p| self.data(p))
    }
}

/// Reads little-endian fields, turning every short read into [`WeightsError::Truncated`].
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &dyn Fn() -> String) -> Result<&'a [u8], WeightsError> {
        let end = self.pos.saturating_add(n);
        match self.bytes.get(self.pos..end) {
            Some(slice) => {
                self.pos = end;
                Ok(slice)
            }
            None => Err(WeightsError::Truncated {
                what: what(),
                offset: self.pos as u64,
                end: end as u64,
                file_len: self.bytes.len() as u64,
            }),
        }
    }

    fn array<const N: usize>(
        &mut self,
        what: &dyn Fn() -> String,
    ) -> Result<[u8; N], WeightsError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self, what: &dyn Fn() -> String) -> Result<u8, WeightsError> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u16(&mut self, what: &dyn Fn() -> String) -> Result<u16, WeightsError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32, WeightsError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &dyn Fn() -> String) -> Result<u64, WeightsError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn text(&mut self, len: usize, what: &dyn Fn() -> String) -> Result<&'a str, WeightsError> {
        let offset = self.pos as u64;
        let bytes = self.take(len, what)?;
        std::str::from_utf8(bytes).map_err(|_| WeightsError::BadUtf8 {
            what: what(),
            offset,
        })
    }
}

/// All of SPEC §7's checks; returns the shape, the tensors in table order and the checksum.
fn check(
    bytes: &[u8],
    expected: Option<&Shape>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Shape, Vec<Placed>, u64), WeightsError> {
    let mut cur = Cursor { bytes, pos: 0 };
    let magic: [u8; 4] = cur.array(&|| "magic".into())?;
    if magic != MAGIC {
        return Err(WeightsError::BadMagic { found: magic });
    }
    let version = cur.u32(&|| "version".into())?;
    if version != VERSION {
        return Err(WeightsError::UnsupportedVersion { found: version });
    }
    let name_len = cur.u32(&|| "shape name length".into())?;
    let name_offset = cur.pos as u64;
    let name = cur.text(name_len as usize, &|| "shape name".into())?;
    let shape = Shape::parse(name).map_err(|source| WeightsError::BadShapeName {
        name: name.to_string(),
        offset: name_offset,
        source,
    })?;
    if let Some(expected) = expected
        && *expected != shape
    {
        return Err(WeightsError::ShapeMismatch {
            expected: expected.to_string(),
            found: shape.to_string(),
        });
    }

    let table = shape.tensors();
    let count_offset = cur.pos as u64;
    let count = cur.u32(&|| "tensor count".into())?;
    if count as usize > table.len() {
        return Err(WeightsError::ExtraTensors {
            count,
            offset: count_offset,
            expected: table.len(),
            shape: shape.to_string(),
        });
    }
    let mut tensors = Vec::with_capacity(count as usize);
    for (index, spec) in table.iter().enumerate().take(count as usize) {
        tensors.push(record(&mut cur, index, spec, &table, &shape)?);
    }
    if let Some(missing) = table.get(count as usize) {
        return Err(WeightsError::MissingTensor {
            name: missing.name.clone(),
            count,
            expected: table.len(),
            shape: shape.to_string(),
        });
    }

    // Where the data lies: after the header, before the trailer, no overlaps.
    let header_end = cur.pos as u64;
    let file_len = bytes.len() as u64;
    let data_end = file_len.saturating_sub(TRAILER_LEN).max(header_end);
    for t in &tensors {
        if t.offset < header_end {
            return Err(WeightsError::DataInHeader {
                tensor: t.spec.name.clone(),
                data_offset: t.offset,
                header_end,
            });
        }
        let end = t.offset.saturating_add(t.byte_len);
        if end > data_end {
            return Err(WeightsError::OutOfBounds {
                tensor: t.spec.name.clone(),
                start: t.offset,
                end,
                data_end,
            });
        }
    }
    let mut by_offset: Vec<&Placed> = tensors.iter().collect();
    by_offset.sort_by_key(|t| t.offset);
    for pair in by_offset.windows(2) {
        if pair[1].offset < pair[0].offset + pair[0].byte_len {
            return Err(WeightsError::Overlap {
                first: pair[0].spec.name.clone(),
                second: pair[1].spec.name.clone(),
                offset: pair[1].offset,
            });
        }
    }

    // The trailer: xxh64 (seed 0) of every byte before it. The data checks above guarantee
    // the trailer's 8 bytes exist (the data ends at or before `file_len - 8`).
    let trailer_at = file_len.saturating_sub(TRAILER_LEN) as usize;
    let mut trailer = Cursor {
        bytes,
        pos: trailer_at,
    };
    let stored = trailer.u64(&|| "xxh64 trailer".into())?;
    let body = bytes.get(..trailer_at).unwrap_or(&[]);
    let mut hasher = Xxh64::new(0);
    let mut done = 0u64;
    for chunk in body.chunks(HASH_CHUNK) {
        hasher.update(chunk);
        done += chunk.len() as u64;
        progress(done, body.len() as u64);
    }
    let computed = hasher.digest();
    if computed != stored {
        return Err(WeightsError::ChecksumMismatch {
            stored,
            computed,
            offset: trailer_at as u64,
        });
    }
    Ok((shape, tensors, stored))
}

/// Reads tensor record `index` and checks it against `spec`, the table's entry at that index.
fn record(
    cur: &mut Cursor<'_>,
    index: usize,
    spec: &TensorSpec,
    table: &[TensorSpec],
    shape: &Shape,
) -> Result<Placed, WeightsError> {
    let record_offset = cur.pos as u64;
    let len = cur.u16(&|| format!("tensor record {index} (name length)"))?;
    let name = cur.text(usize::from(len), &|| format!("tensor record {index} name"))?;
    if name != spec.name {
        return Err(if table.iter().any(|t| t.name == name) {
            WeightsError::TensorOrder {
                found: name.to_string(),
                expected: spec.name.clone(),
                index,
                offset: record_offset,
            }
        } else {
            WeightsError::UnknownTensor {
                name: name.to_string(),
                index,
                offset: record_offset,
                shape: shape.to_string(),
                expected: spec.name.clone(),
            }
        });
    }
    let what = || format!("tensor `{name}` record");
    let tensor = || name.to_string();

    let offset = cur.pos as u64;
    let dtype = cur.u8(&what)?;
    if dtype != DTYPE_F32 {
        return Err(WeightsError::UnsupportedDtype {
            tensor: tensor(),
            dtype,
            offset,
        });
    }
    let offset = cur.pos as u64;
    let rank = cur.u8(&what)?;
    if usize::from(rank) != spec.dims.len() {
        return Err(WeightsError::WrongRank {
            tensor: tensor(),
            expected: spec.dims.len(),
            found: rank,
            offset,
        });
    }
    let offset = cur.pos as u64;
    let dims = (0..rank)
        .map(|_| cur.u64(&what))
        .collect::<Result<Vec<u64>, _>>()?;
    if dims != spec.dims {
        return Err(WeightsError::WrongDims {
            tensor: tensor(),
            expected: spec.dims.clone(),
            found: dims,
            offset,
        });
    }
    let offset = cur.pos as u64;
    let data_offset = cur.u64(&what)?;
    let byte_len_offset = cur.pos as u64;
    let byte_len = cur.u64(&what)?;
    if byte_len != spec.bytes() {
        return Err(WeightsError::WrongByteLength {
            tensor: tensor(),
            expected: spec.bytes(),
            found: byte_len,
            offset: byte_len_offset,
        });
    }
    if data_offset % ALIGN != 0 {
        return Err(WeightsError::Misaligned {
            tensor: tensor(),
            data_offset,
            offset,
        });
    }
    Ok(Placed {
        spec: spec.clone(),
        offset: data_offset,
        byte_len,
    })
}
