//! The kernels on the host, as the tests' [`Device`]: g++ compiles a shape's kernel source
//! with `kernels/cuda/emulate.hpp` (real threads per block, `__syncthreads` a barrier) into a
//! shared library, and the executor drives it exactly as it drives the GPU. So, on machines
//! without a GPU, the kernels' arithmetic, the packing of a batch and the launch sequence are
//! checked against the reference evaluator (SPEC §4–6) on random weights and positions —
//! with every output buffer poisoned with NaN first, so an unwritten entry fails.
//!
//! Needs g++ (C++20); without it the tests skip, and fail under `MANAKA_REQUIRE_ORACLES=1`.

use super::CudaError;
use super::equivalence::{self, check_positions};
use super::exec::{Arg, Device, DeviceWeights, Executor};
use crate::eval::Evaluation;
use crate::reference::ReferenceNet;
use crate::weights::{WeightSet, init};
use manaka_kernels::cuda::Kernel;
use manaka_shapes::Shape;
use std::ffi::{CString, c_char, c_void};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

/// A host allocation the emulated kernels write through raw pointers.
struct EmuBuf {
    ptr: *mut u64,
    words: usize,
}

// SAFETY: a plain heap allocation owned by the buffer; the emulator's threads only touch it
// during a launch, which the executor does not overlap with anything else.
unsafe impl Send for EmuBuf {}
unsafe impl Sync for EmuBuf {}

impl EmuBuf {
    fn new(bytes: usize) -> EmuBuf {
        let words = bytes.div_ceil(8).max(1);
        let ptr = Box::into_raw(vec![0u64; words].into_boxed_slice()).cast::<u64>();
        EmuBuf { ptr, words }
    }

    fn bytes(&self) -> usize {
        self.words * 8
    }
}

impl Drop for EmuBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` as a boxed slice of `words` u64s.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.words)) });
    }
}

type Launch = unsafe extern "C" fn(*const c_char, u32, u32, *mut *mut c_void) -> i32;

/// A shape's kernels compiled for the host.
struct Emulator {
    _lib: libloading::Library,
    launch: Launch,
}

impl Device for Arc<Emulator> {
    type Buf = EmuBuf;

    fn alloc(&self, bytes: usize) -> Result<EmuBuf, CudaError> {
        Ok(EmuBuf::new(bytes))
    }

    fn upload(&self, src: &[u8], dst: &mut EmuBuf) -> Result<(), CudaError> {
        assert!(src.len() <= dst.bytes(), "upload past the end of a buffer");
        // SAFETY: `dst` holds at least `src.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.ptr.cast::<u8>(), src.len()) };
        Ok(())
    }

    fn download(&self, src: &EmuBuf, dst: &mut [u8]) -> Result<(), CudaError> {
        assert!(
            dst.len() <= src.bytes(),
            "download past the end of a buffer"
        );
        // SAFETY: `src` holds at least `dst.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.ptr.cast::<u8>(), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn launch(
        &self,
        kernel: Kernel,
        grid: (u32, u32),
        args: &[Arg<'_, EmuBuf>],
    ) -> Result<(), CudaError> {
        // Argument values, then pointers to them (cuLaunchKernel's convention).
        let mut pointers: Vec<*mut c_void> = Vec::with_capacity(args.len());
        let mut ints: Vec<i32> = Vec::with_capacity(args.len());
        for a in args {
            match a {
                Arg::Buf(b) => pointers.push(b.ptr.cast()),
                Arg::Int(v) => {
                    ints.push(*v);
                    pointers.push(std::ptr::null_mut());
                }
            }
        }
        let mut next_int = 0;
        let mut slots: Vec<*mut c_void> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match a {
                Arg::Buf(_) => slots.push((&mut pointers[i] as *mut *mut c_void).cast()),
                Arg::Int(_) => {
                    slots.push((&mut ints[next_int] as *mut i32).cast());
                    next_int += 1;
                }
            }
        }
        let name = CString::new(kernel.name()).expect("kernel names have no NUL");
        // SAFETY: `slots` points at one value per kernel parameter, of the parameter's type,
        // alive for the call; the buffers hold what the kernel indexes (as on the GPU).
        let rc = unsafe { (self.launch)(name.as_ptr(), grid.0, grid.1, slots.as_mut_ptr()) };
        assert_eq!(rc, 0, "the emulator has no kernel {}", kernel.name());
        Ok(())
    }

    fn synchronize(&self) -> Result<(), CudaError> {
        Ok(())
    }
}

