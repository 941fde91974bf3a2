//! The fixed-size engine equals the reference evaluator, incrementally along random games,
//! at every SIMD level this CPU runs. (The macro-generated engines of the CLI's compiled-in
//! shapes have the same test in `manaka-cli/tests/`.)

use super::*;
use crate::eval::Leaf;
use crate::reference::ReferenceNet;
use crate::reference::compare::along_random_games;
use crate::weights::{TensorSource, init};
use std::sync::Arc;

// The engines under test, written out as `manaka_net!` would write them (each is checked
// against its shape's `Dims` when built, so a wrong constant here fails loudly).

/// `pair2_d4_o3_h8_h24_m3_f2_lse1_ks_split`: every block, both head layers.
/// INP = 24 (2 groups × 3 orders × 4) + 1 + 1 + 6 + 162 + 10 (ks) = 204.
type Every = Net<
    Native,
    Manaka<Powers<4, 3, 2>, Pairs<2, 1>, Moments<3, 6>, Field<2, 162>, true, 204, 408>,
    Head<Then<Dense<Affine<408, 8>, Relu>, Dense<Affine<8, 4>, Relu>>, Value<4>, Policy<4, 2>>,
>;

/// `pair2_d8_o2_h16_kp`.
type KpSmall = Net<
    Kp,
    Manaka<Powers<8, 2, 1>, Pairs<2, 0>, NoMoments, NoField, false, 18, 36>,
    Head<Dense<Affine<36, 16>, Relu>, Value<16>, Policy<16, 0>>,
>;

/// `pair2_d8_o2_h32_h216_kp`.
type KpTwoLayers = Net<
    Kp,
    Manaka<Powers<8, 2, 1>, Pairs<2, 0>, NoMoments, NoField, false, 18, 36>,
    Head<Then<Dense<Affine<36, 32>, Relu>, Dense<Affine<32, 16>, Relu>>, Value<16>, Policy<16, 0>>,
>;

/// `pair0_d128_o2_h512_kp` (the trained default network's shape).
type Default = Net<
    Kp,
    Manaka<Powers<128, 2, 1>, NoPairs, NoMoments, NoField, false, 256, 512>,
    Head<Dense<Affine<512, 512>, Relu>, Value<512>, Policy<512, 0>>,
>;

/// `pair0_d16_o1_h8_h24_halfkp_nnue`, with the first hidden width `H`.
type NnueSmall<const H: usize> = Net<
    HalfKp,
    Nnue<16, 32>,
    Head<
        Then<Dense<Affine<32, H>, ClippedRelu>, Dense<Affine<H, 4>, ClippedRelu>>,
        Value<4>,
        Policy<4, 0>,
    >,
>;

fn rel_close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * (1.0 + b.abs())
}

fn compare<N: Network>(
    make: impl Fn(Simd) -> N,
    reference: &ReferenceNet,
    games: usize,
    plies: usize,
) {
    for simd in Simd::available() {
        let net = make(simd);
        along_random_games(
            &net,
            reference,
            games,
            plies,
            0x9e37_79b9 ^ games as u64,
            |g| {
                assert!(
                    rel_close(g.engine.value_logit as f64, g.reference.value_logit),
                    "{} {simd}: value {} vs {} at {}",
                    net.describe(),
                    g.engine.value_logit,
                    g.reference.value_logit,
                    g.position.to_sfen()
                );
                for (e, w) in g.engine.policy_logits.iter().zip(&g.reference.policy) {
                    assert!(
                        rel_close(*e as f64, *w),
                        "{simd}: policy {e} vs {w} at {}",
                        g.position.to_sfen()
                    );
                }
            },
        );
    }
}

#[test]
fn every_block_equals_reference() {
    let shape = Shape::parse("pair2_d4_o3_h8_h24_m3_f2_lse1_ks_split").unwrap();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, 5));
    let reference = ReferenceNet::new(src.clone()).unwrap();
    let name = shape.to_string();
    compare(
        |s| Every::with_simd(&name, src.clone(), s).unwrap(),
        &reference,
        6,
        120,
    );
}

