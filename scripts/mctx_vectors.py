#!/usr/bin/env python3
"""Generates manaka-runtime/src/search/mctx_vectors.rs: DeepMind mctx's Gumbel MuZero search
run on small shogi trees, for the parity test in manaka-runtime/src/search/mctx_parity.rs.

Run once (needs `pip install mctx cshogi`, which pulls in jax); the output is committed, so
the Rust tests need neither. Rerun after changing the cases below:

    python3 scripts/mctx_vectors.py > manaka-runtime/src/search/mctx_vectors.rs

The "network" is a hash of the position, computed identically on the Rust side
(`mctx_parity::SfenHashEvaluator`):
  key(pos)      = SFEN without the move number (board, side to move, hands)
  value(pos)    = 0.9 * (2u - 1),  u = (fnv1a64(key) >> 11) / 2^53        (search value v)
  logit(pos, m) = 8u - 4,          u = (fnv1a64(key + " " + usi(m)) >> 11) / 2^53
both rounded to float32. mctx sees a game tree laid out as tables: a state per position
reached by a path from the root (no transpositions merged, as in Manaka's tree), actions =
the legal moves sorted by their USI text, reward 0 and discount -1 (two-player zero-sum, so
a child's value is negated for its parent, SPEC section 8). Interior states give illegal
action slots a logit of -1e9 (probability 0); the root masks them with `invalid_actions`.
"""

import sys

import cshogi
import jax
import jax.numpy as jnp
import mctx
import numpy as np

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1


def fnv1a64(text):
    h = FNV_OFFSET
    for b in text.encode("ascii"):
        h = ((h ^ b) * FNV_PRIME) & MASK
    return h


def unit(h):
    return (h >> 11) / float(1 << 53)


def key_of(board):
    return " ".join(board.sfen().split(" ")[:3])


def value_of(board):
    return np.float32(0.9 * (2.0 * unit(fnv1a64(key_of(board))) - 1.0))


def logit_of(board, usi):
    return np.float32(8.0 * unit(fnv1a64(key_of(board) + " " + usi)) - 4.0)


def sorted_moves(board):
    return sorted(cshogi.move_to_usi(m) for m in board.legal_moves)


def build_tables(sfen, depth):
    """States up to `depth` plies below the root, breadth first; state 0 is the root."""
    root = cshogi.Board() if sfen == "startpos" else cshogi.Board(sfen)
    states = [(root.sfen(), 0)]
    moves_of = []
    frontier = [0]
    transitions = {}
    i = 0
    while i < len(states):
        s, d = states[i]
        b = cshogi.Board(s)
        moves = sorted_moves(b) if d < depth else []
        moves_of.append(moves)
        for a, usi in enumerate(moves):
            b.push_usi(usi)
            transitions[(i, a)] = len(states)
            states.append((b.sfen(), d + 1))
            b.pop()
        i += 1
    num_actions = max(len(m) for m in moves_of)
    n = len(states)
    logits = np.full((n, num_actions), -1e9, dtype=np.float32)
    values = np.zeros(n, dtype=np.float32)
    nxt = np.zeros((n, num_actions), dtype=np.int32)
    for i, (s, d) in enumerate(states):
        b = cshogi.Board(s)
        values[i] = value_of(b)
        for a, usi in enumerate(moves_of[i]):
            logits[i, a] = logit_of(b, usi)
            nxt[i, a] = transitions[(i, a)]
    return moves_of[0], logits, values, nxt


