//! Search settings that stay fixed across searches (the budget and clock are
//! [`SearchLimits`](super::SearchLimits)).

use super::gumbel::QTransform;
use crate::shogi::EnteringKingRule;

/// Positions the leaf mate check may visit per node (a mate in 3 needs a few dozen).
pub const LEAF_MATE_NODES: u64 = 256;

/// The share of a search's time limit the root mate search may take.
pub const ROOT_MATE_SHARE: f64 = 0.1;

/// The selection rule below the root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InteriorRule {
    /// mctx's deterministic rule, `argmax π'(a) − N(a)/(1 + ΣN)` with
    /// `π' = softmax(logit + σ(completedQ))` (SPEC §8; the paper §5). Exact for small
    /// budgets and what the mctx parity tests and self-play use; at large budgets σ's scale
    /// `c_visit + max N` makes it greedy, and more time stops buying better moves.
    Gumbel,
    /// PUCT (AlphaZero; as lc0 and dlshogi explore): `argmax Q(a) + c·P(a)·√ΣN / (1 + N(a))`
    /// with `P` the prior and an untried move's Q the mixed value `v_mix` less
    /// `fpu_reduction · √(visited prior)` (first-play urgency; `puct.rs`), and `P` the
    /// softmax of the logits divided by `policy_temperature` (1 = the network's own prior;
    /// larger flattens it, as lc0's `PolicyTemperature` and dlshogi's `Softmax_Temperature`
    /// do). Keeps every move's estimate refreshed as the visits grow.
    Puct {
        c: f64,
        fpu_reduction: f64,
        policy_temperature: f64,
    },
}

impl InteriorRule {
    /// The accepted range of `c` (USI `PuctC`, `manaka go --puct-c`).
    pub const C_RANGE: (f64, f64) = (0.0, 100.0);
    /// The accepted range of `fpu_reduction` (USI `FpuReduction`, `--fpu-reduction`).
    pub const FPU_REDUCTION_RANGE: (f64, f64) = (0.0, 2.0);
    /// The accepted range of `policy_temperature` (USI `PolicyTemperature`,
    /// `--policy-temperature`): positive, so that `logit / T` is defined.
    pub const POLICY_TEMPERATURE_RANGE: (f64, f64) = (0.1, 10.0);

    /// The rule for play (`SearchConfig::default()`, `manaka go`, the USI engine): PUCT with
    /// `c = 2` (Q in (−1, 1); dlshogi's 1.5 on win rates in (0, 1) is about 3 here) and the
    /// prior at temperature 1.5. Chosen by measurement (docs/search.md, "Below the root";
    /// the temperature: +42 [−6, +92] over 200 games at 300 ms and +85 [+17, +160] over 100
    /// at 1 s against 1, docs/strength.md).
    pub const PLAY: InteriorRule = InteriorRule::Puct {
        c: 2.0,
        fpu_reduction: 0.0,
        policy_temperature: 1.5,
    };

    /// `(c, fpu_reduction, policy_temperature)` of [`InteriorRule::PLAY`]: the defaults of
    /// USI `PuctC`, `FpuReduction`, `PolicyTemperature` and of `manaka go`'s flags.
    pub const PLAY_PUCT: (f64, f64, f64) = match InteriorRule::PLAY {
        InteriorRule::Puct {
            c,
            fpu_reduction,
            policy_temperature,
        } => (c, fpu_reduction, policy_temperature),
        InteriorRule::Gumbel => panic!("the rule for play is PUCT"),
    };

    /// The temperature the priors stored on new nodes' edges are computed with
    /// (`tree::priors`): PUCT's `policy_temperature`; 1 for the Gumbel rule, whose `π'`
    /// (mctx's) is the softmax of the logits themselves.
    pub fn prior_temperature(self) -> f64 {
        match self {
            InteriorRule::Gumbel => 1.0,
            InteriorRule::Puct {
                policy_temperature, ..
            } => policy_temperature,
        }
    }
}

/// The root's Gumbel noise.
#[derive(Clone, Debug, PartialEq)]
pub enum RootNoise {
    /// `scale · Gumbel(0, 1)` per legal root move, drawn once per search from `seed` (a fresh
    /// seed per search when `None`). Scale 0 is the noise-free search used for play
    /// (the seed: "Evaluation games use gumbel_scale = 0").
    Sampled { scale: f64, seed: Option<u64> },
    /// Exactly these values, one per legal root move in [`Position::legal_moves`] order
    /// (missing entries count 0): deterministic tests and parity checks.
    ///
    /// [`Position::legal_moves`]: crate::shogi::Position::legal_moves
    Fixed(Vec<f64>),
}

impl RootNoise {
    /// No noise (GumbelScale 0).
    pub const NONE: RootNoise = RootNoise::Sampled {
        scale: 0.0,
        seed: None,
    };
}

