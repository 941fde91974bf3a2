//! Parity with DeepMind's mctx: `gumbel_muzero_policy` was run on small shogi trees by
//! `scripts/mctx_vectors.py` and its root visit counts, improved policy (`action_weights`)
//! and chosen action were written to `mctx_vectors.rs`; the same searches here must agree.
//!
//! The cases cover the SPEC §8 constants and mctx's defaults (c_scale 0.1 with min-max
//! rescaling), depth-1 (bandit) and deeper trees, with and without Gumbel noise, and several
//! (simulations, considered) settings: (32, 16), (64, 30 of 32), (50, 8), (17, 4),
//! (100, 16), (200, 16). mctx computes in f32 and Manaka in f64, so the improved policy is
//! compared to 1e-4 and σ(completedQ) at the root to a relative 1e-4; visit counts and the
//! chosen move must be equal.

use super::mctx_vectors::CASES;
use super::*;
use crate::eval::{Evaluation, Evaluator, Leaf};
use crate::shogi::Position;

pub(super) struct MctxCase {
    pub name: &'static str,
    pub sfen: &'static str,
    pub simulations: u32,
    pub considered: u32,
    pub max_depth: u16,
    pub c_visit: f64,
    pub c_scale: f64,
    pub rescale: bool,
    /// The root's legal moves, sorted by USI text (mctx's action order).
    pub moves: &'static [&'static str],
    pub gumbel: &'static [f64],
    pub visits: &'static [u32],
    pub weights: &'static [f64],
    /// σ(completedQ) at the root after the search (mctx's `qtransform` on the final tree).
    pub sigma: &'static [f64],
    pub action: &'static str,
}

/// The network both sides use: hashes of the SFEN without its move number (see the script).
struct SfenHashEvaluator;

fn fnv1a64(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

fn sfen_key(p: &Position) -> String {
    p.to_sfen()
        .rsplit_once(' ')
        .map(|(k, _)| k.to_string())
        .unwrap_or_default()
}

impl Evaluator for SfenHashEvaluator {
    fn name(&self) -> String {
        "sfen-hash (mctx parity)".into()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        out.clear();
        for leaf in batch {
            let key = sfen_key(leaf.position);
            let v = (0.9 * (2.0 * unit(fnv1a64(&key)) - 1.0)) as f32;
            out.push(Evaluation {
                // The search value tanh(ℓ/2) is then v (to f32 precision).
                value_logit: (2.0 * f64::from(v).atanh()) as f32,
                policy_logits: leaf
                    .moves
                    .iter()
                    .map(|m| (8.0 * unit(fnv1a64(&format!("{key} {}", m.to_usi()))) - 4.0) as f32)
                    .collect(),
            });
        }
    }
}

#[test]
fn gumbel_search_matches_mctx() {
    assert!(CASES.len() >= 3);
    for case in CASES {
        let position = Position::from_sfen(case.sfen).unwrap();
        let legal = position.legal_moves();
        let mut usi: Vec<String> = legal.iter().map(|m| m.to_usi()).collect();
        usi.sort();
        assert_eq!(usi, case.moves, "{}: the same legal moves", case.name);
        let index = |m: &str| case.moves.iter().position(|x| *x == m).unwrap();
        let gumbel = legal
            .iter()
            .map(|m| case.gumbel[index(&m.to_usi())])
            .collect();
        let config = SearchConfig {
            max_considered: case.considered,
            q_transform: QTransform {
                c_visit: case.c_visit,
                c_scale: case.c_scale,
                rescale: case.rescale,
            },
            noise: RootNoise::Fixed(gumbel),
            max_depth: case.max_depth,
            // mctx backs up a node at max_depth again on every visit, and chooses below the
            // root by its deterministic rule.
            cap_revisits: true,
            interior: InteriorRule::Gumbel,
            entering_king: None,
            ..SearchConfig::default()
        };
        // The sequential search, and the batched one with batch size 1 (its equal); the
        // batched search with virtual loss is a different, approximate algorithm.
        for driver in [Driver::Sequential, Driver::Batched] {
            let mut search = GumbelSearch::new(config.clone());
            let limits = SearchLimits::simulations(case.simulations);
            let control = SearchControl::new(&limits);
            let r = search.run_driver(
                &position,
                &mut [&mut SfenHashEvaluator],
                &limits,
                &control,
                &mut |_| {},
                driver,
            );
            for m in &r.root_moves {
                let i = index(&m.mv.to_usi());
                assert_eq!(
                    m.visits, case.visits[i],
                    "{}: visits of {}",
                    case.name, case.moves[i]
                );
                // f32 in mctx: relative tolerance on σ, which grows with the visit count.
                assert!(
                    (m.sigma_q - case.sigma[i]).abs() <= 1e-4 * (1.0 + case.sigma[i].abs()),
                    "{}: sigma(completedQ) of {}: {} vs mctx {}",
                    case.name,
                    case.moves[i],
                    m.sigma_q,
                    case.sigma[i]
                );
                assert!(
                    (m.improved_policy - case.weights[i]).abs() < 1e-4,
                    "{}: improved policy of {}: {} vs mctx {}",
                    case.name,
                    case.moves[i],
                    m.improved_policy,
                    case.weights[i]
                );
            }
            assert_eq!(
                r.best_move.unwrap().to_usi(),
                case.action,
                "{}: the chosen move",
                case.name
            );
        }
    }
}
