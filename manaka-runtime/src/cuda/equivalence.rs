//! The one CUDA equivalence harness: a batch evaluator (the GPU's [`CudaEvaluator`], or the
//! emulated kernels in the tests) against the reference evaluator (SPEC §4–6) on the same
//! positions, in batches of cycling sizes. `manaka gpu-check` runs it on the device; the
//! kernel-emulation tests run it on the host.
//!
//! [`CudaEvaluator`]: super::CudaEvaluator

use super::CudaError;
use crate::eval::{Evaluation, Leaf};
use crate::random::{RandomPositions, random_positions};
use crate::reference::compare::{TOLERANCE, relative_error};
use crate::reference::{Output, ReferenceNet};
use crate::shogi::{Move, Position};

/// Failures listed per check, at most (the counts go on in the errors).
const MAX_FAILURES: usize = 10;

/// The positions of the checks: `count` random playouts of up to `max_ply` moves (captures,
/// hands, promotions, drops), the start position, and a sparse mating problem (pieces missing
/// from the board: under kp/halfkp these are repeated id-0 tokens, which the pair block must
/// skip, SPEC §3).
pub fn check_positions(count: usize, seed: u64, max_ply: u32) -> Result<Vec<Position>, String> {
    let mut out = random_positions(&RandomPositions {
        count,
        seed,
        min_ply: 0,
        max_ply,
    })?;
    out.push(Position::startpos());
    out.push(Position::from_sfen("8k/6G2/9/7N1/9/9/9/9/K8 b P 1").expect("valid SFEN"));
    Ok(out)
}

/// What a check found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Equivalence {
    pub leaves: usize,
    pub moves: usize,
    /// Largest relative errors ([`relative_error`]); infinite where an output was NaN.
    pub value_error: f64,
    pub policy_error: f64,
    /// The first few leaves out of [`TOLERANCE`], misshapen answers and failed batches.
    pub failures: Vec<String>,
}

impl Equivalence {
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The reference's outputs for every position, on all cores (it is the slow side).
fn reference_outputs(
    net: &ReferenceNet,
    positions: &[Position],
    moves: &[Vec<Move>],
) -> Vec<Output> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 32);
    let chunk = positions.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = positions
            .chunks(chunk)
            .zip(moves.chunks(chunk))
            .map(|(p, m)| {
                s.spawn(move || {
                    p.iter()
                        .zip(m)
                        .map(|(p, m)| net.evaluate_position(p, m))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("reference thread"))
            .collect()
    })
}

