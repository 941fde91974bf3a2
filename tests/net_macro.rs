//! `manaka_net!` expansions equal the reference evaluator, and their constants match the
//! shape grammar.

use manaka::manaka_net;
use manaka::runtime::network::Network;
use manaka::runtime::reference::{ReferenceNet, compare};
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

/// The expansion equals the reference along random games (the one loop every fast path
/// is checked with, `reference::compare`).
fn check_against_reference<N: Network>(net: &N, reference: &ReferenceNet, seed: u64) {
    let name = net.describe();
    let n = compare::along_random_games(net, reference, 1, 150, seed, |p| p.assert_close(&name));
    assert!(n > 0);
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
