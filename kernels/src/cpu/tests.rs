//! Every level this CPU (or Miri) runs — scalar included, since it runs the same generic
//! bodies — equals the plain definitions below on random inputs: exactly for element-wise
//! kernels, within f32 rounding of an f64 sum for dot products.

use super::*;

/// The definitions, written as plainly as possible and independently of `body.rs`.
mod plain {
    pub fn add<const N: usize>(acc: &mut [f32; N], row: &[f32; N]) {
        for i in 0..N {
            acc[i] += row[i];
        }
    }
    pub fn sub<const N: usize>(acc: &mut [f32; N], row: &[f32; N]) {
        for i in 0..N {
            acc[i] -= row[i];
        }
    }
    pub fn power<const D: usize, const O: usize>(p: &mut [[f32; D]; O], e: &[f32; D], sign: f32) {
        for c in 0..D {
            let mut x = sign * e[c];
            for row in p.iter_mut() {
                row[c] += x;
                x *= e[c];
            }
        }
    }
    pub fn dot(a: &[f32], b: &[f32]) -> f64 {
        a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum()
    }
}

struct Rng(u64);
impl Rng {
    fn f(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn arr<const N: usize>(&mut self) -> [f32; N] {
        std::array::from_fn(|_| self.f())
    }
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * (1.0 + a.abs().max(b.abs()))
}

fn check_rows<const N: usize>(rng: &mut Rng) {
    let acc0 = rng.arr::<N>();
    let row = rng.arr::<N>();
    let (mut want_add, mut want_sub) = (acc0, acc0);
    plain::add(&mut want_add, &row);
    plain::sub(&mut want_sub, &row);
    for simd in Simd::available() {
        let (mut a, mut s) = (acc0, acc0);
        add_assign(simd, &mut a, &row);
        sub_assign(simd, &mut s, &row);
        // Element-wise add/sub are exact in every level.
        assert_eq!(a, want_add, "{simd} add N={N}");
        assert_eq!(s, want_sub, "{simd} sub N={N}");
    }
}

fn check_power<const D: usize, const O: usize>(rng: &mut Rng) {
    let p0: [[f32; D]; O] = std::array::from_fn(|_| rng.arr::<D>());
    let e = rng.arr::<D>();
    for sign in [1.0, -1.0] {
        let mut want = p0;
        plain::power(&mut want, &e, sign);
        for simd in Simd::available() {
            let mut p = p0;
            power_update(simd, &mut p, &e, sign);
            assert_eq!(p, want, "{simd} power D={D} O={O}");
        }
    }
}

fn check_dot<const N: usize>(rng: &mut Rng) {
    let (a, b) = (rng.arr::<N>(), rng.arr::<N>());
    let exact = plain::dot(&a, &b);
    for simd in Simd::available() {
        let d = dot(simd, &a, &b);
        assert!(close(d, exact as f32), "{simd} dot N={N}: {d} vs {exact}");
    }
}

fn check_affine<const IN: usize, const OUT: usize>(rng: &mut Rng, batch: usize) {
    let w: [[f32; IN]; OUT] = std::array::from_fn(|_| rng.arr::<IN>());
    let b = rng.arr::<OUT>();
    let xs: Vec<[f32; IN]> = (0..batch).map(|_| rng.arr::<IN>()).collect();
    let want: Vec<[f64; OUT]> = xs
        .iter()
        .map(|x| std::array::from_fn(|r| b[r] as f64 + plain::dot(&w[r], x)))
        .collect();
    for simd in Simd::available() {
        let mut got = vec![[f32::NAN; OUT]; batch];
        affine_batch(simd, &w, &b, &xs, &mut got);
        for (j, (g, wnt)) in got.iter().zip(&want).enumerate() {
            for (x, y) in g.iter().zip(wnt) {
                assert!(
                    close(*x, *y as f32),
                    "{simd} affine {IN}x{OUT} batch {batch}: {x} vs {y}"
                );
            }
            // A leaf's outputs are the same bits alone as in the batch (body::affine_batch).
            let mut alone = [[f32::NAN; OUT]];
            affine_batch(simd, &w, &b, &xs[j..j + 1], &mut alone);
            assert_eq!(
                &alone[0], g,
                "{simd} affine {IN}x{OUT}: input {j} alone vs batch {batch}"
            );
        }
    }
}

/// The bf16 affine map at every level against the exact f32-weight map in f64, within its
/// rounding bound: bf16 weights are within 2^-8 of each weight (relative), so `|Δy| ≤ 2^-8 ·
/// Σ|w·x|`, plus f32 summation slack. (The int8 path is the integer one: `int/tests.rs`.)
fn check_affine_bf16<const IN: usize, const OUT: usize>(rng: &mut Rng, batch: usize) {
    let w: [[f32; IN]; OUT] = std::array::from_fn(|_| rng.arr::<IN>());
    let b = rng.arr::<OUT>();
    let xs: Vec<[f32; IN]> = (0..batch).map(|_| rng.arr::<IN>()).collect();
    let wb: [[Bf16; IN]; OUT] = w.map(|row| row.map(Bf16::from_f32));
    for simd in Simd::available() {
        let mut got_b = vec![[f32::NAN; OUT]; batch];
        affine_batch_bf16(simd, &wb, &b, &xs, &mut got_b);
        for (j, x) in xs.iter().enumerate() {
            for r in 0..OUT {
                let exact = b[r] as f64 + plain::dot(&w[r], x);
                let abs_wx: f64 = w[r].iter().zip(x).map(|(a, c)| (a * c).abs() as f64).sum();
                let slack = 1e-5 * (1.0 + abs_wx);
                let gb = got_b[j][r] as f64;
                let bound_b = abs_wx / 256.0 + slack;
                assert!(
                    (gb - exact).abs() <= bound_b,
                    "{simd} bf16 {IN}x{OUT}: {gb} vs {exact}"
                );
            }
        }
    }
}

#[test]
fn bf16_rounds_to_nearest_even_and_int8_steps_by_hand() {
    // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
    assert_eq!(Bf16::from_f32(1.0 + 1.0 / 256.0).to_f32(), 1.0);
    // 1 + 3·2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
    assert_eq!(Bf16::from_f32(1.0 + 3.0 / 256.0).to_f32(), 1.0 + 1.0 / 64.0);
    assert_eq!(Bf16::from_f32(-2.5).to_f32(), -2.5);
    assert!(Bf16::from_f32(f32::NAN).to_f32().is_nan());
    // Largest magnitude 2.54 → scale 0.02; 1.0 is 50 steps, -0.011 rounds to -1 step.
    let (q, scale) = quantize_i8(&[2.54, 1.0, -0.011, 0.0]);
    assert!((scale - 0.02).abs() < 1e-7);
    assert_eq!(q, [127, 50, -1, 0]);
    assert_eq!(quantize_i8(&[0.0; 3]), ([0; 3], 0.0));
}

#[test]
fn simd_levels_equal_scalar() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    // Sizes below, at and between vector widths, small enough for Miri.
    check_rows::<1>(&mut rng);
    check_rows::<7>(&mut rng);
    check_rows::<8>(&mut rng);
    check_rows::<16>(&mut rng);
    check_rows::<37>(&mut rng);
    check_power::<5, 3>(&mut rng);
    check_power::<16, 2>(&mut rng);
    check_power::<35, 4>(&mut rng);
    check_power::<33, 1>(&mut rng);
    check_dot::<3>(&mut rng);
    check_dot::<16>(&mut rng);
    check_dot::<48>(&mut rng);
    check_dot::<77>(&mut rng);
    check_dot::<150>(&mut rng);
    // Row counts around the register blocks (8 rows at batch 1, 4 otherwise) and input
    // counts around the input tiles (2 or 4), with and without a scalar tail.
    for batch in [1, 2, 3, 4, 5, 9] {
        check_affine::<19, 3>(&mut rng, batch);
        check_affine::<32, 5>(&mut rng, batch);
        check_affine::<40, 13>(&mut rng, batch);
        check_affine::<67, 17>(&mut rng, batch);
        check_affine_bf16::<19, 3>(&mut rng, batch);
        check_affine_bf16::<40, 13>(&mut rng, batch);
        check_affine_bf16::<67, 17>(&mut rng, batch);
    }
}

#[test]
fn levels_report_what_ran() {
    let names: Vec<_> = Simd::available().iter().map(|s| s.name()).collect();
    eprintln!("SIMD levels tested on this machine: {names:?}");
    assert_eq!(names[0], "scalar");
    assert!(matches!(Simd::by_name("bogus"), Err(SimdError::Unknown(_))));
    assert_eq!(Simd::by_name("scalar"), Ok(Simd::SCALAR));
}

#[test]
#[should_panic(expected = "one output row per input")]
fn affine_batch_refuses_unequal_lengths() {
    let w = [[1.0f32; 4]; 2];
    let mut out = [[0.0f32; 2]; 1];
    affine_batch(Simd::SCALAR, &w, &[0.0; 2], &[[1.0; 4]; 2], &mut out);
}
