// `manaka_net!("SHAPE")` makes a module named by the canonical shape, whose constants are the
// shape's dimensions and whose engine evaluates (here: equal to the reference evaluator on the
// start position, with random weights).
use manaka::runtime::eval::Leaf;
use manaka::runtime::network::Network;
use manaka::runtime::reference::ReferenceNet;
use manaka::runtime::shogi::Position;
use manaka::runtime::weights::{TensorSource, init};
use std::sync::Arc;

manaka::manaka_net!("pair4_d16_o2_h32");

// The constants are usable in const contexts: they are plain `const` items.
const _: () = assert!(pair4_d16_o2_h32::D == 16 && pair4_d16_o2_h32::PAIR == 4);
const WIDTH: [u8; pair4_d16_o2_h32::INPUT] = [0; pair4_d16_o2_h32::INPUT];

fn main() {
    let shape = pair4_d16_o2_h32::shape();
    assert_eq!(shape.to_string(), pair4_d16_o2_h32::SHAPE);
    assert_eq!(WIDTH.len() as u64, shape.input_width());
    assert_eq!(pair4_d16_o2_h32::PARAMS, shape.param_count());

    let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, 1));
    let engine: pair4_d16_o2_h32::Engine = pair4_d16_o2_h32::from_source(src.clone()).unwrap();
    let pos = Position::startpos();
    let moves = pos.legal_moves();
    let state: pair4_d16_o2_h32::State = engine.new_state(&pos);
    let got = engine.evaluate(
        &state,
        Leaf {
            position: &pos,
            moves: &moves,
        },
    );
    let want = ReferenceNet::new(src)
        .unwrap()
        .evaluate_position(&pos, &moves);
    assert!(
        (got.value_logit as f64 - want.value_logit).abs() <= 1e-4 * (1.0 + want.value_logit.abs())
    );
    assert_eq!(got.policy_logits.len(), moves.len());
}
