//! Checkpoints: the weights as an ordinary MNW1 file (`OUT.mnw`, usable by the engine at
//! once), and beside it the training state (`OUT.mnw.state`) a resumed run needs.
//!
//! State file, little-endian (docs/training.md, "Checkpoints"):
//!
//! ```text
//! b"MNTS"  u32 version = 1
//! u32 len + UTF-8 canonical shape name
//! u64 weights   xxh64 trailer of the MNW1 file this state belongs to
//! u64 step      optimiser updates so far (Adam's t)
//! u32 epoch     epochs completed
//! u64 offset    samples of the current epoch already trained on
//! u64 samples   samples trained on in all
//! u64 seed      the run's seed (shuffling)
//! u64 data      fingerprint of the training set (`Dataset::fingerprint`)
//! f64 beta1, beta2, eps
//! u32 count     tensors, in the shape's table order, each:
//!     u16 len + UTF-8 name, u64 numel, numel × f32 first moment, numel × f32 second moment
//! u64 xxh64 (seed 0) of every byte before it
//! ```
//!
//! A checkpoint ([`save`]) is one step as far as a resumed run can tell: the weights are
//! written and synced under a temporary name, the state for them is written (atomically) as
//! `OUT.mnw.state.next`, then the weights are renamed over `OUT.mnw` and the state over
//! `OUT.mnw.state`. Whenever the process is killed, one of the two state files belongs to the
//! weights beside them: the old state before the weights' rename, `.next` after it. [`resume`]
//! takes whichever does (the state records its weights' checksum) and refuses only a pair
//! that no checkpoint wrote — a state from other weights — instead of silently mixing two
//! steps.

use super::error::TrainError;
use super::model::Model;
use super::optim::{Adam, AdamConfig};
use super::real::Real;
use crate::data::AtomicFile;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh64::Xxh64;

const MAGIC: &[u8; 4] = b"MNTS";
const VERSION: u32 = 1;

/// Where a run stands (everything but the weights and the optimiser moments).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunState {
    /// Epochs completed.
    pub epoch: u32,
    /// Samples of the current epoch already trained on (its shuffled order is fixed by the
    /// seed and the epoch number, so this is a position in it).
    pub offset: u64,
    /// Samples trained on, in all.
    pub samples: u64,
    pub seed: u64,
    /// `Dataset::fingerprint` of the training set.
    pub data: u64,
}

/// The state file beside a weight file.
pub fn state_path(weights: &Path) -> PathBuf {
    let mut s = weights.as_os_str().to_owned();
    s.push(".state");
    PathBuf::from(s)
}

/// Where [`save`] puts the state for weights not yet renamed into place.
pub fn pending_state_path(weights: &Path) -> PathBuf {
    let mut s = state_path(weights).into_os_string();
    s.push(".next");
    PathBuf::from(s)
}

/// Checkpoints `model`, `adam` and `run` to `out` and its state file, so that a kill at any
/// moment leaves a checkpoint that [`resume`] accepts (the old one or the new one).
pub fn save(
    out: &Path,
    model: &Model<f32>,
    adam: &Adam<f32>,
    run: &RunState,
) -> Result<(), TrainError> {
    let staged = crate::weights::write_file_staged(out, model)?;
    let pending = pending_state_path(out);
    write_state(&pending, model, adam, run, staged.checksum())?;
    staged.commit()?;
    let state = state_path(out);
    std::fs::rename(&pending, &state).map_err(|source| TrainError::Io {
        path: state.clone(),
        source,
    })?;
    crate::weights::sync_dir(&state);
    Ok(())
}

/// Reads the checkpoint at `out` for `model` (already read from `out`, whose checksum is
/// `weights_checksum`): the state that belongs to those weights — `OUT.state`, or
/// `OUT.state.next` when a checkpoint was interrupted between its two renames (it is then
/// renamed into place). Neither belonging is the error `OUT.state` gives.
pub fn resume<R: Real>(
    out: &Path,
    model: &Model<R>,
    weights_checksum: u64,
) -> Result<(Adam<R>, RunState), TrainError> {
    let state = state_path(out);
    let pending = pending_state_path(out);
    let current = read_state(&state, model, weights_checksum);
    if current.is_ok() || !pending.exists() {
        return current;
    }
    match read_state(&pending, model, weights_checksum) {
        Ok(found) => {
            std::fs::rename(&pending, &state).map_err(|source| TrainError::Io {
                path: state.clone(),
                source,
            })?;
            Ok(found)
        }
        // A missing OUT.state is the error worth showing only when .next cannot stand in.
        Err(e) if !state.exists() => Err(e),
        Err(_) => current,
    }
}

