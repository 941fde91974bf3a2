//! Typed views of a shape's tensors, checked once at load.
//!
//! Every layer of a compiled engine reads its weights on each update or evaluation, so it
//! resolves each tensor once — present, of the length the shape's tensor table says, and of
//! the layer's constant sizes — and keeps a [`View`]: a pointer to the source's data typed as
//! the fixed-size array the layer computes with (`[f32; N]`, `[[f32; C]; R]`, rows `[[f32; N]]`),
//! together with the `Arc` of the source it points into. A slice a `TensorSource` hands out
//! borrows the source and stays valid while the source lives and is not mutated, which holds
//! while that `Arc` (never handed out, never `get_mut`) is held; so dereferencing a view is
//! sound for as long as the view lives, and nothing outlives it (issue 16: no `'static`).

use super::FixedNetError;
use crate::weights::TensorSource;
use manaka_shapes::Shape;
use std::sync::Arc;

/// Where a compiled engine's weights come from (an MNW1 file, memory-mapped, or memory).
pub type Source = Arc<dyn TensorSource + Send + Sync>;

/// A tensor of a [`Source`] seen as a `T`, checked once when made.
pub struct View<T: ?Sized + 'static> {
    ptr: *const T,
    /// What `ptr` points into (module doc): held, never read.
    _source: Source,
}

// SAFETY: a view refers to immutable f32 data owned by the `Arc<dyn TensorSource + Send +
// Sync>` it holds; reading it from any thread is as safe as reading the source.
unsafe impl<T: ?Sized + Sync> Send for View<T> {}
unsafe impl<T: ?Sized + Sync> Sync for View<T> {}

impl<T: ?Sized> std::ops::Deref for View<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: `ptr` was made from a slice of `_source`, with the length checked against
        // `T` (the constructors below); the data lives and is unmodified while `_source` is
        // held (module doc). `[f32; N]` has f32's alignment.
        unsafe { &*self.ptr }
    }
}

/// Tensor `name` of `source`, checked against the shape's tensor table.
fn tensor<'a>(source: &'a Source, name: &str) -> Result<&'a [f32], FixedNetError> {
    let shape: &Shape = source.shape();
    let data = source
        .tensor(name)
        .ok_or_else(|| FixedNetError::MissingTensor(name.to_string()))?;
    let expected = shape
        .tensors()
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
    Ok(data)
}

/// The error for a tensor whose length does not fit a layer's constants (a bug in
/// `manaka_net!`, normally caught by the engine's `check_dims` first).
fn misfit(source: &Source, name: &str, len: usize, want: String) -> FixedNetError {
    FixedNetError::Dims {
        shape: source.shape().to_string(),
        what: format!("tensor '{name}' has {len} values, the engine's constants want {want}"),
    }
}

impl<const N: usize> View<[[f32; N]]> {
    /// Tensor `name` as rows of `N` (as many as it has).
    pub fn rows(source: &Source, name: &str) -> Result<Self, FixedNetError> {
        let data = tensor(source, name)?;
        if N == 0 || !data.len().is_multiple_of(N) {
            return Err(misfit(source, name, data.len(), format!("rows of {N}")));
        }
        let ptr = std::ptr::slice_from_raw_parts(data.as_ptr().cast::<[f32; N]>(), data.len() / N);
        Ok(View {
            ptr,
            _source: source.clone(),
        })
    }
}

impl<const R: usize, const C: usize> View<[[f32; C]; R]> {
    /// Tensor `name` as exactly `R` rows of `C`.
    pub fn matrix(source: &Source, name: &str) -> Result<Self, FixedNetError> {
        let data = tensor(source, name)?;
        if data.len() != R * C {
            return Err(misfit(source, name, data.len(), format!("{R} rows of {C}")));
        }
        Ok(View {
            ptr: data.as_ptr().cast::<[[f32; C]; R]>(),
            _source: source.clone(),
        })
    }
}

impl<const N: usize> View<[f32; N]> {
    /// Tensor `name` as exactly `N` values.
    pub fn array(source: &Source, name: &str) -> Result<Self, FixedNetError> {
        let data = tensor(source, name)?;
        if data.len() != N {
            return Err(misfit(source, name, data.len(), format!("{N} values")));
        }
        Ok(View {
            ptr: data.as_ptr().cast::<[f32; N]>(),
            _source: source.clone(),
        })
    }
}

impl View<[f32]> {
    /// Copies tensor `name` into `out`, which must be its length.
    pub fn flat_into(source: &Source, name: &str, out: &mut [f32]) -> Result<(), FixedNetError> {
        let data = tensor(source, name)?;
        if data.len() != out.len() {
            return Err(misfit(
                source,
                name,
                data.len(),
                format!("{} values", out.len()),
            ));
        }
        out.copy_from_slice(data);
        Ok(())
    }

    /// Tensor `name` as it is.
    pub fn flat(source: &Source, name: &str) -> Result<Self, FixedNetError> {
        let data = tensor(source, name)?;
        Ok(View {
            ptr: std::ptr::from_ref(data),
            _source: source.clone(),
        })
    }
}
