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

/// A bf16 path this CPU runs at a level, and whether it rounds the inputs to bf16.
type Bf16Path<const IN: usize, const OUT: usize> = (
    &'static str,
    fn(Simd, &Bf16Matrix<IN, OUT>, &[f32; OUT], &[[f32; IN]], &mut [[f32; OUT]]),
    bool,
);
/// The widened path always, and AVX-512 BF16's dot products where [`bf16_dot`] says the
/// level uses them.
fn bf16_paths<const IN: usize, const OUT: usize>(simd: Simd) -> Vec<Bf16Path<IN, OUT>> {
    let mut v: Vec<Bf16Path<IN, OUT>> = vec![("widened", affine_batch_widened, false)];
    if bf16_dot(simd) {
        v.push(("vdpbf16ps", affine_batch_bf16, true));
    }
    v
}

/// The bf16 affine map at every level and on each path. Each product is exact — a bf16
/// weight times an f32 input (widened), or times the input's bf16 (BF16 path) — so the
/// result is the f64 sum of those products within f32 summation slack, which checks that the
/// BF16 path rounds its inputs as `Bf16::from_f32` does and the widened one not at all (either
/// mistake misses by ~2^-9·Σ|w·x|). Against the exact f32 map, each rounded factor within
/// 2^-8 of itself (relative): `|Δy| ≤ 2^-8 · Σ|w·x|` widened, `(2^-7 + 2^-16) · Σ|w·x|` with
/// rounded inputs, plus the slack. A leaf's outputs are the same bits alone as in the batch.
/// (The int8 path is the integer one: `int/tests.rs`.)
fn check_affine_bf16<const IN: usize, const OUT: usize>(rng: &mut Rng, batch: usize) {
    let w: [[f32; IN]; OUT] = std::array::from_fn(|_| rng.arr::<IN>());
    let b = rng.arr::<OUT>();
    let xs: Vec<[f32; IN]> = (0..batch).map(|_| rng.arr::<IN>()).collect();
    let wb = Bf16Matrix::new(&w);
    let round = |v: &[f32; IN]| v.map(|x| Bf16::from_f32(x).to_f32());
    // The tiles hold each weight's rounding (rows and inputs past whole tiles included).
    for (r, row) in w.iter().enumerate() {
        for (i, &x) in row.iter().enumerate() {
            assert_eq!(
                wb.weight(r, i),
                Bf16::from_f32(x),
                "{IN}x{OUT}: weight ({r}, {i})"
            );
        }
    }
    let padded = IN.div_ceil(BF16_CHUNK) * BF16_CHUNK * OUT.div_ceil(BF16_GROUP) * BF16_GROUP;
    assert_eq!(Bf16Matrix::<IN, OUT>::BYTES, 2 * padded as u64);
    for simd in Simd::available() {
        for (path, affine, rounds) in bf16_paths::<IN, OUT>(simd) {
            let mut got = vec![[f32::NAN; OUT]; batch];
            affine(simd, &wb, &b, &xs, &mut got);
            for (j, x) in xs.iter().enumerate() {
                let seen = if rounds { round(x) } else { *x };
                for r in 0..OUT {
                    let exact = b[r] as f64 + plain::dot(&w[r], x);
                    let products = b[r] as f64 + plain::dot(&round(&w[r]), &seen);
                    let abs_wx: f64 = w[r].iter().zip(x).map(|(a, c)| (a * c).abs() as f64).sum();
                    let slack = 1e-5 * (1.0 + abs_wx);
                    let g = got[j][r] as f64;
                    assert!(
                        (g - products).abs() <= slack,
                        "{simd} {path} bf16 {IN}x{OUT}: {g} vs its products' {products}"
                    );
                    let rel = if rounds {
                        1.0 / 128.0 + 1.0 / 65536.0
                    } else {
                        1.0 / 256.0
                    };
                    assert!(
                        (g - exact).abs() <= abs_wx * rel + slack,
                        "{simd} {path} bf16 {IN}x{OUT}: {g} vs {exact}"
                    );
                }
                let mut alone = [[f32::NAN; OUT]];
                affine(simd, &wb, &b, &xs[j..j + 1], &mut alone);
                assert_eq!(
                    &alone[0], &got[j],
                    "{simd} {path} bf16 {IN}x{OUT}: input {j} alone vs batch {batch}"
                );
            }
        }
    }
}