#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// `m`: how many root moves Sequential Halving starts with (the seed's default 16).
    pub max_considered: u32,
    /// σ's constants and optional rescaling (SPEC §8: 50, 1.0, off).
    pub q_transform: QTransform,
    pub noise: RootNoise,
    /// Leaves per evaluator call. 1 runs the sequential search; more runs the batched one
    /// (whose width is further bounded by the budget, see `batched.rs`).
    pub batch_size: usize,
    /// Virtual visits, each counted as a loss, that a descent waiting for its evaluation puts
    /// on every node of its path so that the next descents of the batch spread out.
    /// 0 disables (descents may then pile onto one queued leaf).
    pub virtual_loss: u32,
    /// Depth cap in plies below the root (a memory/time safety cap, as in the seed; at the
    /// cap a node's network value is backed up again, as mctx does at `max_depth`).
    pub max_depth: u16,
    /// mctx's depth cap: a node at `max_depth` takes every descent its parent sends and backs
    /// up its value again (for parity tests). Off by default: a visited leaf at the cap
    /// takes no more descents, which go to its untried siblings instead, so long searches
    /// keep growing (docs/search.md, "Growth").
    pub cap_revisits: bool,
    /// How far back (plies) repetition is looked for, through the game history the root
    /// position carries and the path in the tree.
    pub repetition_plies: usize,
    /// The declaration rule under which a side to move that may declare wins (at the root:
    /// the search answers "declare"; in the tree: a won node). `None` ignores declarations.
    pub entering_king: Option<EnteringKingRule>,
    /// A short mate search at every new node (plies of the longest mate looked for: 0 off,
    /// 1, 3…; dlshogi looks for mates in 3 at its leaves): a node whose side to move mates
    /// is proven won without asking the evaluator. Exhaustive over checks
    /// ([`crate::mate::mate_within`]), bounded by `LEAF_MATE_NODES` (256) positions.
    pub leaf_mate_plies: u32,
    /// The root mate search (df-pn, [`crate::mate::MateSolver`]) run before the tree search:
    /// at most this many nodes (0 turns it off), and at most `ROOT_MATE_SHARE` (a tenth) of the
    /// search's time limit when it has one. A mate found is played at once.
    pub root_mate_nodes: u64,
    /// The root mate solver's transposition table, in bytes (kept between searches).
    pub mate_table_bytes: usize,
    /// No search: the move with the best `gumbel + logit` from one evaluation.
    pub policy_only: bool,
    /// Keep the tree between searches: when the next position extends the last searched one
    /// by the moves played (a `position … moves …` of the same game), the search starts from
    /// that subtree with its statistics (docs/search.md, "Tree reuse"). Off by default
    /// (self-play and single searches start clean); the USI engine turns it on.
    pub reuse_tree: bool,
    /// How a descent chooses below the root (docs/search.md, "Below the root").
    pub interior: InteriorRule,
    /// Principal variations to read out (USI `MultiPV`): with more than one,
    /// [`SearchResult::lines`](super::SearchResult::lines) holds the best `multipv` root moves,
    /// each with its PV.
    pub multipv: usize,
    /// What a repetition draw is worth to the side to move at the root, in the search's
    /// value scale (−1 lost … 1 won; USI `DrawValueBlack`/`DrawValueWhite`). 0, the
    /// default, makes a draw an even score and a proven result; any other value makes a
    /// repetition in the tree a terminal leaf of that value (of its negation for the
    /// opponent), no longer a proven draw (docs/search.md, "Draw value").
    pub draw_value: f64,
    /// The plies the game has left before a move limit draws it, counting the root's move
    /// (USI `MaxMovesToDraw`; `None`: no limit). A leaf this many plies below the root or
    /// deeper is a draw unless its side to move is mated, and the leaf mate check only
    /// looks for mates delivered within the limit (docs/search.md, "Draw value").
    pub plies_to_draw: Option<u32>,
    /// Select at the root with the interior rule ([`SearchConfig::interior`]) instead of
    /// Gumbel + Sequential Halving, which visits only `max_considered` moves: for pondering
    /// the opponent's position (USI `go ponder`), where every likely reply should get
    /// visits in proportion to its prior, so that whatever is played finds a subtree.
    pub root_interior: bool,
    /// Evaluations kept in the transposition cache (0 disables it).
    pub cache_entries: usize,
    /// The tree stops growing (and the search ends) at this many bytes.
    pub max_tree_bytes: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            max_considered: 16,
            q_transform: QTransform::default(),
            noise: RootNoise::NONE,
            batch_size: 1,
            virtual_loss: 1,
            max_depth: 128,
            cap_revisits: false,
            repetition_plies: 32,
            entering_king: Some(EnteringKingRule::Csa27),
            leaf_mate_plies: 1,
            root_mate_nodes: 20_000,
            mate_table_bytes: 16 << 20,
            policy_only: false,
            reuse_tree: false,
            interior: InteriorRule::PLAY,
            multipv: 1,
            draw_value: 0.0,
            plies_to_draw: None,
            root_interior: false,
            cache_entries: 1 << 16,
            max_tree_bytes: 256 << 20,
        }
    }
}
