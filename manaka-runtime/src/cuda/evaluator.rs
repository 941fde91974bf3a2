//! [`CudaNet`] (a shape's kernels and weights on the GPU, loaded once), [`CudaEvaluator`]
//! (one stream and its scratch, an [`Evaluator`] for the search) and [`CudaFactory`].

use super::device::{GpuStream, Kernels};
use super::exec::{DeviceWeights, Executor};
use super::libs::guarded;
use super::{CudaError, DeviceInfo, nvrtc};
use crate::eval::{Evaluation, Evaluator, EvaluatorFactory, Leaf};
use crate::reference::{ReferenceEvaluator, ReferenceNet};
use crate::weights::TensorSource;
use cudarc::driver::{CudaContext, CudaSlice};
use manaka_shapes::Shape;
use std::sync::Arc;

/// A network on the GPU: the shape's kernels (compiled by NVRTC for this device at first use,
/// cached per process) and its weights, uploaded once from the source (e.g. a memory-mapped
/// MNW1 file). Shared by every [`CudaEvaluator`] made from it.
pub struct CudaNet {
    shape: Shape,
    ctx: Arc<CudaContext>,
    kernels: Arc<Kernels>,
    weights: Arc<DeviceWeights<CudaSlice<u8>>>,
    info: DeviceInfo,
    /// Kept for the CPU fallback of an evaluator whose device fails.
    source: Arc<dyn TensorSource + Send + Sync>,
}

impl CudaNet {
    /// Loads `source`'s network onto device 0. Every failure — no driver, no device, no
    /// NVRTC, a compile error, out of memory — is an error, never a panic.
    pub fn new(source: Arc<dyn TensorSource + Send + Sync>) -> Result<Arc<CudaNet>, CudaError> {
        let info = super::probe()?;
        let shape = *source.shape();
        guarded("CUDA set-up", || {
            let ctx = CudaContext::new(0).map_err(|e| CudaError::NoDevice(e.to_string()))?;
            let src = manaka_kernels::cuda::source(&shape);
            let cubin = nvrtc::cubin(&src, &info.arch, &shape.to_string())?;
            let kernels = Arc::new(Kernels::load(&ctx, &cubin, &shape)?);
            let stream = ctx.new_stream().map_err(|e| CudaError::Driver {
                op: "cuStreamCreate",
                message: e.to_string(),
            })?;
            let dev = GpuStream {
                stream,
                kernels: kernels.clone(),
            };
            let weights = DeviceWeights::upload(&dev, source.as_ref())?;
            super::exec::Device::synchronize(&dev)?;
            // SAFETY: from here on each buffer is used on one stream only — an evaluator's
            // scratch on its own stream; the weights, uploaded and synchronised above, are
            // only read — every evaluation waits for its stream before returning, and the
            // weights outlive every evaluator (each holds them by Arc). cudarc's per-launch
            // events would only add driver calls to every batch.
            unsafe { ctx.disable_event_tracking() };
            Ok(Arc::new(CudaNet {
                shape,
                ctx,
                kernels,
                weights: Arc::new(weights),
                info,
                source: source.clone(),
            }))
        })
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The device the network runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    /// Bytes of weights on the device.
    pub fn weight_bytes(&self) -> usize {
        self.weights.bytes
    }

    /// `shape (CUDA, device name, sm_XY)`.
    pub fn describe(&self) -> String {
        format!(
            "{} (CUDA, {}, {})",
            self.shape, self.info.name, self.info.arch
        )
    }

    /// A new evaluator: its own stream and scratch buffers.
    pub fn evaluator(self: &Arc<Self>) -> Result<CudaEvaluator, CudaError> {
        guarded("CUDA stream", || {
            let stream = self.ctx.new_stream().map_err(|e| CudaError::Driver {
                op: "cuStreamCreate",
                message: e.to_string(),
            })?;
            let dev = GpuStream {
                stream,
                kernels: self.kernels.clone(),
            };
            Ok(CudaEvaluator {
                net: self.clone(),
                exec: Executor::new(self.shape, dev, self.weights.clone()),
                fallback: None,
                cpu: None,
            })
        })
    }

    /// The reference evaluator on the same weights (the fallback when no CPU factory is given).
    fn reference(&self) -> Box<dyn Evaluator> {
        match ReferenceNet::new(self.source.clone()) {
            Ok(net) => Box::new(ReferenceEvaluator::new(net)),
            Err(e) => {
                // Unreachable for weights the GPU accepted (same tensor table); stay legal.
                eprintln!(
                    "manaka: no CPU fallback for {}: {e}; using the material evaluator",
                    self.shape
                );
                Box::new(crate::eval::MaterialEvaluator::new())
            }
        }
    }
}

/// Evaluates batches on the GPU: one stream, device buffers grown to the largest batch.
/// Should the device fail mid-search, the error is reported once on stderr and this
/// evaluator continues on the CPU (the search never sees a failure).
pub struct CudaEvaluator {
    net: Arc<CudaNet>,
    exec: Executor<GpuStream>,
    /// Makes the CPU evaluator taken over after a device failure (else the reference).
    fallback: Option<Arc<dyn EvaluatorFactory>>,
    /// That CPU evaluator, once taken over.
    cpu: Option<Box<dyn Evaluator>>,
}

impl CudaEvaluator {
    pub fn net(&self) -> &Arc<CudaNet> {
        &self.net
    }

