//! File plumbing shared by every format: atomic writes (a temporary file in the target's
//! directory, flushed and synced, then renamed over the target, so a reader never sees half
//! a file) and the error type that names the file, the record and the byte offset.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
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
    /// Games that cannot be stored (more moves or candidates than HCPE3's counts hold).
    #[error("{}: {source}", path.display())]
    Encode {
        path: PathBuf,
        source: super::hcpe3::GamesEncodeError,
    },
}

impl DataError {
    pub(crate) fn io(path: &Path, source: io::Error) -> DataError {
        DataError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Opens `path` for reading if it is a regular file, with its length; anything else (a
/// directory, a FIFO, `/dev/zero`, a socket) is refused with an error that says what it is.
///
/// Every loader of outside files (weights, nn.bin, training state, records, position lists)
/// opens through here, so that no read can be endless: a regular file's length bounds what
/// can be read from it, and each format bounds it further. The path is checked before it is
/// opened, because opening a FIFO blocks until a writer appears; the open file is checked
/// again, in case the path changed in between.
pub fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    fn refuse(meta: &fs::Metadata) -> io::Result<()> {
        if meta.is_file() {
            return Ok(());
        }
        let ft = meta.file_type();
        let kind = if ft.is_dir() {
            "a directory"
        } else {
            #[cfg(unix)]
            {
                use std::os::unix::fs::FileTypeExt;
                if ft.is_fifo() {
                    "a FIFO"
                } else if ft.is_char_device() {
                    "a character device"
                } else if ft.is_block_device() {
                    "a block device"
                } else if ft.is_socket() {
                    "a socket"
                } else {
                    "not a file"
                }
            }
            #[cfg(not(unix))]
            "not a file"
        };
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({kind}); give the path of a file"),
        ))
    }
    refuse(&fs::metadata(path)?)?;
    let file = File::open(path)?;
    let meta = file.metadata()?;
    refuse(&meta)?;
    Ok((file, meta.len()))
}

/// Reads at most `limit` bytes of `file` (whose length is `len`) into a buffer allocated up
/// front; a file larger than `limit` is refused with `what` naming the bound, and memory that
/// cannot be had is an error, not an abort.
pub fn read_bounded(file: File, len: u64, limit: u64, what: &str) -> io::Result<Vec<u8>> {
    if len > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the file has {len} bytes, more than the {limit} {what}"),
        ));
    }
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(len as usize)
        .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, format!("{len} bytes: {e}")))?;
    // `take`: a file that grows while it is read is read only as far as it was long.
    file.take(len).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Removes the temporary files that writers of `target` killed before they finished left
/// beside it: `NAME.tmp-PID` (weights and nn.bin writers) and `.NAME.tmp-PID-N`
/// ([`AtomicFile`]), for every PID that is not a running process. Called before each new
/// write of `target`, so a killed `weights init` costs its disk space only until the next
/// write. Best effort, and only where running processes can be listed (`/proc`): a temporary
/// file of a live process, this one included, is never touched.
pub fn remove_stale_temps(target: &Path) {
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let own = std::process::id().to_string();
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let pid = if let Some(pid) = file.strip_prefix(&format!("{name}.tmp-")) {
            Some(pid)
        } else {
            file.strip_prefix(&format!(".{name}.tmp-"))
                .and_then(|rest| rest.split_once('-'))
                .filter(|(_, n)| digits(n))
                .map(|(pid, _)| pid)
        };
        let Some(pid) = pid.filter(|p| digits(p) && *p != own) else {
            continue;
        };
        if !proc.join(pid).exists() && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The most characters of outside input an error message repeats.
pub const ECHO_CHARS: usize = 80;

/// `input` as an error message repeats it: whole when short, else its first
/// [`ECHO_CHARS`] characters and `...` (a 120 KB line is not worth repeating; ASCII, so that
/// the USI engine's ASCII-only output keeps it).
pub fn excerpt(input: &str) -> String {
    match input.char_indices().nth(ECHO_CHARS) {
        Some((end, _)) => format!("{}...", &input[..end]),
        None => input.to_string(),
    }
}

/// A message line with every quoted echo of input (`'…'`, `` `…` `` or `"…"`) longer than
/// [`ECHO_CHARS`] cut down by [`excerpt`], and the line itself kept under ten times that:
/// applied where messages leave the program, so that no error line repeats a whole input,
/// whichever library wrote it. A quote counts as an opening one only after a character that is
/// not alphanumeric (so the apostrophe of "engine's" opens nothing), and as a closing one
/// only before such a character.
pub fn shorten_echoes(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let word = |i: usize| chars.get(i).is_some_and(|c| c.is_alphanumeric());
    let mut out = String::with_capacity(line.len().min(16 * ECHO_CHARS));
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let opens = matches!(c, '\'' | '`' | '"') && (i == 0 || !word(i - 1));
        let close = opens
            .then(|| (i + 1..chars.len()).find(|&j| chars[j] == c && !word(j + 1)))
            .flatten();
        match close {
            Some(j) => {
                let inner: String = chars[i + 1..j].iter().collect();
                out.push(c);
                out.push_str(&excerpt(&inner));
                out.push(c);
                i = j + 1;
            }
            None => {
                out.push(c);
                i += 1;
            }
        }
    }
    let most = 10 * ECHO_CHARS;
    match out.char_indices().nth(most) {
        Some((end, _)) => format!("{}...", &out[..end]),
        None => out,
    }
}

