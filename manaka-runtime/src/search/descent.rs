//! One descent from the root to a leaf, shared by the sequential and the batched search so
//! that both select, classify leaves and back up identically (the seed's invariant:
//! batch size 1 reproduces the sequential search exactly).
//!
//! At the root the move is chosen by Gumbel + Sequential Halving: among the moves whose visit
//! count equals the schedule's considered count for this simulation, the best
//! `g + logit + σ(completedQ)`. Below the root it is mctx's deterministic rule,
//! `argmax π'(a) − N(a)/(1 + ΣN)`. A new node is classified before any evaluation:
//! repetition (from the game history the position carries plus the path), no legal move
//! (mate: −1 for the side to move), a possible entering-king declaration (+1), then the
//! evaluation cache; only what remains goes to the evaluator.

use super::cache::EvalCache;
use super::config::{InteriorRule, LEAF_MATE_NODES, SearchConfig};
use super::gumbel::{self, QTransform};
use super::halving::SequentialHalving;
use super::proof::{self, Proof};
use super::puct;
use super::tree::{NO_NODE, NodeId, NodeKind, ROOT, Tree, priors};
use crate::eval::Evaluation;
use crate::mate;
use crate::shogi::{Move, Position, Repetition};

impl RootMark {
    pub fn of(position: &Position, restricted: bool, config: &SearchConfig) -> RootMark {
        RootMark {
            draw_at: config
                .plies_to_draw
                .map(|k| position.history_len() + k as usize),
            start_key: position.key_at(0).unwrap_or(0),
            history_len: position.history_len(),
            key: position.key(),
            restricted,
            draw_value: config.draw_value,
        }
    }
}

/// How a descent ended.
#[derive(Debug)]
pub(crate) enum DescentEnd {
    /// The leaf's value is known without the evaluator (terminal node, depth cap, cache
    /// hit): back it up now. From the side to move at the leaf.
    Known(f64),
    /// A new node, queued: evaluate the position the scratch board shows, with these moves.
    Evaluate { node: NodeId, moves: Vec<Move> },
    /// The descent reached a node already queued for evaluation (batched search only).
    Queued { node: NodeId },
    /// The tree is at its memory limit; nothing was added.
    TreeFull,
}

/// Where [`SearchState::walk`] stopped.
#[derive(Debug)]
pub(crate) enum Walk {
    /// The leaf's value is known (terminal or proven node, depth cap, nothing open below).
    Known(f64),
    /// A node already queued for evaluation.
    Queued { node: NodeId },
    /// `parent`'s edge `edge` was never tried: the new leaf goes there.
    Untried { parent: NodeId, edge: usize },
}

/// What a new leaf is, judged from its position alone (no tree, no cache).
#[derive(Debug)]
pub(crate) enum LeafClass {
    /// The game's outcome from here is known: `value` (−1, 0, +1 for the side to move) in
    /// `plies` plies; `leaf_mate` when the leaf mate check found it.
    Over {
        value: i8,
        plies: u16,
        leaf_mate: bool,
    },
    /// An ordinary position with these legal moves: the network judges it.
    Open { moves: Vec<Move> },
}

