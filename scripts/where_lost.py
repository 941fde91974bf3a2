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

With --probe-engine, each turning point is also judged: the position before Manaka's last
move ahead of it and the one after are scored by Manaka's network alone (`manaka eval`) and
by the opponent at several depths, and the summary gives each judge's mean and mean absolute
difference from the deepest search. A network far from even the opponent's depth-1 search
misjudged the position (evaluation); one that agrees with the shallow searches but not the
deep ones fell to the horizon (search). The network's score is put on the opponent's scale first:
`manaka eval` reports 600 cp per value logit (SPEC §5), while a network trained with
`--eval-scale S` learned ℓ = teacher cp / S, so its cp is multiplied by S / 600
(--network-scale, default 1200: the recipe of every generation since 12; 600 for earlier ones):

  scripts/where_lost.py --probe-engine /usr/games/fairy-stockfish --manaka target/release/manaka \
      --probe-depths 1,5,9 docs/strength-runs/2026-12-04/gen6pt15-fairy20-1s-s*.csa
"""

import argparse
import json
import os
import re
import statistics
import sys

MATE = 30000  # scores at or beyond this are mates (cshogi writes ±100000)


def games_of(text):
    """Each game of a multi-game CSA file: (the game's CSA text, Manaka's colour '+'/'-',
    [(mover, score, ply), …]) — ply counts every move of the game from 0, opening moves (which
    carry no score) included."""
    for chunk in re.split(r"(?m)^V2", text):
        lines = chunk.splitlines()
        names = {l[1]: l[2:] for l in lines if l.startswith(("N+", "N-"))}
        if not names:
            continue
        ours = [c for c, n in names.items() if n.startswith("manaka")]
        if len(ours) != 1:
            raise SystemExit("where_lost: a game without exactly one player named manaka… (strength.py's records name it so)")
        sign = 1 if ours[0] == "+" else -1
        scores, mover, ply = [], None, -1
        for line in lines:
            if re.match(r"^[+-]\d{4}[A-Z]{2}", line):
                mover, ply = line[0], ply + 1
            elif line.startswith("'**") and mover:
                words = line.split()
                if len(words) > 1 and re.fullmatch(r"-?\d+", words[1]):
                    scores.append(("us" if mover == ours[0] else "them", int(words[1]) * sign, ply))
                mover = None
        yield "V2" + chunk, ours[0], scores, ply + 1


def turning_point(scores, plies, threshold):
    """The figures of one game, scores from Manaka's side; None if Manaka did not lose it."""
    if not scores or scores[-1][1] > -MATE:
        return None
    ours_before = lambda i: next((s for w, s, _ in reversed(scores[:i + 1]) if w == "us"), None)  # noqa: E731
    behind = next((i for i, (w, s, _) in enumerate(scores) if w == "them" and s <= -threshold), None)
    their_mate = next((p for w, s, p in scores if w == "them" and s <= -MATE), None)
    our_mate = next((p for w, s, p in scores if w == "us" and s <= -MATE), None)
    behind_ply = scores[behind][2] if behind is not None else None
    return {
        "plies": plies,
        "behind_at": behind_ply,
        "ours_then": ours_before(behind) if behind is not None else None,
        "plies_left": plies - behind_ply if behind is not None else None,
        "mate_seen_first_by": (our_mate - their_mate) if their_mate is not None and our_mate is not None else None,
    }