/// Evaluates `positions` with `evaluate` in batches of `sizes` (cycling through them, so
/// single leaves, tile edges and large batches follow one another and reuse grown buffers),
/// and compares every value logit and every legal move's policy logit with the reference's:
/// `|got − reference| <= 1e-4 · (1 + |reference|)`, NaN never. A batch that fails is a
/// failure; the check goes on with the next.
pub fn check(
    reference: &ReferenceNet,
    positions: &[Position],
    sizes: &[usize],
    mut evaluate: impl FnMut(&[Leaf<'_>], &mut Vec<Evaluation>) -> Result<(), CudaError>,
) -> Equivalence {
    let moves: Vec<Vec<Move>> = positions.iter().map(|p| p.legal_moves()).collect();
    let want = reference_outputs(reference, positions, &moves);
    let mut eq = Equivalence {
        leaves: positions.len(),
        moves: moves.iter().map(Vec::len).sum(),
        ..Equivalence::default()
    };
    let worst = |e: f64| if e.is_nan() { f64::INFINITY } else { e };
    let fail = |eq: &mut Equivalence, line: String| {
        if eq.failures.len() < MAX_FAILURES {
            eq.failures.push(line);
        }
    };
    let mut at = 0;
    let mut out: Vec<Evaluation> = Vec::new();
    for &size in sizes.iter().cycle() {
        if at >= positions.len() || size == 0 {
            break;
        }
        let end = (at + size).min(positions.len());
        let batch: Vec<Leaf<'_>> = (at..end)
            .map(|i| Leaf {
                position: &positions[i],
                moves: &moves[i],
            })
            .collect();
        if let Err(e) = evaluate(&batch, &mut out) {
            fail(&mut eq, format!("batch {at}..{end}: {e}"));
            at = end;
            continue;
        }
        if out.len() != batch.len() {
            fail(
                &mut eq,
                format!(
                    "batch {at}..{end}: {} answers for {} leaves",
                    out.len(),
                    batch.len()
                ),
            );
        }
        for (k, got) in out.iter().enumerate().take(batch.len()) {
            let i = at + k;
            let w = &want[i];
            let sfen = || positions[i].to_sfen();
            let ve = relative_error(got.value_logit, w.value_logit);
            eq.value_error = eq.value_error.max(worst(ve));
            if ve.is_nan() || ve > TOLERANCE {
                let line = format!(
                    "leaf {i} ({}): value {} vs reference {}",
                    sfen(),
                    got.value_logit,
                    w.value_logit
                );
                fail(&mut eq, line);
            }
            if got.policy_logits.len() != w.policy.len() {
                let line = format!(
                    "leaf {i}: {} policy logits for {} moves",
                    got.policy_logits.len(),
                    w.policy.len()
                );
                fail(&mut eq, line);
                continue;
            }
            for (j, (&g, &r)) in got.policy_logits.iter().zip(&w.policy).enumerate() {
                let pe = relative_error(g, r);
                eq.policy_error = eq.policy_error.max(worst(pe));
                if pe.is_nan() || pe > TOLERANCE {
                    let line = format!(
                        "leaf {i} ({}): move {} policy {g} vs reference {r}",
                        sfen(),
                        moves[i][j]
                    );
                    fail(&mut eq, line);
                }
            }
        }
        at = end;
    }
    eq
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::{TensorSource, init};
    use manaka_shapes::Shape;
    use std::sync::Arc;

    fn reference(seed: u64) -> ReferenceNet {
        let shape = Shape::parse("pair4_d16_o2_h32").unwrap();
        let src: Arc<dyn TensorSource + Send + Sync> = Arc::new(init::random_weights(&shape, seed));
        ReferenceNet::new(src).unwrap()
    }

    /// `net`'s answers, rounded to f32 as an engine's are.
    fn answer(net: &ReferenceNet, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        out.clear();
        out.extend(
            batch
                .iter()
                .map(|l| net.evaluate_position(l.position, l.moves).to_evaluation()),
        );
    }

    /// The oracle itself passes; other weights, a NaN, a short answer and a failed batch are
    /// each reported — the harness can fail.
    #[test]
    fn the_harness_passes_the_oracle_and_reports_each_kind_of_failure() {
        let (a, b) = (reference(1), reference(2));
        let positions = check_positions(20, 3, 60).unwrap();
        let eq = check(&a, &positions, &[1, 7], |batch, out| {
            answer(&a, batch, out);
            Ok(())
        });
        assert!(eq.ok(), "{:?}", eq.failures);
        assert_eq!((eq.leaves, eq.value_error < TOLERANCE), (22, true));
        let eq = check(&a, &positions, &[5], |batch, out| {
            answer(&b, batch, out);
            Ok(())
        });
        assert!(!eq.ok() && eq.value_error > TOLERANCE);
        let eq = check(&a, &positions, &[4], |batch, out| {
            answer(&a, batch, out);
            out[0].value_logit = f32::NAN;
            out[1].policy_logits.pop();
            Ok(())
        });
        assert_eq!(eq.value_error, f64::INFINITY);
        assert!(eq.failures.iter().any(|f| f.contains("policy logits for")));
        let eq = check(&a, &positions, &[30], |_, _| {
            Err(CudaError::Unwritten("value".into()))
        });
        assert!(
            eq.failures[0].starts_with("batch 0..22:"),
            "{:?}",
            eq.failures
        );
    }
}