/// Classifies the position `pos` shows, a leaf never visited `depth` plies below the root:
/// repetition (from the game history plus the path), no legal move (mate: −1 for the side
/// to move, SPEC §8), the move limit ([`SearchConfig::plies_to_draw`]: a draw at or beyond
/// it), a possible entering-king declaration (+1 in one ply), then the leaf mate check
/// within [`SearchConfig::leaf_mate_plies`] and the plies the limit leaves (the shortest
/// mate first, so the length found is the length of the first mate). `pos` is left as it
/// was.
pub(crate) fn classify_leaf(pos: &mut Position, config: &SearchConfig, depth: usize) -> LeafClass {
    let over = |value, plies| LeafClass::Over {
        value,
        plies,
        leaf_mate: false,
    };
    match pos.repetition(config.repetition_plies) {
        Repetition::None => {}
        Repetition::Draw => return over(0, 0),
        // Perpetual check by the opponent, or the same board with more in hand: a win,
        // as engines score them (and the reverse a loss).
        Repetition::Win | Repetition::Superior => return over(1, 0),
        Repetition::Lose | Repetition::Inferior => return over(-1, 0),
    }
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return over(-1, 0);
    }
    // Plies left for the side to move here before the limit draws the game.
    let left = config
        .plies_to_draw
        .map_or(u32::MAX, |k| k.saturating_sub(depth as u32));
    if left == 0 {
        return over(0, 0);
    }
    if config.entering_king.is_some_and(|r| pos.can_declare_win(r)) {
        // The declaration is the side to move's last act: one ply.
        return over(1, 1);
    }
    let mate = (1..=config.leaf_mate_plies.min(left))
        .step_by(2)
        .find(|&p| mate::mate_within(pos, p, LEAF_MATE_NODES).is_some());
    match mate {
        Some(p) => LeafClass::Over {
            value: 1,
            plies: p as u16,
            leaf_mate: true,
        },
        None => LeafClass::Open { moves },
    }
}

/// Counters of one search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchStats {
    /// Completed simulations (backups), the USI `nodes`.
    pub simulations: u64,
    /// Leaves the evaluator was asked for (the root included).
    pub evaluations: u64,
    /// Evaluator calls.
    pub batches: u64,
    /// Leaves answered by the evaluation cache.
    pub cache_hits: u64,
    /// Descents that ended on a leaf already queued in the same batch.
    pub collisions: u64,
    /// Deepest leaf reached, in plies below the root.
    pub max_depth: u32,
    /// Nodes in the tree.
    pub nodes: u64,
    /// Nodes this search added to the tree (the root included): over `simulations`, the
    /// growth a long search must keep (docs/search.md, "Growth").
    pub new_nodes: u64,
    /// Descents that ended on a node whose outcome is proven (no new node, no evaluation).
    pub proven_hits: u64,
    /// Descents that ended at the depth cap with nothing left to try there.
    pub capped_hits: u64,
    /// New nodes the leaf mate check proved won (no evaluation).
    pub leaf_mates: u64,
    /// Nodes the root mate search visited.
    pub mate_nodes: u64,
    /// Visits of the root carried over from the previous search (tree reuse; 0 for a
    /// fresh tree).
    pub reused_visits: u64,
    /// Nodes carried over from the previous search.
    pub reused_nodes: u64,
    /// Times the full tree was recycled (its least visited nodes dropped) during the
    /// search, and the nodes dropped.
    pub recycled: u64,
    pub recycled_nodes: u64,
    /// Bytes the tree occupies.
    pub tree_bytes: u64,
    /// The parallel search's threads and lock figures (default with one thread).
    pub parallel: super::ParallelStats,
    /// Evaluations the evaluator got wrong — missing, a NaN or infinite value or logit, or
    /// the wrong number of logits — and that were made usable (`sanitized_logits`; a
    /// missing one is an even position with a flat policy). The USI engine says so.
    pub unusable_evaluations: u64,
}

/// Per-node numbers for selection and read-out, indexed like the node's edges.
#[derive(Default)]
pub(crate) struct NodeView {
    pub logits: Vec<f64>,
    pub visits: Vec<f64>,
    pub q: Vec<f64>,
    pub prior: Vec<f64>,
    pub completed: Vec<f64>,
    pub sigma: Vec<f64>,
    pub improved: Vec<f64>,
    /// Schedule counts at the root: completed visits plus descents in flight.
    pub counts: Vec<u64>,
    /// Whether the move may still take descents (not cut by the proven bounds, see
    /// `proof::prunes`).
    pub open: Vec<bool>,
    /// Interior selection's visited moves: (index, prior, visits, q, open).
    pub visited: Vec<(usize, f64, f64, f64, bool)>,
}

