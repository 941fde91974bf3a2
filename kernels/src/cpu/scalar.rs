//! Plain Rust twins of every SIMD kernel: the definition the others are tested against.

pub fn add_assign(acc: &mut [f32], row: &[f32]) {
    for (a, r) in acc.iter_mut().zip(row) {
        *a += r;
    }
}

pub fn sub_assign(acc: &mut [f32], row: &[f32]) {
    for (a, r) in acc.iter_mut().zip(row) {
        *a -= r;
    }
}

/// `p` is `O × d` row-major.
pub fn power_update(p: &mut [f32], e: &[f32], d: usize, sign: f32) {
    for c in 0..d {
        let mut x = sign * e[c];
        for k in 0..p.len() / d {
            p[k * d + c] += x;
            x *= e[c];
        }
    }
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub fn affine_batch(
    w: &[f32],
    b: &[f32],
    xs: &[f32],
    out: &mut [f32],
    n_in: usize,
    n_out: usize,
    batch: usize,
) {
    for j in 0..batch {
        let x = &xs[j * n_in..(j + 1) * n_in];
        for r in 0..n_out {
            out[j * n_out + r] = b[r] + dot(&w[r * n_in..(r + 1) * n_in], x);
        }
    }
}
