//! nn.bin export/import and the integer engine.
//!
//! - The format: hashes derived here again from YaneuraOu's published formulas (and, for
//!   HalfKP 256x2-32-32, equal to the values other NNUE readers hard-code), the header,
//!   every region's offset and the file size (64,217,077 bytes), read back byte by byte.
//! - The round trip: quantise → write → read → dequantise → quantise gives the same
//!   integers and the same bytes.
//! - Quantisation error: every dequantised value is within half a step of the original,
//!   and the float evaluation of the imported net is within the bound those half steps
//!   give at each position (propagated through the layers).
//! - The integer engine equals the integer arithmetic written plainly here (full recompute,
//!   wide integers) bit for bit, incrementally along random games, at every integer level
//!   this CPU runs — including on an imported file and on weights large enough to wrap the
//!   16-bit accumulators and saturate every clamp.
//! - Refusals: every truncation, a foreign version or architecture, damaged hashes,
//!   trailing bytes, unrepresentable shapes — each an error naming the byte offset or the
//!   blocking property; no input panics.

use super::arch::{affine_hash, clipped_relu_hash, input_slice_hash, padded};
use super::bounds::{float_forward, half_step, integer_rounding_bound, quantisation_bound};
use super::*;
use crate::eval::Leaf;
use crate::network::Network;
use crate::random::SplitMix64;
use crate::reference::ReferenceNet;
use crate::reference::compare::random_game;
use crate::shogi::Position;
use crate::tokens;
use crate::weights::init;
use manaka_kernels::cpu::int::IntSimd;
use manaka_shapes::Shape;
use std::sync::{Arc, OnceLock};

/// Uniform in `0..n`, from the data module's seeded generator.
fn below(rng: &mut SplitMix64, n: usize) -> usize {
    rng.below(n as u64) as usize
}

const HALFKP: &str = "pair0_d256_o1_h32_h232_halfkp_nnue";
const KP: &str = "pair0_d256_o1_h32_h232_kp_nnue";

/// Random weights of a shape, shared between tests (the HalfKP table is 128 MB of f32).
struct Fixture {
    float: Arc<crate::weights::WeightSet>,
    ints: IntWeights,
    bytes: Vec<u8>,
}

fn fixture(name: &'static str) -> &'static Fixture {
    static HALFKP_F: OnceLock<Fixture> = OnceLock::new();
    static KP_F: OnceLock<Fixture> = OnceLock::new();
    let cell = if name == HALFKP { &HALFKP_F } else { &KP_F };
    cell.get_or_init(|| {
        let shape = Shape::parse(name).unwrap();
        let float = init::random_weights(&shape, 11);
        let (ints, saturated) = IntWeights::quantise(&float).unwrap();
        assert!(
            saturated.is_empty(),
            "init's weights fit the integer types: {saturated:?}"
        );
        let mut bytes = Vec::new();
        file::write_to(&mut bytes, &ints).unwrap();
        Fixture {
            float: Arc::new(float),
            ints,
            bytes,
        }
    })
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

// ---------------------------------------------------------------------------------------
// The format

/// The hash formulas of YaneuraOu's `source/eval/nnue/` written out again, in u64 with an
/// explicit mask instead of wrapping u32 arithmetic.
mod published {
    const M: u64 = 0xFFFF_FFFF;
    pub fn affine(out: u64, prev: u64) -> u64 {
        ((0xCC03_DAE4 + out) & M) ^ (prev >> 1) ^ ((prev << 31) & M)
    }
    pub fn crelu(prev: u64) -> u64 {
        (0x538D_24C7 + prev) & M
    }
    pub fn network(d: u64, h1: u64, h2: u64) -> u64 {
        let slice = 0xEC42_E90D ^ (2 * d);
        affine(1, crelu(affine(h2, crelu(affine(h1, slice)))))
    }
    pub const HALF_KP_FRIEND: u64 = 0x5D69_D5B9 ^ 1;
    pub fn k_plus_p() -> u64 {
        let (k, p) = (0xD3CE_E169u64, 0x764C_FB4Bu64);
        k ^ ((p << 1) & M) ^ (p >> 31)
    }
}

#[test]
fn hashes_follow_the_published_formulas() {
    for arch in arch::SHIPPED {
        let features = match arch.features {
            FeatureSet::HalfKp => published::HALF_KP_FRIEND,
            FeatureSet::Kp => published::k_plus_p(),
        };
        let ft = features ^ (2 * arch.d as u64);
        let net = published::network(arch.d as u64, arch.h1 as u64, arch.h2 as u64);
        assert_eq!(u64::from(arch.feature_transformer_hash()), ft, "{arch}");
        assert_eq!(u64::from(arch.network_hash()), net, "{arch}");
        assert_eq!(u64::from(arch.hash()), ft ^ net, "{arch}");
        assert_eq!(Architecture::from_hash(arch.hash()), Some(arch));
    }
    // The HalfKP(Friend) 256x2-32-32 stack is Stockfish 12's too (same feature hash, same
    // layers), whose hashes NNUE readers hard-code: 0x3E5AA6EE for the file, 0x5D69D7B8 for
    // the transformer, 0x63337156 for the network (e.g. CFish's `verify_net`).
    let halfkp = Architecture::of_shape(&Shape::parse(HALFKP).unwrap()).unwrap();
    assert_eq!(halfkp.hash(), 0x3E5A_A6EE);
    assert_eq!(halfkp.feature_transformer_hash(), 0x5D69_D7B8);
    assert_eq!(halfkp.network_hash(), 0x6333_7156);
    // The pieces, against hand-computed values.
    assert_eq!(input_slice_hash(512, 0), 0xEC42_E90D ^ 512);
    assert_eq!(input_slice_hash(512, 32), 0xEC42_E90D ^ (512 ^ (32 << 10)));
    assert_eq!(clipped_relu_hash(0xFFFF_FFFF), 0x538D_24C6);
    assert_eq!(affine_hash(1, 1), 0xCC03_DAE5 ^ 0x8000_0000);
    // The shipped set has distinct hashes, so a hash names one architecture.
    let mut hashes: Vec<u32> = arch::SHIPPED.iter().map(Architecture::hash).collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), arch::SHIPPED.len());
}

