//! Proven results in the tree: score-bounded MCTS (Cazenave & Saffidine, *Score Bounded
//! Monte-Carlo Tree Search*, CG 2010), the MCTS-solver of Winands, Björnsson and Saito (CG
//! 2008) extended to draws.
//!
//! Every node carries bounds `[lower, upper]` on the game's outcome from its side to move,
//! each −1 (loss), 0 (draw) or +1 (win). A node where the game is over (mate, a repetition
//! outcome, an entering-king declaration) or that a mate search proved is born with equal
//! bounds. An expanded node's bounds follow from its children's — a move's outcome for the
//! chooser lies in `[−upper(child), −lower(child)]`, an untried move's in `[−1, 1]`:
//!
//! - `lower = max over moves of −upper(child)`: one child that loses makes the node won,
//!   a drawn child guarantees at least a draw;
//! - `upper = max over moves of −lower(child)`: only when every move is tried and every
//!   child wins for its side is the node lost.
//!
//! Bounds change only when a descent ends on a proven node, so [`propagate`] walks up the
//! descent's path and stops at the first node whose bounds stay the same.
//!
//! Two consequences for the search (`descent.rs`): a child that cannot do better for the
//! chooser than what the node already guarantees ([`prunes`]: every proven child, and any
//! child whose best case is the node's lower bound) takes no more descents, so visits go
//! where something is still to learn; and a child's Q is its mean value clamped into its
//! bounds ([`Node::bounded_value`](super::tree::Node::bounded_value)), exact once proven.
//! A proven root ends the search.

use super::tree::{NO_NODE, Node, NodeId, NodeKind, Tree};

/// What is proven about a position, from its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proof {
    /// The side to move wins in `plies` plies (its own moves and the replies), at best.
    Win { plies: u16 },
    /// The side to move loses in `plies` plies, resisting longest.
    Loss { plies: u16 },
    /// A draw (repetition) with best play.
    Draw,
}

impl Proof {
    /// The proof a node's bounds hold, if they are equal.
    pub fn of(node: &Node) -> Option<Proof> {
        match (node.lower, node.upper) {
            (1, 1) => Some(Proof::Win { plies: node.plies }),
            (-1, -1) => Some(Proof::Loss { plies: node.plies }),
            (0, 0) => Some(Proof::Draw),
            _ => None,
        }
    }

    /// The exact value: +1, −1 or 0.
    pub fn value(self) -> f64 {
        match self {
            Proof::Win { .. } => 1.0,
            Proof::Loss { .. } => -1.0,
            Proof::Draw => 0.0,
        }
    }

    /// USI `score mate N`: plies, positive when the side to move mates (SPEC-free: the USI
    /// protocol's sign convention). `None` for a draw.
    pub fn mate_plies(self) -> Option<i32> {
        match self {
            Proof::Win { plies } => Some(i32::from(plies)),
            Proof::Loss { plies } => Some(-i32::from(plies)),
            Proof::Draw => None,
        }
    }
}

/// Whether `child` needs no more descents from a parent whose lower bound is
/// `parent_lower`: the best the move can bring the chooser, `−lower(child)`, is no more
/// than the parent already has (Cazenave & Saffidine's cut). Every proven child qualifies.
#[inline]
pub fn prunes(parent_lower: i8, child: &Node) -> bool {
    -child.lower <= parent_lower
}

/// Recomputes an expanded node's bounds (and plies) from its children; whether they changed.
pub fn update(tree: &mut Tree, id: NodeId) -> bool {
    let node = *tree.node(id);
    if node.kind != NodeKind::Expanded {
        return false; // terminal (fixed at birth) or waiting for its evaluation
    }
    let (mut lower, mut upper) = (-1i8, -1i8);
    let (mut win_plies, mut loss_plies) = (u16::MAX, 0u16);
    for e in tree.edges(id) {
        if e.child == NO_NODE {
            upper = 1;
            continue;
        }
        let c = tree.node(e.child);
        lower = lower.max(-c.upper);
        upper = upper.max(-c.lower);
        let plies = c.plies.saturating_add(1);
        if c.upper == -1 {
            win_plies = win_plies.min(plies); // the quickest win
        }
        loss_plies = loss_plies.max(plies); // the longest resistance, used when all lose
    }
    let plies = match (lower, upper) {
        (1, _) => win_plies,
        (_, -1) => loss_plies,
        _ => 0,
    };
    let changed = (lower, upper, plies) != (node.lower, node.upper, node.plies);
    if changed {
        let n = tree.node_mut(id);
        (n.lower, n.upper, n.plies) = (lower, upper, plies);
    }
    changed
}