    /// Evaluates on the GPU, returning device errors instead of falling back.
    pub fn try_evaluate(
        &mut self,
        batch: &[Leaf<'_>],
        out: &mut Vec<Evaluation>,
    ) -> Result<(), CudaError> {
        guarded("CUDA evaluation", || self.exec.evaluate(batch, out))
    }

    /// Fills every device output and intermediate buffer with NaN before each batch, and
    /// makes [`CudaEvaluator::try_evaluate`] fail if any output stays NaN (an unwritten
    /// entry). For checks.
    pub fn set_poison(&mut self, on: bool) {
        self.exec.set_poison(on);
    }

    /// Runs the kernels again on the last batch's inputs (already on the device) and waits:
    /// device time without packing and copies. Returns the batch size.
    pub fn replay(&mut self) -> Result<usize, CudaError> {
        guarded("CUDA replay", || self.exec.replay())
    }
}

impl Evaluator for CudaEvaluator {
    fn name(&self) -> String {
        if self.cpu.is_some() {
            format!("{} after a device failure: CPU", self.net.describe())
        } else {
            self.net.describe()
        }
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        if let Some(cpu) = &mut self.cpu {
            return cpu.evaluate(batch, out);
        }
        if let Err(e) = self.try_evaluate(batch, out) {
            eprintln!("manaka: CUDA evaluation failed ({e}); continuing on the CPU");
            let mut cpu = match &self.fallback {
                Some(f) => f.create(),
                None => self.net.reference(),
            };
            cpu.evaluate(batch, out);
            self.cpu = Some(cpu);
        }
    }
}

/// Makes [`CudaEvaluator`]s over one [`CudaNet`]; `cpu` makes the evaluator used when a
/// stream cannot be created or the device fails (the reference evaluator when `None`).
pub struct CudaFactory {
    net: Arc<CudaNet>,
    cpu: Option<Arc<dyn EvaluatorFactory>>,
}

impl CudaFactory {
    pub fn new(net: Arc<CudaNet>, cpu: Option<Arc<dyn EvaluatorFactory>>) -> CudaFactory {
        CudaFactory { net, cpu }
    }
}

impl EvaluatorFactory for CudaFactory {
    fn name(&self) -> String {
        self.net.describe()
    }

    fn create(&self) -> Box<dyn Evaluator> {
        match self.net.evaluator() {
            Ok(mut e) => {
                e.fallback = self.cpu.clone();
                Box::new(e)
            }
            Err(err) => {
                eprintln!("manaka: no CUDA evaluator ({err}); this one runs on the CPU");
                match &self.cpu {
                    Some(f) => f.create(),
                    None => self.net.reference(),
                }
            }
        }
    }
}

/// Loads `source` onto the GPU and returns a factory of CUDA evaluators (falling back to
/// `cpu`'s evaluators on a device failure), or why the GPU cannot run it.
pub fn factory(
    source: Arc<dyn TensorSource + Send + Sync>,
    cpu: Option<Arc<dyn EvaluatorFactory>>,
) -> Result<Arc<dyn EvaluatorFactory>, CudaError> {
    Ok(Arc::new(CudaFactory::new(CudaNet::new(source)?, cpu)))
}