#[test]
fn halfkp_file_layout_and_size() {
    let f = fixture(HALFKP);
    let b = &f.bytes;
    // 64,217,077 bytes: the size of YaneuraOu's halfkp_256x2-32-32 nn.bin.
    assert_eq!(b.len(), 64_217_077);
    let string = "Features=HalfKP(Friend)[125388->256x2],Network=AffineTransform[1<-32](ClippedReLU[32](\
                  AffineTransform[32<-32](ClippedReLU[32](AffineTransformSparseInput[32<-512](InputSlice[512(0:512)])))))";
    assert_eq!(string.len(), 189);
    assert_eq!(u32_at(b, 0), 0x7AF3_2F16, "version");
    assert_eq!(u32_at(b, 4), 0x3E5A_A6EE, "architecture hash");
    assert_eq!(u32_at(b, 8), 189, "string length");
    assert_eq!(&b[12..201], string.as_bytes());
    assert_eq!(u32_at(b, 201), 0x5D69_D7B8, "feature transformer hash");
    let ft = 205;
    let (d, t) = (256, 125_388);
    let i16_at = |at: usize| i16::from_le_bytes([b[at], b[at + 1]]);
    for c in [0, 1, 255] {
        assert_eq!(i16_at(ft + 2 * c), f.ints.ft_biases[c]);
    }
    // Feature-major rows of d int16: feature z, channel c at ft + 2d + 2(z·d + c).
    for (z, c) in [(0, 0), (1, 7), (77_777, 200), (t - 1, d - 1)] {
        assert_eq!(
            i16_at(ft + 2 * d + 2 * (z * d + c)),
            f.ints.ft_weights[z * d + c]
        );
        let want =
            (f64::from(f.float.tensor("embed").unwrap()[z * d + c]) * 127.0 + 0.5).floor() as i16;
        assert_eq!(f.ints.ft_weights[z * d + c], want);
    }
    let net = ft + 2 * d + 2 * d * t;
    assert_eq!(net, 64_199_373);
    assert_eq!(u32_at(b, net), 0x6333_7156, "network hash");
    // Layer 1: 32 int32 biases, then 32 rows of 512 int8 (512 is already a multiple of 32).
    let l1 = net + 4;
    let w1 = f.float.tensor("w1").unwrap();
    assert_eq!(
        i32::from_le_bytes(b[l1..l1 + 4].try_into().unwrap()),
        f.ints.hidden[0].biases[0]
    );
    for (o, i) in [(0, 0), (3, 300), (31, 511)] {
        let q = b[l1 + 4 * 32 + o * 512 + i] as i8;
        assert_eq!(q, (f64::from(w1[o * 512 + i]) * 64.0 + 0.5).floor() as i8);
    }
    let l2 = l1 + 4 * 32 + 32 * 512;
    let w2 = f.float.tensor("w2").unwrap();
    assert_eq!(
        b[l2 + 4 * 32 + 5 * 32 + 6] as i8,
        (f64::from(w2[5 * 32 + 6]) * 64.0 + 0.5).floor() as i8
    );
    let out = l2 + 4 * 32 + 32 * 32;
    let vb = f.float.tensor("value.b").unwrap()[0];
    assert_eq!(
        i32::from_le_bytes(b[out..out + 4].try_into().unwrap()),
        (f64::from(vb) * 9600.0 + 0.5).floor() as i32
    );
    let vw = f.float.tensor("value.w").unwrap();
    assert_eq!(
        b[out + 4 + 9] as i8,
        (f64::from(vw[9]) * 9600.0 / 127.0 + 0.5).floor() as i8
    );
    assert_eq!(
        out + 4 + 32,
        b.len(),
        "the output layer's 32 weights end the file"
    );
    // offset_of agrees with the hand-computed offsets above.
    let arch = Architecture::of_shape(&f.ints.shape).unwrap();
    assert_eq!(
        file::offset_of(&arch, 189, "embed", 7),
        (ft + 2 * d + 14) as u64
    );
    assert_eq!(
        file::offset_of(&arch, 189, "w1", 3 * 512 + 300),
        (l1 + 128 + 3 * 512 + 300) as u64
    );
    assert_eq!(file::offset_of(&arch, 189, "value.b", 0), out as u64);
}