def probe(game_csa, behind_at, args, engine, depths):
    """Judge the decision that lost: the position before Manaka's last move ahead of the turning
    point (Manaka to move) and the one after it, each scored by Manaka's network alone
    (`manaka eval`, no search) and by the opponent's search at each depth, all in centipawns
    from Manaka's side. If the network is far from even the opponent's shallow searches, the
    evaluation misjudged the position; if only the deep searches disagree, the search's horizon did."""
    import subprocess

    import cshogi.CSA

    parsed = cshogi.CSA.Parser.parse_str(game_csa)[0]
    sfen = parsed.sfen
    moves = [cshogi.move_to_usi(m) for m in parsed.moves]
    out = {}
    for tag, played, sign in (("before", moves[:behind_at - 1], 1), ("after", moves[:behind_at], -1)):
        cmd = [args.manaka, "eval", "--sfen", sfen, "--json"] + (["--moves", *played] if played else [])
        if args.evalfile:
            cmd += ["--weights", args.evalfile]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"where_lost: manaka eval failed: {r.stderr.strip()}")
        cp = json.loads(r.stdout)["cp"]
        # On the opponent's scale (module docstring); the raw USI figure kept beside it.
        row = {"ply": len(played), "network": sign * round(cp * args.network_scale / 600), "network_usi_cp": sign * cp}
        for d in depths:
            engine.new_game()
            score = engine.analyse(sfen, played, f"depth {d}")[1]
            row[f"depth{d}"] = None if score is None else sign * score
        out[tag] = row
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csa", nargs="+", help="CSA files written by scripts/strength.py --csa")
    ap.add_argument("--threshold", type=int, default=500, help="centipawns behind, by the opponent's score")
    ap.add_argument("--json", default=None)
    ap.add_argument("--probe-engine", default=None,
                    help="score each turning point with this USI engine (e.g. /usr/games/fairy-stockfish) at "
                         "--probe-depths, and with Manaka's network (needs --manaka and cshogi)")
    ap.add_argument("--probe-depths", default="1,5,9", help="comma-separated search depths, shallow to deep")
    ap.add_argument("--manaka", default=None, help="the manaka binary, for --probe-engine")
    ap.add_argument("--evalfile", default=None, help="Manaka's weights for the probe (default: the embedded network)")
    ap.add_argument("--network-scale", type=float, default=1200.0,
                    help="teacher centipawns per value logit the network was trained at (manaka train --eval-scale): "
                         "1200 for generations 12 on, 600 before; its scores are multiplied by this / 600")
    args = ap.parse_args()
    engine, depths = None, []
    if args.probe_engine:
        if not args.manaka:
            raise SystemExit("where_lost: --probe-engine needs --manaka (the binary whose network is judged)")
        try:
            depths = sorted({int(d) for d in args.probe_depths.split(",")})
        except ValueError:
            raise SystemExit(f"where_lost: --probe-depths must be numbers like 1,5,9, not {args.probe_depths!r}")
        if not (args.network_scale > 0 and args.network_scale < 1e6):
            raise SystemExit(f"where_lost: --network-scale must be a positive number of centipawns, not {args.network_scale}")
        if not depths or depths[0] < 1:
            raise SystemExit("where_lost: --probe-depths needs at least one depth of 1 or more")
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from versus import Usi  # the scripts' one USI driver

        engine = Usi(args.probe_engine.split(), {"Threads": 1}, "the probe engine")
    rows = []
    for path in args.csa:
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError as e:
            raise SystemExit(f"where_lost: {path}: {e.strerror}")
        for k, (game_csa, colour, scores, plies) in enumerate(games_of(text)):
            t = turning_point(scores, plies, args.threshold)
            if t is not None:
                rows.append({"file": path, "game": k, "manaka": "black" if colour == "+" else "white", **t})
                if engine is not None and t["behind_at"] is not None:
                    rows[-1]["probe"] = probe(game_csa, t["behind_at"], args, engine, depths)
    if engine is not None:
        engine.close()
    for r in rows:
        print(f"{r['file']} game {r['game']} (Manaka {r['manaka']}, {r['plies']} plies): opponent at "
              f"-{args.threshold} for Manaka at ply {r['behind_at']} ({r['plies_left']} plies left), Manaka then "
              f"{r['ours_then']}; mate seen {r['mate_seen_first_by']} plies before Manaka")
        for tag, p in r.get("probe", {}).items():
            print(f"    {tag} Manaka's move (ply {p['ply']}): network {p['network']}, opponent "
                  + ", ".join(f"depth {d} {p[f'depth{d}']}" for d in depths))

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
    probed = [r["probe"] for r in rows if "probe" in r]
    if probed:
        # How far each judge is from the deepest search, over both probed positions of every game.
        deepest = f"depth{depths[-1]}"
        judges = ["network"] + [f"depth{d}" for d in depths[:-1]]
        gaps = {j: [p[t][j] - p[t][deepest] for p in probed for t in p
                    if p[t][j] is not None and p[t][deepest] is not None
                    and abs(p[t][deepest]) < MATE and abs(p[t][j]) < MATE] for j in judges}
        summary["against_deepest"] = {
            j: {"positions": len(g), "mean": round(statistics.mean(g)) if g else None,
                "mean_abs": round(statistics.mean(map(abs, g))) if g else None} for j, g in gaps.items()}
        print(f"against the opponent's depth {depths[-1]} at the turning points (mean / mean absolute difference, cp, "
              "from Manaka's side; positive: more optimistic for Manaka):")
        for j, v in summary["against_deepest"].items():
            print(f"    {'Manaka network' if j == 'network' else 'opponent ' + j.replace('depth', 'depth ')}: "
                  f"{v['mean']} / {v['mean_abs']} over {v['positions']} positions")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "games": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
