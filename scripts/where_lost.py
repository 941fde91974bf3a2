#!/usr/bin/env python3
"""Where Manaka's games were lost: the turning point of each lost game, read from CSA records.

`scripts/strength.py --csa FILE` keeps every game with each engine's score after each of its
moves (cshogi writes them from Black's side). For each game Manaka lost this finds the first
ply at which the opponent's own score says Manaka is behind by --threshold (500 cp), what
Manaka's score was at that moment, how many plies were left, and how many plies before Manaka
the opponent saw the final mate — so a person can tell a misjudged middle game (the opponent
far ahead long before the end while Manaka thinks itself level) from a mate missed late.

  scripts/where_lost.py docs/strength-runs/2026-12-04/gen6pt15-fairy20-1s-s*.csa
  scripts/where_lost.py --json summary.json games.csa

Prints a line per lost game and a summary (medians); --json writes both.
"""

import argparse
import json
import re
import statistics
import sys

MATE = 30000  # scores at or beyond this are mates (cshogi writes ±100000)


def games_of(text):
    """Each game of a multi-game CSA file: (Manaka's colour '+'/'-', [(mover, score), …])."""
    for chunk in re.split(r"(?m)^V2", text):
        lines = chunk.splitlines()
        names = {l[1]: l[2:] for l in lines if l.startswith(("N+", "N-"))}
        if not names:
            continue
        ours = [c for c, n in names.items() if n.startswith("manaka")]
        if len(ours) != 1:
            raise SystemExit("where_lost: a game without exactly one player named manaka… (strength.py's records name it so)")
        sign = 1 if ours[0] == "+" else -1
        scores, mover = [], None
        for line in lines:
            if re.match(r"^[+-]\d{4}[A-Z]{2}", line):
                mover = line[0]
            elif line.startswith("'**") and mover:
                words = line.split()
                if len(words) > 1 and re.fullmatch(r"-?\d+", words[1]):
                    scores.append(("us" if mover == ours[0] else "them", int(words[1]) * sign))
                mover = None
        yield ours[0], scores


def turning_point(scores, threshold):
    """The figures of one game, scores from Manaka's side; None if Manaka did not lose it."""
    if not scores or scores[-1][1] > -MATE:
        return None
    ours_before = lambda i: next((s for w, s in reversed(scores[:i + 1]) if w == "us"), None)  # noqa: E731
    behind = next((i for i, (w, s) in enumerate(scores) if w == "them" and s <= -threshold), None)
    their_mate = next((i for i, (w, s) in enumerate(scores) if w == "them" and s <= -MATE), None)
    our_mate = next((i for i, (w, s) in enumerate(scores) if w == "us" and s <= -MATE), None)
    return {
        "plies": len(scores),
        "behind_at": behind,
        "ours_then": ours_before(behind) if behind is not None else None,
        "plies_left": len(scores) - behind if behind is not None else None,
        "mate_seen_first_by": (our_mate - their_mate) if their_mate is not None and our_mate is not None else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csa", nargs="+", help="CSA files written by scripts/strength.py --csa")
    ap.add_argument("--threshold", type=int, default=500, help="centipawns behind, by the opponent's score")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    for path in args.csa:
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError as e:
            raise SystemExit(f"where_lost: {path}: {e.strerror}")
        for k, (colour, scores) in enumerate(games_of(text)):
            t = turning_point(scores, args.threshold)
            if t is not None:
                rows.append({"file": path, "game": k, "manaka": "black" if colour == "+" else "white", **t})
    for r in rows:
        print(f"{r['file']} game {r['game']} (Manaka {r['manaka']}, {r['plies']} plies): opponent at "
              f"-{args.threshold} for Manaka at ply {r['behind_at']} ({r['plies_left']} plies left), Manaka then "
              f"{r['ours_then']}; mate seen {r['mate_seen_first_by']} plies before Manaka")

    def median(key):
        values = [r[key] for r in rows if r[key] is not None]
        return statistics.median(values) if values else None

    summary = {
        "lost_games": len(rows), "threshold": args.threshold,
        "median_ply_behind": median("behind_at"), "median_plies_left": median("plies_left"),
        "median_ours_then": median("ours_then"),
        "ours_then_at_or_above_0": sum(1 for r in rows if r["ours_then"] is not None and r["ours_then"] >= 0),
        "median_mate_seen_first_by": median("mate_seen_first_by"),
    }
    print(f"{summary['lost_games']} lost games: behind by the opponent's score at a median ply "
          f"{summary['median_ply_behind']}, {summary['median_plies_left']} plies before the end; Manaka's own "
          f"score then a median {summary['median_ours_then']} ({summary['ours_then_at_or_above_0']} at 0 or above); "
          f"the opponent saw the mate a median {summary['median_mate_seen_first_by']} plies first")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "games": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