#[test]
fn kp_file_layout_and_padding() {
    let f = fixture(KP);
    let b = &f.bytes;
    let string = "Features=K+P[1710->256x2],Network=AffineTransform[1<-32](ClippedReLU[32](AffineTransform[32<-32](\
                  ClippedReLU[32](AffineTransformSparseInput[32<-512](InputSlice[512(0:512)])))))";
    assert_eq!(u32_at(b, 8) as usize, string.len());
    assert_eq!(&b[12..12 + string.len()], string.as_bytes());
    let ft = 12 + string.len() + 4;
    assert_eq!(u64::from(u32_at(b, ft - 4)), published::k_plus_p() ^ 512);
    assert_eq!(
        b.len(),
        12 + string.len()
            + 4
            + 512
            + 1710 * 512
            + 4
            + (128 + 32 * 512)
            + (128 + 32 * 32)
            + (4 + 32)
    );
    // Padding: a layer with 8 inputs has rows of 32 bytes, 24 of them zero.
    let shape = Shape::parse("pair0_d1024_o1_h8_h232_halfkp_nnue").unwrap();
    let arch = Architecture::of_shape(&shape).unwrap();
    assert_eq!(arch.layers()[1].file_bytes(), 4 * 32 + 32 * 32);
    assert_eq!(padded(8), 32);
    assert_eq!(padded(512), 512);
    assert_eq!(padded(33), 64);
}

#[test]
fn padding_is_written_as_zeros_and_dropped_on_read() {
    // halfkp_1024x2-8-32: the second layer reads 8 inputs from rows of 32 bytes. A small
    // stand-in with the same layers keeps the test fast: build the integers by hand.
    let shape = Shape::parse("pair0_d1024_o1_h8_h232_halfkp_nnue").unwrap();
    let arch = Architecture::of_shape(&shape).unwrap();
    let mut rng = SplitMix64::new(3);
    let mut layer = |inputs: usize, outputs: usize| quant::IntLayer {
        inputs,
        outputs,
        biases: (0..outputs).map(|_| rng.next_u64() as i32 >> 12).collect(),
        weights: (0..inputs * outputs)
            .map(|_| rng.next_u64() as i8)
            .collect(),
    };
    let hidden = vec![layer(2048, 8), layer(8, 32)];
    let output = layer(32, 1);
    let ints = IntWeights {
        shape,
        ft_biases: vec![5; 1024],
        ft_weights: vec![-3; 1024 * 125_388],
        hidden,
        output,
    };
    let mut bytes = Vec::new();
    file::write_to(&mut bytes, &ints).unwrap();
    assert_eq!(bytes.len(), arch.file_len(arch.string().len()));
    let l2 = file::offset_of(&arch, arch.string().len(), "b2", 0) as usize;
    let row = |o: usize| &bytes[l2 + 4 * 32 + 32 * o..l2 + 4 * 32 + 32 * (o + 1)];
    for o in 0..32 {
        assert!(row(o)[8..].iter().all(|&v| v == 0), "padding of row {o}");
        assert_eq!(row(o)[3] as i8, ints.hidden[1].weights[o * 8 + 3]);
    }
    // Non-zero padding (another writer's) is ignored: it never meets an input.
    bytes[l2 + 4 * 32 + 20] = 99;
    let back = file::decode(&bytes).unwrap();
    assert_eq!(back.weights, ints);
}

// ---------------------------------------------------------------------------------------
// Round trip and quantisation error

#[test]
fn round_trip_is_exact() {
    for name in [HALFKP, KP] {
        let f = fixture(name);
        let imported = import_bytes(&f.bytes).unwrap();
        assert_eq!(
            imported.file.weights, f.ints,
            "{name}: read back the written integers"
        );
        assert_eq!(imported.file.architecture.shape().to_string(), name);
        // Dequantised floats quantise back to the same integers, and so to the same bytes.
        let (again, saturated) = IntWeights::quantise(&imported.weights).unwrap();
        assert!(saturated.is_empty());
        assert_eq!(again, f.ints, "{name}: integers after f32 and back");
        let mut bytes = Vec::new();
        file::write_to(&mut bytes, &again).unwrap();
        assert!(bytes == f.bytes, "{name}: bytes after a second export");
        // Imported policies are zero.
        for t in ["policy.w", "policy.b", "policy.from"] {
            assert!(
                imported
                    .weights
                    .tensor(t)
                    .unwrap()
                    .iter()
                    .all(|&v| v == 0.0),
                "{t}"
            );
        }
    }
}

