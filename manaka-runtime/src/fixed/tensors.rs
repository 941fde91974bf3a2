//! Typed, bounds-checked-once views of a shape's tensors.
//!
//! The engine reads weights on every update and evaluation, so it resolves each tensor once,
//! checks its length against the shape, and keeps a raw pointer. The `Arc` holding the
//! source (a memory-mapped file or owned weights, neither of which moves its data) lives in
//! the same engine, so the pointers stay valid for the engine's lifetime; every accessor
//! re-types a pointer with the length checked here.

use super::FixedNetError;
use crate::weights::TensorSource;
use manaka_shapes::{BlockKind, Shape};

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
}

impl Tensors {
    pub fn resolve(shape: &Shape, src: &dyn TensorSource) -> Result<Tensors, FixedNetError> {
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
            // SAFETY: value.b has exactly one element (checked by `get`).
            value_b: unsafe { *value_b.0 },
            policy_w: get("policy.w")?,
            policy_b: get("policy.b")?,
            policy_from: get("policy.from")?,
            policy_field: opt("policy.field")?,
        })
    }
}

/// `p` re-typed as rows of `N`: the tensor's length is a multiple of `N` for every caller
/// below (row widths are the shape's dims, checked against the engine's constants).
fn rows<const N: usize>(p: Ptr) -> &'static [[f32; N]] {
    assert!(
        N == 0 || p.1.is_multiple_of(N),
        "tensor length {} is not a multiple of {N}",
        p.1
    );
    let n = p.1.checked_div(N).unwrap_or(0);
    // SAFETY: `p` points at `p.1` initialised f32s that outlive the engine (see module doc);
    // [f32; N] has f32's alignment. The 'static lifetime is narrowed by every accessor to the
    // engine's borrow.
    unsafe { std::slice::from_raw_parts(p.0.cast::<[f32; N]>(), n) }
}

fn flat(p: Ptr) -> &'static [f32] {
    // SAFETY: as in `rows`.
    unsafe { std::slice::from_raw_parts(p.0, p.1) }
}

fn exact<const R: usize, const C: usize>(p: Ptr) -> &'static [[f32; C]; R] {
    rows::<C>(p).try_into().expect("tensor has R rows of C")
}

impl Tensors {
    pub fn embed<const D: usize>(&self) -> &[[f32; D]] {
        rows::<D>(self.embed)
    }
    pub fn embed_bias(&self) -> &[f32] {
        self.embed_bias.map_or(&[], flat)
    }
    pub fn pair<const P: usize>(&self) -> &[[f32; P]] {
        self.pair.map_or(&[], rows::<P>)
    }
    pub fn moment_row(&self, t: usize) -> &[f32] {
        let m = self.moment_dim;
        self.moment_proj
            .map_or(&[], |p| &flat(p)[t * m..(t + 1) * m])
    }
    pub fn field<const FF: usize>(&self) -> &[[f32; FF]] {
        self.field.map_or(&[], rows::<FF>)
    }
    pub fn norm(&self, block: usize) -> &[f32] {
        flat(self.blocks[block].gains)
    }
    pub fn w1<const IN: usize, const H: usize>(&self) -> &[[f32; IN]; H] {
        exact::<H, IN>(self.w1)
    }
    pub fn b1<const H: usize>(&self) -> &[f32; H] {
        flat(self.b1).try_into().expect("b1 has H values")
    }
    pub fn w2<const H: usize, const H2: usize>(&self) -> &[[f32; H]; H2] {
        exact::<H2, H>(self.w2.expect("w2 exists when H2 > 0"))
    }
    pub fn b2<const H2: usize>(&self) -> &[f32; H2] {
        flat(self.b2.expect("b2 exists when H2 > 0"))
            .try_into()
            .expect("b2 has H2 values")
    }
    pub fn value_w<const HL: usize>(&self) -> &[f32; HL] {
        flat(self.value_w)
            .try_into()
            .expect("value.w has HL values")
    }
    pub fn policy_w<const HL: usize>(&self) -> &[[f32; HL]] {
        rows::<HL>(self.policy_w)
    }
    pub fn policy_b(&self) -> &[f32] {
        flat(self.policy_b)
    }
    pub fn policy_from(&self) -> &[f32] {
        flat(self.policy_from)
    }
    pub fn policy_field_row(&self, class: usize, f: usize) -> &[f32] {
        self.policy_field
            .map_or(&[], |p| &flat(p)[class * f..(class + 1) * f])
    }
}
