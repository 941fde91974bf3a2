#!/usr/bin/env python3
"""Mate-search cases for Manaka's mate solver, and the verifier of its claims, with cshogi as
the oracle (tests/mate_oracle_cshogi.rs drives both).

  mate_cshogi.py cases --seed S [--scale X]
      Prints one JSON object per line, a position and what cshogi says of its mates:
        sfen   the position (the side to move attacks; never in check)
        kind   where it comes from (below)
        m1     a move that mates at once, found exactly here by playing every legal move
               (cshogi's mate_move_in_1ply is a fast heuristic that may miss mates), or null
        c1     cshogi's mate_move_in_1ply, or null
        m3 m5 m7
               cshogi's mate_move(N): the first move of a mate within N plies, or null.
               dlshogi's odd-ply search under it tries every check and every evasion but
               ends with the 1-ply heuristic, so it may miss a mate; what it finds is a mate.
      Kinds:
        game       positions along random games from the start position (captures preferred
                   half of the time), from ply 20 on: middle games, nearly all without mate
        placement  random legal placements (promoted pieces, full hands; cshogi_cases.py's)
        corner     built to have mates: a defending king on an edge or in a corner, a few
                   defenders near it, a few attackers near it and one to four pieces in the
                   attacker's hand; half of them tsume style (the defender holds every piece
                   left, no attacking king)
      Positions are kept until each class (no mate, mate in 1, shortest mate 3, 5, 7 as far
      as cshogi sees) has its quota, so the mix does not depend on how rare mates are.
      Deterministic for a given --seed.

  mate_cshogi.py verify
      Reads claims on stdin, one JSON object per line, and prints one verdict per line
      ({"id", "ok", "why", "nodes"}) after checking each claim with cshogi alone:
        tree   a proof tree {"a": attacking move, "d": [[defence, tree], ...]}: every attack
               must be legal and give check, the defences listed must be exactly cshogi's
               legal moves (none: the attack mated), and no line may be longer than "max"
        line   a mate line: attacker moves legal and checking, defender moves legal, the last
               position checkmate, at most "max" plies
        first  the first move of a mate within "plies" (1 or 3): checked exhaustively here
        guided cshogi's own claim of a mate within "guided" plies, where Manaka disagrees:
               cshogi's mate_move plays the attacker, every legal defence is tried, the last
               ply is the exact scan. "ok" means cshogi's claim holds with every legal move
               (so Manaka is wrong); otherwise "why" names the defence cshogi's search
               skipped (it leaves out some moves that decline a promotion, for one)
"""

import argparse
import json
import os
import random
import sys

import cshogi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cshogi_cases import ALL_SQUARES, Placement, acceptable, random_placement  # noqa: E402

BLACK, WHITE = cshogi.BLACK, cshogi.WHITE
FULL_SET = {"P": 18, "L": 4, "N": 4, "S": 4, "G": 4, "B": 2, "R": 2}


def usi(m):
    return cshogi.move_to_usi(m)


def mates_at_once(b):
    """A legal move after which the opponent is in check with no legal move, or None."""
    for m in b.legal_moves:
        b.push(m)
        mate = b.is_check() and b.is_game_over()
        b.pop()
        if mate:
            return usi(m)
    return None


def facts(sfen, kind):
    b = cshogi.Board(sfen)
    f = {"sfen": b.sfen(), "kind": kind, "m1": mates_at_once(b)}
    c1 = b.mate_move_in_1ply()
    f["c1"] = usi(c1) if c1 else None
    for n in (3, 5, 7):
        m = b.mate_move(n)
        f["m%d" % n] = usi(m) if m else None
    return f


def shortest(f):
    """The shortest mate cshogi (or the exact 1-ply scan) sees: 1, 3, 5, 7 or 0 (none)."""
    for n, key in ((1, "m1"), (3, "m3"), (5, "m5"), (7, "m7")):
        if f[key] is not None:
            return n
    return 0