/// Compiles `shape`'s kernels for the host into `dir`; `None` (with the reason) without g++.
fn build(shape: &Shape, dir: &Path) -> Result<Arc<Emulator>, String> {
    let src = dir.join(format!("{shape}.cpp"));
    let lib = dir.join(format!("lib{shape}.so"));
    std::fs::write(&src, manaka_kernels::cuda::emulation_source(shape))
        .map_err(|e| e.to_string())?;
    let out = Command::new("g++")
        .args([
            "-std=c++20",
            "-O2",
            "-fPIC",
            "-shared",
            "-pthread",
            "-w",
            "-o",
        ])
        .arg(&lib)
        .arg(&src)
        .output()
        .map_err(|e| format!("g++ could not be run: {e}"))?;
    if !out.status.success() {
        panic!(
            "g++ rejected the kernels of {shape} (a bug in kernels/cuda/):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // SAFETY: a library just built from our own source; its initialisers do nothing.
    let lib = unsafe { libloading::Library::new(&lib) }.map_err(|e| e.to_string())?;
    // SAFETY: `mk_emu_launch` has this signature in kernels/cuda/emulate_launch.cpp.
    let launch = *unsafe { lib.get::<Launch>(b"mk_emu_launch\0") }.map_err(|e| e.to_string())?;
    Ok(Arc::new(Emulator { _lib: lib, launch }))
}

/// The emulator for `shape`, or `None` when g++ is missing (a failure under
/// `MANAKA_REQUIRE_ORACLES=1`).
fn emulator(shape: &Shape, dir: &Path) -> Option<Arc<Emulator>> {
    match build(shape, dir) {
        Ok(e) => Some(e),
        Err(why) => {
            if std::env::var_os("MANAKA_REQUIRE_ORACLES").is_some_and(|v| v == "1") {
                panic!("MANAKA_REQUIRE_ORACLES=1 but the kernel emulation cannot be built: {why}");
            }
            eprintln!("skipped: the kernel emulation needs g++ (C++20): {why}");
            None
        }
    }
}

/// Evaluates random positions through the emulated kernels in batches of `sizes` (cycling)
/// with the one equivalence harness ([`super::equivalence`]): every value and policy logit
/// within the tolerance of the reference.
fn check(shape_name: &str, leaves: usize, sizes: &[usize]) {
    let shape = Shape::parse(shape_name).expect("valid shape");
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(emu) = emulator(&shape, dir.path()) else {
        return;
    };
    let weights: Arc<WeightSet> = Arc::new(init::random_weights(&shape, 7));
    let reference = ReferenceNet::new(weights.clone()).expect("reference net");
    let device_weights = Arc::new(DeviceWeights::upload(&emu, weights.as_ref()).expect("upload"));
    let mut exec = Executor::new(shape, emu, device_weights);
    exec.set_poison(true);

    let positions = check_positions(leaves, 11, 160).expect("random positions");
    let eq = equivalence::check(&reference, &positions, sizes, |batch, out| {
        exec.evaluate(batch, out)
    });
    assert!(eq.ok(), "{shape_name}:\n{}", eq.failures.join("\n"));
    // An empty batch answers nothing and launches nothing.
    let mut out: Vec<Evaluation> = vec![];
    exec.evaluate(&[], &mut out).expect("empty batch");
    assert!(out.is_empty());
    eprintln!(
        "{shape_name}: {} leaves through the emulated kernels, largest relative error {:.2e}",
        positions.len(),
        eq.value_error.max(eq.policy_error)
    );
}

// Batches of 67 leaves cross the 64-row GEMM tile; single leaves and a small batch after a
// larger one reuse the grown scratch buffers.

#[test]
fn emulated_kernels_equal_the_reference_small_native() {
    check("pair4_d16_o2_h32", 70, &[67, 1, 5]);
}

#[test]
fn emulated_kernels_equal_the_reference_every_block_kind() {
    // split power sums, pair with lse, moments, field (and the policy's field term), ks
    // scalars, a second hidden layer, and a first one wider than one GEMM tile.
    check("pair8_d16_o3_h72_h240_m4_f2_lse3_ks_split", 70, &[67, 3]);
}

#[test]
fn emulated_kernels_equal_the_reference_kp_with_pairs() {
    check("pair3_d8_o2_h16_kp", 20, &[9, 13]);
}

#[test]
fn emulated_kernels_equal_the_reference_nnue() {
    check("pair0_d16_o1_h8_halfkp_nnue", 20, &[11, 11]);
    check("pair0_d24_o1_h20_h212_kp_nnue", 20, &[22]);
}

#[test]
fn emulated_kernels_equal_the_reference_baseline() {
    check("pair16_d128_o3_h512", 66, &[66]);
}
