//! The Mini NNUE Lab (../shared/seeds/mini-nnue-lab.txt), retold on the real engine.
//!
//! The lab builds a 5×5 toy NNUE by hand: HalfKP-style features ("king square × piece"),
//! a sparse first layer, a forward pass, an incremental update after a move, and a few steps
//! of gradient descent on the output layer. Here every step runs on Manaka's own pieces with
//! the shape `pair0_d16_o1_h8_halfkp_nnue` — real YaneuraOu HalfKP numbering on a 9×9 board,
//! a 16-wide accumulator per perspective, one hidden layer of 8, NNUE arithmetic.
//!
//! Run it with `cargo run --release --example mini_nnue`.

use manaka::runtime::reference::{ReferenceNet, head};
use manaka::runtime::shogi::{Color, Position};
use manaka::runtime::tokens::active_tokens;
use manaka::runtime::weights::{TensorSource, WeightSet, init};
use manaka::shapes::Shape;
use std::sync::Arc;

fn main() {
    let shape = Shape::parse("pair0_d16_o1_h8_halfkp_nnue").expect("a valid shape");
    println!("Step 0: the network `{shape}`");
    println!("  {} parameters; tensors:", shape.param_count());
    for t in shape.tensors() {
        println!("    {t}");
    }

    // Step 1: a position.
    let mut pos = Position::startpos();
    pos.play_usi_moves(["7g7f", "3c3d", "8h2b+", "3a2b"])
        .expect("legal moves");
    println!("\nStep 1: the position (after 7g7f 3c3d 8h2b+ 3a2b: bishops traded)");
    println!("  {}", pos.to_sfen());

    // Step 2: HalfKP features. Each id is own-king-square × 1548 + BonaPiece.
    println!("\nStep 2: HalfKP features");
    let total = shape.token_count();
    for side in Color::ALL {
        let ids = active_tokens(shape.features, &pos, side);
        let mut v = ids.as_slice().to_vec();
        v.sort_unstable();
        println!(
            "  {side:?}'s view: {} active of {total} ({:.4}% dense): {:?}",
            v.len(),
            100.0 * v.len() as f64 / total as f64,
            v
        );
    }

    // Step 3: weights. Random, but reproducible from a seed (docs/weights.md has the
    // distributions). `WeightSet` keeps them in memory; a file would be memory-mapped.
    let weights = init::random_weights(&shape, 2024);
    let net = ReferenceNet::new(Arc::new(weights.clone())).expect("complete weights");

    // Step 4: the forward pass. The first layer is a sum of the active rows only.
    println!("\nStep 4: forward pass");
    let state = net.refresh(&pos);
    let params = net.params();
    let stm = pos.side_to_move();
    let (a, b) = (&state.acc[stm.index()], &state.acc[stm.flip().index()]);
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("  accumulator (side to move, 16):  {}", fmt(&a.nnue));
    let h = head::hidden(&shape, &params, a, b);
    println!("  hidden (8, clipped to [0, 1]):   {}", fmt(&h));
    let score = head::value_logit(&params, &h);
    println!("  value logit {score:.4}  (cp {})", (600.0 * score).round());

    // Step 5: the incremental update. One move changes a few features: subtract the rows
    // that left, add the rows that arrived.
    println!("\nStep 5: incremental update (drop the bishop in hand on 5e)");

    let m = pos.parse_usi_move("B*5e").expect("legal");
    let mut incremental = state.clone();
    let effect = pos.do_move(m);
    net.update(&mut incremental, &effect, &pos);
    let refreshed = net.refresh(&pos);
    let moves = pos.legal_moves();
    let inc = net.evaluate(&incremental, &pos, &moves).value_logit;
    let fresh = net.evaluate(&refreshed, &pos, &moves).value_logit;
    println!(
        "  played {m}: incremental {inc:.10}, refresh {fresh:.10}, difference {:.2e}",
        (inc - fresh).abs()
    );

    // Step 6: learning. As in the lab, train only the output layer (value.w, value.b) by
    // gradient descent on a toy target: +1 when the side to move has more material in hand,
    // scaled. Loss is the mean squared error of the value logit.
    println!("\nStep 6: gradient descent on the output layer");
    let samples = toy_samples(&net, 400);
    let mut ws: WeightSet = weights;
    let lr = 0.05;
    for epoch in 0..30 {
        let w = ws.tensor("value.w").expect("value.w").to_vec();
        let b = ws.tensor("value.b").expect("value.b")[0] as f64;
        let mut loss = 0.0;
        let mut gw = vec![0.0; w.len()];
        let mut gb = 0.0;
        for (h, target) in &samples {
            let y = b + w
                .iter()
                .zip(h)
                .map(|(&wi, &hi)| wi as f64 * hi)
                .sum::<f64>();
            let err = y - target;
            loss += err * err;
            // ∂L/∂w = 2·err·h, ∂L/∂b = 2·err (averaged below).
            for (g, &hi) in gw.iter_mut().zip(h) {
                *g += 2.0 * err * hi;
            }
            gb += 2.0 * err;
        }
        let n = samples.len() as f64;
        if epoch % 5 == 0 || epoch == 29 {
            println!("  epoch {epoch:>2}: loss {:.5}", loss / n);
        }
        let vw = ws.tensor_mut("value.w").expect("value.w");
        for (wi, g) in vw.iter_mut().zip(&gw) {
            *wi -= (lr * g / n) as f32;
        }
        ws.tensor_mut("value.b").expect("value.b")[0] -= (lr * gb / n) as f32;
    }
    println!("\nThat is the whole NNUE recipe: sparse features, a summed first layer, a small");
    println!("dense head, incremental updates, and gradient descent. The real thing is the same");
    println!("at scale: see docs/ for the shapes, the weight format and the trainer.");
}

/// Random positions (random playouts from the start) with their hidden vectors and a toy
/// target: tanh of (pieces in hand of the side to move − the opponent's) / 3.
fn toy_samples(net: &ReferenceNet, n: usize) -> Vec<(Vec<f64>, f64)> {
    let mut rng = 0x6d69_6e69_u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let params = net.params();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut pos = Position::startpos();
        let plies = 10 + next() % 60;
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.do_move(moves[(next() % moves.len() as u64) as usize]);
        }
        let stm = pos.side_to_move();
        let st = net.refresh(&pos);
        let h = head::hidden(
            net.shape(),
            &params,
            &st.acc[stm.index()],
            &st.acc[stm.flip().index()],
        );
        let diff = pos.hand(stm).total() as f64 - pos.hand(stm.flip()).total() as f64;
        out.push((h, (diff / 3.0).tanh()));
    }
    out
}
