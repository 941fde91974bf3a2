//! Every integer level this CPU (or Miri) runs gives exactly the scalar twin's integers, and
//! the scalar twin gives the plain definitions (written here again, row-major, without the
//! packed layout), on random inputs that include the extremes where wrapping and the
//! saturating packs act.

use super::*;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn i16(&mut self) -> i16 {
        // A quarter of the values at or near the extremes, so that sums wrap.
        match self.next() % 8 {
            0 => i16::MAX - (self.next() % 4) as i16,
            1 => i16::MIN + (self.next() % 4) as i16,
            _ => (self.next() >> 48) as i16,
        }
    }
    fn i32(&mut self) -> i32 {
        match self.next() % 8 {
            0 => i32::MAX - (self.next() % 4) as i32,
            1 => i32::MIN + (self.next() % 4) as i32,
            // Around the clip's interesting range: 64·(−10 … 140).
            2..=4 => (self.next() % 9600) as i32 - 640,
            _ => (self.next() >> 32) as i32,
        }
    }
    fn input(&mut self) -> u8 {
        // Clipped activations: 0..=127, a third of them 0 (the common case) or 127.
        match self.next() % 6 {
            0 => 0,
            1 => 127,
            _ => (self.next() % 128) as u8,
        }
    }
    fn weight(&mut self) -> i8 {
        (self.next() >> 56) as i8
    }
}

/// Names of the levels under test, printed once so a log shows what ran.
fn levels() -> Vec<IntSimd> {
    IntSimd::available()
}

fn check_accumulate<const N: usize>(rng: &mut Rng, n_sub: usize, n_add: usize) {
    let bias: [i16; N] = std::array::from_fn(|_| rng.i16());
    let acc0: [i16; N] = std::array::from_fn(|_| rng.i16());
    let rows: Vec<[i16; N]> = (0..n_sub + n_add)
        .map(|_| std::array::from_fn(|_| rng.i16()))
        .collect();
    let refs: Vec<&[i16; N]> = rows.iter().collect();
    let (sub, add) = refs.split_at(n_sub);
    // The definition, in i32 then reduced mod 2^16: wrapping is what i16 lanes do.
    let wrap = |v: i64| v as i16;
    let want_refresh: [i16; N] = std::array::from_fn(|i| {
        wrap(i64::from(bias[i]) + refs.iter().map(|r| i64::from(r[i])).sum::<i64>())
    });
    let want_update: [i16; N] = std::array::from_fn(|i| {
        wrap(
            i64::from(acc0[i]) - sub.iter().map(|r| i64::from(r[i])).sum::<i64>()
                + add.iter().map(|r| i64::from(r[i])).sum::<i64>(),
        )
    });
    for s in levels() {
        let mut a = acc0;
        refresh_i16(s, &mut a, &bias, &refs);
        assert_eq!(a, want_refresh, "{s} refresh N={N} rows={}", refs.len());
        let mut a = acc0;
        update_i16(s, &mut a, sub, add);
        assert_eq!(a, want_update, "{s} update N={N} -{n_sub} +{n_add}");
    }
}

fn check_clip<const N: usize>(rng: &mut Rng) {
    let mut acc: [i16; N] = std::array::from_fn(|_| rng.i16());
    // Every value of the interesting range appears somewhere in long vectors.
    for (i, a) in acc.iter_mut().enumerate().step_by(3) {
        *a = (i as i16 % 200) - 40;
    }
    let want: [u8; N] = std::array::from_fn(|i| acc[i].clamp(0, 127) as u8);
    for s in levels() {
        let mut out = [0xAAu8; N];
        clip_i16(s, &acc, &mut out);
        assert_eq!(out, want, "{s} clip N={N}");
    }
}

fn check_crelu<const N: usize>(rng: &mut Rng) {
    let y: [i32; N] = std::array::from_fn(|_| rng.i32());
    // Floor division by 64 (not truncation): −1 >> 6 is −1, so −1..−63 clip to 0 and
    // 8128..8191 to 127.
    let want: [u8; N] = std::array::from_fn(|i| y[i].div_euclid(64).clamp(0, 127) as u8);
    for s in levels() {
        let mut out = [0xAAu8; N];
        crelu_i32(s, &y, &mut out);
        assert_eq!(out, want, "{s} crelu N={N}");
    }
}

