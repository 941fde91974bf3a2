//! The trainable network: every tensor of the shape's table (SPEC §7) as a `Vec<R>`, with the
//! indices of the tensors the forward pass reads.
//!
//! The values held are exactly the values the weight file stores — including the lse channels
//! of the pair table, which store `exp(x)` (SPEC §4). So a model written out and read back is the
//! same model, and the trainer's forward pass reads the same numbers the engine reads. How the
//! lse channels are nevertheless trained in log space is the optimiser's business (`optim.rs`).

use super::error::TrainError;
use super::real::Real;
use crate::weights::{TensorSource, WeightSet, init};
use manaka_shapes::{BlockKind, Shape, TensorSpec};

/// One normalised block of a perspective's head input, with its place in the raw-block vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSlot {
    pub kind: BlockKind,
    /// Offset in the perspective's raw (and normalised) block values.
    pub offset: usize,
    pub width: usize,
    /// Tensor index of the block's gains (`norm.<block>`).
    pub gains: usize,
}

/// Where each tensor of the table sits in [`Model::tensors`], and the sizes the passes use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub d: usize,
    pub order: usize,
    /// Power-sum groups: 1, or 2 with `split` (own, opponent).
    pub groups: usize,
    pub pair: usize,
    /// First lse channel of the pair table (`pair − lse`); `pair` when there is none.
    pub first_lse: usize,
    pub moments: usize,
    pub field: usize,
    pub h: usize,
    pub h2: Option<usize>,
    /// Width of the last hidden layer.
    pub last: usize,
    /// Width of one perspective's input (blocks, then ks scalars; NNUE: d).
    pub perspective: usize,
    /// Sum of the block widths (the raw block vector of a perspective).
    pub raw_width: usize,
    pub blocks: Vec<BlockSlot>,
    pub embed: usize,
    pub embed_bias: Option<usize>,
    pub pair_table: Option<usize>,
    pub moment_proj: Option<usize>,
    pub field_table: Option<usize>,
    pub w1: usize,
    pub b1: usize,
    pub w2: Option<usize>,
    pub b2: Option<usize>,
    pub value_w: usize,
    pub value_b: usize,
    pub policy_w: usize,
    pub policy_b: usize,
    pub policy_from: usize,
    pub policy_field: Option<usize>,
}

impl Layout {
    pub fn new(shape: &Shape) -> Layout {
        let specs = shape.tensors();
        let find = |name: &str| specs.iter().position(|s| s.name == name);
        let need = |name: &str| {
            find(name).unwrap_or_else(|| panic!("the tensor table of {shape} lacks {name}"))
        };
        let mut offset = 0;
        let blocks: Vec<BlockSlot> = shape
            .blocks()
            .iter()
            .map(|b| {
                let slot = BlockSlot {
                    kind: b.kind,
                    offset,
                    width: b.width as usize,
                    gains: need(&format!("norm.{}", b.name())),
                };
                offset += b.width as usize;
                slot
            })
            .collect();
        let pair = shape.pair as usize;
        Layout {
            d: shape.d as usize,
            order: shape.order as usize,
            groups: if shape.split { 2 } else { 1 },
            pair,
            first_lse: pair - shape.lse.unwrap_or(0) as usize,
            moments: shape.moments.unwrap_or(0) as usize,
            field: shape.field.unwrap_or(0) as usize,
            h: shape.h as usize,
            h2: shape.h2.map(|x| x as usize),
            last: shape.last_hidden() as usize,
            perspective: shape.perspective_width() as usize,
            raw_width: offset,
            blocks,
            embed: need("embed"),
            embed_bias: find("embed.bias"),
            pair_table: find("pair"),
            moment_proj: find("moment.proj"),
            field_table: find("field"),
            w1: need("w1"),
            b1: need("b1"),
            w2: find("w2"),
            b2: find("b2"),
            value_w: need("value.w"),
            value_b: need("value.b"),
            policy_w: need("policy.w"),
            policy_b: need("policy.b"),
            policy_from: need("policy.from"),
            policy_field: find("policy.field"),
        }
    }

