//! What the game's rules and the engine's settings make of a position and a search, at the
//! USI level: the move limit (`MaxMovesToDraw`), resigning (`ResignValue`). docs/usi.md,
//! "Draws, resigning and the move limit".
//!
//! The search is given the draw value and the plies to the limit (`SearchConfig::draw_value`,
//! `plies_to_draw`: repetitions and the game's end are draws in the tree); these rules act
//! around it: they decide the last two plies of a game exactly, cap the tree at the game's
//! end, report proven results beyond the limit as the draw they are, and decide whether to
//! resign.

use super::info::Scoring;
use crate::search::{Proof, SearchResult};
use crate::shogi::{Move, Position};

/// `ResignValue` is not applied when the move limit is this close (plies): a lost-looking
/// position is often drawn by the limit before it is mated. A proven loss that comes before
/// the limit is still resigned.
pub const RESIGN_HORIZON: u32 = 32;

/// The plies the game has left before `max_moves` (`MaxMovesToDraw`; 0 off) draws it,
/// counting the move about to be chosen: the position's SFEN move number is the number of
/// that move, so `max_moves − move number + 1`. `None` when the rule is off, or when the
/// position is already past the limit (the GUI plays on: the rule is not applied).
pub fn plies_left(max_moves: u32, position: &Position) -> Option<u32> {
    if max_moves == 0 {
        return None;
    }
    let played = position.ply().saturating_sub(1);
    max_moves.checked_sub(played).filter(|&k| k > 0)
}

/// What the last plies before the move limit allow, decided without a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LastPlies {
    /// More than two plies left: the search decides.
    Open,
    /// A mate in one among the allowed moves: the search plays it.
    Mate,
    /// No mate can come before the limit after any of these moves (all of the allowed
    /// moves when the limit is the next ply): the game is drawn.
    Draw(Vec<Move>),
    /// Every allowed move lets the opponent mate with the game's last move.
    Lost,
}

/// The last two plies of a game, exactly: with one ply left only a mate in one wins
/// (a mate delivered by the last move counts), anything else draws; with two, a mate in
/// one wins, and a move after which the opponent has no mate in one draws. `allowed` are
/// the moves the search may play (`go searchmoves`, or every legal move).
pub fn last_plies(position: &Position, plies_left: u32, allowed: &[Move]) -> LastPlies {
    if plies_left > 2 || allowed.is_empty() {
        return LastPlies::Open;
    }
    let mut after = position.clone();
    let mates = |p: &mut Position, m: Move| {
        p.do_move(m);
        let mated = p.legal_moves().is_empty();
        p.undo_move(m);
        mated
    };
    if allowed.iter().any(|&m| mates(&mut after, m)) {
        return LastPlies::Mate;
    }
    if plies_left == 1 {
        return LastPlies::Draw(allowed.to_vec());
    }
    let safe: Vec<Move> = allowed
        .iter()
        .copied()
        .filter(|&m| {
            after.do_move(m);
            let mated_next = after.mate_in_one().is_some();
            after.undo_move(m);
            !mated_next
        })
        .collect();
    if safe.is_empty() {
        LastPlies::Lost
    } else {
        LastPlies::Draw(safe)
    }
}