/// Everything a search works with; kept between searches to reuse memory.
pub(crate) struct SearchState {
    pub config: SearchConfig,
    pub q_transform: QTransform,
    pub tree: Tree,
    pub cache: EvalCache,
    /// The scratch board: the root position between descents, the leaf during one.
    pub pos: Position,
    pub schedule: SequentialHalving,
    /// Gumbel noise per root edge.
    pub noise: Vec<f64>,
    /// Per root edge, the key that breaks exact ties between root scores (see
    /// [`tie_break_key`]).
    pub tie_break: Vec<u32>,
    pub stats: SearchStats,
    pub view: NodeView,
    /// The root mate solver, created at its first use (its table is kept between searches).
    pub mate: Option<crate::mate::MateSolver>,
    /// The position the tree's root holds, for tree reuse.
    pub root_mark: Option<RootMark>,
    /// Per root edge, the child's visits when the search started (carried over by tree
    /// reuse): the Sequential Halving counts are the visits of this search only.
    pub root_baseline: Vec<u32>,
    /// The root's prior (softmax of its logits in f64), computed at its first view in a
    /// search; emptied when a search starts.
    pub root_prior: Vec<f64>,
}

/// Where the tree's root stands in its game, to recognise the next position of that game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RootMark {
    /// The key of the position the game's history starts from.
    pub start_key: u64,
    /// Plies from that start to the root.
    pub history_len: usize,
    /// The root's key.
    pub key: u64,
    /// Whether the root's edges are a `searchmoves` subset of the legal moves.
    pub restricted: bool,
    /// The draw value the tree's repetitions were valued with, for the root's side.
    pub draw_value: f64,
    /// Where the move limit drew the game (plies from the history's start), if one did.
    pub draw_at: Option<usize>,
}

impl SearchState {
    pub fn new(config: SearchConfig) -> SearchState {
        SearchState {
            q_transform: config.q_transform,
            cache: EvalCache::new(config.cache_entries),
            config,
            tree: Tree::new(),
            pos: Position::startpos(),
            schedule: SequentialHalving::new(0, 1),
            noise: Vec::new(),
            tie_break: Vec::new(),
            stats: SearchStats::default(),
            view: NodeView::default(),
            mate: None,
            root_mark: None,
            root_baseline: Vec::new(),
            root_prior: Vec::new(),
        }
    }

    /// Fills [`Self::view`] for node `id`. With `in_flight`, queued descents count as
    /// virtual losses (`virtual_loss` visits each, each a win for the child's side to move,
    /// i.e. a loss for the chooser); without, only completed visits count.
    ///
    /// With `improved`, also the improved policy π' (root selection needs σ only).
    pub fn view_node(&mut self, id: NodeId, in_flight: bool, improved: bool) {
        let vl = if in_flight {
            f64::from(self.config.virtual_loss)
        } else {
            0.0
        };
        let v = &mut self.view;
        v.logits.clear();
        v.visits.clear();
        v.q.clear();
        v.counts.clear();
        v.open.clear();
        let lower = self.tree.node(id).lower;
        for e in self.tree.edges(id) {
            v.logits.push(f64::from(e.logit));
            if e.child == NO_NODE {
                v.visits.push(0.0);
                v.q.push(0.0);
                v.counts.push(0);
                v.open.push(true);
                continue;
            }
            let c = self.tree.node(e.child);
            let pending = if in_flight { f64::from(c.pending) } else { 0.0 };
            let n = f64::from(c.visits) + pending * vl;
            let sum = c.value_sum + pending * vl;
            v.visits.push(n);
            // Q from the chooser's side: minus the child's mean, clamped into what is
            // proven about it (SPEC §8; proof.rs).
            v.q.push(if n > 0.0 {
                -c.bounded_value(sum, n)
            } else {
                0.0
            });
            v.open.push(!c.exhausted && !proof::prunes(lower, c));
            // At the root, the schedule counts this search's visits only (tree reuse).
            let base = if id == ROOT {
                self.root_baseline.get(v.counts.len()).copied().unwrap_or(0)
            } else {
                0
            };
            v.counts.push(
                u64::from(c.visits.saturating_sub(base))
                    + if in_flight { u64::from(c.pending) } else { 0 },
            );
        }
        if id == ROOT && self.root_prior.len() == v.logits.len() {
            // The root's logits do not change during a search: its prior is computed once.
            v.prior.clone_from(&self.root_prior);
        } else {
            gumbel::softmax(&v.logits, &mut v.prior);
            if id == ROOT {
                self.root_prior.clone_from(&v.prior);
            }
        }
        let raw = f64::from(self.tree.node(id).raw_value);
        self.q_transform.apply(
            raw,
            &v.q,
            &v.visits,
            &v.prior,
            &mut v.completed,
            &mut v.sigma,
        );
        if improved {
            gumbel::improved_policy(&v.logits, &v.sigma, &mut v.improved);
        }
    }

