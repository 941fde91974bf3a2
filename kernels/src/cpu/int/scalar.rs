//! Plain Rust twins of the integer kernels: the definitions the SIMD levels are tested
//! against. All arithmetic wraps exactly as the SIMD instructions do (16-bit lanes for the
//! accumulator, 32-bit lanes for the affine sums), so every level gives the same bits.

/// `acc = base − Σ sub + Σ add`, every lane wrapping in 16 bits; `base` is `acc` itself when
/// `None`.
pub fn accumulate<const N: usize>(
    acc: &mut [i16; N],
    base: Option<&[i16; N]>,
    sub: &[&[i16; N]],
    add: &[&[i16; N]],
) {
    if let Some(b) = base {
        *acc = *b;
    }
    for row in sub {
        for (a, r) in acc.iter_mut().zip(row.iter()) {
            *a = a.wrapping_sub(*r);
        }
    }
    for row in add {
        for (a, r) in acc.iter_mut().zip(row.iter()) {
            *a = a.wrapping_add(*r);
        }
    }
}

/// `out[i] = clamp(acc[i], 0, 127)`: the feature transformer's output.
pub fn clip_i16(acc: &[i16], out: &mut [u8]) {
    for (o, &a) in out.iter_mut().zip(acc) {
        *o = a.clamp(0, 127) as u8;
    }
}

/// `out[i] = clamp(y[i] >> CRELU_SHIFT, 0, 127)` with an arithmetic (flooring) shift: the
/// clipped ReLU after an affine layer.
pub fn crelu_i32(y: &[i32], out: &mut [u8]) {
    for (o, &v) in out.iter_mut().zip(y) {
        *o = (v >> super::CRELU_SHIFT).clamp(0, 127) as u8;
    }
}

/// `out[o] = b[o] + Σ_i W[o][i]·x[i]` over outputs `from..to`, from the packed layout of
/// [`super::AffineI8`] (groups of four inputs, then the tail columns).
pub fn affine(layer: &super::AffineI8, x: &[u8], out: &mut [i32], from: usize, to: usize) {
    let n_out = layer.outputs;
    for (o, y) in (from..to).zip(&mut out[from..to]) {
        let mut s = layer.biases[o];
        for (g, xg) in x.chunks_exact(4).take(layer.groups).enumerate() {
            let w = &layer.packed[(g * n_out + o) * 4..(g * n_out + o) * 4 + 4];
            s = s.wrapping_add(dot_u8i8(xg, w));
        }
        *y = s;
    }
    layer.add_tail(x, out, from, to);
}

/// `Σ x[i]·w[i]`, wrapping in 32 bits.
pub fn dot_u8i8(x: &[u8], w: &[i8]) -> i32 {
    x.iter().zip(w).fold(0i32, |s, (&a, &b)| {
        s.wrapping_add(i32::from(a) * i32::from(b))
    })
}