/// Reads a whole regular file (see [`open_regular`]).
pub(crate) fn read_all(path: &Path) -> Result<Vec<u8>, DataError> {
    let (file, len) = open_regular(path).map_err(|e| DataError::io(path, e))?;
    read_bounded(file, len, len, "it had when opened").map_err(|e| DataError::io(path, e))
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
        remove_stale_temps(&target);
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

    /// A FIFO at `path` (by `mkfifo`, which every Unix has); `None` where it cannot be made.
    fn fifo(path: &Path) -> Option<()> {
        let ok = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .ok()?
            .success();
        ok.then_some(())
    }

    /// Runs `f` on another thread and gives its result, or panics if it takes more than
    /// ten seconds (opening a FIFO for reading blocks until a writer appears: without the
    /// check that refuses it, the loaders would hang here).
    fn within_10s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("the loader blocked instead of refusing the file")
    }

    /// Issue 16, fault 2: `/dev/zero`, a directory and a FIFO given to any loader are refused
    /// at once with an error naming the path and saying it is not a regular file, instead of
    /// being read without end (24 GB for `manaka eval --weights /dev/zero`) or blocking.
    #[test]
    fn every_loader_refuses_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut paths = vec![
            (PathBuf::from("/dev/zero"), "a character device"),
            (dir.path().to_path_buf(), "a directory"),
        ];
        let pipe = dir.path().join("pipe.mnw");
        if fifo(&pipe).is_some() {
            paths.push((pipe, "a FIFO"));
        }
        for (path, kind) in paths {
            if !path.exists() {
                continue; // no /dev/zero on this platform
            }
            let p = path.clone();
            let errors: Vec<(&str, String)> = within_10s(move || {
                use crate::data::records::{HcpeRecord, read_records};
                use crate::data::sources::{SourceFormat, read_positions};
                let e = |r: Result<(), String>| r.err().unwrap_or_default();
                vec![
                    (
                        "open_regular",
                        e(open_regular(&p)
                            .map(drop)
                            .map_err(|e| format!("{}: {e}", p.display()))),
                    ),
                    (
                        "MNW1",
                        e(crate::weights::WeightFile::open(&p)
                            .map(drop)
                            .map_err(|e| e.to_string())),
                    ),
                    (
                        "nn.bin",
                        e(crate::nnue::file::read(&p)
                            .map(drop)
                            .map_err(|e| e.to_string())),
                    ),
                    (
                        "HCPE",
                        e(read_records::<HcpeRecord>(&p)
                            .map(drop)
                            .map_err(|e| e.to_string())),
                    ),
                    (
                        "HCPE3",
                        e(crate::data::read_hcpe3(&p)
                            .map(drop)
                            .map_err(|e| e.to_string())),
                    ),
                    (
                        "SFEN lines",
                        e(read_positions(&p, SourceFormat::Sfen)
                            .map(drop)
                            .map_err(|e| e.to_string())),
                    ),
                    (
                        "EvalFile",
                        e(crate::usi::eval_file::resolve(p.to_str().unwrap())
                            .map(drop)
                            .map_err(|e| e.to_string())),
                    ),
                ]
            });
            for (loader, error) in errors {
                assert!(
                    error.contains(&format!("not a regular file ({kind})"))
                        && error.contains(&path.display().to_string()),
                    "{loader} on {}: {error:?}",
                    path.display()
                );
            }
        }
    }

    /// An nn.bin whose header names a known architecture but which is longer than that
    /// architecture's file is refused before it is read: a sparse 64 GiB file is refused
    /// without allocating anything (reading it whole would abort the process).
    #[test]
    fn an_oversized_nn_bin_is_refused_before_it_is_read() {
        use crate::nnue::arch::{SHIPPED, VERSION};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nn.bin");
        let arch = SHIPPED[1];
        let mut head = Vec::new();
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&arch.hash().to_le_bytes());
        head.extend_from_slice(&0u32.to_le_bytes());
        fs::write(&path, &head).unwrap();
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(64 << 30).unwrap();
        let e = crate::nnue::file::read(&path).unwrap_err().to_string();
        let expected = arch.file_len(0) as u64;
        assert!(
            e.contains(&format!("{} unexpected bytes", (64u64 << 30) - expected)),
            "{e}"
        );
        // A file no longer than the architecture's is read and parsed (here: its zero
        // feature transformer hash is the first thing wrong).
        file.set_len(expected).unwrap();
        let e = crate::nnue::file::read(&path).unwrap_err().to_string();
        assert!(
            e.starts_with("feature transformer hash 0x00000000 at byte 12"),
            "{e}"
        );
    }

    /// Issue 16, item 6: error lines repeated a whole 120 KB input. Echoes are cut to 80
    /// characters and an ellipsis (`...`); apostrophes inside words are not taken for quotes; the
    /// rest of the message is kept.
    #[test]
    fn echoed_input_is_cut_to_an_excerpt() {
        let long = "x".repeat(120_000);
        assert_eq!(excerpt("7g7f"), "7g7f");
        assert_eq!(excerpt(&long), format!("{}...", "x".repeat(ECHO_CHARS)));
        assert_eq!(excerpt(&"あ".repeat(100)).chars().count(), ECHO_CHARS + 3);
        let cut = format!("{}...", "x".repeat(ECHO_CHARS));
        for (line, want) in [
            (
                format!("bad --sfen '{long}': SFEN has 1 fields"),
                format!("bad --sfen '{cut}': SFEN has 1 fields"),
            ),
            (
                format!("the engine's move: `{long}` is not a USI move (e.g. 7g7f)"),
                format!("the engine's move: `{cut}` is not a USI move (e.g. 7g7f)"),
            ),
            (
                format!("unknown option \"{long}\""),
                format!("unknown option \"{cut}\""),
            ),
            (
                "it's 'short' and fine".to_string(),
                "it's 'short' and fine".to_string(),
            ),
            (
                "an unclosed 'quote".to_string(),
                "an unclosed 'quote".to_string(),
            ),
        ] {
            assert_eq!(shorten_echoes(&line), want);
        }
        // Input repeated without quotes is still bounded.
        let bare = shorten_echoes(&format!("moves {long}"));
        assert_eq!(bare.chars().count(), 10 * ECHO_CHARS + 3);
        assert!(bare.ends_with("..."));
    }

    /// A PID that is surely not running: a child that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    /// Issue 16, item 6: a killed `weights init` left `.tmp-PID` files (up to 183 MB) that
    /// nothing removed. The next write of the same target removes those of dead processes,
    /// for every writer, and leaves live processes' and other files alone.
    #[test]
    fn the_next_write_removes_temporaries_of_killed_writers() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let dead = dead_pid();
        let own = std::process::id();
        let shape = manaka_shapes::Shape::parse("pair0_d8_o2_h16").unwrap();
        let weights = crate::weights::init::random_weights(&shape, 1);
        let kp = manaka_shapes::Shape::parse("pair0_d256_o1_h32_h232_kp_nnue").unwrap();
        let (ints, _) =
            crate::nnue::IntWeights::quantise(&crate::weights::init::random_weights(&kp, 1))
                .unwrap();
        type Write<'a> = Box<dyn Fn(&Path) + 'a>;
        let writers: [(&str, Write); 3] = [
            (
                "w.mnw",
                Box::new(|p| {
                    crate::weights::write_file(p, &weights).unwrap();
                }),
            ),
            (
                "nn.bin",
                Box::new(|p| {
                    crate::nnue::file::write(p, &ints).unwrap();
                }),
            ),
            ("x.hcpe", Box::new(|p| write_atomic(p, b"data").unwrap())),
        ];
        for (name, write) in writers {
            let stale = [
                format!("{name}.tmp-{dead}"),
                format!(".{name}.tmp-{dead}-3"),
            ];
            let kept = [
                format!(".{name}.tmp-{own}-999"), // this process: a writer at work
                format!("{name}.tmp-1"),          // init: always running
                format!("other.mnw.tmp-{dead}"),
                format!("{name}.tmp-{dead}.bak"),
            ];
            for f in stale.iter().chain(&kept) {
                fs::write(dir.path().join(f), b"partial").unwrap();
            }
            write(&dir.path().join(name));
            for f in &stale {
                assert!(!dir.path().join(f).exists(), "{f} left behind");
            }
            for f in &kept {
                assert!(dir.path().join(f).exists(), "{f} removed");
                fs::remove_file(dir.path().join(f)).unwrap();
            }
        }
    }

    /// `read_bounded` refuses a file over its bound and reads no more than the length given.
    #[test]
    fn bounded_reads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        fs::write(&p, b"0123456789").unwrap();
        let (f, len) = open_regular(&p).unwrap();
        assert_eq!(len, 10);
        let e = read_bounded(f, len, 4, "bytes allowed").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the file has 10 bytes, more than the 4 bytes allowed"
        );
        let (f, _) = open_regular(&p).unwrap();
        assert_eq!(read_bounded(f, 6, 6, "").unwrap(), b"012345");
    }

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
