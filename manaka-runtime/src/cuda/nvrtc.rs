//! Compiling a shape's kernels with NVRTC to a CUBIN, cached per process.
//!
//! The source is `manaka_kernels::cuda::source(shape)` (every dimension a `#define`); the
//! target is the real architecture of the device (`sm_90` on an H100/H200), so the driver
//! loads machine code and compiles nothing at start. The CI compiles every compiled-in
//! shape for `sm_90` and `sm_80` with this function (tests named `nvrtc`).

use super::{CudaError, libs};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex};

/// The architectures the CI compiles every compiled-in shape for: Hopper (H100/H200) and
/// Ampere (A100).
pub const CHECK_ARCHS: [&str; 2] = ["sm_90", "sm_80"];

/// NVRTC's version (loading the library on first use; see [`libs`]).
pub fn version() -> Result<(i32, i32), CudaError> {
    libs::nvrtc()
}

/// Compiled CUBINs by (xxh64 of the source, architecture).
type Cache = HashMap<(u64, String), Arc<Vec<u8>>>;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// Compiles `source` for `arch` (`sm_90`, `sm_80`, ...) to a CUBIN, once per process for
/// each (source, arch). `name` names the program in NVRTC's messages (the shape).
pub fn cubin(source: &str, arch: &str, name: &str) -> Result<Arc<Vec<u8>>, CudaError> {
    let key = (
        xxhash_rust::xxh64::xxh64(source.as_bytes(), 0),
        arch.to_string(),
    );
    if let Some(hit) = CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&key))
    {
        return Ok(hit.clone());
    }
    libs::nvrtc()?;
    let compiled = Arc::new(compile(source, arch, name)?);
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, compiled.clone());
    Ok(compiled)
}

/// One NVRTC compilation (the library is loaded).
fn compile(source: &str, arch: &str, name: &str) -> Result<Vec<u8>, CudaError> {
    use cudarc::nvrtc::{result, sys};
    let fail = |what: &str, log: String| CudaError::Compile {
        name: name.to_string(),
        arch: arch.to_string(),
        log: format!("{what}: {log}"),
    };
    let src = CString::new(source).map_err(|_| fail("source", "contains a NUL byte".into()))?;
    let program_name = CString::new(format!("{name}.cu"))
        .map_err(|_| fail("name", "contains a NUL byte".into()))?;
    let options = [
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
    ];
    libs::guarded("NVRTC", || {
        let prog = result::create_program(&src, Some(&program_name))
            .map_err(|e| fail("nvrtcCreateProgram", e.to_string()))?;
        // SAFETY: `prog` was just created and is destroyed once, below; `src` and
        // `program_name` outlive it.
        let compiled = unsafe { result::compile_program(prog, &options) };
        let outcome = match compiled {
            Err(e) => {
                // SAFETY: as above.
                let log = unsafe { result::get_program_log(prog) }
                    .map(|raw| {
                        let bytes: Vec<u8> = raw
                            .iter()
                            .take_while(|&&c| c != 0)
                            .map(|&c| c as u8)
                            .collect();
                        String::from_utf8_lossy(&bytes).into_owned()
                    })
                    .unwrap_or_default();
                Err(fail(&format!("nvrtcCompileProgram ({e})"), log))
            }
            Ok(()) => {
                let mut size = 0usize;
                // SAFETY: as above; `size` is a valid out-pointer, and the buffer has the
                // size NVRTC reported.
                unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) }
                    .result()
                    .map_err(|e| fail("nvrtcGetCUBINSize", e.to_string()))
                    .and_then(|()| {
                        let mut bin = vec![0u8; size];
                        unsafe { sys::nvrtcGetCUBIN(prog, bin.as_mut_ptr().cast()) }
                            .result()
                            .map_err(|e| fail("nvrtcGetCUBIN", e.to_string()))
                            .map(|()| bin)
                    })
            }
        };
        // SAFETY: created above, destroyed once.
        let _ = unsafe { result::destroy_program(prog) };
        let bin = outcome?;
        if bin.len() < 4 || &bin[..4] != b"\x7fELF" {
            return Err(fail(
                "nvrtcGetCUBIN",
                format!("{} bytes that are not an ELF image", bin.len()),
            ));
        }
        Ok(bin)
    })
}
