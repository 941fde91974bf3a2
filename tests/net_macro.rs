//! `manaka_net!` expansions equal the reference evaluator, and their constants match the
//! shape grammar.

use manaka::manaka_net;
use manaka::runtime::data::random::SplitMix64;
use manaka::runtime::eval::Leaf;
use manaka::runtime::network::Network;
use manaka::runtime::reference::ReferenceNet;
use manaka::runtime::shogi::Position;
use manaka::runtime::weights::{TensorSource, init};
use std::sync::Arc;

manaka_net!("pair4_d16_o2_h32");
manaka_net!(Named = "pair2_d8_o3_h16_h28_m2_f1_ks_split");

#[test]
fn constants_follow_the_shape() {
    let s = pair4_d16_o2_h32::shape();
    assert_eq!(pair4_d16_o2_h32::SHAPE, "pair4_d16_o2_h32");
    assert_eq!(pair4_d16_o2_h32::D, 16);
    assert_eq!(pair4_d16_o2_h32::PAIR, 4);
    assert_eq!(pair4_d16_o2_h32::INPUT as u64, s.input_width());
    assert_eq!(pair4_d16_o2_h32::PARAMS, s.param_count());
    assert_eq!(Named::SHAPE, "pair2_d8_o3_h16_h28_m2_f1_ks_split");
    assert_eq!(Named::G, 2);
    assert_eq!(Named::H2, 8);
}

fn check_against_reference<N: Network>(net: &N, reference: &ReferenceNet, seed: u64) {
    let mut rng = SplitMix64::new(seed);
    let mut pos = Position::startpos();
    let mut state = net.new_state(&pos);
    for _ in 0..150 {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let got = net.evaluate(
            &state,
            Leaf {
                position: &pos,
                moves: &moves,
            },
        );
        let want = reference.evaluate_position(&pos, &moves);
        let close = |a: f32, b: f64| (a as f64 - b).abs() <= 1e-4 * (1.0 + b.abs());
        assert!(
            close(got.value_logit, want.value_logit),
            "{}: {} vs {}",
            net.describe(),
            got.value_logit,
            want.value_logit
        );
        for (g, w) in got.policy_logits.iter().zip(&want.policy) {
            assert!(close(*g, *w));
        }
        let e = pos.do_move(moves[rng.below(moves.len() as u64) as usize]);
        net.update(&mut state, &e, &pos);
    }
}

#[test]
fn expansions_equal_the_reference_evaluator() {
    let tiny = pair4_d16_o2_h32::shape();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&tiny, 3));
    let engine = pair4_d16_o2_h32::from_source(src.clone()).unwrap();
    check_against_reference(&engine, &ReferenceNet::new(src).unwrap(), 99);

    let named = Named::shape();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&named, 4));
    let engine = Named::from_source(src.clone()).unwrap();
    check_against_reference(&engine, &ReferenceNet::new(src).unwrap(), 7);
}

#[test]
fn a_file_of_another_shape_is_refused() {
    let other = Named::shape();
    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&other, 4));
    let err = pair4_d16_o2_h32::from_source(src).err().expect("refused");
    let msg = err.to_string();
    assert!(
        msg.contains("pair4_d16_o2_h32") && msg.contains(Named::SHAPE),
        "{msg}"
    );
}