    /// Root selection: Gumbel + Sequential Halving (mctx:
    /// `gumbel_muzero_root_action_selection`). The simulation index is the sum of the root's
    /// schedule counts, so descents in flight take their slots in the schedule.
    ///
    /// Moves cut by the proven bounds (`proof::prunes`) are skipped: when the schedule's
    /// slot belongs to one, it goes to the least visited open move still in the race
    /// (visited at least the slot's count), else to the least visited open move. `None`
    /// when no move is open (the root is then proven).
    pub fn select_root(&mut self) -> Option<usize> {
        self.view_node(ROOT, true, false);
        let v = &self.view;
        let index: u64 = v.counts.iter().sum();
        let considered = u64::from(self.schedule.considered_visit(index));
        let max_logit = v.logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let score =
            |i: usize| gumbel::root_score(self.noise[i], v.logits[i], max_logit, v.sigma[i]);
        let tie = &self.tie_break;
        let best = |eligible: &dyn Fn(usize) -> bool| {
            let mut best: Option<(usize, f64)> = None;
            for i in (0..v.logits.len()).filter(|&i| v.open[i] && eligible(i)) {
                let s = score(i);
                if best.is_none_or(|(bi, b)| s > b || (s == b && tie[i] > tie[bi])) {
                    best = Some((i, s));
                }
            }
            best.map(|(i, _)| i)
        };
        let least = |from: u64| {
            let min = (0..v.counts.len())
                .filter(|&i| v.open[i] && v.counts[i] >= from)
                .map(|i| v.counts[i])
                .min()?;
            best(&|i| v.counts[i] == min)
        };
        // The schedule and the counts agree by construction (every descent adds one count
        // to one root move) until a move is cut.
        best(&|i| v.counts[i] == considered)
            .or_else(|| least(considered))
            .or_else(|| least(0))
    }

