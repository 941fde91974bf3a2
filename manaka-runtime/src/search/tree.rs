//! The search tree: nodes and edges in two arenas, and the backup.
//!
//! A node is one position reached by one path from the root (a tree, not a graph: visit
//! statistics stay node-local, only network outputs are shared between transpositions, by
//! the evaluation cache). Its edges — one per legal move, with the prior logit and the child
//! node, if any — sit contiguously in the edge arena. Values are from the side to move at the
//! node (SPEC §8), so the parent's Q of an edge is minus the child's mean value, and the
//! backup negates once per edge.
//!
//! Memory: a node costs `size_of::<Node>()` plus `size_of::<Edge>()` per legal move; the
//! worst case is bounded by [`Tree::max_bytes_per_node`], and [`Tree::bytes_used`] is what
//! the search checks against its memory limit.

use crate::shogi::{MAX_MOVES, Move};

/// Index of a node in the arena.
pub type NodeId = u32;

/// No node (an edge whose move has not been tried yet).
pub const NO_NODE: NodeId = NodeId::MAX;

/// The root is always node 0.
pub const ROOT: NodeId = 0;

/// One legal move of a node.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    /// The network's policy logit for the move (as evaluated, before any softmax).
    pub logit: f32,
    pub child: NodeId,
    pub mv: Move,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// Created and queued for evaluation; no edges yet.
    Pending,
    /// Evaluated; edges present.
    Expanded,
    /// The game is decided here (mate, repetition, declaration): the value is exact.
    Terminal,
}

#[derive(Clone, Copy, Debug)]
pub struct Node {
    /// Sum of backed-up values, from the side to move here; the node's own evaluation is the
    /// first of them (as in mctx, where a new node's value is its raw value with one visit).
    pub value_sum: f64,
    /// The network's value of the node (tanh(ℓ/2)), or the exact value of a terminal node.
    pub raw_value: f32,
    /// Completed simulations through this node (its own evaluation included).
    pub visits: u32,
    /// Descents in flight through this node, waiting for an evaluation (virtual loss).
    pub pending: u32,
    pub first_edge: u32,
    pub num_edges: u16,
    pub kind: NodeKind,
}

impl Node {
    /// Mean value from the side to move here (0 before any visit).
    pub fn mean_value(&self) -> f64 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / f64::from(self.visits)
        }
    }
}

#[derive(Default)]
pub struct Tree {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
}

impl Tree {
    pub fn new() -> Tree {
        Tree::default()
    }