#[test]
fn kp_halfkp_and_nnue_equal_reference() {
    let kp = Shape::parse("pair2_d8_o2_h16_kp").unwrap();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&kp, 6));
    let reference = ReferenceNet::new(src.clone()).unwrap();
    let name = kp.to_string();
    compare(
        |s| KpSmall::with_simd(&name, src.clone(), s).unwrap(),
        &reference,
        6,
        120,
    );

    let nnue = Shape::parse("pair0_d16_o1_h8_h24_halfkp_nnue").unwrap();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&nnue, 7));
    let reference = ReferenceNet::new(src.clone()).unwrap();
    let name = nnue.to_string();
    compare(
        |s| NnueSmall::<8>::with_simd(&name, src.clone(), s).unwrap(),
        &reference,
        6,
        120,
    );
}

#[test]
fn wrong_constants_or_shape_are_refused() {
    let shape = Shape::parse("pair0_d16_o1_h8_h24_halfkp_nnue").unwrap();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, 7));
    let e = NnueSmall::<8>::new("pair0_d16_o1_h8_halfkp_nnue", src.clone())
        .err()
        .unwrap();
    assert!(matches!(e, FixedNetError::ShapeMismatch { .. }), "{e}");
    let e = NnueSmall::<9>::new(&shape.to_string(), src).err().unwrap();
    assert!(matches!(e, FixedNetError::Dims { .. }), "{e}");
    assert!(e.to_string().contains("H = 9, expected 8"), "{e}");

    // The decisions the types make are checked too: a KP engine on native weights, a
    // one-layer head on two-layer weights, ReLU where the shape says clip.
    let native = Shape::parse("pair2_d8_o2_h16").unwrap();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&native, 7));
    type NativeAsKp = Net<
        Kp,
        Manaka<Powers<8, 2, 1>, Pairs<2, 0>, NoMoments, NoField, false, 18, 36>,
        Head<Dense<Affine<36, 16>, Relu>, Value<16>, Policy<16, 0>>,
    >;
    let e = NativeAsKp::new(&native.to_string(), src).err().unwrap();
    assert!(e.to_string().contains("features"), "{e}");
    let two = Shape::parse("pair2_d8_o2_h32_h216_kp").unwrap();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&two, 7));
    type OneLayer = Net<
        Kp,
        Manaka<Powers<8, 2, 1>, Pairs<2, 0>, NoMoments, NoField, false, 18, 36>,
        Head<Dense<Affine<36, 32>, Relu>, Value<32>, Policy<32, 0>>,
    >;
    let e = OneLayer::new(&two.to_string(), src).err().unwrap();
    assert!(e.to_string().contains("H2 = 0, expected 16"), "{e}");
    let nnue = Shape::parse("pair0_d16_o1_h8_h24_halfkp_nnue").unwrap();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&nnue, 7));
    type NnueRelu = Net<
        HalfKp,
        Nnue<16, 32>,
        Head<Then<Dense<Affine<32, 8>, Relu>, Dense<Affine<8, 4>, Relu>>, Value<4>, Policy<4, 0>>,
    >;
    let e = NnueRelu::new(&nnue.to_string(), src).err().unwrap();
    assert!(e.to_string().contains("nnue"), "{e}");
}

