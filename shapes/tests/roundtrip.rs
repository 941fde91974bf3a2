//! Properties: every valid shape's canonical name parses back to it; no string panics the parser.

use manaka_shapes::{FeatureSpace, Shape};
use proptest::prelude::*;

/// Valid shapes, both arithmetics: draw every field in its SPEC §2 range, then repair the
/// cross-token rules so that nothing is filtered away.
fn valid_shape() -> impl Strategy<Value = Shape> {
    let numbers = (
        0u32..=64,
        1u32..=1024,
        1u32..=8,
        1u32..=4096,
        proptest::option::of(1u32..=4096),
        proptest::option::of(1u32..=64),
        proptest::option::of(1u32..=64),
        proptest::option::of(1u32..=64),
    );
    let flags = (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            Just(FeatureSpace::Native),
            Just(FeatureSpace::Kp),
            Just(FeatureSpace::HalfKp)
        ],
        any::<bool>(),
    );
    (numbers, flags).prop_map(
        |((pair, d, order, h, h2, moments, field, lse), (ks, split, features, nnue))| {
            let mut s = Shape {
                pair,
                d,
                order,
                h,
                h2,
                moments,
                field,
                lse: lse.map(|l| l.min(pair)).filter(|&l| l > 0),
                ks,
                split: split && features == FeatureSpace::Native,
                features,
                nnue,
            };
            if features == FeatureSpace::HalfKp {
                s.pair = 0;
                s.lse = None;
                s.field = None;
            }
            if nnue {
                s = Shape {
                    pair: 0,
                    order: 1,
                    moments: None,
                    field: None,
                    lse: None,
                    ks: false,
                    split: false,
                    features: if features == FeatureSpace::Native {
                        FeatureSpace::Kp
                    } else {
                        features
                    },
                    ..s
                };
            }
            s
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn canonical_name_parses_back(s in valid_shape()) {
        prop_assert_eq!(s.validate(), Ok(()));
        let name = s.to_string();
        prop_assert_eq!(Shape::parse(&name), Ok(s));
        prop_assert_eq!(s.param_count(), s.tensors().iter().map(|t| t.numel()).sum::<u64>());
    }

    #[test]
    fn arbitrary_strings_never_panic(name in "\\PC{0,40}") {
        let _ = Shape::parse(&name);
    }

    #[test]
    fn near_miss_strings_never_panic(name in "[a-z0-9_]{0,40}") {
        if let Ok(s) = Shape::parse(&name) {
            // Whatever parses is already canonical: the grammar admits one spelling.
            prop_assert_eq!(s.to_string(), name);
        }
    }
}
