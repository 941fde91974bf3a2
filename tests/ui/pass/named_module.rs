// `manaka_net!(Name = "SHAPE")` names the module; every optional block is accepted.
use manaka::runtime::network::Network;
use manaka::runtime::shogi::Position;
use manaka::runtime::weights::{TensorSource, init};
use std::sync::Arc;

manaka::manaka_net!(Everything = "pair2_d8_o3_h16_h28_m2_f1_lse1_ks_split");

fn main() {
    assert_eq!(Everything::SHAPE, "pair2_d8_o3_h16_h28_m2_f1_lse1_ks_split");
    assert_eq!(
        (Everything::G, Everything::M, Everything::F, Everything::H2),
        (2, 2, 1, 8)
    );
    let src: Arc<dyn TensorSource + Send + Sync> =
        Arc::new(init::random_weights(&Everything::shape(), 2));
    let engine = Everything::from_source(src).unwrap();
    let pos = Position::startpos();
    let e = engine.evaluate(
        &engine.new_state(&pos),
        manaka::runtime::eval::Leaf {
            position: &pos,
            moves: &pos.legal_moves(),
        },
    );
    assert!(e.value_logit.is_finite());
}
