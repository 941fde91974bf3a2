//! The batch executor: weights on the device, per-evaluator scratch, and the launch sequence
//! of docs/gpu.md — written once over a small [`Device`] trait, so that the same code drives
//! the GPU (`device.rs`, cudarc) and, in tests, the host emulation of the kernels
//! (`emulate.rs`).

use super::CudaError;
use super::pack::pack;
use crate::eval::{Evaluation, Leaf};
use crate::weights::TensorSource;
use manaka_kernels::cuda::{GEMM_TILE, Kernel, PackedLayout};
use manaka_shapes::{SQUARES, Shape};
use std::sync::Arc;

/// One kernel argument: a device buffer or a 32-bit integer.
pub(crate) enum Arg<'a, B> {
    Buf(&'a B),
    Int(i32),
}

/// What the executor needs from a device: byte buffers, copies, launches. Calls are ordered
/// (one stream); `download` returns when the bytes are on the host.
pub(crate) trait Device {
    type Buf: Send + Sync;
    /// A buffer of `bytes` bytes (at least 1), zero-filled.
    fn alloc(&self, bytes: usize) -> Result<Self::Buf, CudaError>;
    /// Copies `src` to the start of `dst` (which holds at least `src.len()` bytes).
    fn upload(&self, src: &[u8], dst: &mut Self::Buf) -> Result<(), CudaError>;
    /// Copies the first `dst.len()` bytes of `src` to `dst`.
    fn download(&self, src: &Self::Buf, dst: &mut [u8]) -> Result<(), CudaError>;
    /// Launches `kernel` over `grid` blocks of `manaka_kernels::cuda::THREADS` threads.
    fn launch(
        &self,
        kernel: Kernel,
        grid: (u32, u32),
        args: &[Arg<'_, Self::Buf>],
    ) -> Result<(), CudaError>;
    /// Waits for everything queued so far.
    fn synchronize(&self) -> Result<(), CudaError>;
}

/// A shape's weights on the device, uploaded once and shared by every evaluator. Tensors the
/// shape lacks are a 4-byte placeholder, so every kernel argument is a valid pointer.
pub(crate) struct DeviceWeights<B> {
    embed: B,
    embed_bias: B,
    pair: B,
    moment_proj: B,
    field: B,
    /// Every block's `norm.<block>` gains, concatenated in `Shape::blocks()` order.
    gains: B,
    w1: B,
    b1: B,
    w2: B,
    b2: B,
    value_w: B,
    value_b: B,
    policy_w: B,
    policy_b: B,
    policy_from: B,
    policy_field: B,
    /// Bytes uploaded.
    pub bytes: usize,
}

impl<B> DeviceWeights<B> {
    /// Uploads every tensor of `source` (a mapped MNW1 file or owned weights), checking each
    /// length against the shape's tensor table (SPEC §7).
    pub fn upload<D: Device<Buf = B>>(
        dev: &D,
        source: &dyn TensorSource,
    ) -> Result<Self, CudaError> {
        let shape = *source.shape();
        let specs = shape.tensors();
        let mut bytes = 0usize;
        let mut put = |values: &[f32]| -> Result<B, CudaError> {
            let data: &[u8] = bytemuck::cast_slice(values);
            let mut buf = dev.alloc(data.len().max(4))?;
            dev.upload(data, &mut buf)?;
            bytes += data.len();
            Ok(buf)
        };
        let tensor = |name: &str| -> Result<Option<&[f32]>, CudaError> {
            let Some(spec) = specs.iter().find(|s| s.name == name) else {
                return Ok(None);
            };
            let data = source
                .tensor(name)
                .ok_or_else(|| CudaError::Weights(format!("weights lack tensor '{name}'")))?;
            if data.len() as u64 != spec.numel() {
                return Err(CudaError::Weights(format!(
                    "tensor '{name}' has {} values, shape {shape} needs {}",
                    data.len(),
                    spec.numel()
                )));
            }
            Ok(Some(data))
        };
        let required = |name: &str| -> Result<&[f32], CudaError> {
            tensor(name)?
                .ok_or_else(|| CudaError::Weights(format!("shape {shape} has no tensor '{name}'")))
        };
        let mut gains = Vec::with_capacity(shape.perspective_width() as usize);
        for block in shape.blocks() {
            gains.extend_from_slice(required(&format!("norm.{}", block.name()))?);
        }
        let none: &[f32] = &[0.0];
        Ok(DeviceWeights {
            embed: put(required("embed")?)?,
            embed_bias: put(tensor("embed.bias")?.unwrap_or(none))?,
            pair: put(tensor("pair")?.unwrap_or(none))?,
            moment_proj: put(tensor("moment.proj")?.unwrap_or(none))?,
            field: put(tensor("field")?.unwrap_or(none))?,
            gains: put(if gains.is_empty() { none } else { &gains })?,
            w1: put(required("w1")?)?,
            b1: put(required("b1")?)?,
            w2: put(tensor("w2")?.unwrap_or(none))?,
            b2: put(tensor("b2")?.unwrap_or(none))?,
            value_w: put(required("value.w")?)?,
            value_b: put(required("value.b")?)?,
            policy_w: put(required("policy.w")?)?,
            policy_b: put(required("policy.b")?)?,
            policy_from: put(required("policy.from")?)?,
            policy_field: put(tensor("policy.field")?.unwrap_or(none))?,
            bytes,
        })
    }
}

/// Per-evaluator device buffers, grown (doubling) to the largest batch seen.
struct Scratch<B> {
    leaves: usize,
    moves: usize,
    packed: B,
    u: B,
    h1: B,
    h2: B,
    stm_field: B,
    out: B,
}

/// Evaluates batches of leaves on one device stream.
pub(crate) struct Executor<D: Device> {
    shape: Shape,
    dev: D,
    weights: Arc<DeviceWeights<D::Buf>>,
    scratch: Option<Scratch<D::Buf>>,
    words: Vec<u32>,
    host_out: Vec<f32>,
    /// Fill every output and intermediate buffer with NaN before each batch (checks).
    poison: bool,
    /// The batch whose inputs are on the device (for [`Executor::replay`]).
    last: Option<(usize, PackedLayout)>,
}

fn ceil_div(a: usize, b: u32) -> u32 {
    a.div_ceil(b as usize) as u32
}

impl<D: Device> Executor<D> {
    pub fn new(shape: Shape, dev: D, weights: Arc<DeviceWeights<D::Buf>>) -> Self {
        Executor {
            shape,
            dev,
            weights,
            scratch: None,
            words: Vec::new(),
            host_out: Vec::new(),
            poison: false,
            last: None,
        }
    }

