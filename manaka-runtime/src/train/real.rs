//! The float type of the trainer's arithmetic.
//!
//! Every function of the trainer is generic over [`Real`]: training runs in `f32` (the
//! weight file's type, half the memory and twice the SIMD width), and the gradient tests run
//! the very same code in `f64`, where central finite differences are accurate to about 1e-9
//! and can check every derivative (SPEC §4–6 derivations in `backward.rs`).
//!
//! The two inner loops that dominate training — dot products and `y += a·x` over rows of W1,
//! W2 and the policy table — are methods of the trait so that `f32` can use a version compiled
//! for AVX2 + FMA when the CPU has it. The workspace's baseline target is x86-64-v2 (SSE4.2),
//! so without this the compiler would only ever emit 4-wide code. These are plain loops
//! compiled with `#[target_feature]`, not intrinsics (those stay in `manaka-kernels`).

use std::fmt::Debug;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// `f32` or `f64`.
pub trait Real:
    Copy
    + Default
    + Debug
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + Sum
{
    const ZERO: Self;
    const ONE: Self;
    /// Name in messages and checkpoint files (`f32`, `f64`).
    const NAME: &'static str;

    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn is_finite(self) -> bool;

    /// `Σ a[i]·b[i]` over the common length.
    fn dot(a: &[Self], b: &[Self]) -> Self {
        dot_portable(a, b)
    }

    /// `y[i] += alpha·x[i]` over the common length.
    fn axpy(y: &mut [Self], alpha: Self, x: &[Self]) {
        for (y, &x) in y.iter_mut().zip(x) {
            *y += alpha * x;
        }
    }

    /// `[w[0]·x, w[1]·x, w[2]·x, w[3]·x]`: four rows against one vector, so a layer reads
    /// each input once per four rows.
    fn dot4(w: [&[Self]; 4], x: &[Self]) -> [Self; 4] {
        w.map(|w| Self::dot(w, x))
    }

    /// `y[i] += Σ_j a[j]·x[j][i]`: four rows into one vector, one pass over y.
    fn axpy4(y: &mut [Self], a: [Self; 4], x: [&[Self]; 4]) {
        for (j, x) in x.iter().enumerate() {
            Self::axpy(y, a[j], x);
        }
    }

    fn max(self, other: Self) -> Self {
        if self >= other { self } else { other }
    }
}

