//! Growing a trained network into wider hidden layers without changing what it computes
//! (function-preserving widening: Chen, Goodfellow & Shlens, *Net2Net*, ICLR 2016).
//!
//! A shape's head is `h = ReLU(W1·x + b1)` (then `ReLU(W2·h + b2)` with `h2N`), read by the
//! value and policy outputs. Widening `hN` (or `h2N`) adds hidden units. The new units' *incoming*
//! weights and biases take the wider shape's random initialisation (so they compute something
//! and can learn), and every weight *reading* a new unit — its column of `w2`, `value.w` and
//! `policy.w` — is zero, so the new units contribute nothing until training moves those
//! weights. Every other tensor is copied. The widened network therefore evaluates as the
//! original did (to the last bits of a float sum's order), and fine-tuning it keeps what the
//! original had learned while giving the head room to learn more (docs/training.md, "A wider
//! head").

use super::{TensorSource, WeightSet, WeightsError, init};
use manaka_shapes::Shape;

/// Tensors whose last axis reads the hidden layer below them: their entries for new units
/// (new columns, in rows that existed) are zero.
const READERS: [&str; 3] = ["w2", "value.w", "policy.w"];

/// `source`'s weights in the wider shape `target` (only `hN` and `h2N` may differ, and only
/// grow), the new units' incoming weights drawn as `manaka weights init --seed seed` draws
/// them.
pub fn widen(
    source: &dyn TensorSource,
    target: &Shape,
    seed: u64,
) -> Result<WeightSet, WeightsError> {
    let from = *source.shape();
    let refuse = |why: String| WeightsError::CannotWiden {
        from: from.to_string(),
        to: target.to_string(),
        why,
    };
    if from.nnue || target.nnue {
        return Err(refuse(
            "`nnue` shapes keep YaneuraOu's fixed layer widths and integer ranges".into(),
        ));
    }
    let mut only_widths = from;
    only_widths.h = target.h;
    only_widths.h2 = target.h2;
    if only_widths != *target {
        return Err(refuse(
            "only the hidden widths (hN, h2N) may differ; every other token must be the same"
                .into(),
        ));
    }
    match (from.h2, target.h2) {
        (None, Some(_)) | (Some(_), None) => {
            return Err(refuse(
                "both shapes need a second hidden layer (h2N), or neither".into(),
            ));
        }
        (Some(a), Some(b)) if b < a => {
            return Err(refuse(format!("h2{b} is narrower than h2{a}")));
        }
        _ => {}
    }
    if target.h < from.h {
        return Err(refuse(format!(
            "h{} is narrower than h{}",
            target.h, from.h
        )));
    }
    if from == *target {
        return Err(refuse("the shapes are the same: nothing to widen".into()));
    }
    let mut out = init::random_weights(target, seed);
    let old_specs = from.tensors();
    for spec in target.tensors() {
        let old = old_specs
            .iter()
            .find(|s| s.name == spec.name)
            .ok_or_else(|| refuse(format!("tensor `{}` has no counterpart", spec.name)))?;
        let values = source.require(&spec.name)?;
        // Row-major: a 1-D tensor is one row.
        let (old_rows, old_cols) = rows_cols(&old.dims);
        let (rows, cols) = rows_cols(&spec.dims);
        let reader = READERS.contains(&spec.name.as_str());
        let dst = out
            .tensor_mut(&spec.name)
            .expect("the wider shape lists the tensor");
        for r in 0..rows {
            for c in 0..cols {
                let v = if r < old_rows && c < old_cols {
                    values[r * old_cols + c]
                } else if reader && r < old_rows {
                    // A unit that did not exist, read by a row that did: silent for now.
                    0.0
                } else {
                    continue; // a new unit's incoming weight or bias: the random draw stays
                };
                dst[r * cols + c] = v;
            }
        }
    }
    Ok(out)
}