/// After a descent that ended on a proven node (the last of `path`, root first): updates
/// the bounds of the nodes above it, as far as they change.
pub fn propagate(tree: &mut Tree, path: &[NodeId]) {
    for &id in path.iter().rev().skip(1) {
        if !update(tree, id) {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shogi::Position;

    /// A root with three tried moves (children built by hand) and the rest untried.
    fn root_with(children: &[(i8, u16)], all_tried: bool) -> (Tree, Vec<NodeId>) {
        let pos = Position::startpos();
        let mut moves = pos.legal_moves();
        if all_tried {
            moves.truncate(children.len());
        }
        let mut t = Tree::new();
        let root = t.add_node(NodeKind::Pending, 0.0);
        t.expand(root, &moves, &vec![0.0; moves.len()], 0.0);
        let mut ids = vec![root];
        for (i, &(v, plies)) in children.iter().enumerate() {
            let c = if v == 2 {
                let c = t.add_node(NodeKind::Pending, 0.0);
                t.expand(c, &moves[..1], &[0.0], 0.0);
                c
            } else {
                t.add_proven(v, plies)
            };
            t.set_child(root, i, c);
            ids.push(c);
        }
        update(&mut t, root);
        (t, ids)
    }

    #[test]
    fn a_losing_child_wins_the_node_by_the_quickest_mate() {
        // Children: unknown, lost in 4, lost in 2 (from their side): the node wins in 3.
        let (t, _) = root_with(&[(2, 0), (-1, 4), (-1, 2)], false);
        let r = t.node(0);
        assert_eq!((r.lower, r.upper), (1, 1));
        assert_eq!(Proof::of(r), Some(Proof::Win { plies: 3 }));
        assert_eq!(Proof::of(r).unwrap().mate_plies(), Some(3));
    }

    #[test]
    fn all_children_winning_loses_the_node_by_the_longest_resistance() {
        let (t, _) = root_with(&[(1, 0), (1, 6), (1, 2)], true);
        assert_eq!(Proof::of(t.node(0)), Some(Proof::Loss { plies: 7 }));
        assert_eq!(Proof::Loss { plies: 7 }.mate_plies(), Some(-7));
        // One untried move left: nothing is proven, but nothing is better than a loss yet.
        let (t, _) = root_with(&[(1, 0), (1, 6)], false);
        assert_eq!((t.node(0).lower, t.node(0).upper), (-1, 1));
    }

    #[test]
    fn draws_bound_both_sides() {
        // A drawn child and an unknown one: at least a draw, at most a win.
        let (t, ids) = root_with(&[(0, 0), (2, 0)], true);
        assert_eq!((t.node(0).lower, t.node(0).upper), (0, 1));
        // The drawn child takes no more descents; the unknown one still may.
        assert!(prunes(0, t.node(ids[1])));
        assert!(!prunes(0, t.node(ids[2])));
        // A drawn child and a won one (for its side): a draw exactly.
        let (t, _) = root_with(&[(0, 0), (1, 3)], true);
        assert_eq!(Proof::of(t.node(0)), Some(Proof::Draw));
        // With no guarantee yet, only a child that wins for its side is cut.
        let (t, ids) = root_with(&[(1, 3), (2, 0)], false);
        assert!(prunes(-1, t.node(ids[1])));
        assert!(!prunes(-1, t.node(ids[2])));
    }

    #[test]
    fn propagation_climbs_while_bounds_change() {
        // root → a → b, b proven lost: a is won in 1, the root (one untried move) learns
        // only that a is lost for it.
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let mut t = Tree::new();
        let root = t.add_node(NodeKind::Pending, 0.0);
        t.expand(root, &moves, &vec![0.0; moves.len()], 0.0);
        let a = t.add_node(NodeKind::Pending, 0.0);
        t.expand(a, &moves[..2], &[0.0, 0.0], 0.0);
        t.set_child(root, 0, a);
        let b = t.add_proven(-1, 0);
        t.set_child(a, 1, b);
        propagate(&mut t, &[root, a, b]);
        assert_eq!(Proof::of(t.node(a)), Some(Proof::Win { plies: 1 }));
        assert_eq!((t.node(root).lower, t.node(root).upper), (-1, 1));
        assert!(prunes(t.node(root).lower, t.node(a)));
        // A node that is not expanded keeps its bounds.
        let p = t.add_node(NodeKind::Pending, 0.0);
        assert!(!update(&mut t, p));
    }
}
