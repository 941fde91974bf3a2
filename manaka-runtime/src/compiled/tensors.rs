//! Typed, bounds-checked-once views of a shape's tensors.
//!
//! The engine reads weights on every update and evaluation, so it resolves each tensor once,
//! checks its length against the shape, and keeps a raw pointer. [`Tensors`] owns the `Arc`
//! of the source the pointers were taken from: a slice a `TensorSource` hands out borrows
//! the source, and stays valid while the source lives and is not mutated — which holds while
//! this `Arc` (never handed out, never `get_mut`) is held. So every accessor borrows `self`,
//! and the slices it returns cannot outlive the source (issue 16: no `'static` slices).

use super::FixedNetError;
use crate::weights::TensorSource;
use manaka_shapes::{BlockKind, Shape};
use std::sync::Arc;

/// A tensor of the source `Tensors` holds: its first value and its length.
#[derive(Clone, Copy)]
struct Ptr(*const f32, usize);

// SAFETY: the pointers refer to immutable f32 data owned by an `Arc<dyn TensorSource + Send +
// Sync>` kept alongside them; reading them from any thread is as safe as reading the source.
unsafe impl Send for Ptr {}
unsafe impl Sync for Ptr {}

pub(super) struct BlockView {
    pub kind: BlockKind,
    pub width: usize,
    gains: Ptr,
}

pub(super) struct Tensors {
    embed: Ptr,
    embed_bias: Option<Ptr>,
    pair: Option<Ptr>,
    moment_proj: Option<Ptr>,
    moment_dim: usize,
    field: Option<Ptr>,
    pub blocks: Vec<BlockView>,
    w1: Ptr,
    b1: Ptr,
    w2: Option<Ptr>,
    b2: Option<Ptr>,
    value_w: Ptr,
    pub value_b: f32,
    policy_w: Ptr,
    policy_b: Ptr,
    policy_from: Ptr,
    policy_field: Option<Ptr>,
    /// What every `Ptr` above points into (module doc): held, never read.
    _source: Arc<dyn TensorSource + Send + Sync>,
}

impl Tensors {
    /// Checks every tensor of `shape` in `source` and keeps pointers to them with `source`.
    pub fn resolve(
        shape: &Shape,
        source: Arc<dyn TensorSource + Send + Sync>,
    ) -> Result<Tensors, FixedNetError> {
        let src = source.as_ref();
        let specs = shape.tensors();
        let get = |name: &str| -> Result<Ptr, FixedNetError> {
            let data = src
                .tensor(name)
                .ok_or_else(|| FixedNetError::MissingTensor(name.to_string()))?;
            let expected = specs
                .iter()
                .find(|s| s.name == name)
                .map_or(0, |s| s.numel() as usize);
            if data.len() != expected {
                return Err(FixedNetError::TensorLength {
                    name: name.to_string(),
                    shape: shape.to_string(),
                    expected,
                    found: data.len(),
                });
            }
            Ok(Ptr(data.as_ptr(), data.len()))
        };
        let has = |name: &str| specs.iter().any(|s| s.name == name);
        let opt = |name: &str| {
            if has(name) {
                get(name).map(Some)
            } else {
                Ok(None)
            }
        };
        let blocks = shape
            .blocks()
            .iter()
            .map(|b| {
                Ok(BlockView {
                    kind: b.kind,
                    width: b.width as usize,
                    gains: get(&format!("norm.{}", b.name()))?,
                })
            })
            .collect::<Result<Vec<_>, FixedNetError>>()?;
        let value_b = get("value.b")?;
        Ok(Tensors {
            embed: get("embed")?,
            embed_bias: opt("embed.bias")?,
            pair: opt("pair")?,
            moment_proj: opt("moment.proj")?,
            moment_dim: shape.moments.unwrap_or(0) as usize,
            field: opt("field")?,
            blocks,
            w1: get("w1")?,
            b1: get("b1")?,
            w2: opt("w2")?,
            b2: opt("b2")?,
            value_w: get("value.w")?,
            // SAFETY: value.b has exactly one element (checked by `get`), in `source`.
            value_b: unsafe { *value_b.0 },
            policy_w: get("policy.w")?,
            policy_b: get("policy.b")?,
            policy_from: get("policy.from")?,
            policy_field: opt("policy.field")?,
            _source: source.clone(),
        })
    }
}