#[test]
fn export_and_import_through_files() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture(KP);
    let path = dir.path().join("nn.bin");
    let report = export(f.float.as_ref(), &path, Saturation::Refuse).unwrap();
    assert_eq!(report.architecture.name(), "kp_256x2-32-32");
    assert_eq!(report.bytes, f.bytes.len() as u64);
    assert_eq!(report.dropped, ["policy.w", "policy.b", "policy.from"]);
    assert!(std::fs::read(&path).unwrap() == f.bytes);
    assert_eq!(import(&path).unwrap().file.weights, f.ints);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["nn.bin"], "no temporary file is left behind");
}

#[test]
fn float_limits_are_the_integer_ranges_over_the_scales() {
    let kp = Shape::parse(KP).unwrap();
    let limit = |t: &str| quant::float_limit(&kp, t).unwrap();
    // By hand: int8 weights within ±127 steps, int16 and int32 within their type.
    let by_hand = [
        ("value.w", 127.0 * 127.0 / 9600.0, 1.680),
        ("w1", 127.0 / 64.0, 1.984),
        ("w2", 127.0 / 64.0, 1.984),
        ("embed", 32767.0 / 127.0, 258.0),
        ("embed.bias", 32767.0 / 127.0, 258.0),
        ("b1", 2147483647.0 / 8128.0, 264208.1),
        ("b2", 2147483647.0 / 8128.0, 264208.1),
        ("value.b", 2147483647.0 / 9600.0, 223696.2),
    ];
    for (t, exact, rounded) in by_hand {
        // N/s rounded down to an f32.
        assert!(
            limit(t) <= exact && exact - limit(t) < 1.2e-7 * exact,
            "{t}: {}",
            limit(t)
        );
        assert_eq!(f64::from(limit(t) as f32), limit(t));
        assert!((limit(t) - rounded).abs() < 0.06, "{t}: {}", limit(t));
    }
    for t in ["policy.w", "policy.b", "policy.from", "pair"] {
        assert_eq!(quant::float_limit(&kp, t), None, "{t}: not in an nn.bin");
    }
    let native = Shape::parse("pair4_d16_o2_h32").unwrap();
    assert_eq!(quant::float_limit(&native, "w1"), None, "not an nnue shape");
    // Weights exactly at ±limit (as f32) quantise to the last step, without saturating;
    // one step beyond +limit saturates.
    let mut at = init::random_weights(&kp, 3);
    for (t, _, _) in by_hand {
        let l = limit(t) as f32;
        let v = at.tensor_mut(t).unwrap();
        v[0] = l;
        if v.len() > 1 {
            v[1] = -l;
        }
    }
    let (ints, saturated) = IntWeights::quantise(&at).unwrap();
    assert!(saturated.is_empty(), "{saturated:?}");
    assert_eq!(ints.output.weights[0], 127);
    assert_eq!(ints.output.weights[1], -127);
    assert_eq!(
        (ints.hidden[0].weights[0], ints.hidden[0].weights[1]),
        (127, -127)
    );
    assert_eq!((ints.ft_weights[0], ints.ft_weights[1]), (32767, -32767));
    // The int32 biases: at most i32::MAX (the limit is rounded down to an f32).
    let b = ints.hidden[1].biases[0];
    assert!(b > i32::MAX - 300, "{b}");
    for (t, _, _) in by_hand {
        let mut beyond = at.clone();
        let l = limit(t);
        // One and a half steps past the last one (int8, int16); 1 % past for the int32
        // biases, whose f32 values near 2^18 are 1/32 apart (254 steps).
        let past = if t.starts_with('b') || t == "value.b" {
            l * 1.01
        } else {
            l + 1.5 * l / limit_steps(t)
        };
        beyond.tensor_mut(t).unwrap()[0] = past as f32;
        let (_, saturated) = IntWeights::quantise(&beyond).unwrap();
        assert_eq!(saturated.len(), 1, "{t}: {saturated:?}");
        assert_eq!((saturated[0].tensor, saturated[0].count), (t, 1));
        assert_eq!(saturated[0].worst, past as f32);
        assert_eq!(saturated[0].limit, l);
    }
}

/// The integer steps each float limit stands for.
fn limit_steps(t: &str) -> f64 {
    match t {
        "embed" | "embed.bias" => 32767.0,
        _ => 127.0,
    }
}