    /// Non-root selection (mctx: `gumbel_muzero_interior_action_selection`):
    /// `argmax(π'(a) − N(a) / (1 + ΣN))` with `π' = softmax(logit + σ(completedQ))`.
    ///
    /// Every unvisited move has the same completed Q (the mixed value), so with the priors
    /// stored at expansion `π'(a) = prior(a)·e^(σ(a) − m) / Z`, where only visited moves have
    /// their own σ: `Z = Σ_unvisited prior · e^(σ_mix − m) + Σ_visited prior · e^(σ − m)`. The
    /// best unvisited move is then the one with the largest prior. One pass over the edges,
    /// and an exponential per *visited* move only — the same choice as the full computation
    /// ([`Self::view_node`] + [`gumbel::select_non_root`], still used with mctx's rescaling,
    /// which needs every completed Q).
    pub fn select_non_root(&mut self, id: NodeId, children_capped: bool) -> Option<usize> {
        if self.q_transform.rescale && self.config.interior == InteriorRule::Gumbel {
            self.view_node(id, true, true);
            let v = &mut self.view;
            // Closed moves (and, at the cap, visited ones) take no descent.
            for (i, open) in v.open.iter_mut().enumerate() {
                *open &= !(children_capped && v.visits[i] > 0.0);
            }
            return gumbel::select_non_root_among(&v.improved, &v.visits, &v.open);
        }
        let vl = f64::from(self.config.virtual_loss);
        let lower = self.tree.node(id).lower;
        // Visited moves: (index, prior, visits, q, open).
        let visited = &mut self.view.visited;
        visited.clear();
        let (mut sum_n, mut max_n) = (0.0f64, 0.0f64);
        let (mut p_visited, mut weighted_q, mut plain_q) = (0.0f64, 0.0f64, 0.0f64);
        let mut p_unvisited = 0.0f64;
        let mut best_unvisited: Option<(usize, f64)> = None;
        for (i, e) in self.tree.edges(id).iter().enumerate() {
            let p = f64::from(e.prior);
            let (n, q, open) = if e.child == NO_NODE {
                (0.0, 0.0, true)
            } else {
                let c = self.tree.node(e.child);
                let pending = f64::from(c.pending);
                let n = f64::from(c.visits) + pending * vl;
                let sum = c.value_sum + pending * vl;
                // Q from the chooser's side: minus the child's mean, clamped into what is
                // proven about it (SPEC §8; proof.rs).
                let q = if n > 0.0 {
                    -c.bounded_value(sum, n)
                } else {
                    0.0
                };
                (n, q, !c.exhausted && !proof::prunes(lower, c))
            };
            if n > 0.0 {
                visited.push((i, p, n, q, open && !children_capped));
                sum_n += n;
                max_n = max_n.max(n);
                p_visited += p;
                weighted_q += p * q;
                plain_q += q;
            } else {
                p_unvisited += p;
                if open && best_unvisited.is_none_or(|(_, b)| p > b) {
                    best_unvisited = Some((i, p));
                }
                // An unvisited but closed move (a proven child waiting for its first
                // backup in a batch) is still unvisited for the statistics.
            }
        }
        if visited.is_empty() {
            return best_unvisited.map(|(i, _)| i);
        }
        // The mixed value (gumbel::mixed_value), from the visited moves alone.
        let raw = f64::from(self.tree.node(id).raw_value);
        let mean_q = if p_visited >= f64::MIN_POSITIVE && p_visited.is_finite() {
            weighted_q / p_visited
        } else {
            plain_q / visited.len() as f64
        };
        let v_mix = (raw + sum_n * mean_q) / (sum_n + 1.0);
        if let InteriorRule::Puct {
            c, fpu_reduction, ..
        } = self.config.interior
        {
            // Q + c·P·√ΣN/(1 + N); the best untried move is the one with the largest prior,
            // scored with the first-play value (puct.rs).
            let sqrt_n = sum_n.max(1.0).sqrt();
            let fpu = puct::first_play_value(v_mix, p_visited, fpu_reduction);
            let mut best: Option<(usize, f64)> =
                best_unvisited.map(|(i, p)| (i, puct::score(fpu, p, 0.0, sqrt_n, c)));
            for &(i, p, n, q, open) in visited.iter() {
                if !open {
                    continue;
                }
                let score = puct::score(q, p, n, sqrt_n, c);
                if best.is_none_or(|(bi, b)| score > b || (score == b && i < bi)) {
                    best = Some((i, score));
                }
            }
            return best.map(|(i, _)| i);
        }
        let qt = &self.q_transform;
        let sigma = |q: f64| gumbel::sigma(q, max_n, qt.c_visit, qt.c_scale);
        let s_mix = sigma(v_mix);
        let has_unvisited = p_unvisited > 0.0 || best_unvisited.is_some();
        let mut m = if has_unvisited {
            s_mix
        } else {
            f64::NEG_INFINITY
        };
        for &(_, _, _, q, _) in visited.iter() {
            m = m.max(sigma(q));
        }
        let mut z = p_unvisited * (s_mix - m).exp();
        for &(_, p, _, q, _) in visited.iter() {
            z += p * (sigma(q) - m).exp();
        }
        let mut best: Option<(usize, f64)> =
            best_unvisited.map(|(i, p)| (i, p * (s_mix - m).exp() / z));
        for &(i, p, n, q, open) in visited.iter() {
            if !open {
                continue;
            }
            let score = p * (sigma(q) - m).exp() / z - n / (1.0 + sum_n);
            // Ties go to the lower index, as in the full computation's argmax.
            if best.is_none_or(|(bi, b)| score > b || (score == b && i < bi)) {
                best = Some((i, score));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Walks from the root to a leaf, playing the moves on the scratch board (`played`) and
    /// recording the nodes (`path`, root first). The caller backs up or queues the leaf and
    /// then takes the moves back.
    pub fn descend(&mut self, path: &mut Vec<NodeId>, played: &mut Vec<Move>) -> DescentEnd {
        let walk = self.walk(path, played);
        for &m in played.iter() {
            self.pos.do_move(m);
        }
        match walk {
            Walk::Known(v) => DescentEnd::Known(v),
            Walk::Queued { node } => DescentEnd::Queued { node },
            Walk::Untried { parent, edge } => self.new_leaf(parent, edge, path),
        }
    }

    /// The selection part of a descent: walks the tree from the root, recording the nodes
    /// (`path`, root first) and the moves (`played`), until a node whose value is known, a
    /// node queued for evaluation, or a move never tried. Touches neither the scratch board
    /// nor the cache: the parallel search runs it under the tree's lock and does the
    /// position work outside (`parallel.rs`).
    pub fn walk(&mut self, path: &mut Vec<NodeId>, played: &mut Vec<Move>) -> Walk {
        path.clear();
        played.clear();
        path.push(ROOT);
        let mut id = ROOT;
        loop {
            let node = *self.tree.node(id);
            if let Some(p) = Proof::of(&node) {
                // The outcome is known (terminal, or proven below): its exact value.
                self.stats.proven_hits += u64::from(node.visits > 0);
                return self.known(path, p.value());
            }
            match node.kind {
                NodeKind::Terminal => return self.known(path, f64::from(node.raw_value)),
                NodeKind::Pending => {
                    self.note_depth(path);
                    return Walk::Queued { node: id };
                }
                NodeKind::Expanded => {}
            }
            if id != ROOT && path.len() > usize::from(self.config.max_depth) {
                // Depth cap: back up the node's network value again (mctx re-evaluates a
                // node at max_depth; with a deterministic network that is the same value).
                self.stats.capped_hits += 1;
                return self.known(path, f64::from(node.raw_value));
            }
            // Depth cap (unless mctx's is asked for): the children at `max_depth` plies
            // are leaves that take one descent each.
            let children_capped = !self.config.cap_revisits
                && id != ROOT
                && path.len() >= usize::from(self.config.max_depth);
            let e = if id == ROOT && !self.config.root_interior {
                self.select_root()
            } else {
                self.select_non_root(id, children_capped)
            };
            let Some(e) = e else {
                // Nothing open below (proven or capped): the node's value again, and its
                // parent sends no more descents here.
                self.tree.node_mut(id).exhausted = true;
                self.stats.capped_hits += 1;
                let value = node.bounded_value(node.value_sum, f64::from(node.visits));
                return self.known(path, value);
            };
            let edge = self.tree.edges(id)[e];
            played.push(edge.mv);
            if edge.child != NO_NODE {
                id = edge.child;
                path.push(id);
                continue;
            }
            return Walk::Untried {
                parent: id,
                edge: e,
            };
        }
    }

    /// A repetition draw's value for the side to move `depth` plies below the root, when
    /// [`SearchConfig::draw_value`] is not 0 (`None`: the draw is a proven 0).
    pub fn draw_value_at(&self, depth: usize) -> Option<f64> {
        let d = self.config.draw_value;
        (d != 0.0).then(|| if depth % 2 == 0 { d } else { -d })
    }

    pub fn note_depth(&mut self, path: &[NodeId]) {
        self.stats.max_depth = self.stats.max_depth.max(path.len() as u32 - 1);
    }

    fn known(&mut self, path: &[NodeId], value: f64) -> Walk {
        self.note_depth(path);
        Walk::Known(value)
    }

    /// The scratch board shows the position after `parent`'s edge `edge`, never visited.
    fn new_leaf(&mut self, parent: NodeId, edge: usize, path: &mut Vec<NodeId>) -> DescentEnd {
        // The leaf's depth is the parent's path length.
        let class = classify_leaf(&mut self.pos, &self.config, path.len());
        let edges = match &class {
            LeafClass::Open { moves } => moves.len(),
            LeafClass::Over { .. } => 0,
        };
        if self.tree.bytes_used() + Tree::node_cost(edges) > self.config.max_tree_bytes {
            return DescentEnd::TreeFull;
        }
        self.stats.new_nodes += 1;
        let moves = match class {
            LeafClass::Over {
                value,
                plies,
                leaf_mate,
            } => {
                self.stats.leaf_mates += u64::from(leaf_mate);
                // The child's depth is the parent's path length.
                let draw = self.draw_value_at(path.len());
                let child = match (value, draw) {
                    (0, Some(d)) => self.tree.add_terminal(d as f32),
                    _ => self.tree.add_proven(value, plies),
                };
                self.tree.set_child(parent, edge, child);
                path.push(child);
                self.note_depth(path);
                return DescentEnd::Known(f64::from(self.tree.node(child).raw_value));
            }
            LeafClass::Open { moves } => moves,
        };
        let child = self.tree.add_node(NodeKind::Pending, 0.0);
        self.tree.set_child(parent, edge, child);
        path.push(child);
        self.note_depth(path);
        if let Some((value_logit, logits)) = self.cache.get(self.pos.key(), moves.len()) {
            let value = search_value(value_logit);
            let logits = logits.to_vec();
            self.expand_node(child, &moves, &logits, value);
            self.stats.cache_hits += 1;
            return DescentEnd::Known(f64::from(value));
        }
        DescentEnd::Evaluate { node: child, moves }
    }

    /// Gives `node` its edges: the logits as evaluated, the priors at the interior rule's
    /// temperature (`InteriorRule::prior_temperature`).
    pub fn expand_node(&mut self, node: NodeId, moves: &[Move], logits: &[f32], value: f32) {
        let priors = priors(logits, self.config.interior.prior_temperature());
        self.tree
            .expand_with_priors(node, moves, logits, &priors, value);
    }

    /// Stores an evaluation of a queued node (and in the cache, under the position's key).
    /// Returns the value to back up.
    pub fn expand_evaluated(
        &mut self,
        node: NodeId,
        key: u64,
        moves: &[Move],
        evaluation: &Evaluation,
    ) -> f64 {
        let logits = sanitized_logits(&evaluation.policy_logits, moves.len());
        let value = search_value(evaluation.value_logit);
        self.cache.insert(key, evaluation.value_logit, &logits);
        self.expand_node(node, moves, &logits, value);
        self.stats.evaluations += 1;
        f64::from(value)
    }

    /// Backs up `value` along `path` and, when the descent ended on a proven node, updates
    /// the proven bounds above it (`proof::propagate`).
    pub fn back_up(&mut self, path: &[NodeId], value: f64, pending: bool) {
        self.tree.backup(path, value, pending);
        if path
            .last()
            .is_some_and(|&leaf| self.tree.node(leaf).is_proven())
        {
            proof::propagate(&mut self.tree, path);
        }
    }

    /// Makes the subtree of `position` the tree, if `position` extends the position the
    /// tree's root holds by moves the tree has followed (the same game, later): the subtree
    /// is copied into a fresh arena with its root as node 0 and the rest is freed. `false`
    /// (the tree untouched) when it does not apply.
    pub fn reroot(&mut self, position: &Position) -> bool {
        let Some(mark) = self.root_mark else {
            return false;
        };
        let n = mark.history_len;
        if self.tree.is_empty()
            || position.history_len() < n
            || position.key_at(0) != Some(mark.start_key)
            || position.key_at(n) != Some(mark.key)
        {
            return false;
        }
        let Some(path) = position.moves_since(n) else {
            return false;
        };
        // The same move limit, where it drew the game.
        let draw_at = self
            .config
            .plies_to_draw
            .map(|k| position.history_len() + k as usize);
        if draw_at != mark.draw_at {
            return false;
        }
        // Repetitions valued with a draw value keep it only where it is the same value for
        // the same side: the old root's value, negated once per ply, is the new root's.
        let carried = if path.len() % 2 == 0 {
            mark.draw_value
        } else {
            -mark.draw_value
        };
        if carried != self.config.draw_value {
            return false;
        }
        let mut id = ROOT;
        for m in path {
            match self.tree.edges(id).iter().find(|e| e.mv == m) {
                Some(e) if e.child != NO_NODE => id = e.child,
                _ => return false,
            }
        }
        if self.tree.node(id).kind != NodeKind::Expanded || (id == ROOT && mark.restricted) {
            return false;
        }
        if id != ROOT {
            let mut fresh = Tree::new();
            self.tree.copy_subtree(id, &mut fresh);
            self.tree = fresh;
        }
        true
    }

    /// Makes room in a full tree: keeps the most visited nodes — every node with at least
    /// `t` visits, `t` the smallest count whose nodes fit in half of
    /// [`SearchConfig::max_tree_bytes`] — plus every node whose outcome is known (they cost
    /// no edges), and drops the rest. Visits only shrink from a node to its children, so
    /// what is kept is a tree; a dropped child's edge becomes untried again while its
    /// parent's statistics keep what it contributed. Call only between descents (no
    /// descent in flight). Whether anything was freed (docs/search.md, "Memory").
    pub fn recycle(&mut self) -> bool {
        let before = self.tree.len();
        // Bytes of the nodes with each visit count, most visited first.
        let mut by_visits: std::collections::BTreeMap<std::cmp::Reverse<u32>, usize> =
            std::collections::BTreeMap::new();
        for n in self.tree.nodes() {
            *by_visits.entry(std::cmp::Reverse(n.visits)).or_default() +=
                Tree::node_cost(usize::from(n.num_edges));
        }
        let budget = self.config.max_tree_bytes / 2;
        let (mut used, mut threshold) = (0usize, u32::MAX);
        for (std::cmp::Reverse(v), bytes) in by_visits {
            if used + bytes > budget {
                break;
            }
            used += bytes;
            threshold = v;
        }
        // The root's children always fit when anything does; keep at least two visits' worth.
        let threshold = threshold.max(2);
        let mut fresh = Tree::new();
        self.tree.copy_subtree_where(ROOT, &mut fresh, |n| {
            n.visits >= threshold || n.kind == NodeKind::Terminal
        });
        let after = fresh.len();
        self.tree = fresh;
        self.stats.recycled += 1;
        self.stats.recycled_nodes += (before - after) as u64;
        after < before
    }

    /// Whether the search can stop early: the root's outcome is proven, or no descent can
    /// add anything (every root move closed).
    pub fn root_done(&self) -> bool {
        let root = self.tree.node(ROOT);
        root.is_proven() || root.exhausted
    }

    /// Takes the descent's moves back: the scratch board shows the root again.
    pub fn unwind(&mut self, played: &[Move]) {
        for &m in played.iter().rev() {
            self.pos.undo_move(m);
        }
    }
}

/// The search value `tanh(ℓ/2)` of a value logit (SPEC §5), computed in f64 and stored as
/// f32; a NaN logit counts as an even position.
pub(crate) fn search_value(value_logit: f32) -> f32 {
    let l = if value_logit.is_nan() {
        0.0
    } else {
        f64::from(value_logit)
    };
    (l * 0.5).tanh() as f32
}

/// Whether an evaluator's answer for a leaf with `n` moves needs repair (see
/// [`SearchStats::unusable_evaluations`]).
pub(crate) fn is_unusable(e: Option<&Evaluation>, n: usize) -> bool {
    e.is_none_or(|e| {
        !e.value_logit.is_finite()
            || e.policy_logits.len() != n
            || e.policy_logits.iter().any(|l| !l.is_finite())
    })
}

/// The logits an evaluator returned, made usable: exactly one per move (missing ones 0,
/// extra ones dropped) and finite (NaN and −∞ become a very unlikely −1e4, +∞ a very likely
/// 1e4), so that no softmax downstream sees NaN.
pub(crate) fn sanitized_logits(logits: &[f32], n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| match logits.get(i).copied().unwrap_or(0.0) {
            l if l.is_finite() => l,
            l if l == f32::INFINITY => 1e4,
            _ => -1e4,
        })
        .collect()
}
