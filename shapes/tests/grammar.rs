//! SPEC §2 as tables: every token parses to its field, every rule refuses with its own error.

use manaka_shapes::{FeatureSpace, Shape, ShapeError, TokenKind};

fn base() -> Shape {
    Shape {
        pair: 16,
        d: 128,
        order: 3,
        h: 512,
        h2: None,
        moments: None,
        field: None,
        lse: None,
        ks: false,
        split: false,
        features: FeatureSpace::Native,
        nnue: false,
    }
}

#[test]
fn every_token_parses_to_its_field() {
    let nnue = Shape {
        pair: 0,
        d: 256,
        order: 1,
        h: 32,
        h2: Some(32),
        features: FeatureSpace::HalfKp,
        nnue: true,
        ..base()
    };
    let cases: Vec<(&str, Shape)> = vec![
        ("pair16_d128_o3_h512", base()),
        ("pair0_d128_o3_h512", Shape { pair: 0, ..base() }),
        ("pair64_d128_o3_h512", Shape { pair: 64, ..base() }),
        ("pair16_d1_o3_h512", Shape { d: 1, ..base() }),
        ("pair16_d1024_o3_h512", Shape { d: 1024, ..base() }),
        ("pair16_d128_o1_h512", Shape { order: 1, ..base() }),
        ("pair16_d128_o8_h512", Shape { order: 8, ..base() }),
        ("pair16_d128_o3_h1", Shape { h: 1, ..base() }),
        ("pair16_d128_o3_h4096", Shape { h: 4096, ..base() }),
        // `h2` alone, as the first h-token, is a first hidden layer of width 2.
        ("pair16_d128_o3_h2", Shape { h: 2, ..base() }),
        ("pair16_d128_o3_h232", Shape { h: 232, ..base() }),
        (
            "pair16_d128_o3_h512_h232",
            Shape {
                h2: Some(32),
                ..base()
            },
        ),
        (
            "pair16_d128_o3_h512_h24096",
            Shape {
                h2: Some(4096),
                ..base()
            },
        ),
        (
            "pair16_d128_o3_h512_h21",
            Shape {
                h2: Some(1),
                ..base()
            },
        ),
        (
            "pair16_d128_o3_h512_m8",
            Shape {
                moments: Some(8),
                ..base()
            },
        ),
        (
            "pair16_d128_o3_h512_f4",
            Shape {
                field: Some(4),
                ..base()
            },
        ),
        (
            "pair16_d128_o3_h512_lse4",
            Shape {
                lse: Some(4),
                ..base()
            },
        ),
        (
            "pair16_d128_o3_h512_lse16",
            Shape {
                lse: Some(16),
                ..base()
            },
        ),
        ("pair16_d128_o3_h512_ks", Shape { ks: true, ..base() }),
        (
            "pair16_d128_o3_h512_split",
            Shape {
                split: true,
                ..base()
            },
        ),
        (
            "pair16_d128_o3_h512_kp",
            Shape {
                features: FeatureSpace::Kp,
                ..base()
            },
        ),
        (
            "pair0_d128_o3_h512_halfkp",
            Shape {
                pair: 0,
                features: FeatureSpace::HalfKp,
                ..base()
            },
        ),
        ("pair0_d256_o1_h32_h232_halfkp_nnue", nnue),
        (
            "pair0_d256_o1_h32_kp_nnue",
            Shape {
                h2: None,
                features: FeatureSpace::Kp,
                ..nnue
            },
        ),
        (
            "pair8_d16_o2_h64_h216_m4_f2_lse3_ks_split",
            Shape {
                pair: 8,
                d: 16,
                order: 2,
                h: 64,
                h2: Some(16),
                moments: Some(4),
                field: Some(2),
                lse: Some(3),
                ks: true,
                split: true,
                ..base()
            },
        ),
    ];
    for (name, expected) in cases {
        let parsed = Shape::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(parsed, expected, "{name}");
        assert_eq!(parsed.to_string(), name, "canonical spelling of {name}");
        assert_eq!(name.parse::<Shape>(), Ok(expected), "FromStr of {name}");
    }
}