def game_positions(rng):
    """Positions along one random game, from ply 20, every few plies, not in check."""
    b = cshogi.Board()
    out = []
    for ply in range(rng.randint(60, 200)):
        legal = list(b.legal_moves)
        if not legal:
            break
        caps = [m for m in legal if not cshogi.move_is_drop(m) and b.piece(cshogi.move_to(m))]
        m = rng.choice(caps) if caps and rng.random() < 0.5 else rng.choice(legal)
        b.push(m)
        if ply >= 20 and rng.random() < 0.15 and not b.is_check():
            out.append(b.sfen())
    return out


def near(sq, d):
    return [s for s in ALL_SQUARES if max(abs(s[0] - sq[0]), abs(s[1] - sq[1])) <= d and s != sq]


def corner_position(rng):
    """A White king on an edge or in a corner with Black to attack it (see the kinds)."""
    while True:
        p = Placement()
        left = dict(FULL_SET)

        def take(kind):
            if left.get(kind, 0) == 0:
                return False
            left[kind] -= 1
            return True

        wk = (rng.choice([1, 1, 2, 3, 5, 7, 8, 9, 9]), rng.choice([1, 1, 1, 2, 2, 3]))
        p.board[wk] = ("K", WHITE, False)
        tsume = rng.random() < 0.5
        if not tsume:
            bk = rng.choice([s for s in ALL_SQUARES if s[1] >= 7])
            p.board[bk] = ("K", BLACK, False)
        for _ in range(rng.randint(0, 3)):
            kind = rng.choice("PPLNSGGSB")
            if take(kind) and not p.place(rng, kind, WHITE, near(wk, 2), 0.1):
                left[kind] += 1
        for _ in range(rng.randint(0, 3)):
            kind = rng.choice("PLNSGGBRR")
            if take(kind) and not p.place(rng, kind, BLACK, near(wk, 3), 0.4):
                left[kind] += 1
        for _ in range(rng.randint(1, 4)):
            kind = rng.choice("GGSSRBNLP")
            if take(kind):
                p.give(kind, BLACK)
        if tsume:
            for kind, n in left.items():
                for _ in range(n):
                    p.give(kind, WHITE)
        if acceptable(p, BLACK):
            return p.sfen(BLACK)


