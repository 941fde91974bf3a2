//! The CUDA batch evaluator (feature `cuda`; docs/gpu.md).
//!
//! A shape's kernels are CUDA C generated from the templates in `kernels/cuda/` with every
//! dimension a constant (`manaka_kernels::cuda::source`), compiled by NVRTC for the device at
//! first use and cached per process ([`nvrtc`]). The weights are uploaded once ([`CudaNet`]);
//! each [`CudaEvaluator`] owns a stream and scratch buffers and evaluates a whole batch of
//! leaves per call: pack the batch (token lists, move labels) into one array, copy it over,
//! launch accumulate → W1 (→ W2) → value and policy, copy the outputs back. The search sees
//! an [`Evaluator`](crate::eval::Evaluator) like any other.
//!
//! cudarc loads `libcuda` and `libnvrtc` at run time, so the crate builds without a CUDA
//! toolkit. Before the first call into either, [`probe`] checks that the library is there
//! and runs that call under `catch_unwind`: with no driver, no device or no NVRTC, loading
//! returns a [`CudaError`] saying which, and callers (the USI `Backend` option) run the CPU.

mod device;
pub mod equivalence;
mod evaluator;
mod exec;
pub mod libs;
pub mod nvrtc;
mod pack;

#[cfg(test)]
mod emulate;

pub use evaluator::{CudaEvaluator, CudaFactory, CudaNet, factory};

use cudarc::driver::CudaContext;

/// Why the GPU cannot evaluate (the CPU runs instead).
#[derive(Clone, Debug, thiserror::Error)]
pub enum CudaError {
    #[error("{0}")]
    NoDriver(String),
    #[error("no usable CUDA device: {0}")]
    NoDevice(String),
    #[error("NVRTC is unavailable: {0}")]
    Nvrtc(String),
    #[error("NVRTC could not compile the kernels of {name} for {arch}: {log}")]
    Compile {
        name: String,
        arch: String,
        log: String,
    },
    #[error("CUDA {op} failed: {message}")]
    Driver { op: &'static str, message: String },
    #[error("weights: {0}")]
    Weights(String),
    #[error("{what} panicked ({message}); the CUDA library is probably missing or too old")]
    Panicked { what: String, message: String },
    #[error("the kernels left {0} unwritten (still NaN)")]
    Unwritten(String),
}

/// The device the evaluator runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    /// `sm_<major><minor>`, the architecture NVRTC compiles for.
    pub arch: String,
    pub memory_bytes: usize,
    /// The driver's CUDA version, e.g. 13000.
    pub driver_version: i32,
    /// NVRTC's version (major, minor).
    pub nvrtc: (i32, i32),
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}, {:.1} GiB, driver CUDA {}.{}, NVRTC {}.{})",
            self.name,
            self.arch,
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            self.driver_version / 1000,
            self.driver_version % 1000 / 10,
            self.nvrtc.0,
            self.nvrtc.1
        )
    }
}

/// Checks that CUDA can run here — driver library, a device, NVRTC — and describes device 0.
/// Never panics: each missing piece is an error naming it.
pub fn probe() -> Result<DeviceInfo, CudaError> {
    libs::driver()?;
    let nvrtc = libs::nvrtc()?;
    libs::guarded("CUDA device query", || {
        let count = CudaContext::device_count().map_err(|e| CudaError::NoDevice(e.to_string()))?;
        if count < 1 {
            return Err(CudaError::NoDevice(
                "the driver reports no CUDA device".to_string(),
            ));
        }
        let ctx = CudaContext::new(0).map_err(|e| CudaError::NoDevice(e.to_string()))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| CudaError::NoDevice(e.to_string()))?;
        let mut driver_version = 0;
        // SAFETY: a valid out-pointer; the driver is initialised (libs::driver).
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .map_err(|e| CudaError::NoDevice(e.to_string()))?;
        Ok(DeviceInfo {
            name: ctx.name().unwrap_or_else(|_| "unknown device".to_string()),
            arch: format!("sm_{major}{minor}"),
            memory_bytes: ctx.total_mem().unwrap_or(0),
            driver_version,
            nvrtc,
        })
    })
}