/// The BF16 path rounds each input to bf16 as `Bf16::from_f32` rounds — ties to even, NaN
/// kept, ∞ kept — and the widened path multiplies the input as it is, in the vector lanes of
/// every level: a one-hot weight row (1 at input k) makes output k exactly what the path
/// multiplies input k by. 64 inputs (whole tiles); each special value in its own call, at a
/// different lane, among ordinary inputs.
#[test]
fn bf16_paths_see_the_inputs_by_hand() {
    const N: usize = 64;
    let special = [
        (1.0 + 1.0 / 256.0, 1.0),              // halfway, the even neighbour below
        (1.0 + 3.0 / 256.0, 1.0 + 1.0 / 64.0), // halfway, the even neighbour above
        (-(1.0 + 3.0 / 256.0), -(1.0 + 1.0 / 64.0)),
        (1.0 + 1.0 / 256.0 + 1e-6, 1.0 + 1.0 / 128.0), // just above halfway
        (f32::INFINITY, f32::INFINITY),
        (f32::NEG_INFINITY, f32::NEG_INFINITY),
        (f32::MAX, f32::INFINITY), // past the largest bf16
        (0.3, 0.300_781_25),       // 1.2 · 2^-2: 153.6/128 → 154/128
    ];
    let w = Bf16Matrix::new(&std::array::from_fn(|r| {
        std::array::from_fn(|i| if i == r { 1.0 } else { 0.0 })
    }));
    for simd in Simd::available() {
        for (path, affine, rounds) in bf16_paths::<N, N>(simd) {
            let seen = |v: f32| {
                if rounds {
                    Bf16::from_f32(v).to_f32()
                } else {
                    v
                }
            };
            for (i, &(v, rounded)) in special.iter().enumerate() {
                assert_eq!(rounded, Bf16::from_f32(v).to_f32(), "the table itself");
                let want = if rounds { rounded } else { v };
                let k = (i * 7 + 3) % N;
                let mut x: [f32; N] = std::array::from_fn(|j| 0.1 * j as f32 - 2.9);
                x[k] = v;
                let mut out = [[0.0f32; N]];
                affine(simd, &w, &[0.0; N], &[x], &mut out);
                let y = out[0][k];
                assert!(
                    y == want,
                    "{simd} {path}: input {v:e} at {k} gave {y:e}, not {want:e}"
                );
                // Every other row: its own input (finite as seen, so 0·x = 0).
                if want.is_finite() {
                    for (j, (&y, &xj)) in out[0].iter().zip(&x).enumerate() {
                        assert_eq!(y, seen(xj), "{simd} {path}: input {j}");
                    }
                }
            }
            let mut x = [1.5f32; N];
            x[N - 2] = f32::NAN;
            let mut out = [[0.0f32; N]];
            affine(simd, &w, &[0.0; N], &[x], &mut out);
            assert!(
                out[0][N - 2].is_nan(),
                "{simd} {path}: a NaN input stays NaN"
            );
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
        // bf16 tiles are 8 rows × 32 inputs: below, at and past them.
        check_affine_bf16::<19, 3>(&mut rng, batch);
        check_affine_bf16::<40, 13>(&mut rng, batch);
        check_affine_bf16::<64, 8>(&mut rng, batch);
        check_affine_bf16::<67, 17>(&mut rng, batch);
        check_affine_bf16::<96, 20>(&mut rng, batch);
    }
}

#[test]
fn levels_report_what_ran() {
    let names: Vec<_> = Simd::available().iter().map(|s| s.name()).collect();
    eprintln!("SIMD levels tested on this machine: {names:?}");
    let dot: Vec<_> = Simd::available()
        .into_iter()
        .filter(|&s| bf16_dot(s))
        .collect();
    eprintln!("bf16 dot products (vdpbf16ps) at: {dot:?}");
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
