//! The tensor table of SPEC §7 and the sizes derived from it.

use manaka_shapes::{BlockKind, PowerGroup, Shape, TensorSpec};

fn shape(name: &str) -> Shape {
    Shape::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn table(shape: &Shape) -> Vec<(String, Vec<u64>)> {
    shape
        .tensors()
        .into_iter()
        .map(|TensorSpec { name, dims }| (name, dims))
        .collect()
}

fn t(name: &str, dims: &[u64]) -> (String, Vec<u64>) {
    (name.to_string(), dims.to_vec())
}

#[test]
fn baseline_has_45_770_072_parameters() {
    let s = shape("pair16_d128_o3_h512");
    // SPEC §2: embed + pair + norms + w1 + b1 + value + policy + policy.from.
    let by_hand = 2344 * 128
        + 2344 * 2343 / 2 * 16
        + 400
        + 512 * 800
        + 512
        + 512
        + 1
        + 2187 * 512
        + 2187
        + 14 * 82;
    assert_eq!(by_hand, 45_770_072);
    assert_eq!(s.param_count(), 45_770_072);
    assert_eq!(s.bytes(), 4 * 45_770_072);
    assert_eq!(s.input_width(), 800);
    assert_eq!(s.token_count(), 2344);
    assert_eq!(s.pair_rows(), 2_745_996);
    assert_eq!(
        table(&s),
        vec![
            t("embed", &[2344, 128]),
            t("pair", &[2_745_996, 16]),
            t("norm.e1", &[128]),
            t("norm.e2", &[128]),
            t("norm.e3", &[128]),
            t("norm.pair", &[16]),
            t("w1", &[512, 800]),
            t("b1", &[512]),
            t("value.w", &[512]),
            t("value.b", &[1]),
            t("policy.w", &[2187, 512]),
            t("policy.b", &[2187]),
            t("policy.from", &[14, 82]),
        ]
    );
}

#[test]
fn every_optional_tensor_in_spec_order() {
    let s = shape("pair8_d16_o2_h64_h232_m4_f3_lse3_ks_split");
    // Per perspective: own e1 e2, opp e1 e2 (16 each), pair 5, lse 3, moment 10, field 243,
    // then 8 ks scalars.
    let per = 4 * 16 + 5 + 3 + 10 + 243 + 8;
    assert_eq!(s.perspective_width(), per);
    assert_eq!(s.input_width(), 2 * per);
    assert_eq!(
        table(&s),
        vec![
            t("embed", &[2344, 16]),
            t("pair", &[2_745_996, 8]),
            t("moment.proj", &[2344, 4]),
            t("field", &[2344, 81, 3]),
            t("norm.own.e1", &[16]),
            t("norm.own.e2", &[16]),
            t("norm.opp.e1", &[16]),
            t("norm.opp.e2", &[16]),
            t("norm.pair", &[5]),
            t("norm.lse", &[3]),
            t("norm.moment", &[10]),
            t("norm.field", &[243]),
            t("w1", &[64, 2 * per]),
            t("b1", &[64]),
            t("w2", &[32, 64]),
            t("b2", &[32]),
            t("value.w", &[32]),
            t("value.b", &[1]),
            t("policy.w", &[2187, 32]),
            t("policy.b", &[2187]),
            t("policy.from", &[14, 82]),
            t("policy.field", &[27, 3]),
        ]
    );
    let sum: u64 = s.tensors().iter().map(TensorSpec::numel).sum();
    assert_eq!(s.param_count(), sum);
}

#[test]
fn lse_equal_to_pair_leaves_no_linear_block() {
    let s = shape("pair4_d8_o1_h8_lse4_kp");
    let names: Vec<String> = s.blocks().iter().map(|b| b.name()).collect();
    assert_eq!(names, ["e1", "lse"]);
    assert_eq!(s.token_count(), 1710);
    assert_eq!(s.pair_rows(), 1710 * 1709 / 2);
    assert_eq!(s.blocks()[1].kind, BlockKind::PairLse);
    assert_eq!(
        s.blocks()[0].kind,
        BlockKind::Power {
            group: PowerGroup::All,
            k: 1
        }
    );
}

#[test]
fn nnue_has_embed_bias_and_no_norms() {
    let s = shape("pair0_d256_o1_h32_h232_halfkp_nnue");
    assert!(s.blocks().is_empty());
    assert_eq!(s.input_width(), 512);
    assert_eq!(
        table(&s),
        vec![
            t("embed", &[125_388, 256]),
            t("embed.bias", &[256]),
            t("w1", &[32, 512]),
            t("b1", &[32]),
            t("w2", &[32, 32]),
            t("b2", &[32]),
            t("value.w", &[32]),
            t("value.b", &[1]),
            t("policy.w", &[2187, 32]),
            t("policy.b", &[2187]),
            t("policy.from", &[14, 82]),
        ]
    );
}

#[test]
fn pair0_has_no_pair_tensor_or_block() {
    let s = shape("pair0_d32_o2_h16");
    assert!(
        s.tensors()
            .iter()
            .all(|t| t.name != "pair" && t.name != "norm.pair")
    );
    assert_eq!(s.input_width(), 2 * 64);
}

#[test]
fn flops_follow_the_documented_estimate() {
    let s = shape("pair16_d128_o3_h512");
    let per_perspective = 2 * 2 * 3 * 128 + 128 * 3 * 4 + 2 * 39 * 16 + 3 * 400;
    let head = 2 * 512 * 800 + 2 * 512 + 2 * 512 + 1;
    let policy = 80 * (2 * 512 + 2);
    assert_eq!(s.flops_per_eval(), 2 * per_perspective + head + policy);
    // A field or a second layer as wide as the first adds work (a narrow h2 can save some:
    // the policy reads the last hidden layer).
    assert!(shape("pair16_d128_o3_h512_f4").flops_per_eval() > s.flops_per_eval());
    assert!(shape("pair16_d128_o3_h512_h2512").flops_per_eval() > s.flops_per_eval());
}

#[test]
fn tensor_spec_displays_its_dims() {
    let s = shape("pair16_d128_o3_h512");
    assert_eq!(s.tensors()[0].to_string(), "embed [2344 × 128]");
    assert_eq!(s.tensors()[0].bytes(), 2344 * 128 * 4);
}
