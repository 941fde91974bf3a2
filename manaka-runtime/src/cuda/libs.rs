//! Finding the CUDA libraries at run time, without ever panicking.
//!
//! cudarc's dynamic loading opens `libcuda` and `libnvrtc` by name on first use and panics
//! when one is missing. Everything here runs before that first use: it checks that the
//! library opens (cudarc's own `is_culib_present`), and runs the first call into it under
//! `catch_unwind`, so that a missing or too-old library becomes a [`CudaError`] and the
//! caller falls back to the CPU.
//!
//! NVRTC is often not on the loader's search path: the PyPI wheel `nvidia-cuda-nvrtc` puts it
//! under `site-packages/nvidia/cu13/lib/`, a toolkit under `$CUDA_HOME/lib64`. So NVRTC and its
//! builtins library are first opened by path from, in order: `MANAKA_NVRTC_LIB` (the library
//! file or its folder), `CUDA_HOME`, `CUDA_PATH`, `/usr/local/cuda`. A library the process
//! has loaded is found again by its soname (`libnvrtc.so.13`), which is one of the names cudarc
//! asks for, and NVRTC finds its builtins (`libnvrtc-builtins.so.13.0`) the same way.

use super::CudaError;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The variable naming NVRTC's library file, or the folder holding it.
pub const NVRTC_ENV: &str = "MANAKA_NVRTC_LIB";

/// Runs `f`, turning a panic inside a CUDA library binding into [`CudaError::Panicked`].
pub(crate) fn guarded<T>(
    what: &str,
    f: impl FnOnce() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "no message".to_string());
            Err(CudaError::Panicked {
                what: what.to_string(),
                message,
            })
        }
    }
}

/// Libraries opened by path, kept open for the life of the process.
static PRELOADED: Mutex<Vec<libloading::os::unix::Library>> = Mutex::new(Vec::new());

/// Folders that may hold NVRTC, in the order they are tried.
fn nvrtc_folders() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(v) = std::env::var_os(NVRTC_ENV) {
        let p = PathBuf::from(v);
        if p.is_file() {
            if let Some(parent) = p.parent() {
                dirs.push(parent.to_path_buf());
            }
        } else {
            dirs.push(p);
        }
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = std::env::var_os(var) {
            dirs.push(PathBuf::from(&v).join("lib64"));
            dirs.push(PathBuf::from(v).join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs
}

/// The versioned NVRTC library (`libnvrtc.so.13`) and its builtins in `dir`, if any. The
/// `.alt` variants the wheels also ship are skipped.
fn nvrtc_files(dir: &Path) -> Option<(PathBuf, Option<PathBuf>)> {
    let mut lib = None;
    let mut builtins = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.contains(".alt.") {
            continue;
        }
        if let Some(rest) = name.strip_prefix("libnvrtc.so.") {
            // Prefer the shortest versioned name (the soname, libnvrtc.so.13).
            if !rest.is_empty()
                && lib
                    .as_ref()
                    .is_none_or(|(n, _): &(String, PathBuf)| name.len() < n.len())
            {
                lib = Some((name.clone(), entry.path()));
            }
        } else if name.starts_with("libnvrtc-builtins.so.") {
            builtins = Some(entry.path());
        }
    }
    lib.map(|(_, path)| (path, builtins))
}

/// Opens the first NVRTC found in [`nvrtc_folders`] by path (builtins first); the folders
/// tried and what failed, for the error message.
fn preload_nvrtc() -> Vec<String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    let mut notes = Vec::new();
    for dir in nvrtc_folders() {
        let Some((lib, builtins)) = nvrtc_files(&dir) else {
            notes.push(format!("{}: no libnvrtc.so.*", dir.display()));
            continue;
        };
        let mut opened = Vec::new();
        let mut failed = None;
        for path in builtins.iter().chain(std::iter::once(&lib)) {
            // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
            match unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) } {
                Ok(l) => opened.push(l),
                Err(e) => failed = Some(format!("{}: {e}", path.display())),
            }
        }
        if let Some(f) = failed {
            notes.push(f);
            continue;
        }
        PRELOADED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(opened);
        notes.clear();
        break;
    }
    notes
}

/// NVRTC's version, loading the library first (once per process). The error says where it
/// was looked for.
pub fn nvrtc() -> Result<(i32, i32), CudaError> {
    static STATE: OnceLock<Result<(i32, i32), String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            let notes = preload_nvrtc();
            // SAFETY: only tries to open the library by each of its usual names.
            if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                let mut why = format!(
                    "libnvrtc.so was not found on the library path nor in the folders tried \
                     (set {NVRTC_ENV} to the library or its folder, or install it: \
                     python3 -m pip install nvidia-cuda-nvrtc)"
                );
                if !notes.is_empty() {
                    why.push_str(&format!("; tried: {}", notes.join("; ")));
                }
                return Err(why);
            }
            guarded("nvrtcVersion", || {
                let (mut major, mut minor) = (0, 0);
                // SAFETY: two valid out-pointers.
                unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
                    .result()
                    .map_err(|e| CudaError::Nvrtc(format!("nvrtcVersion: {e}")))?;
                Ok((major, minor))
            })
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(CudaError::Nvrtc)
}

/// Checks that the CUDA driver library opens and initialises (once per process).
pub fn driver() -> Result<(), CudaError> {
    static STATE: OnceLock<Result<(), String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            // SAFETY: only tries to open the library by each of its usual names.
            if !unsafe { cudarc::driver::sys::is_culib_present() } {
                return Err("the CUDA driver library (libcuda.so.1) was not found: no NVIDIA driver on this machine".to_string());
            }
            guarded("cuInit", || {
                cudarc::driver::result::init().map_err(|e| CudaError::Driver {
                    op: "cuInit",
                    message: e.to_string(),
                })
            })
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(CudaError::NoDriver)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_versioned_library_and_skips_alt_builds() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "libnvrtc.alt.so.13",
            "libnvrtc.so.13",
            "libnvrtc.so.13.0.88",
            "libnvrtc-builtins.alt.so.13.0",
            "libnvrtc-builtins.so.13.0",
        ] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let (lib, builtins) = nvrtc_files(dir.path()).unwrap();
        assert_eq!(lib.file_name().unwrap(), "libnvrtc.so.13");
        assert_eq!(
            builtins.unwrap().file_name().unwrap(),
            "libnvrtc-builtins.so.13.0"
        );
        assert!(nvrtc_files(&dir.path().join("missing")).is_none());
    }

    #[test]
    fn a_panic_in_a_binding_becomes_an_error() {
        let e = guarded::<()>("test call", || panic!("library missing")).unwrap_err();
        assert!(e.to_string().contains("library missing"), "{e}");
        assert!(e.to_string().contains("test call"), "{e}");
    }
}
