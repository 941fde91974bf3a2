//! A material-count evaluator: the value is the material balance, the policy is uniform.
//!
//! It needs no weights and costs almost nothing, so it is what the search tests, the USI
//! protocol tests and the match-runner tests play with (`EvalFile builtin:material`), and a
//! baseline any trained network should beat. It is a real evaluator: the value logit follows
//! SPEC §5's scale (`score cp = 600·ℓ`), so a position one rook ahead scores about the
//! rook's centipawn value.

use super::{Evaluation, Evaluator, EvaluatorFactory, FnFactory, Leaf};
use crate::shogi::{Color, HandKind, PieceKind, Position, Square};
use std::sync::Arc;

/// Centipawn values of the fourteen piece kinds, in SPEC §1's order
/// `P L N S G B R K +P +L +N +S +B +R` (the king counts nothing: both sides always have one).
/// The numbers are the customary shogi-engine material scale (a pawn about 90).
pub const PIECE_VALUES: [i32; 14] = [
    90, 315, 405, 495, 540, 855, 990, 0, 540, 540, 540, 540, 945, 1395,
];

/// Centipawn values of pieces in hand, SPEC §1's hand order `P L N S G B R`: a piece in hand
/// is worth its unpromoted value.
pub const HAND_VALUES: [i32; 7] = [90, 315, 405, 495, 540, 855, 990];

/// Material balance as value, uniform policy (every legal move gets logit 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct MaterialEvaluator;

impl MaterialEvaluator {
    pub fn new() -> MaterialEvaluator {
        MaterialEvaluator
    }

    /// A factory handing out material evaluators (they share nothing: there is nothing to
    /// share).
    pub fn factory() -> Arc<dyn EvaluatorFactory> {
        Arc::new(FnFactory::new(
            "material (built-in, uniform policy)",
            || Box::new(MaterialEvaluator) as Box<dyn Evaluator>,
        ))
    }

    /// Material balance in centipawns from the side to move's point of view: board pieces
    /// plus pieces in hand, ours minus theirs.
    pub fn material_cp(position: &Position) -> i32 {
        let us = position.side_to_move();
        let mut cp = 0;
        for sq in Square::all() {
            if let Some(p) = position.piece_at(sq) {
                let v = PIECE_VALUES[p.kind.index()];
                cp += if p.color == us { v } else { -v };
            }
        }
        for color in Color::ALL {
            let hand = position.hand(color);
            let sign = if color == us { 1 } else { -1 };
            for k in HandKind::ALL {
                cp += sign * HAND_VALUES[k.index()] * i32::from(hand.count(k));
            }
        }
        cp
    }

    /// The value logit for a material balance: ℓ = cp / 600, the inverse of SPEC §5's
    /// `score cp = round(600·ℓ)`.
    pub fn value_logit(position: &Position) -> f32 {
        Self::material_cp(position) as f32 / 600.0
    }
}

impl Evaluator for MaterialEvaluator {
    fn name(&self) -> String {
        "material (built-in, uniform policy)".to_string()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        out.clear();
        out.extend(batch.iter().map(|leaf| Evaluation {
            value_logit: Self::value_logit(leaf.position),
            policy_logits: vec![0.0; leaf.moves.len()],
        }));
    }
}

// The king's entry keeps the table aligned with PieceKind's indices.
const _: () = assert!(PIECE_VALUES[PieceKind::King as usize] == 0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_is_balanced_and_policy_uniform() {
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let e = MaterialEvaluator.evaluate_one(&pos, &moves);
        assert_eq!(e.value_logit, 0.0);
        assert_eq!(e.policy_logits.len(), moves.len());
        assert!(e.policy_logits.iter().all(|&l| l == 0.0));
    }

    #[test]
    fn value_is_from_the_side_to_move() {
        // Black has an extra rook in hand; White to move sees the same balance negated.
        let black = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 b R 1").unwrap();
        let white = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 w R 1").unwrap();
        assert_eq!(MaterialEvaluator::material_cp(&black), 990);
        assert_eq!(MaterialEvaluator::material_cp(&white), -990);
        assert!((MaterialEvaluator::value_logit(&black) - 1.65).abs() < 1e-6);
        // A promoted rook on the board counts its promoted value.
        let dragon = Position::from_sfen("4k4/9/9/9/9/9/9/9/+R3K4 b - 1").unwrap();
        assert_eq!(MaterialEvaluator::material_cp(&dragon), 1395);
    }

    #[test]
    fn factory_makes_working_evaluators() {
        let f = MaterialEvaluator::factory();
        let mut e = f.create();
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let mut out = Vec::new();
        e.evaluate(
            &[
                Leaf {
                    position: &pos,
                    moves: &moves,
                },
                Leaf {
                    position: &pos,
                    moves: &[],
                },
            ],
            &mut out,
        );
        assert_eq!(out.len(), 2);
        assert!(out[1].policy_logits.is_empty());
        assert!(f.name().contains("material"));
    }
}