    pub fn set_poison(&mut self, on: bool) {
        self.poison = on;
    }

    fn widths(&self) -> (usize, usize, usize, usize) {
        let s = &self.shape;
        let ff = SQUARES as usize * s.field.unwrap_or(0) as usize;
        (
            s.input_width() as usize,
            s.h as usize,
            s.h2.unwrap_or(0) as usize,
            ff,
        )
    }

    /// Makes sure the scratch buffers hold `leaves` leaves and `moves` moves.
    fn reserve(&mut self, leaves: usize, moves: usize) -> Result<(), CudaError> {
        if let Some(s) = &self.scratch
            && s.leaves >= leaves
            && s.moves >= moves
        {
            return Ok(());
        }
        let (old_l, old_m) = self
            .scratch
            .as_ref()
            .map_or((0, 0), |s| (s.leaves, s.moves));
        let leaves = leaves.max(old_l).next_power_of_two().max(64);
        let moves = moves.max(old_m).next_power_of_two().max(1024);
        let (inw, h, h2, ff) = self.widths();
        let f32s = |n: usize| (n * 4).max(4);
        let dev = &self.dev;
        self.scratch = None; // free the old buffers first
        self.scratch = Some(Scratch {
            leaves,
            moves,
            packed: dev.alloc(PackedLayout::new(leaves, moves).len * 4)?,
            u: dev.alloc(f32s(leaves * inw))?,
            h1: dev.alloc(f32s(leaves * h))?,
            h2: dev.alloc(f32s(leaves * h2))?,
            stm_field: dev.alloc(f32s(leaves * ff))?,
            out: dev.alloc(f32s(leaves + moves))?,
        });
        Ok(())
    }