/// Eight independent partial sums, so that the compiler can vectorise the reduction (it may
/// not reorder a single float sum) and the additions do not wait on one another.
#[inline(always)]
fn dot_portable<R: Real>(a: &[R], b: &[R]) -> R {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [R::ZERO; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut tail = R::ZERO;
    for (&x, &y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const NAME: &'static str = "f64";

    #[inline(always)]
    fn from_f64(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f32(x: f32) -> f64 {
        f64::from(x)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn exp(self) -> f64 {
        f64::exp(self)
    }
    #[inline(always)]
    fn ln(self) -> f64 {
        f64::ln(self)
    }
    #[inline(always)]
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const NAME: &'static str = "f32";

    #[inline(always)]
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn from_f32(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn exp(self) -> f32 {
        f32::exp(self)
    }
    #[inline(always)]
    fn ln(self) -> f32 {
        f32::ln(self)
    }
    #[inline(always)]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        // Short rows (pair rows of small shapes) are not worth a call through the dispatch.
        #[cfg(target_arch = "x86_64")]
        if a.len() >= 32 && fast::available() {
            // SAFETY: `available` checked that the CPU has AVX2 and FMA.
            return unsafe { fast::dot(a, b) };
        }
        dot_portable(a, b)
    }

    fn dot4(w: [&[f32]; 4], x: &[f32]) -> [f32; 4] {
        #[cfg(target_arch = "x86_64")]
        if x.len() >= 32 && fast::available() {
            // SAFETY: as above.
            return unsafe { fast::dot4(w, x) };
        }
        w.map(|w| dot_portable(w, x))
    }

    fn axpy4(y: &mut [f32], a: [f32; 4], x: [&[f32]; 4]) {
        #[cfg(target_arch = "x86_64")]
        if y.len() >= 32 && fast::available() {
            // SAFETY: as above.
            return unsafe { fast::axpy4(y, a, x) };
        }
        for (j, x) in x.iter().enumerate() {
            for (y, &x) in y.iter_mut().zip(*x) {
                *y += a[j] * x;
            }
        }
    }

    fn axpy(y: &mut [f32], alpha: f32, x: &[f32]) {
        #[cfg(target_arch = "x86_64")]
        if y.len() >= 32 && fast::available() {
            // SAFETY: as above.
            return unsafe { fast::axpy(y, alpha, x) };
        }
        for (y, &x) in y.iter_mut().zip(x) {
            *y += alpha * x;
        }
    }
}

/// The f32 loops compiled for AVX2 + FMA (chosen at run time).
#[cfg(target_arch = "x86_64")]
mod fast {
    use std::sync::OnceLock;

    pub fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
        })
    }

    /// 32 partial sums: four 8-wide registers, enough to hide the FMA latency.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let mut acc = [0f32; 32];
        let mut ca = a.chunks_exact(32);
        let mut cb = b.chunks_exact(32);
        for (x, y) in (&mut ca).zip(&mut cb) {
            for i in 0..32 {
                acc[i] = x[i].mul_add(y[i], acc[i]);
            }
        }
        let mut tail = 0f32;
        for (&x, &y) in ca.remainder().iter().zip(cb.remainder()) {
            tail = x.mul_add(y, tail);
        }
        let mut s = [0f32; 8];
        for (i, v) in acc.iter().enumerate() {
            s[i % 8] += v;
        }
        ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7])) + tail
    }

    /// Four rows, two 8-wide partial sums each: eight registers of accumulators, the input
    /// loaded once for the four.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn dot4(w: [&[f32]; 4], x: &[f32]) -> [f32; 4] {
        let n = w.iter().fold(x.len(), |n, w| n.min(w.len()));
        let (x, w0, w1, w2, w3) = (&x[..n], &w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]);
        let mut a0 = [0f32; 16];
        let mut a1 = [0f32; 16];
        let mut a2 = [0f32; 16];
        let mut a3 = [0f32; 16];
        let full = n / 16 * 16;
        let mut c = 0;
        while c < full {
            let xs: &[f32; 16] = x[c..c + 16].try_into().unwrap_or(&[0.0; 16]);
            let p0: &[f32; 16] = w0[c..c + 16].try_into().unwrap_or(&[0.0; 16]);
            let p1: &[f32; 16] = w1[c..c + 16].try_into().unwrap_or(&[0.0; 16]);
            let p2: &[f32; 16] = w2[c..c + 16].try_into().unwrap_or(&[0.0; 16]);
            let p3: &[f32; 16] = w3[c..c + 16].try_into().unwrap_or(&[0.0; 16]);
            for i in 0..16 {
                a0[i] = p0[i].mul_add(xs[i], a0[i]);
                a1[i] = p1[i].mul_add(xs[i], a1[i]);
                a2[i] = p2[i].mul_add(xs[i], a2[i]);
                a3[i] = p3[i].mul_add(xs[i], a3[i]);
            }
            c += 16;
        }
        let reduce = |a: &[f32; 16], w: &[f32]| {
            let mut tail = 0f32;
            for i in full..n {
                tail = w[i].mul_add(x[i], tail);
            }
            let mut h = [0f32; 8];
            for i in 0..8 {
                h[i] = a[i] + a[i + 8];
            }
            ((h[0] + h[4]) + (h[1] + h[5])) + ((h[2] + h[6]) + (h[3] + h[7])) + tail
        };
        [
            reduce(&a0, w0),
            reduce(&a1, w1),
            reduce(&a2, w2),
            reduce(&a3, w3),
        ]
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn axpy4(y: &mut [f32], a: [f32; 4], x: [&[f32]; 4]) {
        let n = x.iter().fold(y.len(), |n, x| n.min(x.len()));
        let (x0, x1, x2, x3) = (&x[0][..n], &x[1][..n], &x[2][..n], &x[3][..n]);
        for ((((y, &p), &q), &r), &s) in y[..n].iter_mut().zip(x0).zip(x1).zip(x2).zip(x3) {
            *y = a[3].mul_add(s, a[2].mul_add(r, a[1].mul_add(q, a[0].mul_add(p, *y))));
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn axpy(y: &mut [f32], alpha: f32, x: &[f32]) {
        for (y, &x) in y.iter_mut().zip(x) {
            *y = alpha.mul_add(x, *y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_and_axpy_agree_with_plain_loops_at_every_length() {
        for n in [0usize, 1, 7, 8, 9, 31, 32, 33, 100, 257] {
            let a: Vec<f32> = (0..n).map(|i| ((i * 37 % 19) as f32 - 9.0) / 7.0).collect();
            let b: Vec<f32> = (0..n)
                .map(|i| ((i * 11 % 23) as f32 - 11.0) / 5.0)
                .collect();
            let want: f64 = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| f64::from(x) * f64::from(y))
                .sum();
            let got = f32::dot(&a, &b);
            assert!(
                (f64::from(got) - want).abs() <= 1e-4 * (1.0 + want.abs()),
                "n={n}: {got} vs {want}"
            );
            let a64: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
            let b64: Vec<f64> = b.iter().map(|&x| f64::from(x)).collect();
            assert!((f64::dot(&a64, &b64) - want).abs() <= 1e-12 * (1.0 + want.abs()));
            let rows = [&a[..], &b[..], &b[..], &a[..]];
            let d4 = f32::dot4(rows, &b);
            let bb: f64 = b.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
            for (j, want) in [want, bb, bb, want].into_iter().enumerate() {
                assert!(
                    (f64::from(d4[j]) - want).abs() <= 1e-4 * (1.0 + want.abs()),
                    "n={n} dot4 row {j}"
                );
            }
            let mut y4 = b.clone();
            f32::axpy4(&mut y4, [0.5, -1.0, 2.0, 0.25], rows);
            for i in 0..n {
                let want = b[i] + 0.5 * a[i] - b[i] + 2.0 * b[i] + 0.25 * a[i];
                assert!(
                    (y4[i] - want).abs() <= 1e-5 * (1.0 + want.abs()),
                    "n={n} axpy4 {i}"
                );
            }
            let mut y = b.clone();
            f32::axpy(&mut y, 0.5, &a);
            for i in 0..n {
                assert!((y[i] - (b[i] + 0.5 * a[i])).abs() <= 1e-6 * (1.0 + b[i].abs()));
            }
        }
    }
}