/// `(name, expected error, words the message must contain)`.
fn refusals() -> Vec<(&'static str, ShapeError, Vec<&'static str>)> {
    use ShapeError::*;
    let s = |x: &str| x.to_string();
    vec![
        ("", Empty, vec!["empty shape name"]),
        (
            "pair16__d128_o3_h512",
            EmptyToken { index: 1 },
            vec!["position 2"],
        ),
        (
            "pair16_d128_o3_h512_",
            EmptyToken { index: 4 },
            vec!["empty token"],
        ),
        (
            "_pair16_d128_o3_h512",
            EmptyToken { index: 0 },
            vec!["empty token"],
        ),
        (
            "pair16_d128_o3_h512_hlafkp",
            Unknown {
                token: s("hlafkp"),
                suggestion: Some(s("halfkp")),
            },
            vec!["`hlafkp`", "did you mean `halfkp`?"],
        ),
        (
            "pari16_d128_o3_h512",
            Unknown {
                token: s("pari16"),
                suggestion: Some(s("pair16")),
            },
            vec!["did you mean `pair16`?"],
        ),
        (
            "pair16_D128_o3_h512",
            Unknown {
                token: s("D128"),
                suggestion: Some(s("d128")),
            },
            vec!["did you mean `d128`?"],
        ),
        (
            "pair16_d128_o3_h512_spilt",
            Unknown {
                token: s("spilt"),
                suggestion: Some(s("split")),
            },
            vec!["`spilt`"],
        ),
        (
            "pair16_d128_o3_h512_ls4",
            Unknown {
                token: s("ls4"),
                suggestion: Some(s("lse4")),
            },
            vec!["`lse4`"],
        ),
        (
            "pair16_d128_o3_h512_x5",
            Unknown {
                token: s("x5"),
                suggestion: None,
            },
            vec!["unknown token `x5`"],
        ),
        (
            "pair16_d128_o3_h512_banana",
            Unknown {
                token: s("banana"),
                suggestion: None,
            },
            vec!["`banana`"],
        ),
        (
            "pair16_d0128_o3_h512",
            MalformedNumber {
                token: s("d0128"),
                kind: TokenKind::D,
                suggestion: Some(s("d128")),
            },
            vec!["leading zero", "did you mean `d128`?"],
        ),
        (
            "pair00_d128_o3_h512",
            MalformedNumber {
                token: s("pair00"),
                kind: TokenKind::Pair,
                suggestion: Some(s("pair0")),
            },
            vec!["did you mean `pair0`?"],
        ),
        (
            "pair16_d_o3_h512",
            MalformedNumber {
                token: s("d"),
                kind: TokenKind::D,
                suggestion: None,
            },
            vec!["has no number"],
        ),
        (
            "pair16_d12x_o3_h512",
            MalformedNumber {
                token: s("d12x"),
                kind: TokenKind::D,
                suggestion: None,
            },
            vec!["not a decimal number"],
        ),
        (
            "pair16_d128_o3_h512_h2",
            MalformedNumber {
                token: s("h2"),
                kind: TokenKind::H2,
                suggestion: None,
            },
            vec!["`h2N` has no number"],
        ),
        (
            "pair65_d128_o3_h512",
            OutOfRange {
                token: s("pair65"),
                kind: TokenKind::Pair,
                value: 65,
                min: 0,
                max: 64,
            },
            vec!["`pair65` is out of range", "0..=64"],
        ),
        (
            "pair16_d0_o3_h512",
            OutOfRange {
                token: s("d0"),
                kind: TokenKind::D,
                value: 0,
                min: 1,
                max: 1024,
            },
            vec!["1..=1024"],
        ),
        (
            "pair16_d1025_o3_h512",
            OutOfRange {
                token: s("d1025"),
                kind: TokenKind::D,
                value: 1025,
                min: 1,
                max: 1024,
            },
            vec!["`d1025`"],
        ),
        (
            "pair16_d128_o9_h512",
            OutOfRange {
                token: s("o9"),
                kind: TokenKind::Order,
                value: 9,
                min: 1,
                max: 8,
            },
            vec!["1..=8"],
        ),
        (
            "pair16_d128_o3_h4097",
            OutOfRange {
                token: s("h4097"),
                kind: TokenKind::H,
                value: 4097,
                min: 1,
                max: 4096,
            },
            vec!["`h4097`"],
        ),
        (
            "pair16_d128_o3_h512_h20",
            OutOfRange {
                token: s("h20"),
                kind: TokenKind::H2,
                value: 0,
                min: 1,
                max: 4096,
            },
            vec!["`h2N` allows 1..=4096"],
        ),
        (
            "pair16_d128_o3_h512_m65",
            OutOfRange {
                token: s("m65"),
                kind: TokenKind::Moments,
                value: 65,
                min: 1,
                max: 64,
            },
            vec!["`m65`"],
        ),
        (
            "pair16_d128_o3_h512_f0",
            OutOfRange {
                token: s("f0"),
                kind: TokenKind::Field,
                value: 0,
                min: 1,
                max: 64,
            },
            vec!["`f0`"],
        ),
        (
            "pair16_d128_o3_h512_lse0",
            OutOfRange {
                token: s("lse0"),
                kind: TokenKind::Lse,
                value: 0,
                min: 1,
                max: 64,
            },
            vec!["pair width"],
        ),
        (
            "pair16_d99999999999999999999999_o3_h512",
            OutOfRange {
                token: s("d99999999999999999999999"),
                kind: TokenKind::D,
                value: u64::MAX,
                min: 1,
                max: 1024,
            },
            vec!["out of range"],
        ),
        (
            "pair16_d128_d64_o3_h512",
            Repeated {
                token: s("d64"),
                first: s("d128"),
                kind: TokenKind::D,
            },
            vec!["`d64` repeats `dN`", "`d128`"],
        ),
        (
            "pair16_d128_o3_h512_h32",
            Repeated {
                token: s("h32"),
                first: s("h512"),
                kind: TokenKind::H,
            },
            vec!["`h232`"],
        ),
        (
            "pair0_d128_o3_h512_kp_halfkp",
            Repeated {
                token: s("halfkp"),
                first: s("kp"),
                kind: TokenKind::Features,
            },
            vec!["one feature space"],
        ),
        (
            "pair16_d128_o3_h512_ks_ks",
            Repeated {
                token: s("ks"),
                first: s("ks"),
                kind: TokenKind::Ks,
            },
            vec!["once"],
        ),
        (
            "d128_pair16_o3_h512",
            OutOfOrder {
                token: s("pair16"),
                after: s("d128"),
                suggestion: s("pair16_d128_o3_h512"),
            },
            vec!["out of order", "did you mean `pair16_d128_o3_h512`?"],
        ),
        (
            "pair16_d128_o3_h512_ks_f4",
            OutOfOrder {
                token: s("f4"),
                after: s("ks"),
                suggestion: s("pair16_d128_o3_h512_f4_ks"),
            },
            vec!["`f4` must come before `ks`"],
        ),
        (
            "pair16_d128_o3",
            Missing { kind: TokenKind::H },
            vec!["missing required token `hN`"],
        ),
        (
            "d128_o3_h512",
            Missing {
                kind: TokenKind::Pair,
            },
            vec!["`pairN`"],
        ),
        (
            "pair4_d128_o3_h512_lse5",
            LseExceedsPair { lse: 5, pair: 4 },
            vec!["`lse5` exceeds `pair4`"],
        ),
        (
            "pair16_d128_o3_h512_split_kp",
            SplitNeedsNative {
                features: FeatureSpace::Kp,
            },
            vec!["native tokens only", "`kp`"],
        ),
        (
            "pair16_d128_o3_h512_halfkp",
            HalfKpWithPair { pair: 16 },
            vec!["`pair16`", "pair0"],
        ),
        (
            "pair0_d128_o3_h512_f2_halfkp",
            HalfKpWithField { field: 2 },
            vec!["`f2`"],
        ),
        (
            "pair4_d256_o1_h32_kp_nnue",
            NnueNeedsPair0 { pair: 4 },
            vec!["`nnue` requires `pair0`"],
        ),
        (
            "pair0_d256_o2_h32_kp_nnue",
            NnueNeedsO1 { order: 2 },
            vec!["`o1`", "`o2`"],
        ),
        (
            "pair0_d256_o1_h32_m4_kp_nnue",
            NnueForbids { token: s("m4") },
            vec!["`nnue` forbids `m4`"],
        ),
        (
            "pair0_d256_o1_h32_f4_kp_nnue",
            NnueForbids { token: s("f4") },
            vec!["`f4`"],
        ),
        (
            "pair0_d256_o1_h32_ks_kp_nnue",
            NnueForbids { token: s("ks") },
            vec!["`ks`"],
        ),
        (
            "pair0_d256_o1_h32_split_nnue",
            NnueForbids { token: s("split") },
            vec!["`split`"],
        ),
        (
            "pair0_d256_o1_h32_nnue",
            NnueNeedsKpFeatures,
            vec!["`kp` or `halfkp`"],
        ),
    ]
}