    /// Evaluates `batch`: `out[i]` answers leaf `i` (value logit, one policy logit per move).
    pub fn evaluate(
        &mut self,
        batch: &[Leaf<'_>],
        out: &mut Vec<Evaluation>,
    ) -> Result<(), CudaError> {
        out.clear();
        self.last = None;
        if batch.is_empty() {
            return Ok(());
        }
        let layout = pack(&self.shape, batch, &mut self.words);
        let n = batch.len();
        let moves = layout.len - layout.moves;
        self.reserve(n, moves)?;
        let (inw, h, h2, ff) = self.widths();
        let s = self.scratch.as_mut().expect("reserved above");
        self.dev
            .upload(bytemuck::cast_slice(&self.words), &mut s.packed)?;
        if self.poison {
            let nan = |count: usize| vec![0xffu8; (count * 4).max(4)];
            self.dev.upload(&nan(n * inw), &mut s.u)?;
            self.dev.upload(&nan(n * h), &mut s.h1)?;
            self.dev.upload(&nan(n * h2), &mut s.h2)?;
            self.dev.upload(&nan(n * ff), &mut s.stm_field)?;
            self.dev.upload(&nan(n + moves), &mut s.out)?;
        }
        self.launch(n)?;
        self.host_out.clear();
        self.host_out.resize(n + moves, 0.0);
        let s = self.scratch.as_ref().expect("reserved above");
        self.dev
            .download(&s.out, bytemuck::cast_slice_mut(&mut self.host_out))?;
        self.last = Some((n, layout));
        let start = |i: usize| self.words[layout.move_start + i] as usize;
        for i in 0..n {
            out.push(Evaluation {
                value_logit: self.host_out[i],
                policy_logits: self.host_out[n + start(i)..n + start(i + 1)].to_vec(),
            });
        }
        if self.poison
            && let Some(i) = self.host_out.iter().position(|v| v.is_nan())
        {
            let what = if i < n {
                format!("the value of leaf {i}")
            } else {
                format!("policy entry {}", i - n)
            };
            return Err(CudaError::Unwritten(what));
        }
        Ok(())
    }

    /// Runs the kernels again on the batch last evaluated (inputs already on the device) and
    /// waits for them: the device time of a batch without the host's packing and copies.
    pub fn replay(&mut self) -> Result<usize, CudaError> {
        let Some((n, _)) = self.last else {
            return Err(CudaError::Driver {
                op: "replay",
                message: "no batch has been evaluated yet".to_string(),
            });
        };
        self.launch(n)?;
        self.dev.synchronize()?;
        Ok(n)
    }

    /// The launch sequence of docs/gpu.md for `n` leaves.
    fn launch(&self, n: usize) -> Result<(), CudaError> {
        let w = &*self.weights;
        let s = self.scratch.as_ref().expect("reserved before launching");
        let batch = i32::try_from(n).map_err(|_| CudaError::Driver {
            op: "launch",
            message: format!("batch of {n} leaves is too large"),
        })?;
        let rows = ceil_div(n, GEMM_TILE);
        use Arg::{Buf, Int};
        self.dev.launch(
            Kernel::Accumulate,
            (n as u32, 2),
            &[
                Buf(&s.packed),
                Buf(&w.embed),
                Buf(&w.embed_bias),
                Buf(&w.pair),
                Buf(&w.moment_proj),
                Buf(&w.field),
                Buf(&w.gains),
                Buf(&s.u),
                Buf(&s.stm_field),
                Int(batch),
            ],
        )?;
        self.dev.launch(
            Kernel::Hidden1,
            (ceil_div(self.shape.h as usize, GEMM_TILE), rows),
            &[Buf(&s.u), Buf(&w.w1), Buf(&w.b1), Buf(&s.h1), Int(batch)],
        )?;
        let last = match self.shape.h2 {
            Some(h2) => {
                self.dev.launch(
                    Kernel::Hidden2,
                    (ceil_div(h2 as usize, GEMM_TILE), rows),
                    &[Buf(&s.h1), Buf(&w.w2), Buf(&w.b2), Buf(&s.h2), Int(batch)],
                )?;
                &s.h2
            }
            None => &s.h1,
        };
        self.dev.launch(
            Kernel::Outputs,
            (n as u32, 1),
            &[
                Buf(&s.packed),
                Buf(last),
                Buf(&w.value_w),
                Buf(&w.value_b),
                Buf(&w.policy_w),
                Buf(&w.policy_b),
                Buf(&w.policy_from),
                Buf(&w.policy_field),
                Buf(&s.stm_field),
                Buf(&s.out),
                Int(batch),
            ],
        )
    }
}