#[test]
fn imported_floats_are_within_quantisation_error() {
    let f = fixture(HALFKP);
    let imported = Arc::new(import_bytes(&f.bytes).unwrap().weights);
    // Every value within half a step (so nothing saturated and nothing was misplaced).
    for name in [
        "embed",
        "embed.bias",
        "w1",
        "b1",
        "w2",
        "b2",
        "value.w",
        "value.b",
    ] {
        let (a, b) = (
            f.float.tensor(name).unwrap(),
            imported.tensor(name).unwrap(),
        );
        let worst = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| (f64::from(x) - f64::from(y)).abs())
            .fold(0.0, f64::max);
        // f32 rounding of the dequantised value adds at most a few ulps.
        assert!(
            worst <= half_step(name) * (1.0 + 1e-5) + 1e-7,
            "{name}: {worst} > {}",
            half_step(name)
        );
    }
    let reference = ReferenceNet::new(imported.clone()).unwrap();
    let mut rng = SplitMix64::new(17);
    let (mut worst_cp, mut worst_bound_cp, mut count) = (0.0f64, 0.0f64, 0);
    for _ in 0..6 {
        random_game(&Position::startpos(), 80, &mut rng, |s| {
            let (pos, moves) = (s.position, s.moves);
            if moves.is_empty() {
                return;
            }
            let (_, l) = float_forward(f.float.as_ref(), pos);
            let (acts_hat, l_hat) = float_forward(imported.as_ref(), pos);
            // The forward pass here is SPEC §6: it equals the reference evaluator.
            let want = reference.evaluate_position(pos, moves).value_logit;
            assert!(
                (l_hat - want).abs() < 1e-9,
                "test forward {l_hat} vs reference {want}"
            );
            let bound = quantisation_bound(f.float.as_ref(), &acts_hat, pos);
            assert!(
                (l - l_hat).abs() <= bound + 1e-9,
                "|{l} − {l_hat}| > {bound} at {}",
                pos.to_sfen()
            );
            worst_cp = worst_cp.max(600.0 * (l - l_hat).abs());
            worst_bound_cp = worst_bound_cp.max(600.0 * bound);
            count += 1;
        });
    }
    eprintln!(
        "float original vs imported over {count} positions: max |Δcp| {worst_cp:.2}, bound up to {worst_bound_cp:.1} cp"
    );
}

// ---------------------------------------------------------------------------------------
// The integer engine

/// YaneuraOu's integer arithmetic written plainly: full recompute, i64 sums reduced to the
/// machine widths where YaneuraOu's registers wrap (16-bit accumulators, 32-bit sums).
fn integer_oracle(ints: &IntWeights, pos: &Position) -> i32 {
    let d = ints.shape.d as usize;
    let stm = pos.side_to_move();
    let mut x: Vec<i64> = Vec::new();
    for c in [stm, stm.flip()] {
        let mut acc: Vec<i64> = ints.ft_biases.iter().map(|&v| i64::from(v)).collect();
        for &z in tokens::active_tokens(ints.shape.features, pos, c).as_slice() {
            for (a, &e) in acc.iter_mut().zip(&ints.ft_weights[z as usize * d..]) {
                *a += i64::from(e);
            }
        }
        x.extend(acc.iter().map(|&a| i64::from(a as i16).clamp(0, 127)));
    }
    let affine = |l: &quant::IntLayer, x: &[i64]| -> Vec<i32> {
        (0..l.outputs)
            .map(|o| {
                (i64::from(l.biases[o])
                    + (0..l.inputs)
                        .map(|i| i64::from(l.weights[o * l.inputs + i]) * x[i])
                        .sum::<i64>()) as i32
            })
            .collect()
    };
    for l in &ints.hidden {
        // `>> 6` on a signed integer floors (−1 >> 6 = −1), as C++'s does on two's
        // complement.
        x = affine(l, &x)
            .iter()
            .map(|&y| i64::from(y.div_euclid(64)).clamp(0, 127))
            .collect();
    }
    affine(&ints.output, &x)[0]
}

/// Plays random games, checking every integer level of `make`'s engine against the oracle
/// (value bits, accumulators between levels) after every incremental update.
fn check_games<N, const D: usize>(
    make: impl Fn(IntSimd) -> N,
    ints: &IntWeights,
    starts: &[&str],
    games: usize,
    plies: usize,
) where
    N: Network<State = IntState<D>>,
    N: IntForward<D>,
{
    let levels: Vec<N> = IntSimd::available().into_iter().map(&make).collect();
    let mut rng = SplitMix64::new(0x5eed ^ games as u64);
    for g in 0..games {
        let start = Position::from_sfen(starts[g % starts.len()]).unwrap();
        let mut states: Vec<IntState<D>> = levels.iter().map(|n| n.new_state(&start)).collect();
        random_game(&start, plies, &mut rng, |s| {
            let (pos, moves) = (s.position, s.moves);
            if let Some(effect) = s.effect {
                for (net, state) in levels.iter().zip(states.iter_mut()) {
                    net.update(state, effect, pos);
                }
            }
            let want = integer_oracle(ints, pos);
            for (net, state) in levels.iter().zip(&states) {
                let got = net.raw(state, pos);
                assert_eq!(got, want, "{}: output at {}", net.describe(), pos.to_sfen());
                assert_eq!(
                    state.acc,
                    states[0].acc,
                    "{}: accumulators at {}",
                    net.describe(),
                    pos.to_sfen()
                );
                let e = net.evaluate(
                    state,
                    Leaf {
                        position: pos,
                        moves,
                    },
                );
                assert_eq!(e.value_logit, ((want / 16) as f64 / 600.0) as f32);
                assert_eq!(e.policy_logits.len(), moves.len());
            }
        });
    }
}

