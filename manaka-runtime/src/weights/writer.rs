//! Writing MNW1 version 5: streaming and atomic.
//!
//! Streaming: the header is known from the shape alone, so it is written first and the tensor
//! data can follow in pieces of any size, tensor after tensor in table order (a trainer or
//! `weights init` never holds the whole file). The xxh64 is computed on the way.
//!
//! Atomic: [`WeightWriter`] writes `<file>.tmp-<pid>` in the target's directory, fsyncs it and
//! renames it over the target, so a reader sees the old file or the complete new one, never a
//! partial one. A writer dropped before [`WeightWriter::finish`] removes its temporary file.

use super::TensorSource;
use super::error::WeightsError;
use super::format::{Layout, TRAILER_LEN};
use manaka_shapes::{Shape, TensorSpec};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh64::Xxh64;

/// Encodes one weight file into any `Write`, tensor values in table order.
struct Encoder<W: Write> {
    out: W,
    /// Where `out` goes, for error messages.
    path: PathBuf,
    hasher: Xxh64,
    layout: Layout,
    /// Index of the tensor the next value goes to.
    next: usize,
    /// Values already written to tensor `next`.
    filled: u64,
    /// Bytes written so far.
    pos: u64,
}

impl<W: Write> Encoder<W> {
    fn new(out: W, shape: &Shape, path: PathBuf) -> Result<Encoder<W>, WeightsError> {
        let layout = Layout::new(shape);
        let header = layout.encode_header();
        let mut encoder = Encoder {
            out,
            path,
            hasher: Xxh64::new(0),
            layout,
            next: 0,
            filled: 0,
            pos: 0,
        };
        encoder.emit(&header)?;
        Ok(encoder)
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), WeightsError> {
        self.out
            .write_all(bytes)
            .map_err(|source| WeightsError::Io {
                action: "write",
                path: self.path.clone(),
                source,
            })?;
        self.hasher.update(bytes);
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Zero padding up to `offset` (less than 64 bytes: the layout aligns each tensor).
    fn pad_to(&mut self, offset: u64) -> Result<(), WeightsError> {
        const ZEROS: [u8; 64] = [0; 64];
        while self.pos < offset {
            let n = (offset - self.pos).min(64) as usize;
            self.emit(&ZEROS[..n])?;
        }
        Ok(())
    }

    fn current(&self) -> Option<&TensorSpec> {
        self.layout.tensors.get(self.next).map(|p| &p.spec)
    }

    fn write(&mut self, mut values: &[f32]) -> Result<(), WeightsError> {
        while !values.is_empty() {
            let Some(placed) = self.layout.tensors.get(self.next) else {
                return Err(WeightsError::TooMuchData {
                    shape: self.layout.shape.to_string(),
                });
            };
            let (offset, numel) = (placed.offset, placed.spec.numel());
            if self.filled == 0 {
                self.pad_to(offset)?;
            }
            let room = numel - self.filled;
            let n = usize::try_from(room)
                .unwrap_or(usize::MAX)
                .min(values.len());
            let (now, rest) = values.split_at(n);
            // Little-endian f32 on disk is the in-memory layout (the module refuses to build
            // on big-endian targets), so the values are written as they are.
            self.emit(bytemuck::cast_slice(now))?;
            values = rest;
            self.filled += n as u64;
            if self.filled == numel {
                self.next += 1;
                self.filled = 0;
            }
        }
        Ok(())
    }

    fn write_tensor(&mut self, name: &str, values: &[f32]) -> Result<(), WeightsError> {
        let Some(spec) = self.current() else {
            return Err(WeightsError::TooMuchData {
                shape: self.layout.shape.to_string(),
            });
        };
        if spec.name != name || self.filled != 0 {
            return Err(WeightsError::WriteOrder {
                expected: spec.name.clone(),
                found: name.to_string(),
            });
        }
        if spec.numel() != values.len() as u64 {
            return Err(WeightsError::WrongLength {
                tensor: name.to_string(),
                expected: spec.numel(),
                found: values.len() as u64,
            });
        }
        self.write(values)
    }

    /// Checks every tensor is complete, appends the trailer and returns the sink.
    fn finish(mut self) -> Result<(W, u64), WeightsError> {
        if let Some(spec) = self.current() {
            return Err(WeightsError::Incomplete {
                tensor: spec.name.clone(),
                written: self.filled,
                expected: spec.numel(),
            });
        }
        let digest = self.hasher.digest();
        self.out
            .write_all(&digest.to_le_bytes())
            .map_err(|source| WeightsError::Io {
                action: "write",
                path: self.path.clone(),
                source,
            })?;
        debug_assert_eq!(self.pos + TRAILER_LEN, self.layout.file_len());
        Ok((self.out, digest))
    }
}

/// Writes a weight file atomically, tensor data streamed in table order.
///
/// ```no_run
/// # use manaka_runtime::weights::WeightWriter;
/// # use manaka_shapes::Shape;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let shape = Shape::parse("pair0_d8_o2_h16")?;
/// let mut writer = WeightWriter::create("net.mnw".as_ref(), &shape)?;
/// while let Some(spec) = writer.current().cloned() {
///     writer.write(&vec![0.0; spec.numel() as usize])?; // or in smaller pieces
/// }
/// writer.finish()?;
/// # Ok(()) }
/// ```
pub struct WeightWriter {
    // Field order matters on drop: the file is closed before the temporary path is removed.
    encoder: Encoder<BufWriter<File>>,
    path: PathBuf,
    tmp: TempPath,
}

/// A temporary file that is removed when dropped, unless [`TempPath::keep`] was called.
struct TempPath(Option<PathBuf>);

impl TempPath {
    fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or(Path::new(""))
    }

