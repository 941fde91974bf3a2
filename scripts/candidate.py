#!/usr/bin/env python3
"""Is a trained candidate better than its parent? The measurements and the decision rule of the
training loop (issue 19; docs/strength.md, "Generation 15" and "How a candidate is judged"), in
one resumable command instead of a copied script per session.

Three stages, each a set of scripts/strength.py matches (paired openings, one thread each,
the engine's defaults, --lanes matches at once), every summary kept in --out DIR and skipped
when it is there, so an interrupted run resumes by running the same command again:

  1. fixed     the candidate against its parent at a fixed --simulations a move (3,000),
               --fixed-games games per seed of --fixed-seeds: independent of the machine's
               load, and what a step of ~50 Elo needs (200 games) to show
  2. clock     against its parent at the goal's --byoyomi (1 s, some 65,000 simulations a
               move with one thread), --clock-games per seed of --clock-seeds: the two
               measures can disagree (generation 15 won the first and lost the second)
  3. fairy     against fairy-stockfish at the --fairy LEVEL:MS pairs (full strength at 1 s,
               Skill Levels 10, 5 and 0 at 300 ms), on the openings of --fairy-seed: the rows of
               docs/strength.md's "Progress by generation"

The verdict follows the rule every generation since 15 is judged by: ship only when the
fixed-simulation interval clears zero over at least 200 games AND the candidate scores more
than half against its parent on the clock over at least 40 games. A gate not passed (failed,
or too few games to say) stops the run (the next stage would be wasted time) unless --all.

  scripts/candidate.py --manaka target/release/manaka --candidate g19a.mnw \\
      --parent manaka-runtime/nets/default.mnw --out cand-g19a \\
      --fixed-seeds 61,62 --clock-seeds 61,62,63,64

Writes DIR/candidate.json (every figure, the verdict, the commands) and DIR/candidate.md (the
rows for docs/strength.md). With --dry-run, prints the matches it would play.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from study import finite, play_matches, record_text, result_cells, total  # noqa: E402  (the scripts' one home)
from dataset import write_atomically  # noqa: E402

# The decision rule (docs/strength.md, "How a candidate is judged").
FIXED_MIN_GAMES = 200
CLOCK_MIN_GAMES = 40


def judge_fixed(t):
    """(passed, reason) for the fixed-simulation rows' total t: a step whose interval clears
    zero over enough games; None while the games are too few or the interval holds zero."""
    if t["games"] >= FIXED_MIN_GAMES and t["elo_low"] is not None and t["elo_low"] > 0:
        return True, "ahead at fixed simulations (interval clears zero)"
    if t["elo_high"] is not None and t["elo_high"] < 0:
        return False, "behind at fixed simulations (interval below zero)"
    if t["games"] < FIXED_MIN_GAMES:
        return None, f"fixed simulations: {t['games']} games, fewer than {FIXED_MIN_GAMES}: play more seeds"
    return False, "no step at fixed simulations (interval holds zero)"


def judge_clock(t):
    """(passed, reason) for the clock rows' total t: ahead (score above one half) over enough games."""
    if t["games"] < CLOCK_MIN_GAMES:
        return None, f"clock: {t['games']} games, fewer than {CLOCK_MIN_GAMES}: play more seeds"
    if t["score"] > 0.5:
        return True, "ahead of its parent on the clock"
    return False, "not ahead of its parent on the clock"


def verdict(fixed, clock):
    """The whole rule: ship only when both stages passed."""
    if fixed is not None and fixed[0] is False:
        return "keep the parent: " + fixed[1]
    if clock is not None and clock[0] is False:
        return "keep the parent: " + clock[1]
    if fixed is not None and fixed[0] and clock is not None and clock[0]:
        return "ship it: " + fixed[1] + " and " + clock[1]
    undecided = [s[1] for s in (fixed, clock) if s is not None and s[0] is None]
    return "undecided: " + ("; ".join(undecided) if undecided else "stages not played")


def seeds_of(text, flag):
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        sys.exit(f"candidate: {flag} takes comma-separated integers, not {text!r}")