/// A tensor's dims as (rows, columns); a 1-D tensor is one row.
fn rows_cols(dims: &[u64]) -> (usize, usize) {
    let n = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
    match dims {
        [c] => (1, n(*c)),
        [r, c] => (n(*r), n(*c)),
        _ => (1, dims.iter().map(|&d| n(d)).product()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::ReferenceNet;
    use crate::shogi::Position;
    use std::sync::Arc;

    fn shape(s: &str) -> Shape {
        Shape::parse(s).unwrap()
    }

    /// The positions after each prefix of a short game, as the reference evaluator's leaves.
    fn positions() -> Vec<Position> {
        let mut pos = Position::startpos();
        let mut out = vec![pos.clone()];
        for m in ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e", "8c8d", "4e3d"] {
            pos.do_move(pos.parse_usi_move(m).unwrap());
            out.push(pos.clone());
        }
        out
    }

    /// Value logit and policy logits of each position, by the reference evaluator (f64).
    fn evaluate(w: WeightSet) -> Vec<(f64, Vec<f64>)> {
        let net = ReferenceNet::new(Arc::new(w)).unwrap();
        positions()
            .iter()
            .map(|p| {
                let o = net.evaluate_position(p, &p.legal_moves());
                (o.value_logit, o.policy)
            })
            .collect()
    }

    /// The widened network evaluates as the original, value and every policy logit, for one
    /// and two hidden layers and either or both widths grown — while its new units are live
    /// (non-zero incoming weights), so training can use them.
    #[test]
    fn a_widened_network_evaluates_as_the_original() {
        for (small, wide) in [
            ("pair0_d16_o2_h8_kp", "pair0_d16_o2_h24_kp"),
            ("pair2_d8_o2_h8_h24", "pair2_d8_o2_h16_h26"),
            ("pair2_d8_o2_h8_h24", "pair2_d8_o2_h8_h210"),
        ] {
            let original = init::random_weights(&shape(small), 5);
            let widened = widen(&original, &shape(wide), 9).unwrap();
            let (a, b) = (evaluate(original.clone()), evaluate(widened.clone()));
            for ((va, pa), (vb, pb)) in a.iter().zip(&b) {
                assert!((va - vb).abs() < 1e-9, "{wide}: value {va} against {vb}");
                for (x, y) in pa.iter().zip(pb) {
                    assert!((x - y).abs() < 1e-9, "{wide}: policy logit {x} against {y}");
                }
            }
            // The copied block is the original's, the new incoming rows are drawn.
            let (w_old, w_new) = (
                original.tensor("w1").unwrap(),
                widened.tensor("w1").unwrap(),
            );
            assert_eq!(&w_new[..w_old.len()], w_old, "{wide}: w1's first rows");
            let wide_shape = shape(wide);
            if wide_shape.h > shape(small).h {
                assert!(
                    w_new[w_old.len()..].iter().any(|&x| x != 0.0),
                    "{wide}: new rows live"
                );
            }
            let last = wide_shape.h2.unwrap_or(wide_shape.h) as usize;
            let old_last = shape(small).h2.unwrap_or(shape(small).h) as usize;
            let v = widened.tensor("value.w").unwrap();
            assert!(
                v[old_last..last].iter().all(|&x| x == 0.0),
                "{wide}: value.w reads nothing new"
            );
        }
    }

    /// A shape that differs in anything but the hidden widths, a narrower one, a second
    /// layer added or dropped, the same shape and `nnue` shapes are refused, each saying why.
    #[test]
    fn what_is_not_a_widening_is_refused_with_the_reason() {
        let w = init::random_weights(&shape("pair0_d16_o2_h8_kp"), 1);
        for (target, says) in [
            ("pair0_d32_o2_h8_kp", "only the hidden widths"),
            ("pair0_d16_o3_h16_kp", "only the hidden widths"),
            ("pair0_d16_o2_h16", "only the hidden widths"),
            ("pair0_d16_o2_h4_kp", "h4 is narrower than h8"),
            ("pair0_d16_o2_h8_h24_kp", "second hidden layer"),
            ("pair0_d16_o2_h8_kp", "nothing to widen"),
        ] {
            let e = widen(&w, &shape(target), 1).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains(target), "{target}: {e}");
        }
        let two = init::random_weights(&shape("pair2_d8_o2_h8_h24"), 1);
        let e = widen(&two, &shape("pair2_d8_o2_h8_h22"), 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("h22 is narrower than h24"), "{e}");
        let nnue = init::random_weights(&shape("pair0_d16_o1_h8_h28_kp_nnue"), 1);
        let e = widen(&nnue, &shape("pair0_d16_o1_h16_h28_kp_nnue"), 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nnue"), "{e}");
    }
}