fn io_err(path: &Path) -> impl Fn(crate::data::DataError) -> TrainError + '_ {
    move |e| TrainError::Checkpoint {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Writes the state file for `adam` and `run`, belonging to a weight file whose checksum is
/// `weights_checksum`.
pub fn write_state<R: Real>(
    path: &Path,
    model: &Model<R>,
    adam: &Adam<R>,
    run: &RunState,
    weights_checksum: u64,
) -> Result<(), TrainError> {
    let mut out = AtomicFile::create(path).map_err(io_err(path))?;
    let mut hasher = Xxh64::new(0);
    let mut put = |bytes: &[u8], out: &mut AtomicFile| -> Result<(), TrainError> {
        hasher.update(bytes);
        out.write_all(bytes).map_err(io_err(path))
    };
    let name = model.shape.to_string();
    let mut head = Vec::new();
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&(name.len() as u32).to_le_bytes());
    head.extend_from_slice(name.as_bytes());
    head.extend_from_slice(&weights_checksum.to_le_bytes());
    head.extend_from_slice(&adam.step.to_le_bytes());
    head.extend_from_slice(&run.epoch.to_le_bytes());
    head.extend_from_slice(&run.offset.to_le_bytes());
    head.extend_from_slice(&run.samples.to_le_bytes());
    head.extend_from_slice(&run.seed.to_le_bytes());
    head.extend_from_slice(&run.data.to_le_bytes());
    for x in [adam.config.beta1, adam.config.beta2, adam.config.eps] {
        head.extend_from_slice(&x.to_le_bytes());
    }
    head.extend_from_slice(&(model.specs.len() as u32).to_le_bytes());
    put(&head, &mut out)?;
    let mut buf = Vec::new();
    for (i, spec) in model.specs.iter().enumerate() {
        buf.clear();
        buf.extend_from_slice(&(spec.name.len() as u16).to_le_bytes());
        buf.extend_from_slice(spec.name.as_bytes());
        buf.extend_from_slice(&(adam.m[i].len() as u64).to_le_bytes());
        put(&buf, &mut out)?;
        for moment in [&adam.m[i], &adam.v[i]] {
            for piece in moment.chunks(1 << 16) {
                buf.clear();
                for &v in piece {
                    buf.extend_from_slice(&v.to_f32().to_le_bytes());
                }
                put(&buf, &mut out)?;
            }
        }
    }
    let digest = hasher.digest();
    out.write_all(&digest.to_le_bytes()).map_err(io_err(path))?;
    out.commit().map_err(io_err(path))
}

/// The length of `model`'s state file, as [`write_state`] writes it.
fn state_len<R: Real>(model: &Model<R>) -> u64 {
    let name = model.shape.to_string().len() as u64;
    // magic, version, name, weights, step, epoch, offset, samples, seed, data, 3 × f64, count
    let head = 4 + 4 + 4 + name + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 24 + 4;
    let tensors: u64 = model
        .specs
        .iter()
        .zip(&model.tensors)
        .map(|(spec, t)| 2 + spec.name.len() as u64 + 8 + 8 * t.len() as u64)
        .sum();
    head + tensors + 8
}