def run_case(name, sfen, simulations, considered, depth, c_visit, c_scale, rescale, gumbel_scale, seed):
    root_moves, logits, values, nxt = build_tables(sfen, depth)
    num_actions = logits.shape[1]
    logits_j, values_j, nxt_j = jnp.asarray(logits), jnp.asarray(values), jnp.asarray(nxt)

    def recurrent_fn(params, rng_key, action, embedding):
        child = nxt_j[embedding, action]
        out = mctx.RecurrentFnOutput(
            reward=jnp.zeros_like(values_j[child]),
            discount=-jnp.ones_like(values_j[child]),
            prior_logits=logits_j[child],
            value=values_j[child],
        )
        return out, child

    root = mctx.RootFnOutput(
        prior_logits=logits_j[0][None], value=values_j[0][None], embedding=jnp.zeros((1,), jnp.int32)
    )
    invalid = np.ones((1, num_actions), dtype=np.float32)
    invalid[0, : len(root_moves)] = 0.0

    def qtransform(tree, node_index):
        return mctx.qtransform_completed_by_mix_value(
            tree, node_index, value_scale=c_scale, maxvisit_init=c_visit, rescale_values=rescale
        )

    key = jax.random.PRNGKey(seed)
    out = mctx.gumbel_muzero_policy(
        params=(),
        rng_key=key,
        root=root,
        recurrent_fn=recurrent_fn,
        num_simulations=simulations,
        invalid_actions=jnp.asarray(invalid),
        max_depth=depth,
        qtransform=qtransform,
        max_num_considered_actions=considered,
        gumbel_scale=gumbel_scale,
    )
    # The Gumbel vector gumbel_muzero_policy drew: it splits the key once and samples from
    # the second half (policies.py).
    _, gumbel_rng = jax.random.split(key)
    gumbel = gumbel_scale * jax.random.gumbel(gumbel_rng, shape=(1, num_actions), dtype=jnp.float32)
    # σ(completedQ) at the root, as mctx's search used it (qtransform on the final tree).
    sigma = np.asarray(jax.vmap(qtransform, in_axes=[0, None])(out.search_tree, 0)[0])
    visits = np.asarray(out.search_tree.summary().visit_counts[0])
    weights = np.asarray(out.action_weights[0])
    action = int(out.action[0])
    n = len(root_moves)
    return dict(
        name=name,
        sfen=sfen,
        simulations=simulations,
        considered=considered,
        depth=depth,
        c_visit=c_visit,
        c_scale=c_scale,
        rescale=rescale,
        moves=root_moves,
        gumbel=[float(g) for g in np.asarray(gumbel[0])[:n]],
        visits=[int(v) for v in visits[:n]],
        weights=[float(w) for w in weights[:n]],
        sigma=[float(x) for x in sigma[:n]],
        action=root_moves[action],
    )


CASES = [
    # name, sfen, simulations, considered, max_depth, c_visit, c_scale, rescale, gumbel_scale, seed
    ("start_n32_m16_bandit", "startpos", 32, 16, 1, 50.0, 1.0, False, 1.0, 0),
    ("start_n32_m16_depth3", "startpos", 32, 16, 3, 50.0, 1.0, False, 1.0, 1),
    ("start_n64_m32_depth2", "startpos", 64, 32, 2, 50.0, 1.0, False, 1.0, 2),
    ("capture_n50_m8_depth2_mctx_defaults",
     "lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL b Bb 5", 50, 8, 2, 50.0, 0.1, True, 1.0, 3),
    ("midgame_n17_m4_depth2_no_noise",
     "ln1g3nl/1r1sg1k2/p2ppsbpp/2p2pp2/1p7/2PP5/PPBSPPPPP/2G1GS1R1/LN2K2NL b - 25", 17, 4, 2, 50.0, 1.0, False, 0.0, 4),
    ("midgame_n100_m16_depth2_mctx_defaults",
     "ln1g3nl/1r1sg1k2/p2ppsbpp/2p2pp2/1p7/2PP5/PPBSPPPPP/2G1GS1R1/LN2K2NL b - 25", 100, 16, 2, 50.0, 0.1, True, 0.5, 5),
    ("start_n200_m16_bandit_mctx_defaults", "startpos", 200, 16, 1, 50.0, 0.1, True, 1.0, 6),
]


def rust_str_list(xs):
    return "&[" + ", ".join('"%s"' % x for x in xs) + "]"


def rust_f64_list(xs):
    return "&[" + ", ".join(repr(float(x)) for x in xs) + "]"


def main():
    cases = [run_case(*c) for c in CASES]
    w = sys.stdout.write
    w("// @generated by scripts/mctx_vectors.py (mctx %s, jax %s, cshogi): do not edit.\n" % (mctx.__version__, jax.__version__))
    w("// DeepMind mctx's gumbel_muzero_policy on small shogi trees; see the script for the setup.\n\n")
    w("use super::mctx_parity::MctxCase;\n\n")
    w("pub(super) const CASES: &[MctxCase] = &[\n")
    for c in cases:
        w("    MctxCase {\n")
        w('        name: "%s",\n' % c["name"])
        w('        sfen: "%s",\n' % c["sfen"])
        w("        simulations: %d,\n" % c["simulations"])
        w("        considered: %d,\n" % c["considered"])
        w("        max_depth: %d,\n" % c["depth"])
        w("        c_visit: %r,\n" % c["c_visit"])
        w("        c_scale: %r,\n" % c["c_scale"])
        w("        rescale: %s,\n" % ("true" if c["rescale"] else "false"))
        w("        moves: %s,\n" % rust_str_list(c["moves"]))
        w("        gumbel: %s,\n" % rust_f64_list(c["gumbel"]))
        w("        visits: &[%s],\n" % ", ".join(str(v) for v in c["visits"]))
        w("        weights: %s,\n" % rust_f64_list(c["weights"]))
        w("        sigma: %s,\n" % rust_f64_list(c["sigma"]))
        w('        action: "%s",\n' % c["action"])
        w("    },\n")
    w("];\n")


if __name__ == "__main__":
    main()
