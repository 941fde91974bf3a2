#!/usr/bin/env python3
"""Playing strength of a Manaka network, measured with cshogi's match runner.

Plays `manaka usi` (through a `manaka-usi` symlink: GUIs and cshogi start engines without
arguments) against an opponent for N games at a fixed byoyomi, alternating colours, and prints
wins / draws / losses with an Elo estimate and its 95% interval (trinomial standard error).

  scripts/strength.py --manaka target/release/manaka --games 20 --byoyomi 1000 \\
      --opponent fairy --fairy-skill 20              # fairy-stockfish at full strength
  scripts/strength.py --manaka target/release/manaka --games 20 --byoyomi 300 \\
      --opponent manaka --opponent-evalfile random.mnw   # the same engine on random weights

Manaka's own options: --evalfile (empty = the embedded default), --option NAME=VALUE.
Writes the games as CSA (--csa) and the summary as JSON (--json).
"""

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile

import random

import cshogi
import cshogi.cli


def elo(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def summarize(w, d, l):
    n = w + d + l
    s = (w + 0.5 * d) / n
    var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + l * (0 - s) ** 2) / n
    se = math.sqrt(var / n)
    out = {
        "games": n, "wins": w, "draws": d, "losses": l, "score": s,
        "elo": elo(s),
        # Where the normal interval leaves [0, 1], that side is unbounded.
        "elo_low": elo(s - 1.96 * se) if s - 1.96 * se > 0 else -math.inf,
        "elo_high": elo(s + 1.96 * se) if s + 1.96 * se < 1 else math.inf,
    }
    # A clean sweep has no spread to estimate: the interval is then Clopper-Pearson's exact
    # 95% bound for a binomial with every game won (or lost), and the estimate is unbounded.
    if w == n:
        out.update(elo=math.inf, elo_low=elo(0.025 ** (1 / n)), elo_high=math.inf)
    elif l == n:
        out.update(elo=-math.inf, elo_low=-math.inf, elo_high=elo(1 - 0.025 ** (1 / n)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manaka", required=True, help="path to the manaka binary")
    ap.add_argument("--evalfile", default="", help="Manaka's EvalFile (empty: embedded default)")
    ap.add_argument("--option", action="append", default=[], help="extra Manaka USI option NAME=VALUE")
    ap.add_argument("--opponent", choices=["fairy", "manaka"], default="fairy")
    ap.add_argument("--fairy", default="/usr/games/fairy-stockfish")
    ap.add_argument("--fairy-skill", type=int, default=20, help="fairy-stockfish Skill Level (-20..20)")
    ap.add_argument("--opponent-evalfile", default="", help="the Manaka opponent's EvalFile")
    ap.add_argument("--opponent-manaka", default=None,
                    help="the Manaka opponent's binary (default: the same as --manaka), e.g. an earlier build")
    ap.add_argument("--opponent-option", action="append", default=[], help="extra USI option NAME=VALUE for a Manaka opponent")
    ap.add_argument("--opponent-byoyomi", type=int, default=None,
                    help="the opponent's milliseconds per move (default: --byoyomi), e.g. 4x for a time-odds match")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--byoyomi", type=int, default=1000, help="milliseconds per move")
    ap.add_argument("--opening-plies", type=int, default=6,
                    help="each pair of games (one per colour) starts after this many random plies (0: startpos)")
    ap.add_argument("--openings", default=None,
                    help="opening book: lines 'startpos moves ...' (cshogi's format); pair k starts from line k "
                         "of the seeded shuffle (cycled), then --opening-plies random quiet plies")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random openings")
    ap.add_argument("--ponder", action="store_true",
                    help="both engines ponder (cshogi's runner: go ponder / ponderhit / stop); USI_Ponder is set for Manaka")
    ap.add_argument("--csa", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    # cshogi starts each engine in the engine's own directory (here a temporary one), so a
    # relative EvalFile would not be found there and the engine would answer `bestmove resign`
    # at once: make paths absolute, and refuse a file that does not exist.
    for name in ("evalfile", "opponent_evalfile"):
        value = getattr(args, name)
        if value and value != "<empty>" and not value.startswith("builtin:"):
            if not os.path.isfile(value):
                ap.error(f"--{name.replace('_', '-')} {value}: no such file")
            setattr(args, name, os.path.abspath(value))

    tmp = tempfile.mkdtemp(prefix="manaka-strength-")
    usi = os.path.join(tmp, "manaka-usi")
    os.symlink(os.path.abspath(args.manaka), usi)
    ours = {"EvalFile": args.evalfile or "<empty>", "USI_Hash": "256", "MoveOverhead": "80"}
    if args.ponder:
        ours["USI_Ponder"] = "true"
    for o in args.option:
        k, v = o.split("=", 1)
        ours[k] = v
    if args.opponent == "fairy":
        opp, opp_options, opp_name = args.fairy, {"Threads": "1", "Hash": "64", "Skill Level": str(args.fairy_skill)}, f"fairy-stockfish(skill {args.fairy_skill})"
    else:
        opp, opp_name = usi, "manaka(" + (args.opponent_evalfile or "default") + ")"
        if args.opponent_manaka:
            opp = os.path.join(tmp, "opponent", "manaka-usi")
            os.makedirs(os.path.dirname(opp))
            os.symlink(os.path.abspath(args.opponent_manaka), opp)
            opp_name = "manaka[" + os.path.basename(args.opponent_manaka) + "](" + (args.opponent_evalfile or "default") + ")"
        opp_options = {"EvalFile": args.opponent_evalfile or "<empty>", "USI_Hash": "256", "MoveOverhead": "80"}
        if args.ponder:
            opp_options["USI_Ponder"] = "true"
        for o in args.opponent_option:
            k, v = o.split("=", 1)
            opp_options[k] = v

    book = [[]]
    if args.openings:
        book = []
        with open(args.openings) as f:
            for n, raw in enumerate(f, 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                words = line.split()
                if words[0] == "position":
                    words = words[1:]
                if not words or words[0] != "startpos" or (len(words) > 1 and words[1] != "moves"):
                    sys.exit(f"{args.openings}:{n}: expected 'startpos moves ...' (cshogi's opening format), got {line[:80]!r}")
                board = cshogi.Board()
                for usi_move in words[2:]:
                    m = board.move_from_usi(usi_move)
                    if not m or not board.is_legal(m):
                        sys.exit(f"{args.openings}:{n}: {usi_move} is not a legal move there")
                    board.push(m)
                book.append(words[2:])
        if not book:
            sys.exit(f"{args.openings} holds no openings")
    opening = None
    if args.opening_plies > 0 or args.openings:
        # Random but quiet openings: no captures, so neither side starts a piece down.
        rng = random.Random(args.seed)
        order = list(range(len(book)))
        rng.shuffle(order)
        opening = os.path.join(tmp, "openings.txt")
        with open(opening, "w") as f:
            for k in range((args.games + 1) // 2):
                board = cshogi.Board()
                moves = list(book[order[k % len(book)]])
                for usi_move in moves:
                    board.push_usi(usi_move)
                for _ in range(args.opening_plies):
                    quiet = [m for m in board.legal_moves if not cshogi.move_cap(m)]
                    m = rng.choice(quiet)
                    moves.append(cshogi.move_to_usi(m))
                    board.push(m)
                f.write("startpos moves " + " ".join(moves) + "\n")

    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        result = cshogi.cli.main(
            usi, opp, options1=ours, options2=opp_options, names=["manaka", opp_name],
            games=args.games, byoyomi=[args.byoyomi, args.opponent_byoyomi or args.byoyomi], draw=320, csa=args.csa, multi_csa=bool(args.csa),
            opening=opening, opening_seed=args.seed, ponder=args.ponder,
        )
    w, l, d = result["engine1_won"], result["engine2_won"], result["draw"]
    summary = summarize(w, d, l)
    opp_byoyomi = args.opponent_byoyomi or args.byoyomi
    summary.update({"opponent": opp_name, "byoyomi_ms": args.byoyomi, "opponent_byoyomi_ms": opp_byoyomi,
                    "seed": args.seed, "evalfile": args.evalfile or "embedded default"})
    clocks = f"{args.byoyomi} ms" if opp_byoyomi == args.byoyomi else f"{args.byoyomi} ms vs {opp_byoyomi} ms"
    line = (f"manaka vs {opp_name}, byoyomi {clocks}: +{w} ={d} -{l} of {summary['games']}, "
            f"score {summary['score']:.3f}, Elo {summary['elo']:+.0f} [{summary['elo_low']:+.0f}, {summary['elo_high']:+.0f}]")
    print(line)
    if args.json:
        with open(args.json, "w") as f:
            # JSON has no infinity: an unbounded Elo is null.
            json.dump({k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in summary.items()},
                      f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