/// `p` re-typed as rows of `N`, borrowed for `'a`.
///
/// # Safety
/// `p` must have been resolved (by [`Tensors::resolve`]) from the source of a `Tensors` that
/// is borrowed for at least `'a`: then its `p.1` f32s are initialised and stay valid and
/// unmodified for `'a` (module doc). `[f32; N]` has f32's alignment.
unsafe fn rows<'a, const N: usize>(p: Ptr) -> &'a [[f32; N]] {
    assert!(
        N == 0 || p.1.is_multiple_of(N),
        "tensor length {} is not a multiple of {N}",
        p.1
    );
    let n = p.1.checked_div(N).unwrap_or(0);
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p.0.cast::<[f32; N]>(), n) }
}

/// `p` as a flat slice borrowed for `'a`.
///
/// # Safety
/// As [`rows`].
unsafe fn flat<'a>(p: Ptr) -> &'a [f32] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p.0, p.1) }
}

/// `p` as exactly `R` rows of `C`.
///
/// # Safety
/// As [`rows`].
unsafe fn exact<'a, const R: usize, const C: usize>(p: Ptr) -> &'a [[f32; C]; R] {
    // SAFETY: the caller's contract.
    unsafe { rows::<C>(p) }
        .try_into()
        .expect("tensor has R rows of C")
}

// SAFETY (every accessor below): each `Ptr` was resolved from `self._source`, and the result
// borrows `self` (the elided lifetime), as `rows` requires.
impl Tensors {
    pub fn embed<const D: usize>(&self) -> &[[f32; D]] {
        unsafe { rows::<D>(self.embed) }
    }
    pub fn embed_bias(&self) -> &[f32] {
        self.embed_bias.map_or(&[], |p| unsafe { flat(p) })
    }
    pub fn pair<const P: usize>(&self) -> &[[f32; P]] {
        self.pair.map_or(&[], |p| unsafe { rows::<P>(p) })
    }
    pub fn moment_row(&self, t: usize) -> &[f32] {
        let m = self.moment_dim;
        self.moment_proj
            .map_or(&[], |p| &unsafe { flat(p) }[t * m..(t + 1) * m])
    }
    pub fn field<const FF: usize>(&self) -> &[[f32; FF]] {
        self.field.map_or(&[], |p| unsafe { rows::<FF>(p) })
    }
    pub fn norm(&self, block: usize) -> &[f32] {
        unsafe { flat(self.blocks[block].gains) }
    }
    pub fn w1<const IN: usize, const H: usize>(&self) -> &[[f32; IN]; H] {
        unsafe { exact::<H, IN>(self.w1) }
    }
    pub fn b1<const H: usize>(&self) -> &[f32; H] {
        unsafe { flat(self.b1) }
            .try_into()
            .expect("b1 has H values")
    }
    pub fn w2<const H: usize, const H2: usize>(&self) -> &[[f32; H]; H2] {
        let w2 = self.w2.expect("w2 exists when H2 > 0");
        unsafe { exact::<H2, H>(w2) }
    }
    pub fn b2<const H2: usize>(&self) -> &[f32; H2] {
        unsafe { flat(self.b2.expect("b2 exists when H2 > 0")) }
            .try_into()
            .expect("b2 has H2 values")
    }
    pub fn value_w<const HL: usize>(&self) -> &[f32; HL] {
        unsafe { flat(self.value_w) }
            .try_into()
            .expect("value.w has HL values")
    }
    pub fn policy_w<const HL: usize>(&self) -> &[[f32; HL]] {
        unsafe { rows::<HL>(self.policy_w) }
    }
    pub fn policy_b(&self) -> &[f32] {
        unsafe { flat(self.policy_b) }
    }
    pub fn policy_from(&self) -> &[f32] {
        unsafe { flat(self.policy_from) }
    }
    pub fn policy_field_row(&self, class: usize, f: usize) -> &[f32] {
        self.policy_field
            .map_or(&[], |p| &unsafe { flat(p) }[class * f..(class + 1) * f])
    }
}