/// The integer engine's raw output, for [`check_games`] over engines of any constants.
trait IntForward<const D: usize> {
    fn raw(&self, state: &IntState<D>, pos: &Position) -> i32;
}

impl<const D: usize, const IN: usize, const H: usize, const H2: usize, const HL: usize>
    IntForward<D> for IntNet<D, IN, H, H2, HL>
{
    fn raw(&self, state: &IntState<D>, pos: &Position) -> i32 {
        self.forward(state, pos).0
    }
}

/// Start positions: the initial position, a two-piece handicap (missing pieces stay at
/// BonaPiece 0, twice over), bare kings with every other piece in hand, and an opening.
const STARTS: &[&str] = &[
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
    "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
    "4k4/9/9/9/9/9/9/9/4K4 b RBGSNLPrb3g3s3n3l17p 1",
    "lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL b - 3",
];

#[test]
fn integer_engine_equals_the_integer_arithmetic_on_random_nets() {
    // The real shapes, then small ones with tails at every width (2d = 80 and h = 20 are
    // not multiples of any vector; no second layer).
    let f = fixture(HALFKP);
    check_games(
        |s| IntNet::<256, 512, 32, 32, 32>::with_simd(HALFKP, f.float.as_ref(), s).unwrap(),
        &f.ints,
        STARTS,
        8,
        90,
    );
    let f = fixture(KP);
    check_games(
        |s| IntNet::<256, 512, 32, 32, 32>::with_simd(KP, f.float.as_ref(), s).unwrap(),
        &f.ints,
        STARTS,
        8,
        90,
    );
    for (name, seed) in [
        ("pair0_d40_o1_h20_h227_kp_nnue", 5),
        ("pair0_d16_o1_h8_halfkp_nnue", 6),
    ] {
        let shape = Shape::parse(name).unwrap();
        let float = init::random_weights(&shape, seed);
        let (ints, _) = IntWeights::quantise(&float).unwrap();
        if shape.h2.is_some() {
            check_games(
                |s| IntNet::<40, 80, 20, 27, 27>::with_simd(name, &float, s).unwrap(),
                &ints,
                STARTS,
                12,
                120,
            );
        } else {
            check_games(
                |s| IntNet::<16, 32, 8, 0, 8>::with_simd(name, &float, s).unwrap(),
                &ints,
                STARTS,
                12,
                120,
            );
        }
    }
}

#[test]
fn integer_engine_wraps_and_saturates_like_the_arithmetic() {
    // Weights far beyond a trained net's: accumulators wrap around ±32768, every clip and
    // clipped ReLU saturates on both sides, 32-bit sums meet huge biases.
    let name = "pair0_d48_o1_h32_h232_halfkp_nnue";
    let shape = Shape::parse(name).unwrap();
    let mut float = init::random_weights(&shape, 9);
    for (t, scale) in [
        ("embed", 2000.0f32),
        ("embed.bias", 3000.0),
        ("w1", 40.0),
        ("w2", 40.0),
        ("b1", 5000.0),
        ("value.w", 20.0),
    ] {
        float
            .tensor_mut(t)
            .unwrap()
            .iter_mut()
            .for_each(|v| *v *= scale);
    }
    let (ints, saturated) = IntWeights::quantise(&float).unwrap();
    assert!(
        !saturated.is_empty(),
        "the stress weights saturate the integer types"
    );
    let wraps = ints
        .ft_weights
        .iter()
        .filter(|&&w| w.unsigned_abs() > 8000)
        .count();
    assert!(wraps > 1000, "large enough for 38-row sums to wrap");
    check_games(
        |s| IntNet::<48, 96, 32, 32, 32>::with_simd(name, &float, s).unwrap(),
        &ints,
        STARTS,
        6,
        100,
    );
}

#[test]
fn integer_engine_on_an_imported_file_is_the_files_arithmetic() {
    // The integers the engine quantises from the imported floats are the file's: its
    // evaluation is the file's integer arithmetic (the oracle reads the decoded file).
    let f = fixture(HALFKP);
    let imported = import_bytes(&f.bytes).unwrap();
    let file_ints = &imported.file.weights;
    let engine =
        |s| IntNet::<256, 512, 32, 32, 32>::with_simd(HALFKP, &imported.weights, s).unwrap();
    check_games(engine, file_ints, STARTS, 4, 80);
    // And it is within the integer rounding of the float engine on the same weights.
    let net =
        IntNet::<256, 512, 32, 32, 32>::with_simd(HALFKP, &imported.weights, IntSimd::detect())
            .unwrap();
    let mut rng = SplitMix64::new(23);
    let mut worst = 0.0f64;
    random_game(&Position::startpos(), 150, &mut rng, |s| {
        let pos = s.position;
        if s.moves.is_empty() {
            return;
        }
        let state = net.new_state(pos);
        let v = net.value(&state, pos);
        let (acts, l) = float_forward(&imported.weights, pos);
        let bound = integer_rounding_bound(&imported.weights);
        let diff = (f64::from(v) / 600.0 - l).abs();
        assert!(
            diff <= bound + 1e-9,
            "integer {v} vs float {} (bound {bound}) at {}",
            600.0 * l,
            pos.to_sfen()
        );
        assert_eq!(acts.len(), 3);
        worst = worst.max(600.0 * diff);
    });
    eprintln!("integer vs float on the imported net: max |Δcp| {worst:.2}");
}

