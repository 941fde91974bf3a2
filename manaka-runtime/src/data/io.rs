//! File plumbing shared by every format: atomic writes (a temporary file in the target's
//! directory, flushed and synced, then renamed over the target, so a reader never sees half
//! a file) and the error type that names the file, the record and the byte offset.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

/// A record or game that does not parse: which one, where, and why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{what} {index} at byte {offset}: {reason}")]
pub struct FormatError {
    /// `"record"` or `"game"`.
    pub what: &'static str,
    /// 0-based index of the record or game.
    pub index: u64,
    /// Byte offset of the record or game (or of the bad field inside it, where the reason
    /// says so) from the start of the input.
    pub offset: u64,
    pub reason: String,
}

/// Reading or writing a data file failed.
#[derive(Debug, Error)]
pub enum DataError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{}: {source}", path.display())]
    Format { path: PathBuf, source: FormatError },
    /// A value that cannot be stored (a position the format cannot pack, say).
    #[error("{}: {reason}", path.display())]
    Encode { path: PathBuf, reason: String },
}

impl DataError {
    pub(crate) fn io(path: &Path, source: io::Error) -> DataError {
        DataError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Reads a whole file.
pub(crate) fn read_all(path: &Path) -> Result<Vec<u8>, DataError> {
    fs::read(path).map_err(|e| DataError::io(path, e))
}

/// A file being written under a temporary name beside its target; [`AtomicFile::commit`]
/// renames it into place. Dropped without committing, the temporary file is removed and the
/// target is untouched.
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    pub fn create(target: impl AsRef<Path>) -> Result<AtomicFile, DataError> {
        let target = target.as_ref().to_path_buf();
        let name = target
            .file_name()
            .ok_or_else(|| {
                DataError::io(
                    &target,
                    io::Error::new(io::ErrorKind::InvalidInput, "not a file name"),
                )
            })?
            .to_string_lossy()
            .into_owned();
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Unique per process and per call, so concurrent writers never share a temporary.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        let file = File::create(&temp).map_err(|e| DataError::io(&temp, e))?;
        Ok(AtomicFile {
            target,
            temp,
            out: Some(BufWriter::new(file)),
        })
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), DataError> {
        match self.out.as_mut() {
            Some(out) => out
                .write_all(bytes)
                .map_err(|e| DataError::io(&self.temp, e)),
            None => Ok(()),
        }
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> Result<(), DataError> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let file = out
            .into_inner()
            .map_err(|e| DataError::io(&self.temp, e.into_error()))?;
        file.sync_all().map_err(|e| DataError::io(&self.temp, e))?;
        drop(file);
        fs::rename(&self.temp, &self.target).map_err(|e| DataError::io(&self.target, e))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), DataError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_and_drop_discards() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.bin");
        write_atomic(&p, b"one").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one");
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"two").unwrap();
            // dropped: not committed
        }
        assert_eq!(fs::read(&p).unwrap(), b"one");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temporary file left behind"
        );
        write_atomic(&p, b"three").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"three");
    }
}