/// A batch evaluated into an `out` that held other, longer answers reuses it and gives the
/// same results as a fresh one; a move with no piece at its origin (no move of the position)
/// gets what the reference gives it (no `policy.from` term), at every level.
#[test]
fn reused_output_and_a_move_from_an_empty_square_equal_reference() {
    let shape = Shape::parse("pair2_d8_o2_h16_kp").unwrap();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, 8));
    let reference = ReferenceNet::new(src.clone()).unwrap();
    let pos = Position::startpos();
    let sq = |s| crate::shogi::Square::from_usi(s).unwrap();
    let mut moves = pos.legal_moves();
    moves.push(crate::shogi::Move::normal(sq("5e"), sq("5d"), false));
    let want = reference.evaluate_position(&pos, &moves);
    for simd in Simd::available() {
        let net = KpSmall::with_simd(&shape.to_string(), src.clone(), simd).unwrap();
        let state = net.new_state(&pos);
        let leaf = |moves| StateLeaf {
            state: &state,
            leaf: Leaf {
                position: &pos,
                moves,
            },
        };
        let mut out = Vec::new();
        // Three answers of 31 moves, then one of 30, then one of 31: the first is reused.
        net.evaluate_batch(&[leaf(&moves), leaf(&moves), leaf(&moves)], &mut out);
        net.evaluate_batch(&[leaf(&moves[..moves.len() - 1])], &mut out);
        net.evaluate_batch(&[leaf(&moves)], &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].policy_logits.len(), moves.len());
        assert!(rel_close(out[0].value_logit as f64, want.value_logit));
        for (g, w) in out[0].policy_logits.iter().zip(&want.policy) {
            assert!(rel_close(*g as f64, *w), "{simd}: policy {g} vs {w}");
        }
    }
}

/// The largest absolute error of the value logit and of any policy logit against the
/// reference, over the positions of random games.
fn precision_errors<N: Network>(
    net: &N,
    reference: &ReferenceNet,
    games: usize,
    plies: usize,
) -> (f64, f64) {
    let (mut value, mut policy) = (0.0f64, 0.0f64);
    along_random_games(net, reference, games, plies, 0x5eed ^ games as u64, |g| {
        value = value.max((g.engine.value_logit as f64 - g.reference.value_logit).abs());
        for (e, w) in g.engine.policy_logits.iter().zip(&g.reference.policy) {
            policy = policy.max((*e as f64 - w).abs());
        }
    });
    (value, policy)
}

/// Each precision stays within its documented bound of the reference (docs/evaluator.md,
/// "Precision") on random weights of a two-layer shape and on the trained default network,
/// at every level; f32 stays at rounding level.
#[test]
fn each_precision_is_within_its_bound_of_the_reference() {
    // (precision, bound on |Δ value logit|, bound on |Δ policy logit|)
    let bounds = [
        (Precision::F32, 1e-3, 1e-3),
        (Precision::Bf16, 0.02, 0.1),
        (Precision::Int8, 0.08, 0.25),
    ];
    let shape = Shape::parse("pair2_d8_o2_h32_h216_kp").unwrap();
    let random: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, 9));
    let trained_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("nets/default.mnw");
    let trained: Arc<dyn TensorSource + Send + Sync> =
        Arc::new(crate::weights::WeightFile::open(&trained_path).unwrap());
    assert_eq!(trained.shape().to_string(), "pair0_d128_o2_h512_kp");
    let reference_random = ReferenceNet::new(random.clone()).unwrap();
    let reference_trained = ReferenceNet::new(trained.clone()).unwrap();
    for simd in Simd::available() {
        // At AVX-512 with BF16 the bf16 head multiplies rounded inputs (`vdpbf16ps`).
        eprintln!(
            "{simd}: bf16 dot products {}",
            manaka_kernels::bf16_dot(simd)
        );
        for (precision, value_bound, policy_bound) in bounds {
            let net =
                KpTwoLayers::with_precision(&shape.to_string(), random.clone(), simd, precision)
                    .unwrap();
            let (v, p) = precision_errors(&net, &reference_random, 4, 80);
            eprintln!("{simd} {precision} random: value {v:.2e}, policy {p:.2e}");
            assert!(
                v <= value_bound && p <= policy_bound,
                "{simd} {precision} random: {v} {p}"
            );
            let net =
                Default::with_precision("pair0_d128_o2_h512_kp", trained.clone(), simd, precision)
                    .unwrap();
            let (v, p) = precision_errors(&net, &reference_trained, 4, 80);
            eprintln!("{simd} {precision} trained: value {v:.2e}, policy {p:.2e}");
            assert!(
                v <= value_bound && p <= policy_bound,
                "{simd} {precision} trained: {v} {p}"
            );
        }
    }
}
