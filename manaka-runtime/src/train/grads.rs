//! Gradient storage: dense vectors for the head's tensors, sparse rows for the token tables.
//!
//! A batch touches only the embedding, moment and field rows of its active tokens and the pair
//! rows of their pairs — for the baseline, a few hundred thousand of the pair table's 2.7
//! million rows. [`SparseRows`] keeps just those: a slot per table row (`u32`, 4 bytes a row,
//! reset only where used) points into a compact arena of touched rows, so adding to a row is
//! one indexed load, and clearing costs as much as the batch touched.

use super::model::Model;
use super::real::Real;

const NO_SLOT: u32 = u32::MAX;

/// Gradients of a table's touched rows.
#[derive(Clone, Debug)]
pub struct SparseRows<R> {
    width: usize,
    slot: Vec<u32>,
    /// Touched rows, in the order first touched.
    rows: Vec<u32>,
    /// Their gradients, `rows.len() × width`.
    data: Vec<R>,
}

impl<R: Real> SparseRows<R> {
    pub fn new(rows: usize, width: usize) -> SparseRows<R> {
        SparseRows {
            width,
            slot: vec![NO_SLOT; rows],
            rows: Vec::new(),
            data: Vec::new(),
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// The gradient of table row `row`, zero-initialised the first time it is touched.
    #[inline]
    pub fn row_mut(&mut self, row: usize) -> &mut [R] {
        let mut s = self.slot[row];
        if s == NO_SLOT {
            s = self.rows.len() as u32;
            self.slot[row] = s;
            self.rows.push(row as u32);
            self.data.resize(self.data.len() + self.width, R::ZERO);
        }
        let at = s as usize * self.width;
        &mut self.data[at..at + self.width]
    }

    /// Hints that `row` will be touched soon (its slot is a likely cache miss).
    #[inline]
    pub fn prefetch(&self, row: usize) {
        manaka_kernels::prefetch(self.slot.as_ptr().wrapping_add(row));
    }

    /// `(row, gradient)` of every touched row.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &[R])> {
        self.rows
            .iter()
            .map(|&r| r as usize)
            .zip(self.data.chunks_exact(self.width.max(1)))
    }

    /// As [`SparseRows::iter`], in increasing row order.
    pub fn iter_sorted(&self) -> impl Iterator<Item = (usize, &[R])> {
        let mut order: Vec<u64> = self
            .rows
            .iter()
            .enumerate()
            .map(|(slot, &r)| (u64::from(r) << 32) | slot as u64)
            .collect();
        order.sort_unstable();
        order.into_iter().map(move |key| {
            let slot = (key & 0xffff_ffff) as usize;
            (
                (key >> 32) as usize,
                &self.data[slot * self.width..(slot + 1) * self.width],
            )
        })
    }

    /// The touched rows, in the order first touched.
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }

    /// The gradient of table row `row`, if touched.
    #[inline]
    pub fn row(&self, row: usize) -> Option<&[R]> {
        match self.slot[row] {
            NO_SLOT => None,
            s => Some(&self.data[s as usize * self.width..(s as usize + 1) * self.width]),
        }
    }

    pub fn touched(&self) -> usize {
        self.rows.len()
    }

    #[inline(never)] // a unit of its own in profiles
    pub fn clear(&mut self) {
        for &r in &self.rows {
            self.slot[r as usize] = NO_SLOT;
        }
        self.rows.clear();
        self.data.clear();
    }

    /// Adds `other`'s rows into these.
    #[inline(never)] // a unit of its own in profiles
    pub fn merge(&mut self, other: &SparseRows<R>) {
        for (row, g) in other.iter() {
            R::axpy(self.row_mut(row), R::ONE, g);
        }
    }
}

/// The gradient of the loss with respect to every tensor of a model.
#[derive(Clone, Debug)]
pub struct Grads<R> {
    /// Dense gradients, indexed like `Model::tensors`; empty for token tables.
    pub dense: Vec<Vec<R>>,
    /// Sparse gradients of the token tables (`Layout::is_token_table`), `None` for the rest.
    pub sparse: Vec<Option<SparseRows<R>>>,
}

impl<R: Real> Grads<R> {
    /// All-zero gradients shaped like `model`.
    pub fn new(model: &Model<R>) -> Grads<R> {
        let l = &model.layout;
        let mut dense = Vec::new();
        let mut sparse = Vec::new();
        for (i, (spec, t)) in model.specs.iter().zip(&model.tensors).enumerate() {
            if l.is_token_table(i) {
                let width: usize = spec.dims[1..].iter().map(|&d| d as usize).product();
                dense.push(Vec::new());
                sparse.push(Some(SparseRows::new(spec.dims[0] as usize, width)));
            } else {
                dense.push(vec![R::ZERO; t.len()]);
                sparse.push(None);
            }
        }
        Grads { dense, sparse }
    }

    #[inline(never)] // a unit of its own in profiles
    pub fn clear(&mut self) {
        for d in &mut self.dense {
            d.iter_mut().for_each(|v| *v = R::ZERO);
        }
        for s in self.sparse.iter_mut().flatten() {
            s.clear();
        }
    }

    /// The sparse gradient of token table `tensor`.
    #[inline]
    pub fn rows(&mut self, tensor: usize) -> &mut SparseRows<R> {
        self.sparse[tensor].as_mut().expect("a token table")
    }

    /// Adds `other` into `self`.
    #[inline(never)] // a unit of its own in profiles
    pub fn merge(&mut self, other: &Grads<R>) {
        for (a, b) in self.dense.iter_mut().zip(&other.dense) {
            R::axpy(a, R::ONE, b);
        }
        for (a, b) in self.sparse.iter_mut().zip(&other.sparse) {
            if let (Some(a), Some(b)) = (a, b) {
                a.merge(b);
            }
        }
    }

    /// Entry `index` (flat, row-major) of tensor `tensor`'s gradient.
    pub fn get(&self, tensor: usize, index: usize) -> R {
        match &self.sparse[tensor] {
            None => self.dense[tensor][index],
            Some(s) => match s.slot[index / s.width] {
                NO_SLOT => R::ZERO,
                slot => s.data[slot as usize * s.width + index % s.width],
            },
        }
    }

    /// Tensor `tensor`'s gradient as a dense vector of `len` values (tests, small tables).
    pub fn to_dense(&self, tensor: usize, len: usize) -> Vec<R> {
        match &self.sparse[tensor] {
            None => self.dense[tensor].clone(),
            Some(s) => {
                let mut out = vec![R::ZERO; len];
                for (row, g) in s.iter() {
                    out[row * s.width..(row + 1) * s.width].copy_from_slice(g);
                }
                out
            }
        }
    }
}