#[test]
fn integer_engine_refuses_other_shapes_and_constants() {
    let f = fixture(KP);
    let e = IntNet::<256, 512, 32, 32, 32>::with_simd(HALFKP, f.float.as_ref(), IntSimd::detect())
        .err()
        .unwrap();
    assert!(matches!(e, NnueError::ShapeMismatch { .. }), "{e}");
    let e = IntNet::<256, 512, 16, 32, 32>::with_simd(KP, f.float.as_ref(), IntSimd::detect())
        .err()
        .unwrap();
    assert!(matches!(e, NnueError::Dims { .. }), "{e}");
    let native = Shape::parse("pair0_d16_o1_h8").unwrap();
    let w = init::random_weights(&native, 1);
    let e = IntNet::<16, 32, 8, 0, 8>::with_simd("pair0_d16_o1_h8", &w, IntSimd::detect())
        .err()
        .unwrap();
    assert!(e.to_string().contains("nnue"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Refusals

#[test]
fn unrepresentable_shapes_name_the_blocking_property() {
    let cases = [
        ("pair16_d128_o3_h512", "`nnue`"),
        ("pair0_d256_o1_h32_h232_halfkp", "`nnue`"),
        ("pair0_d16_o1_h8_halfkp_nnue", "two"),
        (
            "pair0_d128_o1_h32_h232_halfkp_nnue",
            "halfkp_128x2-32-32 is not an architecture YaneuraOu ships",
        ),
        ("pair0_d512_o1_h16_h232_kp_nnue", "kp_512x2-16-32"),
    ];
    for (name, needle) in cases {
        let shape = Shape::parse(name).unwrap();
        let src = init::random_weights(&shape, 1);
        let dir = tempfile::tempdir().unwrap();
        let e = export(&src, &dir.path().join("nn.bin"), Saturation::Refuse)
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(matches!(e, NnueError::NotExportable { .. }), "{msg}");
        assert!(msg.contains(needle) && msg.contains(name), "{name}: {msg}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "nothing written"
        );
    }
    // Native tokens cannot be `nnue` (the grammar refuses it), so that check is reached
    // only by a hand-made shape.
    let mut native = Shape::parse("pair0_d256_o1_h32_h232_halfkp_nnue").unwrap();
    native.features = manaka_shapes::FeatureSpace::Native;
    assert_eq!(
        Architecture::of_shape(&native),
        Err(Unrepresentable::NativeTokens)
    );
    for arch in arch::SHIPPED {
        assert_eq!(Architecture::of_shape(&arch.shape()), Ok(arch));
    }
}

fn expect_err(bytes: &[u8]) -> NnueError {
    match import_bytes(bytes) {
        Ok(_) => panic!("accepted {} bytes", bytes.len()),
        Err(e) => e,
    }
}

#[test]
fn damaged_files_are_refused_with_offsets() {
    let f = fixture(KP);
    let b = &f.bytes;
    let len = u32_at(b, 8) as usize;
    let ft = 12 + len;
    let net = ft + 4 + 512 + 1710 * 512;
    // Truncated anywhere: the error names what was being read and where it starts.
    let cuts = [
        (0, "the version", 0),
        (2, "the version", 0),
        (6, "the architecture hash", 4),
        (11, "string's length", 8),
        (40, "architecture string", 12),
        (ft + 1, "feature transformer hash", ft),
        (ft + 100, "feature transformer biases", ft + 4),
        (
            ft + 4 + 512 + 999,
            "feature transformer weights",
            ft + 4 + 512,
        ),
        (net + 2, "network hash", net),
        (net + 4 + 64, "first hidden layer's biases", net + 4),
        (
            net + 4 + 128 + 500,
            "first hidden layer's weights",
            net + 4 + 128,
        ),
        (b.len() - 1, "output layer's weights", b.len() - 32),
    ];
    for (cut, what, offset) in cuts {
        match expect_err(&b[..cut]) {
            NnueError::Truncated {
                what: w,
                offset: o,
                len: l,
                ..
            } => {
                assert!(w.contains(what), "cut at {cut}: {w}");
                assert_eq!((o, l), (offset as u64, cut as u64), "cut at {cut}: {w}");
            }
            e => panic!("cut at {cut}: {e}"),
        }
    }
    let mut bad = b.clone();
    bad[0] ^= 1;
    assert!(matches!(
        expect_err(&bad),
        NnueError::Version {
            found: 0x7AF3_2F17,
            ..
        }
    ));
    let mut bad = b.clone();
    bad[4..8].copy_from_slice(&0x1234_5678u32.to_le_bytes());
    let e = expect_err(&bad);
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            NnueError::UnknownArchitecture {
                hash: 0x1234_5678,
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("halfkp_256x2-32-32 (0x3e5aa6ee)") && msg.contains("K+P[1710->256x2]"),
        "{msg}"
    );
    let mut bad = b.clone();
    bad[ft + 1] ^= 0x40;
    match expect_err(&bad) {
        NnueError::LayerHash { what, offset, .. } => {
            assert_eq!((what, offset), ("feature transformer", ft as u64))
        }
        e => panic!("{e}"),
    }
    let mut bad = b.clone();
    bad[net] ^= 0x01;
    match expect_err(&bad) {
        NnueError::LayerHash { what, offset, .. } => {
            assert_eq!((what, offset), ("network", net as u64))
        }
        e => panic!("{e}"),
    }
    let mut long = b.clone();
    long.extend_from_slice(&[0; 7]);
    match expect_err(&long) {
        NnueError::TrailingBytes { offset, extra, .. } => {
            assert_eq!((offset, extra), (b.len() as u64, 7))
        }
        e => panic!("{e}"),
    }
    // An architecture string claiming 4 GB is a truncation, not an allocation.
    let mut bad = b.clone();
    bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        expect_err(&bad),
        NnueError::Truncated { offset: 12, .. }
    ));
    // A foreign string with the right hash is accepted (YaneuraOu does not check it):
    // an older YaneuraOu's string, 11 bytes shorter.
    let old = "Features=K+P[1710->256x2],Network=AffineTransform[1<-32](ClippedReLU[32](AffineTransform[32<-32](\
               ClippedReLU[32](AffineTransform[32<-512](InputSlice[512(0:512)])))))";
    let mut older = b[..8].to_vec();
    older.extend_from_slice(&(old.len() as u32).to_le_bytes());
    older.extend_from_slice(old.as_bytes());
    older.extend_from_slice(&b[ft..]);
    let back = import_bytes(&older).unwrap();
    assert_eq!(back.file.string, old);
    assert_eq!(back.file.weights, f.ints);
}

#[test]
fn a_bias_beyond_f32_precision_is_refused_with_its_offset() {
    let f = fixture(KP);
    let mut bytes = f.bytes.clone();
    let arch = Architecture::of_shape(&f.ints.shape).unwrap();
    let at = file::offset_of(&arch, u32_at(&bytes, 8) as usize, "b1", 3) as usize;
    // 2^30 + 1 units of 1/8128: f32 keeps 24 bits, so the +1 is lost on the way.
    bytes[at..at + 4].copy_from_slice(&((1 << 30) + 1i32).to_le_bytes());
    match expect_err(&bytes) {
        NnueError::Inexact {
            tensor,
            index,
            value,
            offset,
        } => {
            assert_eq!(
                (tensor, index, value, offset),
                ("b1", 3, (1 << 30) + 1, at as u64)
            );
        }
        e => panic!("{e}"),
    }
}

#[test]
fn no_input_panics() {
    // Random truncations and byte flips concentrated in the header and the hashes, where
    // the parser branches; every result is Ok or an error, never a panic.
    let f = fixture(KP);
    let b = &f.bytes;
    let ft = 12 + u32_at(b, 8) as usize;
    let mut rng = SplitMix64::new(99);
    for i in 0..400 {
        let mut v = b.clone();
        let hot = [0, 4, 8, ft, b.len() - 200];
        for _ in 0..1 + below(&mut rng, 3) {
            let at = (hot[below(&mut rng, hot.len())] + below(&mut rng, 16)).min(v.len() - 1);
            v[at] = rng.next_u64() as u8;
        }
        let cut = if i % 3 == 0 {
            below(&mut rng, v.len())
        } else {
            v.len()
        };
        let _ = import_bytes(&v[..cut]);
    }
    for n in 0..64 {
        let _ = import_bytes(&b[..n]);
    }
}

#[test]
fn a_source_with_a_short_tensor_is_an_error_not_a_panic() {
    // A TensorSource other than MNW1's reader or WeightSet, whose `w2` is one value short.
    struct Short(crate::weights::WeightSet);
    impl TensorSource for Short {
        fn shape(&self) -> &Shape {
            self.0.shape()
        }
        fn tensor(&self, name: &str) -> Option<&[f32]> {
            let t = self.0.tensor(name)?;
            Some(if name == "w2" { &t[1..] } else { t })
        }
    }
    let name = "pair0_d16_o1_h8_h28_kp_nnue";
    let src = Short(init::random_weights(&Shape::parse(name).unwrap(), 1));
    let e = IntWeights::quantise(&src).err().unwrap();
    assert!(e.to_string().contains("w2"), "{e}");
    let e = IntNet::<16, 32, 8, 8, 8>::with_simd(name, &src, IntSimd::detect())
        .err()
        .unwrap();
    assert!(e.to_string().contains("w2"), "{e}");
}