fn check_affine<const IN: usize, const OUT: usize>(rng: &mut Rng) {
    let (inputs, outputs) = (IN, OUT);
    let w: Vec<i8> = (0..inputs * outputs).map(|_| rng.weight()).collect();
    let b: Vec<i32> = (0..outputs).map(|_| rng.i32()).collect();
    let layer = AffineI8::<IN, OUT>::new(inputs, outputs, &w, &b);
    for o in 0..outputs {
        for i in 0..inputs {
            assert_eq!(
                layer.weight(o, i),
                w[o * inputs + i],
                "packed layout round trip"
            );
        }
    }
    let x: [u8; IN] = std::array::from_fn(|_| rng.input());
    let want: [i32; OUT] = std::array::from_fn(|o| {
        let s: i64 = i64::from(b[o])
            + (0..inputs)
                .map(|i| i64::from(w[o * inputs + i]) * i64::from(x[i]))
                .sum::<i64>();
        s as i32
    });
    for s in levels() {
        let mut out = [0x5555_5555; OUT];
        affine(s, &layer, &x, &mut out);
        assert_eq!(out, want, "{s} affine {inputs}→{outputs}");
    }
}

fn check_dot<const N: usize>(rng: &mut Rng) {
    let x: [u8; N] = std::array::from_fn(|_| rng.input());
    let w: [i8; N] = std::array::from_fn(|_| rng.weight());
    let want = x
        .iter()
        .zip(&w)
        .map(|(&a, &b)| i64::from(a) * i64::from(b))
        .sum::<i64>() as i32;
    for s in levels() {
        assert_eq!(dot_u8i8(s, &x, &w), want, "{s} dot N={N}");
    }
}

#[test]
fn integer_levels_equal_scalar() {
    let names: Vec<_> = levels().iter().map(|s| s.name()).collect();
    eprintln!("integer levels tested: {names:?}");
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    // Widths below, at and between the vector widths (16/32 lanes of i16, 32/64 bytes,
    // 8/16 i32) and the register blocks (8 vectors), with tails; row counts 0..=38 (a
    // HalfKP refresh has 38 rows).
    check_accumulate::<1>(&mut rng, 1, 2);
    check_accumulate::<17>(&mut rng, 2, 2);
    check_accumulate::<32>(&mut rng, 0, 3);
    check_accumulate::<48>(&mut rng, 1, 0);
    check_accumulate::<256>(&mut rng, 2, 2);
    check_accumulate::<275>(&mut rng, 3, 4);
    check_accumulate::<40>(&mut rng, 0, 38);
    check_clip::<1>(&mut rng);
    check_clip::<31>(&mut rng);
    check_clip::<64>(&mut rng);
    check_clip::<97>(&mut rng);
    check_clip::<256>(&mut rng);
    check_crelu::<5>(&mut rng);
    check_crelu::<32>(&mut rng);
    check_crelu::<64>(&mut rng);
    check_crelu::<100>(&mut rng);
    // Outputs below, at and between the registers' 8 and 16 i32 lanes and their blocks of
    // 2 and 4; inputs with and without a tail past the last group of four.
    check_affine::<1, 1>(&mut rng);
    check_affine::<3, 7>(&mut rng);
    check_affine::<4, 8>(&mut rng);
    check_affine::<7, 9>(&mut rng);
    check_affine::<32, 16>(&mut rng);
    check_affine::<33, 17>(&mut rng);
    check_affine::<64, 32>(&mut rng);
    check_affine::<70, 65>(&mut rng);
    check_affine::<36, 80>(&mut rng);
    check_affine::<20, 56>(&mut rng);
    check_affine::<512, 32>(&mut rng);
    // Several 64-output tiles, the last one partial.
    check_affine::<40, 200>(&mut rng);
    check_affine::<9, 130>(&mut rng);
    check_dot::<1>(&mut rng);
    check_dot::<31>(&mut rng);
    check_dot::<32>(&mut rng);
    check_dot::<65>(&mut rng);
    check_dot::<100>(&mut rng);
}

#[test]
fn int_levels_report_what_ran() {
    let all = IntSimd::available();
    assert_eq!(all[0].name(), "scalar");
    assert!(!all[0].vnni());
    // VNNI only ever rides on AVX-512.
    for s in &all {
        assert!(!s.vnni() || s.simd().name() == "avx512", "{s}");
    }
    assert_eq!(IntSimd::new(Simd::SCALAR), all[0]);
}