    /// Empties the tree, keeping its memory for the next search.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.edges.clear();
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Adds a node; the first one added is the root.
    pub fn add_node(&mut self, kind: NodeKind, raw_value: f32) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node {
            value_sum: 0.0,
            raw_value,
            visits: 0,
            pending: 0,
            first_edge: 0,
            num_edges: 0,
            kind,
        });
        id
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id as usize]
    }

    /// Gives a pending (or new) node its edges and network value. `logits[i]` belongs to
    /// `moves[i]`.
    pub fn expand(&mut self, id: NodeId, moves: &[Move], logits: &[f32], value: f32) {
        debug_assert_eq!(moves.len(), logits.len());
        let first = self.edges.len() as u32;
        self.edges
            .extend(moves.iter().zip(logits).map(|(&mv, &logit)| Edge {
                logit,
                child: NO_NODE,
                mv,
            }));
        let node = &mut self.nodes[id as usize];
        node.first_edge = first;
        node.num_edges = moves.len() as u16;
        node.raw_value = value;
        node.kind = NodeKind::Expanded;
    }

    pub fn edges(&self, id: NodeId) -> &[Edge] {
        let n = &self.nodes[id as usize];
        &self.edges[n.first_edge as usize..n.first_edge as usize + n.num_edges as usize]
    }

    pub fn set_child(&mut self, id: NodeId, edge: usize, child: NodeId) {
        let first = self.nodes[id as usize].first_edge as usize;
        self.edges[first + edge].child = child;
    }

    /// Completed visits of the move's child (0 if never tried).
    pub fn edge_visits(&self, edge: &Edge) -> u32 {
        if edge.child == NO_NODE {
            0
        } else {
            self.nodes[edge.child as usize].visits
        }
    }

    /// Backs up `leaf_value` (from the side to move at the last node of `path`) along
    /// `path`, root first: every node gets one more visit and the value from its own side to
    /// move, so the sign flips once per edge. With `pending`, also removes the virtual loss
    /// the descent put on the path.
    pub fn backup(&mut self, path: &[NodeId], leaf_value: f64, pending: bool) {
        let mut v = leaf_value;
        for &id in path.iter().rev() {
            let node = &mut self.nodes[id as usize];
            node.visits += 1;
            node.value_sum += v;
            if pending {
                debug_assert!(node.pending > 0);
                node.pending -= 1;
            }
            v = -v;
        }
    }

    /// Marks a descent in flight along `path` (virtual loss; see `descent.rs`).
    pub fn add_pending(&mut self, path: &[NodeId]) {
        for &id in path {
            self.nodes[id as usize].pending += 1;
        }
    }

    /// Bytes the tree occupies now (nodes and edges; the arenas' spare capacity excluded).
    pub fn bytes_used(&self) -> usize {
        self.nodes.len() * size_of::<Node>() + self.edges.len() * size_of::<Edge>()
    }

    /// What one more node with `num_edges` edges costs.
    pub fn node_cost(num_edges: usize) -> usize {
        size_of::<Node>() + num_edges * size_of::<Edge>()
    }

    /// Mean bytes per node of this tree (0 for an empty tree).
    pub fn bytes_per_node(&self) -> f64 {
        if self.nodes.is_empty() {
            0.0
        } else {
            self.bytes_used() as f64 / self.nodes.len() as f64
        }
    }

    /// The most one node can cost: a node with [`MAX_MOVES`] legal moves.
    pub fn max_bytes_per_node() -> usize {
        Self::node_cost(MAX_MOVES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shogi::Position;

    #[test]
    fn backup_flips_sign_once_per_edge() {
        // A chain root → a → b → c, built by hand; a value of +0.6 for the side to move at c
        // is −0.6 at b, +0.6 at a, −0.6 at the root.
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let logits = vec![0.0; moves.len()];
        let mut t = Tree::new();
        let ids: Vec<NodeId> = (0..4).map(|_| t.add_node(NodeKind::Pending, 0.0)).collect();
        for &id in &ids {
            t.expand(id, &moves, &logits, 0.0);
        }
        for w in ids.windows(2) {
            t.set_child(w[0], 0, w[1]);
        }
        t.add_pending(&ids);
        t.backup(&ids, 0.6, true);
        let means: Vec<f64> = ids.iter().map(|&i| t.node(i).mean_value()).collect();
        assert_eq!(means, [-0.6, 0.6, -0.6, 0.6]);
        assert!(
            ids.iter()
                .all(|&i| t.node(i).visits == 1 && t.node(i).pending == 0)
        );
        // A second backup from b (two edges below the root): −0.2 at b is −0.2 at the root.
        t.backup(&ids[..3], -0.2, false);
        assert!((t.node(ROOT).mean_value() - (-0.6 - 0.2) / 2.0).abs() < 1e-15);
        assert!((t.node(ids[1]).mean_value() - (0.6 + 0.2) / 2.0).abs() < 1e-15);
        assert!((t.node(ids[2]).mean_value() - (-0.6 - 0.2) / 2.0).abs() < 1e-15);
        assert_eq!(t.node(ids[3]).visits, 1);
        // Edge visits read the child's count.
        let e = t.edges(ROOT)[0];
        assert_eq!(t.edge_visits(&e), 2);
        assert_eq!(t.edge_visits(&t.edges(ROOT)[1]), 0);
    }

    #[test]
    fn memory_accounting() {
        let mut t = Tree::new();
        assert_eq!(t.bytes_per_node(), 0.0);
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let id = t.add_node(NodeKind::Pending, 0.0);
        t.expand(id, &moves, &vec![0.0; moves.len()], 0.0);
        assert_eq!(t.bytes_used(), Tree::node_cost(moves.len()));
        assert!(
            size_of::<Edge>() <= 12,
            "edges stay small: {}",
            size_of::<Edge>()
        );
        assert!(
            size_of::<Node>() <= 32,
            "nodes stay small: {}",
            size_of::<Node>()
        );
        assert!(Tree::max_bytes_per_node() >= t.bytes_per_node() as usize);
    }
}
