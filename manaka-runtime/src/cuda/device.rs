//! The GPU behind the executor's [`Device`] trait: one cudarc stream per evaluator, the
//! shape's kernels loaded from the CUBIN NVRTC made.

use super::CudaError;
use super::exec::{Arg, Device};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use manaka_kernels::cuda::{Kernel, THREADS};
use std::sync::Arc;

fn driver_error(op: &'static str) -> impl Fn(cudarc::driver::DriverError) -> CudaError {
    move |e| CudaError::Driver {
        op,
        message: e.to_string(),
    }
}

/// A shape's kernels in a loaded module.
pub(crate) struct Kernels {
    _module: Arc<CudaModule>,
    functions: Vec<(Kernel, CudaFunction)>,
}

impl Kernels {
    /// Loads `cubin` into `ctx` and looks up every kernel `shape` has.
    pub fn load(
        ctx: &Arc<CudaContext>,
        cubin: &[u8],
        shape: &manaka_shapes::Shape,
    ) -> Result<Kernels, CudaError> {
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec()))
            .map_err(driver_error("cuModuleLoadData"))?;
        let mut functions = Vec::new();
        for k in Kernel::ALL {
            if k.exists_for(shape) {
                let f = module
                    .load_function(k.name())
                    .map_err(driver_error("cuModuleGetFunction"))?;
                functions.push((k, f));
            }
        }
        Ok(Kernels {
            _module: module,
            functions,
        })
    }

    fn get(&self, k: Kernel) -> Result<&CudaFunction, CudaError> {
        self.functions
            .iter()
            .find(|(kk, _)| *kk == k)
            .map(|(_, f)| f)
            .ok_or_else(|| CudaError::Driver {
                op: "launch",
                message: format!("kernel {} is not in this shape's module", k.name()),
            })
    }
}

/// One stream of the device, with the kernels it launches.
pub(crate) struct GpuStream {
    pub stream: Arc<CudaStream>,
    pub kernels: Arc<Kernels>,
}

impl Device for GpuStream {
    type Buf = CudaSlice<u8>;

    fn alloc(&self, bytes: usize) -> Result<Self::Buf, CudaError> {
        self.stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(driver_error("cuMemAlloc"))
    }

    fn upload(&self, src: &[u8], dst: &mut Self::Buf) -> Result<(), CudaError> {
        if src.len() > dst.len() {
            return Err(CudaError::Driver {
                op: "cuMemcpyHtoD",
                message: format!("{} bytes into a buffer of {}", src.len(), dst.len()),
            });
        }
        let mut view = dst.slice_mut(..src.len());
        self.stream
            .memcpy_htod(src, &mut view)
            .map_err(driver_error("cuMemcpyHtoD"))
    }

    fn download(&self, src: &Self::Buf, dst: &mut [u8]) -> Result<(), CudaError> {
        if dst.len() > src.len() {
            return Err(CudaError::Driver {
                op: "cuMemcpyDtoH",
                message: format!("{} bytes from a buffer of {}", dst.len(), src.len()),
            });
        }
        let view = src.slice(..dst.len());
        self.stream
            .memcpy_dtoh(&view, dst)
            .map_err(driver_error("cuMemcpyDtoH"))?;
        self.synchronize()
    }

    fn launch(
        &self,
        kernel: Kernel,
        grid: (u32, u32),
        args: &[Arg<'_, Self::Buf>],
    ) -> Result<(), CudaError> {
        let f = self.kernels.get(kernel)?;
        let cfg = LaunchConfig {
            grid_dim: (grid.0, grid.1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut builder = self.stream.launch_builder(f);
        for a in args {
            match a {
                Arg::Buf(b) => builder.arg(*b),
                Arg::Int(v) => builder.arg(v),
            };
        }
        // SAFETY: the argument list matches the kernel's signature in kernels/cuda/ (the
        // executor builds it, and the emulation tests check the same list against the
        // reference), and every buffer holds the sizes the kernel indexes for this batch.
        unsafe { builder.launch(cfg) }.map_err(driver_error("cuLaunchKernel"))?;
        Ok(())
    }

    fn synchronize(&self) -> Result<(), CudaError> {
        self.stream
            .synchronize()
            .map_err(driver_error("cuStreamSynchronize"))
    }
}