/// Whether to answer `bestmove resign` instead of the search's move, and why: with
/// `ResignValue` on (`resign_below_cp`), a proven loss that comes before the move limit, or
/// a score at or below the threshold — never for a forced move (one allowed move: it is
/// answered after a handful of simulations, so its score says little; the next move
/// decides), never in a draw the move limit settles, and not on the score alone within
/// [`RESIGN_HORIZON`] plies of the limit.
pub fn resignation(
    r: &SearchResult,
    resign_below_cp: Option<i32>,
    forced: bool,
    scoring: &Scoring,
) -> Option<String> {
    let threshold = resign_below_cp?;
    if forced || scoring.settled_draw || r.best_move.is_none() {
        return None;
    }
    let k = scoring.plies_left;
    match r.proof {
        Some(Proof::Loss { plies }) => {
            if k.is_some_and(|k| u32::from(plies) > k) {
                return None;
            }
            Some(format!("resign: proven loss in {plies} plies"))
        }
        Some(_) => None,
        None => {
            if k.is_some_and(|k| k <= RESIGN_HORIZON) {
                return None;
            }
            let cp = r.score_cp();
            (cp <= threshold).then(|| {
                format!(
                    "resign: score cp {cp} is at or below the ResignValue threshold {threshold}"
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(sfen: &str, moves: &[&str]) -> Position {
        let mut p = Position::from_sfen(sfen).unwrap();
        p.play_usi_moves(moves.iter().copied()).unwrap();
        p
    }

    #[test]
    fn plies_left_counts_from_the_sfen_move_number() {
        let start = Position::startpos();
        assert_eq!(plies_left(0, &start), None);
        assert_eq!(plies_left(256, &start), Some(256));
        let p = pos("startpos", &["7g7f", "3c3d", "2g2f"]);
        assert_eq!(plies_left(256, &p), Some(253));
        assert_eq!(plies_left(4, &p), Some(1));
        assert_eq!(plies_left(3, &p), None, "past the limit: not applied");
        let late = pos("4k4/9/9/9/9/9/9/9/4K4 b G 255", &[]);
        assert_eq!(plies_left(256, &late), Some(2));
    }

    #[test]
    fn the_last_ply_wins_only_by_mate() {
        // Black mates with G*5b; with one ply left that still wins.
        let p = pos("4k4/9/4G4/9/9/9/9/9/4K4 b G 1", &[]);
        let all = p.legal_moves();
        assert_eq!(last_plies(&p, 1, &all), LastPlies::Mate);
        assert_eq!(last_plies(&p, 3, &all), LastPlies::Open);
        // Without the mate among the allowed moves every move draws.
        let quiet: Vec<Move> = all
            .iter()
            .copied()
            .filter(|m| m.to_usi() != "G*5b")
            .collect();
        let LastPlies::Draw(d) = last_plies(&p, 1, &quiet) else {
            panic!()
        };
        assert_eq!(d.len(), quiet.len());
    }

    fn usi(moves: &[Move]) -> Vec<String> {
        moves.iter().map(|m| m.to_usi()).collect()
    }

    #[test]
    fn with_two_plies_left_only_moves_that_allow_no_mate_in_one_draw() {
        // White's silver on 4g and a gold in hand: after 5i4i, G*4h mates; after 5i6h or
        // 5i6i White has no mate in one.
        let p = pos("4k4/9/9/9/9/9/5s3/9/4K4 b g 1", &[]);
        let all = p.legal_moves();
        assert_eq!(usi(&all), ["5i4i", "5i6h", "5i6i"]);
        let LastPlies::Draw(safe) = last_plies(&p, 2, &all) else {
            panic!()
        };
        assert_eq!(usi(&safe), ["5i6h", "5i6i"]);
        // One ply left: White's mate would come too late, every move draws.
        assert_eq!(last_plies(&p, 1, &all), LastPlies::Draw(all.clone()));
        // Only the losing move allowed (go searchmoves 5i4i): lost.
        assert_eq!(last_plies(&p, 2, &all[..1]), LastPlies::Lost);
        // Two golds in hand and a pawn on 5h: both king moves allow a gold-drop mate.
        let lost = pos("4k4/9/9/9/9/9/4s4/4p4/4K4 b 2g 1", &[]);
        assert_eq!(last_plies(&lost, 2, &lost.legal_moves()), LastPlies::Lost);
        assert!(matches!(
            last_plies(&lost, 1, &lost.legal_moves()),
            LastPlies::Draw(_)
        ));
    }

    fn result(proof: Option<Proof>, root_value: f64) -> SearchResult {
        let mut r = crate::search::GumbelSearch::new(Default::default()).run(
            &Position::startpos(),
            crate::eval::MaterialEvaluator::factory().create().as_mut(),
            &crate::search::SearchLimits::simulations(4),
        );
        r.proof = proof;
        r.root_value = root_value;
        r
    }

    #[test]
    fn resigning_follows_the_threshold_the_proof_and_the_limit() {
        let off = Scoring::default();
        let lost = result(None, -0.95); // about −2200 cp
        assert!(lost.score_cp() < -2000, "{}", lost.score_cp());
        assert_eq!(
            resignation(&lost, None, false, &off),
            None,
            "ResignValue off"
        );
        assert!(resignation(&lost, Some(-2000), false, &off).is_some());
        assert_eq!(resignation(&lost, Some(-3000), false, &off), None);
        assert_eq!(resignation(&lost, Some(-2000), true, &off), None, "forced");
        // A proven loss resigns whatever the score, unless it comes after the limit.
        let mated = result(Some(Proof::Loss { plies: 6 }), -1.0);
        assert!(resignation(&mated, Some(-29_000), false, &off).is_some());
        let near = Scoring {
            plies_left: Some(5),
            ..off
        };
        assert_eq!(resignation(&mated, Some(-2000), false, &near), None);
        let far = Scoring {
            plies_left: Some(7),
            ..off
        };
        assert!(resignation(&mated, Some(-2000), false, &far).is_some());
        // Near the limit the score alone does not resign; far from it, it does.
        assert_eq!(resignation(&lost, Some(-2000), false, &far), None);
        let farther = Scoring {
            plies_left: Some(RESIGN_HORIZON + 1),
            ..off
        };
        assert!(resignation(&lost, Some(-2000), false, &farther).is_some());
        let settled = Scoring {
            settled_draw: true,
            ..off
        };
        assert_eq!(resignation(&mated, Some(-2000), false, &settled), None);
        // Won or drawn: never.
        let won = result(Some(Proof::Draw), 0.0);
        assert_eq!(resignation(&won, Some(0), false, &off), None);
    }
}