def fairy_levels(text):
    levels = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            skill, ms = part.split(":")
            levels.append((int(skill), int(ms)))
        except ValueError:
            sys.exit(f"candidate: --fairy takes SKILL:MILLISECONDS pairs such as 20:1000,10:300, not {part!r}")
        if not -20 <= levels[-1][0] <= 20:
            sys.exit(f"candidate: fairy-stockfish's Skill Level is -20..20, not {levels[-1][0]}")
    return levels


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manaka", required=True, help="the manaka binary (cargo build --release -p manaka-cli)")
    ap.add_argument("--candidate", required=True, help="the candidate network (MNW1)")
    ap.add_argument("--parent", required=True, help="its parent, e.g. manaka-runtime/nets/default.mnw")
    ap.add_argument("--out", required=True, help="the directory of this candidate's matches (resumable)")
    ap.add_argument("--name", default=None, help="the candidate's name in the report (default: its file's)")
    ap.add_argument("--lanes", type=int, default=2, help="matches at once (each keeps about one core busy)")
    ap.add_argument("--all", action="store_true", help="play every stage even when an earlier gate failed")
    ap.add_argument("--dry-run", action="store_true", help="print the matches, play none")
    ap.add_argument("--option", action="append", default=[],
                    help="extra USI option NAME=VALUE for both engines (repeatable), e.g. BatchSize=8")
    g = ap.add_argument_group("1. fixed simulations against the parent")
    g.add_argument("--fixed-seeds", default="1,2", help="opening seeds, comma-separated (empty: skip)")
    g.add_argument("--fixed-games", type=int, default=100, help="games per seed (even)")
    g.add_argument("--simulations", type=int, default=3000, help="simulations a move")
    g = ap.add_argument_group("2. the clock against the parent")
    g.add_argument("--clock-seeds", default="1,2,3,4", help="opening seeds, comma-separated (empty: skip)")
    g.add_argument("--clock-games", type=int, default=10, help="games per seed (even)")
    g.add_argument("--byoyomi", type=int, default=1000, help="milliseconds a move")
    g = ap.add_argument_group("3. fairy-stockfish")
    g.add_argument("--fairy", default="20:1000,10:300,5:300,0:300",
                   help="SKILL:MILLISECONDS pairs, comma-separated (empty: skip)")
    g.add_argument("--fairy-seed", type=int, default=1, help="opening seed (1: the rows of earlier generations)")
    g.add_argument("--fairy-games", type=int, default=20, help="games per level (even)")
    g.add_argument("--fairy-engine", default="/usr/games/fairy-stockfish")
    args = ap.parse_args()

    for n, flag in ((args.fixed_games, "--fixed-games"), (args.clock_games, "--clock-games"),
                    (args.fairy_games, "--fairy-games")):
        if n <= 0 or n % 2:
            sys.exit(f"candidate: {flag} must be even and positive (each opening is played with each colour)")
    if args.simulations <= 0:
        sys.exit("candidate: --simulations must be positive")
    if args.lanes <= 0:
        sys.exit("candidate: --lanes must be positive")
    for f in (args.manaka, args.candidate, args.parent):
        if not os.path.exists(f):
            sys.exit(f"candidate: {f} does not exist")
    fixed_seeds = seeds_of(args.fixed_seeds, "--fixed-seeds")
    clock_seeds = seeds_of(args.clock_seeds, "--clock-seeds")
    levels = fairy_levels(args.fairy)

    out = args.out
    os.makedirs(out, exist_ok=True)
    path = lambda f: os.path.join(out, f)  # noqa: E731
    name = args.name or os.path.splitext(os.path.basename(args.candidate))[0]
    candidate, parent = os.path.abspath(args.candidate), os.path.abspath(args.parent)
    options = [x for o in args.option for x in ("--option", o)]
    base = [sys.executable, os.path.join(HERE, "strength.py"), "--manaka", os.path.abspath(args.manaka),
            "--evalfile", candidate, *options]
    against_parent = ["--opponent", "manaka", "--opponent-evalfile", parent,
                      *[x for o in args.option for x in ("--opponent-option", o)]]

    # Each stage: (key, title, budget text, [(cmd, summary path, seed)]).
    sims = f"Simulations={args.simulations}"
    stages = [
        ("fixed", "its parent", f"{args.simulations:,} simulations",
         [(base + ["--option", sims] + against_parent + ["--opponent-option", sims,
           # The clock only caps a move that the simulation budget has not ended.
           "--games", str(args.fixed_games), "--byoyomi", "20000", "--seed", str(s)],
           path(f"fixed-s{s}.json"), s) for s in fixed_seeds]),
        ("clock", "its parent", f"{args.byoyomi} ms",
         [(base + against_parent + ["--games", str(args.clock_games), "--byoyomi", str(args.byoyomi),
                                    "--seed", str(s), "--csa", path(f"clock-s{s}.csa")],
           path(f"clock-s{s}.json"), s) for s in clock_seeds]),
    ]
    for skill, ms in levels:
        stem = f"fairy{skill}-{ms}ms-s{args.fairy_seed}"
        stages.append((f"fairy{skill}-{ms}", f"fairy-stockfish Skill Level {skill}" +
                       (" (full strength)" if skill == 20 else ""), f"{ms} ms",
                       [(base + ["--opponent", "fairy", "--fairy", args.fairy_engine, "--fairy-skill", str(skill),
                                 "--games", str(args.fairy_games), "--byoyomi", str(ms),
                                 "--seed", str(args.fairy_seed), "--csa", path(stem + ".csa")],
                         path(stem + ".json"), args.fairy_seed)]))

    if args.dry_run:
        for key, _, _, jobs in stages:
            for cmd, summary, _ in jobs:
                print(f"{key}: {' '.join(cmd)} --json {summary}")
        return 0

    results, judged = [], {}
    for key, opponent, budget, jobs in stages:
        if not jobs:
            continue
        # A gate not passed (failed, or too few games to say) stops the run unless --all.
        stopped = any(passed is not True for passed, _ in judged.values())
        if stopped and not args.all:
            break
        play_matches([(cmd, summary) for cmd, summary, _ in jobs], args.lanes, who="candidate")
        runs = []
        for _, summary, seed in jobs:
            with open(summary) as f:
                runs.append((seed, json.load(f)))
        t = total([r for _, r in runs])
        results.append({"stage": key, "opponent": opponent, "budget": budget, "seeds": [s for s, _ in runs],
                        "per_seed": [record_text(r) for _, r in runs], **t})
        if key == "fixed":
            judged["fixed"] = judge_fixed(t)
        elif key == "clock":
            judged["clock"] = judge_clock(t)
    decision = verdict(judged.get("fixed"), judged.get("clock"))
    if len(results) < sum(1 for s in stages if s[3]):
        decision += " (later stages not played; --all plays them)"

    report = {"name": name, "candidate": candidate, "parent": parent, "verdict": decision,
              "rule": {"fixed_min_games": FIXED_MIN_GAMES, "clock_min_games": CLOCK_MIN_GAMES},
              # JSON has no infinity: an unbounded Elo (a sweep, an interval leaving [0, 1]) is null.
              "results": [{k: finite(v) for k, v in r.items()} for r in results],
              "command": " ".join(["scripts/candidate.py"] + sys.argv[1:])}
    write_atomically(path("candidate.json"), (json.dumps(report, indent=1) + "\n").encode())
    md = [f"## {name} against {os.path.basename(parent)}", "",
          "| network | against | budget | games | W | D | L | score | Elo [95%] |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        seeds = f" (seed{'s' if len(r['seeds']) > 1 else ''} {', '.join(map(str, r['seeds']))}: {', '.join(r['per_seed'])})"
        md.append(f"| `{name}`{seeds} | {r['opponent']} | {r['budget']} | {result_cells(r)} |")
    md += ["", f"Verdict: {decision}.", "", "```sh", report["command"], "```", ""]
    write_atomically(path("candidate.md"), "\n".join(md).encode())
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