#[test]
fn input_quantisation_by_hand() {
    let (mut u, mut v) = ([0u8; 4], [0u8; 4]);
    // Both signs: step = max|x| / 63, u = x/step + 64 (ties to even: −31.5 → −32), and the
    // residual in steps of step/126 around 64.
    let s = quantize_input(&[1.0, -0.5, 0.0, 0.63], &mut u, &mut v);
    assert_eq!((s.step, s.zero), (1.0 / 63.0, 64));
    assert_eq!(u, [127, 32, 64, 104]);
    // −0.5 = (−32 + 0.5) steps: +63 fine steps; 0.63 = 39.69 steps: (−0.31·126 = −39.06).
    assert_eq!(v, [64, 127, 64, 25]);
    // All ≥ 0 (after a ReLU): step = max / 127, no offset.
    let (mut u, mut v) = ([0u8; 3], [0u8; 3]);
    let s = quantize_input(&[0.0, 1.27, 0.5], &mut u, &mut v);
    assert_eq!((s.step, s.zero), (0.01, 0));
    assert_eq!(u, [0, 127, 50]);
    assert_eq!(v, [64, 64, 64]);
    // A row of zeros: step 0; a non-finite value: NaN, so the outputs are NaN as in f32.
    let s = quantize_input(&[0.0; 3], &mut u, &mut v);
    assert_eq!((s.step, s.zero, u, v), (0.0, 0, [0; 3], [64; 3]));
    assert!(
        quantize_input(&[0.0, f32::INFINITY, -1.0], &mut u, &mut v)
            .step
            .is_nan()
    );
    assert!(
        quantize_input(&[f32::NAN, 1.0, 2.0], &mut u, &mut v)
            .step
            .is_nan()
    );
}

fn gaussian(rng: &mut Rng) -> f32 {
    // Sum of four uniforms in −1..1: roughly normal, with tails.
    (0..4)
        .map(|_| (rng.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
        .sum()
}

/// Every level gives the scalar twin's outputs bit for bit, and the scalar twin is within
/// the module's error bound of the f32 definition.
fn check_quantized_affine<const IN: usize, const OUT: usize>(rng: &mut Rng, signed: bool) {
    let w: Vec<[f32; IN]> = (0..OUT)
        .map(|_| std::array::from_fn(|_| gaussian(rng) * 0.05))
        .collect();
    let w: &[[f32; IN]; OUT] = w.as_slice().try_into().unwrap();
    let b: [f32; OUT] = std::array::from_fn(|_| gaussian(rng));
    let x: [f32; IN] = std::array::from_fn(|_| {
        let v = gaussian(rng);
        if signed { v } else { v.max(0.0) }
    });
    let q = QuantizedAffine::new(w);
    let run = |s: IntSimd| {
        let mut out = [0f32; OUT];
        q.forward(s, &b, &x, &mut QuantizedScratch::default(), &mut out);
        out
    };
    let want = run(IntSimd::new(Simd::SCALAR));
    let (mut u, mut v) = ([0u8; IN], [0u8; IN]);
    let steps = quantize_input(&x, &mut u, &mut v);
    assert_eq!(steps.zero, if x.iter().any(|&v| v < 0.0) { 64 } else { 0 });
    // Each input is within half a fine step of its two planes' value.
    for i in 0..IN {
        let back = steps.step * (f32::from(u[i]) - steps.zero as f32)
            + steps.fine() * (f32::from(v[i]) - 64.0);
        assert!(
            (back - x[i]).abs() <= steps.fine() * 0.5001 + 1e-7,
            "input {i}"
        );
    }
    let abs_x: f32 = x.iter().map(|v| v.abs()).sum();
    for r in 0..OUT {
        let exact: f64 = f64::from(b[r])
            + (0..IN)
                .map(|i| f64::from(w[r][i]) * f64::from(x[i]))
                .sum::<f64>();
        let (scale, sum_q) = (
            q.weight(r, 0).1,
            (0..IN)
                .map(|i| f32::from(q.weight(r, i).0).abs())
                .sum::<f32>(),
        );
        let bound = scale / 2.0 * abs_x + steps.fine() / 2.0 * scale * sum_q;
        let err = (f64::from(want[r]) - exact).abs();
        assert!(
            err <= f64::from(bound) * 1.001 + 1e-4 * exact.abs() + 1e-5,
            "{IN}→{OUT} row {r}: error {err} over bound {bound}"
        );
    }
    for s in levels() {
        let (mut u2, mut v2) = ([0u8; IN], [0u8; IN]);
        assert_eq!(
            quantize(s, &x, &mut u2, &mut v2),
            steps,
            "{s} quantise {IN}"
        );
        assert_eq!((u2, v2), (u, v), "{s} quantise {IN}");
        assert_eq!(run(s), want, "{s} quantised affine {IN}→{OUT}");
    }
}

#[test]
fn quantized_affine_levels_equal_scalar_within_bound() {
    let mut rng = Rng(0x5eed_0017_0003_0001);
    for signed in [true, false] {
        check_quantized_affine::<1, 1>(&mut rng, signed);
        check_quantized_affine::<7, 9>(&mut rng, signed);
        check_quantized_affine::<33, 17>(&mut rng, signed);
        check_quantized_affine::<64, 32>(&mut rng, signed);
        // Several tiles of outputs; too slow to interpret under Miri (the sizes above
        // cover every block width and tail there).
        if !cfg!(miri) {
            check_quantized_affine::<200, 72>(&mut rng, signed);
        }
    }
}