#[test]
fn every_rule_refuses_with_its_own_error() {
    for (name, expected, words) in refusals() {
        let err = Shape::parse(name).expect_err(name);
        assert_eq!(err, expected, "{name}");
        let message = err.to_string();
        assert!(!message.contains('\n'), "{name}: one line: {message}");
        for word in words {
            assert!(message.contains(word), "{name}: `{message}` lacks `{word}`");
        }
        if let Some(suggestion) = err.suggestion() {
            assert!(message.ends_with(&format!("did you mean `{suggestion}`?")));
        }
    }
}

#[test]
fn lse_range_is_checked_against_pair_not_only_64() {
    // `lse` can never pass pair, whose maximum is 64, so `lse65` is a range error first.
    let err = Shape::parse("pair64_d8_o1_h8_lse65").unwrap_err();
    assert!(matches!(err, ShapeError::OutOfRange { .. }), "{err}");
    assert!(Shape::parse("pair64_d8_o1_h8_lse64").is_ok());
    let err = Shape::parse("pair0_d8_o1_h8_lse1").unwrap_err();
    assert_eq!(err, ShapeError::LseExceedsPair { lse: 1, pair: 0 });
}

#[test]
fn validate_checks_a_hand_built_shape() {
    assert_eq!(base().validate(), Ok(()));
    let zero_d = Shape { d: 0, ..base() };
    assert!(matches!(
        zero_d.validate(),
        Err(ShapeError::OutOfRange {
            kind: TokenKind::D,
            ..
        })
    ));
    let lse = Shape {
        lse: Some(17),
        ..base()
    };
    assert_eq!(
        lse.validate(),
        Err(ShapeError::LseExceedsPair { lse: 17, pair: 16 })
    );
}

#[test]
fn the_first_problem_in_reading_order_wins() {
    // Unknown token before a later repeat; repeat before order; order before missing.
    let err = Shape::parse("pair16_zz_d128_d64").unwrap_err();
    assert!(matches!(err, ShapeError::Unknown { .. }), "{err}");
    let err = Shape::parse("d128_pair16_d64").unwrap_err();
    assert!(matches!(err, ShapeError::Repeated { .. }), "{err}");
    let err = Shape::parse("d128_pair16").unwrap_err();
    assert!(matches!(err, ShapeError::OutOfOrder { .. }), "{err}");
}

#[test]
fn error_is_a_std_error() {
    let err: Box<dyn std::error::Error> = Box::new(Shape::parse("x").unwrap_err());
    assert!(err.to_string().contains("`x`"));
}

#[test]
fn feature_spaces_have_spec_token_counts() {
    assert_eq!(FeatureSpace::Native.token_count(), 2344);
    assert_eq!(FeatureSpace::Kp.token_count(), 1710);
    assert_eq!(FeatureSpace::HalfKp.token_count(), 125_388);
    assert_eq!(FeatureSpace::Native.token(), None);
    assert_eq!(FeatureSpace::HalfKp.to_string(), "halfkp");
}