    /// The tensors indexed by token id (a row per token, or per token pair), whose gradients
    /// are sparse: a batch touches only the rows of its active tokens.
    pub fn is_token_table(&self, tensor: usize) -> bool {
        tensor == self.embed
            || Some(tensor) == self.pair_table
            || Some(tensor) == self.moment_proj
            || Some(tensor) == self.field_table
    }
}

/// A network being trained, in arithmetic `R`.
#[derive(Clone, Debug, PartialEq)]
pub struct Model<R> {
    pub shape: Shape,
    pub specs: Vec<TensorSpec>,
    pub layout: Layout,
    /// One vector per tensor of [`Shape::tensors`], in table order, holding the stored values.
    pub tensors: Vec<Vec<R>>,
}

impl<R: Real> Model<R> {
    /// A copy of `source`'s weights. Refuses non-finite values and lse channels that are not
    /// positive (they store `exp(x)`, SPEC §4; training works on `x = ln(stored)`).
    pub fn from_source(source: &dyn TensorSource) -> Result<Model<R>, TrainError> {
        let shape = *source.shape();
        let specs = shape.tensors();
        let mut tensors = Vec::with_capacity(specs.len());
        for spec in &specs {
            let values = source.require(&spec.name)?;
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(TrainError::BadWeights(format!(
                    "{}[{i}] is {}",
                    spec.name, values[i]
                )));
            }
            tensors.push(values.iter().map(|&v| R::from_f32(v)).collect::<Vec<R>>());
        }
        let layout = Layout::new(&shape);
        let model = Model {
            shape,
            specs,
            layout,
            tensors,
        };
        model.check_lse()?;
        Ok(model)
    }

    /// Reproducible random weights (`weights::init`), the usual starting point.
    pub fn random(shape: &Shape, seed: u64) -> Model<R> {
        Model::from_source(&init::random_weights(shape, seed))
            .expect("random weights are finite with positive lse channels")
    }

    fn check_lse(&self) -> Result<(), TrainError> {
        let (Some(t), l) = (self.layout.pair_table, &self.layout) else {
            return Ok(());
        };
        if l.first_lse == l.pair {
            return Ok(());
        }
        for (row, values) in self.tensors[t].chunks_exact(l.pair).enumerate() {
            for (c, &v) in values.iter().enumerate().skip(l.first_lse) {
                if v.partial_cmp(&R::ZERO) != Some(std::cmp::Ordering::Greater) {
                    return Err(TrainError::BadWeights(format!(
                        "pair row {row} channel {c} is {v:?}, but lse channels store exp(x) > 0 (SPEC §4)"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The weights as f32 tensors, ready for `weights::write_file`.
    pub fn to_weight_set(&self) -> WeightSet {
        let data = self
            .tensors
            .iter()
            .map(|t| t.iter().map(|&v| v.to_f32()).collect())
            .collect();
        WeightSet::new(&self.shape, data).expect("the model holds every tensor of its shape")
    }

    /// Index of tensor `name` in the table.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.specs.iter().position(|s| s.name == name)
    }

    pub fn tensor(&self, name: &str) -> Option<&[R]> {
        self.index_of(name).map(|i| self.tensors[i].as_slice())
    }

    pub fn tensor_mut(&mut self, name: &str) -> Option<&mut [R]> {
        let i = self.index_of(name)?;
        Some(self.tensors[i].as_mut_slice())
    }

    /// Number of parameters.
    pub fn param_count(&self) -> usize {
        self.tensors.iter().map(Vec::len).sum()
    }

    /// The same weights in another arithmetic.
    pub fn convert<S: Real>(&self) -> Model<S> {
        Model {
            shape: self.shape,
            specs: self.specs.clone(),
            layout: self.layout.clone(),
            tensors: self
                .tensors
                .iter()
                .map(|t| t.iter().map(|&v| S::from_f64(v.to_f64())).collect())
                .collect(),
        }
    }
}

/// An `f32` model is a weight source as it is: it can be written (`weights::write_file`) or
/// evaluated (`ReferenceNet`) without a copy.
impl TensorSource for Model<f32> {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn tensor(&self, name: &str) -> Option<&[f32]> {
        self.index_of(name).map(|i| self.tensors[i].as_slice())
    }
}
