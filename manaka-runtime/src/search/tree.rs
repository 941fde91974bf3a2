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
    /// The prior: the softmax of the node's logits, computed once at expansion so that
    /// interior selection needs no softmax over every move.
    pub prior: f32,
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
    /// What is proven about the game from here, from the side to move: the outcome lies in
    /// `[lower, upper]`, each −1 (loss), 0 (draw) or +1 (win); `[-1, 1]` until something is
    /// proven (see `proof.rs`).
    pub lower: i8,
    pub upper: i8,
    /// For a proven win or loss: plies to the end of the game along the proof (0 at a node
    /// where the game is over).
    pub plies: u16,
    /// No descent through this node can add anything: every move below is closed (proven
    /// bounds, or leaves at the depth cap already visited). Parents skip it.
    pub exhausted: bool,
}

impl Node {
    /// Whether the outcome from here is known exactly (`lower == upper`).
    pub fn is_proven(&self) -> bool {
        self.lower == self.upper
    }

    /// The mean value clamped into the proven bounds: what the parent's Q of this node is
    /// made of (an exact value once proven, whatever the backups averaged).
    pub fn bounded_value(&self, sum: f64, visits: f64) -> f64 {
        let mean = if visits > 0.0 { sum / visits } else { 0.0 };
        mean.clamp(f64::from(self.lower), f64::from(self.upper))
    }

    /// Mean value from the side to move here (0 before any visit).
    pub fn mean_value(&self) -> f64 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / f64::from(self.visits)
        }
    }
}

/// The priors stored on a node's edges: the softmax of its logits divided by `temperature`
/// (1 = the network's prior; `InteriorRule::prior_temperature`), computed in f64.
pub fn priors(logits: &[f32], temperature: f64) -> Vec<f32> {
    let mut prior: Vec<f64> = logits.iter().map(|&l| f64::from(l) / temperature).collect();
    super::gumbel::softmax_in_place(&mut prior);
    prior.into_iter().map(|p| p as f32).collect()
}

/// Items per arena chunk (2^16).
const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;

/// An arena that grows by fixed-size chunks, so that growing never copies (a doubling `Vec`
/// of a large tree would stall the search for tens of milliseconds — longer than a `stop`
/// may take). Index `i` lives in chunk `i >> 16` at offset `i & 0xffff`; a run allocated with
/// [`Chunked::push_run`] is contiguous within one chunk (a chunk's tail that cannot hold a run
/// is left unused: at most 600 of 65,536 slots).
struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    /// Chunks in use (the rest are kept, emptied, for reuse).
    active: usize,
    /// Items in use (unused chunk tails excluded).
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            active: 0,
            len: 0,
        }
    }
}

impl<T> Chunked<T> {
    fn clear(&mut self) {
        for c in &mut self.chunks[..self.active] {
            c.clear();
        }
        self.active = 0;
        self.len = 0;
    }

    /// Makes sure the current chunk has room for `n` more items.
    fn room_for(&mut self, n: usize) {
        debug_assert!(n <= CHUNK);
        if self.active == 0 || self.chunks[self.active - 1].len() + n > CHUNK {
            if self.active == self.chunks.len() {
                self.chunks.push(Vec::with_capacity(CHUNK));
            }
            self.active += 1;
        }
    }

    fn position(&self) -> u32 {
        (((self.active - 1) << CHUNK_BITS) | self.chunks[self.active - 1].len()) as u32
    }

    fn push(&mut self, item: T) -> u32 {
        self.room_for(1);
        let i = self.position();
        self.chunks[self.active - 1].push(item);
        self.len += 1;
        i
    }

    /// Appends `items` contiguously; returns the index of the first.
    fn push_run(&mut self, items: impl ExactSizeIterator<Item = T>) -> u32 {
        let n = items.len();
        self.room_for(n.max(1));
        let i = self.position();
        self.chunks[self.active - 1].extend(items);
        self.len += n;
        i
    }

    fn get(&self, i: u32) -> &T {
        &self.chunks[(i >> CHUNK_BITS) as usize][i as usize & (CHUNK - 1)]
    }

    fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.chunks[(i >> CHUNK_BITS) as usize][i as usize & (CHUNK - 1)]
    }

    fn run(&self, first: u32, n: usize) -> &[T] {
        let off = first as usize & (CHUNK - 1);
        &self.chunks[(first >> CHUNK_BITS) as usize][off..off + n]
    }
}

#[derive(Default)]
pub struct Tree {
    nodes: Chunked<Node>,
    edges: Chunked<Edge>,
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
        self.nodes.len
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.len == 0
    }

    /// Adds a node; the first one added is the root.
    pub fn add_node(&mut self, kind: NodeKind, raw_value: f32) -> NodeId {
        self.nodes.push(Node {
            value_sum: 0.0,
            raw_value,
            visits: 0,
            pending: 0,
            first_edge: 0,
            num_edges: 0,
            kind,
            lower: -1,
            upper: 1,
            plies: 0,
            exhausted: false,
        })
    }

    /// Adds a node whose outcome is known: the game is over there (mate, repetition,
    /// declaration) or a mate search proved it. `value` is −1, 0 or +1 from the side to
    /// move, `plies` the distance to the end.
    pub fn add_proven(&mut self, value: i8, plies: u16) -> NodeId {
        let id = self.add_node(NodeKind::Pending, 0.0);
        self.make_proven(id, value, plies);
        id
    }

    /// Adds a node where the game ends with `value` for the side to move, without a proven
    /// outcome (a repetition under a draw value other than 0, which the proven bounds
    /// −1/0/+1 cannot express): every descent reaching it backs `value` up.
    pub fn add_terminal(&mut self, value: f32) -> NodeId {
        let id = self.add_node(NodeKind::Pending, 0.0);
        self.make_terminal(id, value);
        id
    }

    /// Turns a pending node (no edges yet) into an unproven terminal ([`Tree::add_terminal`]).
    pub fn make_terminal(&mut self, id: NodeId, value: f32) {
        let n = self.nodes.get_mut(id);
        debug_assert_eq!(n.num_edges, 0);
        n.kind = NodeKind::Terminal;
        n.raw_value = value;
    }

    /// Turns a pending node (no edges yet) into one whose outcome is known, as
    /// [`Tree::add_proven`] makes them (the parallel search learns it after queuing the node).
    pub fn make_proven(&mut self, id: NodeId, value: i8, plies: u16) {
        let n = self.nodes.get_mut(id);
        debug_assert_eq!(n.num_edges, 0);
        n.kind = NodeKind::Terminal;
        n.raw_value = f32::from(value);
        (n.lower, n.upper, n.plies) = (value, value, plies);
    }

    pub fn node(&self, id: NodeId) -> &Node {
        self.nodes.get(id)
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        self.nodes.get_mut(id)
    }

    /// Gives a pending (or new) node its edges and network value. `logits[i]` belongs to
    /// `moves[i]`; the priors are the softmax of the logits (temperature 1; the search
    /// expands with its configured temperature, `SearchState::expand_node`).
    pub fn expand(&mut self, id: NodeId, moves: &[Move], logits: &[f32], value: f32) {
        self.expand_with_priors(id, moves, logits, &priors(logits, 1.0), value);
    }

    /// [`Tree::expand`] with the priors already computed ([`priors`] of the logits): the
    /// parallel search computes them outside the tree's lock.
    pub fn expand_with_priors(
        &mut self,
        id: NodeId,
        moves: &[Move],
        logits: &[f32],
        priors: &[f32],
        value: f32,
    ) {
        debug_assert_eq!(moves.len(), logits.len());
        debug_assert_eq!(moves.len(), priors.len());
        let first = self
            .edges
            .push_run(
                moves
                    .iter()
                    .zip(logits)
                    .zip(priors)
                    .map(|((&mv, &logit), &prior)| Edge {
                        logit,
                        prior,
                        child: NO_NODE,
                        mv,
                    }),
            );
        let node = self.nodes.get_mut(id);
        node.first_edge = first;
        node.num_edges = moves.len() as u16;
        node.raw_value = value;
        node.kind = NodeKind::Expanded;
    }

    pub fn edges(&self, id: NodeId) -> &[Edge] {
        let n = self.nodes.get(id);
        self.edges.run(n.first_edge, n.num_edges as usize)
    }

    /// The child node `mv` leads to from `id`, if the move was tried.
    pub fn child_by_move(&self, id: NodeId, mv: Move) -> Option<NodeId> {
        self.edges(id)
            .iter()
            .find(|e| e.mv == mv && e.child != NO_NODE)
            .map(|e| e.child)
    }

    /// The most visited evaluated move of node `id` (ties: the first).
    pub fn most_visited_expanded(&self, id: NodeId) -> Option<Move> {
        self.edges(id)
            .iter()
            .filter(|e| e.child != NO_NODE && self.node(e.child).kind == NodeKind::Expanded)
            .max_by_key(|e| self.node(e.child).visits)
            .map(|e| e.mv)
    }

    /// The children of node `id` (the nodes of its tried moves).
    pub fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.edges(id)
            .iter()
            .filter(|e| e.child != NO_NODE)
            .map(|e| e.child)
    }

    pub fn set_child(&mut self, id: NodeId, edge: usize, child: NodeId) {
        let first = self.nodes.get(id).first_edge;
        self.edges.get_mut(first + edge as u32).child = child;
    }

    /// Completed visits of the move's child (0 if never tried).
    pub fn edge_visits(&self, edge: &Edge) -> u32 {
        if edge.child == NO_NODE {
            0
        } else {
            self.nodes.get(edge.child).visits
        }
    }

    /// Backs up `leaf_value` (from the side to move at the last node of `path`) along
    /// `path`, root first: every node gets one more visit and the value from its own side to
    /// move, so the sign flips once per edge. With `pending`, also removes the virtual loss
    /// the descent put on the path.
    pub fn backup(&mut self, path: &[NodeId], leaf_value: f64, pending: bool) {
        let mut v = leaf_value;
        for &id in path.iter().rev() {
            let node = self.nodes.get_mut(id);
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
            self.nodes.get_mut(id).pending += 1;
        }
    }

    /// Takes back [`Tree::add_pending`] for a descent that will not be backed up.
    pub fn remove_pending(&mut self, path: &[NodeId]) {
        for &id in path {
            let n = self.nodes.get_mut(id);
            n.pending = n.pending.saturating_sub(1);
        }
    }

    /// Copies the subtree under `root` into `into` (emptied first), `root` becoming its node 0
    /// ([`ROOT`]): every node's statistics, bounds and edges, breadth first (tree reuse,
    /// `GumbelSearch::run`). Descents in flight are dropped (none remain after a search),
    /// nodes still waiting for an evaluation are left out, and exhaustion is forgotten (it
    /// depended on the old root's depth cap).
    pub fn copy_subtree(&self, root: NodeId, into: &mut Tree) {
        self.copy_subtree_where(root, into, |_| true);
    }

    /// [`Tree::copy_subtree`] keeping only the children that `keep` accepts (and what is
    /// below them): an edge whose child is left out becomes untried again.
    pub fn copy_subtree_where(&self, root: NodeId, into: &mut Tree, keep: impl Fn(&Node) -> bool) {
        into.clear();
        let copy = |n: &Node| Node {
            pending: 0,
            exhausted: false,
            first_edge: 0,
            num_edges: 0,
            ..*n
        };
        // (old id, new id), in the order the copies were made.
        let mut todo = vec![(root, into.nodes.push(copy(self.node(root))))];
        let mut i = 0;
        while i < todo.len() {
            let (old, new) = todo[i];
            i += 1;
            let n = self.node(old);
            if n.kind != NodeKind::Expanded {
                continue;
            }
            let edges = self.edges(old);
            let first = into.edges.push_run(edges.iter().map(|e| Edge {
                child: NO_NODE,
                ..*e
            }));
            let copied = into.nodes.get_mut(new);
            copied.first_edge = first;
            copied.num_edges = n.num_edges;
            for (k, e) in edges.iter().enumerate() {
                if e.child == NO_NODE
                    || self.node(e.child).kind == NodeKind::Pending
                    || !keep(self.node(e.child))
                {
                    continue;
                }
                let child = into.nodes.push(copy(self.node(e.child)));
                into.edges.get_mut(first + k as u32).child = child;
                todo.push((e.child, child));
            }
        }
    }

    /// Every node in the arena (all reachable from the root: the tree only grows, and a
    /// copy keeps only what it reaches).
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.chunks[..self.nodes.active].iter().flatten()
    }

    /// Bytes the tree occupies now (nodes and edges; the arenas' spare capacity excluded).
    pub fn bytes_used(&self) -> usize {
        self.nodes.len * size_of::<Node>() + self.edges.len * size_of::<Edge>()
    }

    /// What one more node with `num_edges` edges costs.
    pub fn node_cost(num_edges: usize) -> usize {
        size_of::<Node>() + num_edges * size_of::<Edge>()
    }

    /// Mean bytes per node of this tree (0 for an empty tree).
    pub fn bytes_per_node(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.bytes_used() as f64 / self.len() as f64
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
    fn chunked_arenas_keep_runs_contiguous_across_chunks() {
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let mut t = Tree::new();
        for round in 0..2 {
            // 70,000 nodes (two node chunks) with 30 edges each (33 edge chunks).
            for i in 0..70_000u32 {
                let id = t.add_node(NodeKind::Pending, 0.0);
                assert_eq!(id, i);
                let logits: Vec<f32> = (0..moves.len())
                    .map(|k| (i as usize * 31 + k) as f32)
                    .collect();
                t.expand(id, &moves, &logits, 0.5);
            }
            for id in [0u32, 2183, 2184, 65_535, 65_536, 69_999] {
                let edges = t.edges(id);
                assert_eq!(edges.len(), moves.len());
                for (k, e) in edges.iter().enumerate() {
                    assert_eq!(
                        (e.mv, e.logit),
                        (moves[k], (id as usize * 31 + k) as f32),
                        "round {round}"
                    );
                }
            }
            t.set_child(65_536, 29, 7);
            assert_eq!(t.edges(65_536)[29].child, 7);
            assert_eq!(t.bytes_used(), 70_000 * Tree::node_cost(moves.len()));
            t.clear();
            assert!(t.is_empty());
        }
    }

    #[test]
    fn a_copied_subtree_keeps_exactly_the_subtree() {
        // root → a (two children: b, pending c), root → d; copying a's subtree keeps a and b
        // with their statistics and edges, and nothing of the root or d.
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let logits: Vec<f32> = (0..moves.len()).map(|k| k as f32).collect();
        let mut t = Tree::new();
        let ids: Vec<NodeId> = (0..5).map(|_| t.add_node(NodeKind::Pending, 0.0)).collect();
        let [root, a, b, c, d] = ids[..] else {
            unreachable!()
        };
        for id in [root, a, b, d] {
            t.expand(id, &moves, &logits, 0.25);
        }
        t.set_child(root, 3, a);
        t.set_child(root, 4, d);
        t.set_child(a, 7, b);
        t.set_child(a, 8, c);
        t.backup(&[root, a, b], 0.5, false);
        t.backup(&[root, a], -0.3, false);
        t.node_mut(b).lower = 1;
        t.node_mut(b).upper = 1;
        t.node_mut(b).plies = 5;
        t.node_mut(a).exhausted = true;
        let mut into = Tree::new();
        t.copy_subtree(a, &mut into);
        assert_eq!(into.len(), 2, "a and b; c waits for its evaluation");
        let (na, oa) = (into.node(ROOT), t.node(a));
        assert_eq!((na.visits, na.value_sum), (oa.visits, oa.value_sum));
        assert!(!na.exhausted);
        let e = into.edges(ROOT);
        assert_eq!(e.len(), moves.len());
        assert_eq!(
            (e[7].mv, e[7].logit, e[7].prior),
            (t.edges(a)[7].mv, 7.0, t.edges(a)[7].prior)
        );
        assert_eq!(e[8].child, NO_NODE);
        let nb = into.node(e[7].child);
        assert_eq!((nb.visits, nb.lower, nb.upper, nb.plies), (1, 1, 1, 5));
        assert!(
            e.iter()
                .enumerate()
                .all(|(k, e)| k == 7 || e.child == NO_NODE)
        );
        assert_eq!(into.bytes_used(), 2 * Tree::node_cost(moves.len()));
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
            size_of::<Edge>() <= 16,
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