def cases(seed, scale):
    rng = random.Random(seed)
    quota = {0: int(150 * scale), 1: int(110 * scale), 3: int(110 * scale), 5: int(80 * scale), 7: int(60 * scale)}
    # Middle games and placements take only their share of the "no mate" class, so that
    # every kind is represented there.
    kind_cap = {("game", 0): quota[0] // 2, ("placement", 0): quota[0] // 4}
    kept = {k: 0 for k in quota}
    per_kind = {}
    out = []
    games = 0
    budget = int(60000 * max(scale, 0.05))
    while any(kept[k] < quota[k] for k in quota) and budget > 0:
        games += 1
        batch = []
        r = rng.random()
        if r < 0.25:
            batch = [(s, "game") for s in game_positions(rng)]
        elif r < 0.4:
            batch = [(random_placement(rng), "placement")]
        else:
            batch = [(corner_position(rng), "corner")]
        for sfen, kind in batch:
            budget -= 1
            b = cshogi.Board(sfen)
            if b.is_check():
                continue
            f = facts(sfen, kind)
            n = shortest(f)
            if kept[n] >= quota[n]:
                continue
            cap = kind_cap.get((kind, n))
            if cap is not None and per_kind.get((kind, n), 0) >= cap:
                continue
            kept[n] += 1
            per_kind[(kind, n)] = per_kind.get((kind, n), 0) + 1
            out.append(f)
    for f in out:
        sys.stdout.write(json.dumps(f, separators=(",", ":")) + "\n")
    sys.stderr.write("mate_cshogi.py: %d cases %s from %d draws\n" % (len(out), kept, games))


# ----- verification ---------------------------------------------------------------------


class Bad(Exception):
    pass


def legal_move(b, text):
    m = b.move_from_usi(text)
    if not m or not b.is_legal(m):
        raise Bad("%s is not legal in %s" % (text, b.sfen()))
    return m


def verify_tree(b, node, left, count):
    if left < 1:
        raise Bad("the tree is longer than allowed at %s" % b.sfen())
    count[0] += 1
    m = legal_move(b, node["a"])
    b.push(m)
    try:
        if not b.is_check():
            raise Bad("%s gives no check" % node["a"])
        legal = sorted(usi(x) for x in b.legal_moves)
        given = sorted(d for d, _ in node["d"])
        if legal != given:
            raise Bad(
                "after %s in %s the defences are %s, the tree lists %s"
                % (node["a"], b.sfen(), legal, given)
            )
        for d, sub in node["d"]:
            b.push(legal_move(b, d))
            try:
                verify_tree(b, sub, left - 2, count)
            finally:
                b.pop()
    finally:
        b.pop()


def verify_line(b, line, limit):
    if not line or len(line) % 2 == 0 or len(line) > limit:
        raise Bad("a mate line of %d plies (at most %d, odd)" % (len(line), limit))
    pushed = 0
    try:
        for i, text in enumerate(line):
            b.push(legal_move(b, text))
            pushed += 1
            if i % 2 == 0 and not b.is_check():
                raise Bad("attacking move %s gives no check" % text)
        if not (b.is_check() and b.is_game_over()):
            raise Bad("the line does not end in checkmate: %s" % b.sfen())
    finally:
        for _ in range(pushed):
            b.pop()


def mated_within(b, plies):
    """The side to move (in check) is mated within `plies`, every evasion tried."""
    legal = list(b.legal_moves)
    if not legal:
        return True
    if plies < 2:
        return False
    for e in legal:
        b.push(e)
        ok = any_mate(b, plies - 1)
        b.pop()
        if not ok:
            return False
    return True


def any_mate(b, plies):
    for m in b.legal_moves:
        b.push(m)
        ok = b.is_check() and mated_within(b, plies - 1)
        b.pop()
        if ok:
            return True
    return False


def guided(b, plies):
    """None when cshogi's strategy mates within `plies` against every legal defence, else
    the line where it fails."""
    m = mates_at_once(b)
    if m is not None:
        return None
    if plies < 3:
        return "no mate at once in %s" % b.sfen()
    m = b.mate_move(plies)
    if not m:
        return "cshogi finds no mate within %d in %s" % (plies, b.sfen())
    b.push(m)
    try:
        for e in list(b.legal_moves):
            b.push(e)
            try:
                why = guided(b, plies - 2)
            finally:
                b.pop()
            if why:
                return "%s %s: %s" % (usi(m), usi(e), why)
    finally:
        b.pop()
    return None


def verify(claim):
    b = cshogi.Board(claim["sfen"])
    count = [0]
    if claim.get("tree") is not None:
        verify_tree(b, claim["tree"], claim["max"], count)
    if claim.get("line") is not None:
        verify_line(b, claim["line"], claim["max"])
    if claim.get("guided") is not None:
        why = guided(b, claim["guided"])
        if why:
            raise Bad(why)
    if claim.get("first") is not None:
        b.push(legal_move(b, claim["first"]))
        try:
            if not (b.is_check() and mated_within(b, claim["plies"] - 1)):
                raise Bad("%s does not mate within %d plies" % (claim["first"], claim["plies"]))
        finally:
            b.pop()
    return count[0]


def verify_all():
    sys.setrecursionlimit(10000)
    for text in sys.stdin:
        if not text.strip():
            continue
        claim = json.loads(text)
        try:
            n = verify(claim)
            verdict = {"id": claim["id"], "ok": True, "why": "", "nodes": n}
        except Bad as e:
            verdict = {"id": claim["id"], "ok": False, "why": str(e), "nodes": 0}
        sys.stdout.write(json.dumps(verdict) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--scale", type=float, default=1.0, help="multiplies every quota")
    sub.add_parser("verify")
    a = ap.parse_args()
    if a.mode == "cases":
        cases(a.seed, a.scale)
    else:
        verify_all()


if __name__ == "__main__":
    main()
