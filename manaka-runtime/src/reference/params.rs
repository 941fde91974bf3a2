//! The tensors of a shape (SPEC §7), looked up once by name from any weight source.

use crate::weights::TensorSource;
use manaka_shapes::Shape;

/// Why weights cannot be read as the reference network's parameters.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    /// A tensor the shape needs is not in the source.
    #[error("weights lack tensor '{name}'")]
    MissingTensor { name: String },
    /// A tensor that must hold a value holds none.
    #[error("{name} is empty")]
    EmptyTensor { name: &'static str },
}

/// Borrowed views of every tensor the forward pass reads. Optional tensors are `None` when
/// the shape lacks the block.
pub struct Params<'a> {
    pub embed: &'a [f32],
    pub embed_bias: Option<&'a [f32]>,
    pub pair: Option<&'a [f32]>,
    pub moment_proj: Option<&'a [f32]>,
    pub field: Option<&'a [f32]>,
    /// Gains per normalised block, in `Shape::blocks()` order.
    pub norms: Vec<&'a [f32]>,
    pub w1: &'a [f32],
    pub b1: &'a [f32],
    pub w2: Option<&'a [f32]>,
    pub b2: Option<&'a [f32]>,
    pub value_w: &'a [f32],
    pub value_b: f32,
    pub policy_w: &'a [f32],
    pub policy_b: &'a [f32],
    pub policy_from: &'a [f32],
    pub policy_field: Option<&'a [f32]>,
}

impl<'a> Params<'a> {
    /// Looks every tensor up. The source has already been checked against the shape's
    /// tensor table, so a missing tensor is a bug in the source, reported as an error
    /// (never a panic).
    pub fn new(shape: &Shape, src: &'a dyn TensorSource) -> Result<Params<'a>, ReferenceError> {
        let get = |name: &str| {
            src.tensor(name)
                .ok_or_else(|| ReferenceError::MissingTensor {
                    name: name.to_string(),
                })
        };
        let opt = |name: &str| src.tensor(name);
        let norms = shape
            .blocks()
            .iter()
            .map(|b| get(&format!("norm.{}", b.name())))
            .collect::<Result<Vec<_>, _>>()?;
        let value_b = get("value.b")?;
        Ok(Params {
            embed: get("embed")?,
            embed_bias: opt("embed.bias"),
            pair: opt("pair"),
            moment_proj: opt("moment.proj"),
            field: opt("field"),
            norms,
            w1: get("w1")?,
            b1: get("b1")?,
            w2: opt("w2"),
            b2: opt("b2"),
            value_w: get("value.w")?,
            value_b: *value_b
                .first()
                .ok_or(ReferenceError::EmptyTensor { name: "value.b" })?,
            policy_w: get("policy.w")?,
            policy_b: get("policy.b")?,
            policy_from: get("policy.from")?,
            policy_field: opt("policy.field"),
        })
    }
}
