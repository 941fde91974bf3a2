//! `manaka eval`'s work, in the runtime so that `manaka lab`'s inspector shows the same
//! numbers: play moves from a position, evaluate the position reached, and report the value
//! and the policy over its legal moves (SPEC §5).

use super::LoadedNetwork;
use crate::eval::{cp_from_logit, win_probability};
use crate::labels::move_label;
use crate::shogi::{Move, Position};

/// One legal move's share of the policy ([`evaluate_line`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MoveScore {
    pub mv: Move,
    /// The move in USI notation.
    pub usi: String,
    /// dlshogi's policy label of the move (SPEC §5).
    pub label: u16,
    pub logit: f64,
    /// Softmax over the legal moves alone (SPEC §5).
    pub prob: f64,
}

/// A network's view of one position ([`evaluate_line`]): what `manaka eval` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct LineEvaluation {
    /// The position evaluated: the start with the moves played.
    pub position: Position,
    /// The evaluator that ran ([`EvaluatorFactory::name`](crate::eval::EvaluatorFactory::name)).
    pub evaluator: String,
    /// Value logit ℓ, from the side to move's point of view (SPEC §5).
    pub value_logit: f64,
    /// σ(ℓ).
    pub win_prob: f64,
    /// round(600 ℓ) clamped to ±30000.
    pub cp: i32,
    /// Every legal move, most likely first (ties by USI text).
    pub policy: Vec<MoveScore>,
}

/// Plays `moves` from `start` and evaluates the position reached with `network`: the value
/// and the policy over its legal moves. The accumulators follow the moves incrementally, as in
/// a search (the evaluator builds them along the position's history); the reference
/// evaluator's logits are its exact f64 ones. `moves` must be legal in turn (parse them with
/// [`Position::parse_usi_move`] first); an illegal one is played anyway, as `do_move` would.
pub fn evaluate_line(network: &LoadedNetwork, start: &Position, moves: &[Move]) -> LineEvaluation {
    let mut position = start.clone();
    let (value_logit, logits) = match &network.reference {
        Some(net) => {
            let mut state = net.refresh(&position);
            for &m in moves {
                let effect = position.do_move(m);
                net.update(&mut state, &effect, &position);
            }
            let o = net.evaluate(&state, &position, &position.legal_moves());
            (o.value_logit, o.policy)
        }
        None => {
            for &m in moves {
                position.do_move(m);
            }
            let e = network
                .factory
                .create()
                .evaluate_one(&position, &position.legal_moves());
            let logits = e.policy_logits.iter().map(|&x| f64::from(x)).collect();
            (f64::from(e.value_logit), logits)
        }
    };
    let legal = position.legal_moves();
    // Softmax over the legal moves alone (SPEC §5).
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = logits.iter().map(|&l| (l - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    let side = position.side_to_move();
    let mut policy: Vec<MoveScore> = legal
        .iter()
        .zip(logits.iter().zip(&exps))
        .map(|(&mv, (&logit, &e))| MoveScore {
            mv,
            usi: mv.to_usi(),
            label: move_label(mv, side),
            logit,
            prob: e / total,
        })
        .collect();
    policy.sort_by(|a, b| b.prob.total_cmp(&a.prob).then_with(|| a.usi.cmp(&b.usi)));
    LineEvaluation {
        evaluator: network.factory.name(),
        value_logit,
        win_prob: win_probability(value_logit),
        cp: cp_from_logit(value_logit),
        policy,
        position,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Evaluator, MaterialEvaluator};
    use crate::loader::tests::{TINY, weight_file};
    use crate::loader::{BUILTIN_MATERIAL, Backend, NetworkLoader, Weights};
    use crate::reference::ReferenceNet;
    use crate::weights::WeightFile;
    use std::sync::Arc;

    /// `evaluate_line` on the reference evaluator, moves played incrementally, equals the
    /// oracle evaluated from scratch on the position reached; the policy covers exactly the
    /// legal moves, sorted, summing to one; the scores follow SPEC §5.
    #[test]
    fn evaluate_line_matches_the_oracle_from_scratch() {
        let (_dir, path, _) = weight_file(TINY, 5);
        let net = NetworkLoader::reference_only()
            .load(&Weights::File(path.clone()), Backend::Reference)
            .unwrap();
        let start = Position::startpos();
        let mut pos = start.clone();
        let mut played = Vec::new();
        for usi in [
            "2g2f", "8c8d", "2f2e", "8d8e", "2e2d", "2c2d", "2h2d", "P*2c",
        ] {
            let m = pos.parse_usi_move(usi).unwrap();
            pos.do_move(m);
            played.push(m);
        }
        let line = evaluate_line(&net, &start, &played);
        assert_eq!(line.position.to_sfen(), pos.to_sfen());
        let source = Arc::new(WeightFile::open(&path).unwrap());
        let legal = pos.legal_moves();
        let want = ReferenceNet::new(source)
            .unwrap()
            .evaluate_position(&pos, &legal);
        assert!((line.value_logit - want.value_logit).abs() < 1e-9);
        assert_eq!(line.cp, (600.0 * want.value_logit).round() as i32);
        assert!((line.win_prob - 1.0 / (1.0 + (-want.value_logit).exp())).abs() < 1e-12);
        assert_eq!(line.policy.len(), legal.len());
        for (m, logit) in legal.iter().zip(&want.policy) {
            let row = line.policy.iter().find(|r| r.mv == *m).unwrap();
            assert!((row.logit - logit).abs() < 1e-9, "{}", row.usi);
            assert_eq!(row.usi, m.to_usi());
        }
        assert!(line.policy.windows(2).all(|w| w[0].prob >= w[1].prob));
        let total: f64 = line.policy.iter().map(|r| r.prob).sum();
        assert!((total - 1.0).abs() < 1e-9);
        assert_eq!(line.evaluator, format!("{TINY} (reference)"));
    }

    /// Any other evaluator is asked through the search's interface: the material evaluator's
    /// value (a hand-checkable function of the material) comes back unchanged.
    #[test]
    fn evaluate_line_asks_other_evaluators_through_the_search_interface() {
        let net = NetworkLoader::reference_only()
            .load(&Weights::Material, Backend::Auto)
            .unwrap();
        assert_eq!(net.identity, BUILTIN_MATERIAL);
        let start =
            Position::from_sfen("lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1")
                .unwrap();
        let line = evaluate_line(&net, &start, &[]);
        let want = MaterialEvaluator::new().evaluate_one(&start, &start.legal_moves());
        assert_eq!(line.value_logit, f64::from(want.value_logit));
        assert!(line.value_logit > 0.0, "Black has a rook in hand");
        let p = line.policy[0].prob;
        assert!(line.policy.iter().all(|r| (r.prob - p).abs() < 1e-12));
    }
}