    /// The file was renamed into place: nothing to remove.
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl WeightWriter {
    /// Starts `path` for `shape`: creates the temporary file and writes the header.
    pub fn create(path: &Path, shape: &Shape) -> Result<WeightWriter, WeightsError> {
        let Some(file_name) = path.file_name() else {
            return Err(WeightsError::NotAFilePath {
                path: path.to_path_buf(),
            });
        };
        // Temporaries of writers killed before they finished go first.
        crate::data::io::remove_stale_temps(path);
        let mut tmp_name = file_name.to_os_string();
        tmp_name.push(format!(".tmp-{}", std::process::id()));
        let tmp_path = path.with_file_name(tmp_name);
        let file = File::create(&tmp_path).map_err(|source| WeightsError::Io {
            action: "create",
            path: tmp_path.clone(),
            source,
        })?;
        // From here on the guard removes the temporary file if anything fails.
        let tmp = TempPath(Some(tmp_path.clone()));
        let encoder = Encoder::new(BufWriter::with_capacity(1 << 20, file), shape, tmp_path)?;
        Ok(WeightWriter {
            encoder,
            path: path.to_path_buf(),
            tmp,
        })
    }

    /// The tensor the next values go to; `None` once every tensor is complete.
    pub fn current(&self) -> Option<&TensorSpec> {
        self.encoder.current()
    }

    /// Appends values: the rest of the current tensor, then the next ones, in table order.
    /// Slices may be of any length and may span tensor boundaries.
    pub fn write(&mut self, values: &[f32]) -> Result<(), WeightsError> {
        self.encoder.write(values)
    }

    /// Writes a whole tensor; refused unless `name` is the next tensor of the table and
    /// `values` has exactly its length.
    pub fn write_tensor(&mut self, name: &str, values: &[f32]) -> Result<(), WeightsError> {
        self.encoder.write_tensor(name, values)
    }

    /// Completes the file: trailer, flush, fsync, rename over the target, fsync the directory.
    /// Returns the xxh64 written in the trailer. On any error the temporary file is removed
    /// and the target is left as it was.
    pub fn finish(self) -> Result<u64, WeightsError> {
        self.finish_staged()?.commit()
    }

    /// Completes the file as [`WeightWriter::finish`] does, but stops before the rename: the
    /// complete, synced file waits under its temporary name, and its checksum is known, until
    /// [`StagedWeights::commit`] renames it into place. A checkpoint writes what must refer to
    /// the checksum (the training state) in between.
    pub fn finish_staged(self) -> Result<StagedWeights, WeightsError> {
        let WeightWriter { encoder, path, tmp } = self;
        let (buffered, digest) = encoder.finish()?;
        let file = buffered
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io("write", tmp.path()))?;
        file.sync_all().map_err(io("sync", tmp.path()))?;
        drop(file);
        Ok(StagedWeights {
            path,
            tmp,
            checksum: digest,
        })
    }
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> WeightsError {
    let path = path.to_path_buf();
    move |source| WeightsError::Io {
        action,
        path,
        source,
    }
}

/// A complete weight file under its temporary name ([`WeightWriter::finish_staged`]).
/// Dropped without [`StagedWeights::commit`], it is removed and the target is untouched.
pub struct StagedWeights {
    path: PathBuf,
    tmp: TempPath,
    checksum: u64,
}

impl StagedWeights {
    /// The xxh64 in the file's trailer.
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Renames the file over its target and syncs the directory; returns the checksum.
    pub fn commit(self) -> Result<u64, WeightsError> {
        let StagedWeights {
            path,
            tmp,
            checksum,
        } = self;
        std::fs::rename(tmp.path(), &path).map_err(io("rename into place", &path))?;
        tmp.keep();
        sync_dir(&path);
        Ok(checksum)
    }
}

/// Makes a rename into `path`'s directory durable. Directories cannot be opened on every
/// platform, so this is best effort.
pub(crate) fn sync_dir(path: &Path) {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes every tensor of `source` to `path`, up to [`WeightWriter::finish_staged`].
pub fn write_file_staged(
    path: &Path,
    source: &dyn TensorSource,
) -> Result<StagedWeights, WeightsError> {
    let mut writer = WeightWriter::create(path, source.shape())?;
    for spec in source.shape().tensors() {
        writer.write_tensor(&spec.name, source.require(&spec.name)?)?;
    }
    writer.finish_staged()
}

/// Writes every tensor of `source` to `path`, atomically.
pub fn write_file(path: &Path, source: &dyn TensorSource) -> Result<u64, WeightsError> {
    write_file_staged(path, source)?.commit()
}

/// Encodes every tensor of `source` as the bytes of a weight file.
pub fn encode(source: &dyn TensorSource) -> Result<Vec<u8>, WeightsError> {
    let shape = source.shape();
    let capacity = usize::try_from(Layout::new(shape).file_len()).unwrap_or(0);
    let mut encoder = Encoder::new(
        Vec::with_capacity(capacity),
        shape,
        PathBuf::from("<memory>"),
    )?;
    for spec in shape.tensors() {
        encoder.write_tensor(&spec.name, source.require(&spec.name)?)?;
    }
    Ok(encoder.finish()?.0)
}