/// A cursor over the state file's bytes whose errors say which field is wrong.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl Reader<'_> {
    fn fail(&self, reason: String) -> TrainError {
        TrainError::Checkpoint {
            path: self.path.to_path_buf(),
            reason,
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], TrainError> {
        if self.bytes.len() - self.at < n {
            return Err(self.fail(format!(
                "truncated: {what} needs {n} bytes at byte {}",
                self.at
            )));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u16(&mut self, what: &str) -> Result<u16, TrainError> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self, what: &str) -> Result<u32, TrainError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self, what: &str) -> Result<u64, TrainError> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
    fn f64(&mut self, what: &str) -> Result<f64, TrainError> {
        Ok(f64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
    fn string(&mut self, len: usize, what: &str) -> Result<String, TrainError> {
        let b = self.take(len, what)?.to_vec();
        String::from_utf8(b).map_err(|_| self.fail(format!("{what} is not UTF-8")))
    }
}

/// Reads the state file at `path` for `model` (whose weights must have checksum
/// `weights_checksum`): the optimiser and where the run stands.
pub fn read_state<R: Real>(
    path: &Path,
    model: &Model<R>,
    weights_checksum: u64,
) -> Result<(Adam<R>, RunState), TrainError> {
    let io = |source| TrainError::Io {
        path: path.to_path_buf(),
        source,
    };
    // A regular file, read no further than a state for this model can be long.
    let (file, len) = crate::data::io::open_regular(path).map_err(io)?;
    let limit = state_len(model);
    let what = format!("bytes of a training state for shape {}", model.shape);
    let bytes = crate::data::io::read_bounded(file, len, limit, &what).map_err(io)?;
    let mut r = Reader {
        bytes: &bytes,
        at: 0,
        path,
    };
    if r.take(4, "magic")? != MAGIC {
        return Err(r.fail("bad magic: not a Manaka training state (MNTS) file".into()));
    }
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(r.fail(format!(
            "version {version}; this build reads version {VERSION}"
        )));
    }
    if bytes.len() < 8 {
        return Err(r.fail("truncated: no checksum trailer".into()));
    }
    let body = &bytes[..bytes.len() - 8];
    let stored = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8 bytes"));
    let computed = xxhash_rust::xxh64::xxh64(body, 0);
    if stored != computed {
        return Err(r.fail(format!(
            "checksum mismatch (stored {stored:#018x}, computed {computed:#018x}): the file is damaged or truncated"
        )));
    }
    r.bytes = body;
    let len = r.u32("shape name length")? as usize;
    let name = r.string(len, "shape name")?;
    if name != model.shape.to_string() {
        return Err(r.fail(format!(
            "the state is for shape {name}, the run trains {}",
            model.shape
        )));
    }
    let weights = r.u64("weights checksum")?;
    if weights != weights_checksum {
        return Err(r.fail(format!(
            "the state belongs to weights with checksum {weights:#018x}, but the weight file beside it has {weights_checksum:#018x} \
             (interrupted while saving?); start again from these weights with --init and without --resume"
        )));
    }
    let step = r.u64("step")?;
    let run = RunState {
        epoch: r.u32("epoch")?,
        offset: r.u64("offset")?,
        samples: r.u64("samples")?,
        seed: r.u64("seed")?,
        data: r.u64("data fingerprint")?,
    };
    let config = AdamConfig {
        beta1: r.f64("beta1")?,
        beta2: r.f64("beta2")?,
        eps: r.f64("eps")?,
    };
    let count = r.u32("tensor count")? as usize;
    if count != model.specs.len() {
        return Err(r.fail(format!(
            "{count} tensors; shape {} has {}",
            model.shape,
            model.specs.len()
        )));
    }
    let mut adam = Adam::new(model, config);
    adam.step = step;
    for (i, spec) in model.specs.iter().enumerate() {
        let what = format!("tensor {i} name");
        let len = usize::from(r.u16(&what)?);
        let tname = r.string(len, &what)?;
        if tname != spec.name {
            return Err(r.fail(format!("tensor {i} is {tname:?}; expected {:?}", spec.name)));
        }
        let numel = r.u64(&format!("{tname} length"))?;
        if numel != model.tensors[i].len() as u64 {
            return Err(r.fail(format!(
                "{tname} has {numel} values; expected {}",
                model.tensors[i].len()
            )));
        }
        for (k, moment) in [&mut adam.m[i], &mut adam.v[i]].into_iter().enumerate() {
            let raw = r.take(numel as usize * 4, &format!("{tname} moment {}", k + 1))?;
            for (dst, b) in moment.iter_mut().zip(raw.chunks_exact(4)) {
                *dst = R::from_f32(f32::from_le_bytes(b.try_into().expect("4 bytes")));
            }
        }
    }
    if r.at != body.len() {
        return Err(r.fail(format!(
            "{} unexpected bytes before the trailer",
            body.len() - r.at
        )));
    }
    Ok((adam, run))
}
