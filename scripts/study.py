#!/usr/bin/env python3
"""Shape study: which network shape is worth its cost (issue 19, docs/history.md).

Trains every shape on the same data for the same number of samples (same seed, batch and
learning-rate schedule), then measures each one's cost and worth:

  parameters and bytes        the MNW1 file as written
  evals/s, simulations/s      `manaka bench` (compiled engine, random weights) and
                              `manaka go --simulations N` on the trained weights
  validation losses           value and policy cross-entropy, policy top-1 (`manaka train --val`)
  Elo at equal time           a round robin between the trained nets, every pair playing
                              --games games at --byoyomi ms a move from paired openings
                              (scripts/strength.py), with 95% intervals per pair and one
                              Bradley-Terry rating per shape (mean 0)

and writes, into --out DIR:

  study.json      everything above, one object
  study.md        the table, the pairwise results and the commands, for docs/history.md
  elo-vs-speed.svg  Elo against evaluations per second (log scale)
  loss.svg        validation (and training) loss against samples, one line per shape

Every step's output is kept in DIR and skipped when present, so an interrupted study is
resumed by running the same command again.

Example (tiny, about two minutes):
  manaka selfplay --weights builtin:material --games 200 --simulations 16 --out sp
  cat sp/*.hcpe3 > games.hcpe3
  scripts/study.py --manaka target/release/manaka --shapes pair4_d16_o2_h32,pair0_d128_o2_h256_kp \\
      --data games.hcpe3 --val games.hcpe3 --samples 20000 --games 4 --byoyomi 100 --out study-tiny
"""

import argparse
import itertools
import json
import math
import os
import subprocess
import sys
import time
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))


def say(*a):
    print("study:", *a, file=sys.stderr, flush=True)


def run_json(cmd, out_path=None):
    """Runs cmd, parses its stdout as one JSON object; caches it in out_path."""
    if out_path and os.path.exists(out_path):
        with open(out_path) as f:
            return json.load(f)
    say("$", " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"study: command failed with status {p.returncode}: {' '.join(cmd)}")
    lines = [l for l in p.stdout.splitlines() if l.strip().startswith("{")]
    if not lines:
        sys.exit(f"study: no JSON from: {' '.join(cmd)}")
    value = json.loads(lines[-1])
    if out_path:
        tmp = out_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(value, f, indent=1)
        os.replace(tmp, out_path)
    return value


def train_resumable(cmd, net, summary):
    """Runs `manaka train … --out NET --json` once, its summary cached in SUMMARY: a stopped
    run (NET.state there) resumes, a net without its summary is trained again."""
    if not os.path.exists(summary):
        if os.path.exists(net + ".state"):
            cmd = cmd + ["--resume"]
        elif os.path.exists(net):
            cmd = cmd + ["--force"]
    return run_json(cmd, summary)


def play_matches(jobs, lanes=1, who="study"):
    """Plays the scripts/strength.py matches (cmd, out) whose OUT is missing, `lanes` at once;
    each match writes its summary to OUT.tmp, renamed to OUT when it finished."""
    todo = [(cmd, out) for cmd, out in jobs if not os.path.exists(out)]
    running = []
    while todo or running:
        while todo and len(running) < lanes:
            cmd, out = todo.pop(0)
            print(f"{who}:", "$", " ".join(cmd), file=sys.stderr, flush=True)
            running.append((subprocess.Popen(cmd + ["--json", out + ".tmp"], stdout=sys.stderr), out, cmd))
        finished = [r for r in running if r[0].poll() is not None]
        if not finished:
            time.sleep(0.5)
            continue
        for r in finished:
            running.remove(r)
            proc, out, cmd = r
            if proc.returncode != 0:
                for p, _, _ in running:
                    p.wait()
                sys.exit(f"{who}: a match failed (run again to resume): {' '.join(cmd)}")
            os.replace(out + ".tmp", out)


def total(results):
    """The sum of several strength.py summaries, with its Elo and interval."""
    from strength import summarize  # needs cshogi, as the matches do
    w = sum(r["wins"] for r in results)
    d = sum(r["draws"] for r in results)
    l = sum(r["losses"] for r in results)
    return summarize(w, d, l)


def finite(v):
    """JSON has no infinity: an unbounded Elo (a sweep, an interval leaving [0, 1]) is written as null."""
    return None if isinstance(v, float) and math.isinf(v) else v


def elo_text(v, side):
    """An Elo figure; strength.py writes an unbounded one (a sweep, an interval leaving [0, 1])
    as null or ±Infinity."""
    if v is None or (isinstance(v, float) and math.isinf(v)):
        if side == 0 and isinstance(v, float):
            return "+∞" if v > 0 else "−∞"
        return "−∞" if side < 0 else "+∞"
    # + 0.0: an even score reads +0, not -0; a negative figure takes the minus sign the docs use.
    return f"{v + 0.0:+.0f}".replace("-", "\u2212")


def elo_interval(r):
    """`+35 [−13, +84]`: a strength.py summary's Elo and its 95% interval, as the docs' tables write it."""
    return f"{elo_text(r['elo'], 0)} [{elo_text(r['elo_low'], -1)}, {elo_text(r['elo_high'], 1)}]"


def record_text(r):
    """`56–0–44`: a strength.py summary's wins, draws and losses with the en dashes the docs use."""
    return f"{r['wins']}\u2013{r['draws']}\u2013{r['losses']}"


def result_cells(r):
    """The `games | W | D | L | score | Elo [95%]` cells of a docs table row for a strength.py summary."""
    return f"{r['games']} | {r['wins']} | {r['draws']} | {r['losses']} | {r['score']:.3f} | {elo_interval(r)}"


def bradley_terry(names, results, iterations=2000):
    """Ratings (Elo, mean 0) maximising the Bradley-Terry likelihood of the pairwise scores,
    draws counted as half a win each way; every pair gets a prior of one drawn game so that a
    clean sweep has a finite rating (Hunter's MM algorithm)."""
    wins = {a: {b: 0.0 for b in names} for a in names}
    games = {a: {b: 0.0 for b in names} for a in names}
    for (a, b), r in results.items():
        wins[a][b] += r["wins"] + 0.5 * r["draws"] + 0.5
        wins[b][a] += r["losses"] + 0.5 * r["draws"] + 0.5
        games[a][b] += r["games"] + 1
        games[b][a] += r["games"] + 1
    gamma = {n: 1.0 for n in names}
    for _ in range(iterations):
        new = {}
        for a in names:
            w = sum(wins[a].values())
            d = sum(games[a][b] / (gamma[a] + gamma[b]) for b in names if b != a and games[a][b] > 0)
            new[a] = w / d if d > 0 else gamma[a]
        mean_log = sum(math.log(g) for g in new.values()) / len(new)
        gamma = {n: math.exp(math.log(g) - mean_log) for n, g in new.items()}
    return {n: 400.0 * math.log10(g) for n, g in gamma.items()}


# --- SVG plots (hand-written: no plotting library needed) -------------------------------

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def nice_ticks(lo, hi, n=5):
    if hi <= lo:
        hi = lo + 1.0
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    for m in (1, 2, 5, 10):
        if (hi - lo) / (step * m) <= n:
            step *= m
            break
    t = math.floor(lo / step) * step
    out = []
    while t <= hi + 1e-9 * step:
        out.append(round(t, 10))
        t += step
    return out


def svg_plot(path, title, xlabel, ylabel, series, log_x=False, labels=True):
    """series: [(name, [(x, y), ...], as_line)]. Writes a standalone SVG."""
    W, H, L, R, T, B = 820, 420, 70, 300, 40, 55
    pts = [(x, y) for _, s, _ in series for x, y in s]
    if not pts:
        pts = [(1.0, 0.0)]
    fx = (lambda x: math.log10(x)) if log_x else (lambda x: x)
    xs = [fx(x) for x, _ in pts]
    ys = [y for _, y in pts]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    padx = (x1 - x0) * 0.08 or 0.5
    pady = (y1 - y0) * 0.1 or max(abs(y0) * 0.1, 1.0)
    x0, x1, y0, y1 = x0 - padx, x1 + padx, y0 - pady, y1 + pady
    px = lambda x: L + (fx(x) - x0) / (x1 - x0) * (W - L - R)
    py = lambda y: H - B - (y - y0) / (y1 - y0) * (H - T - B)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{(L + W - R) / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>']
    if log_x:
        xticks = [m * 10 ** e for e in range(math.floor(x0), math.ceil(x1) + 1) for m in (1, 2, 5)
                  if x0 <= math.log10(m * 10 ** e) <= x1]
    else:
        xticks = [t for t in nice_ticks(x0, x1) if x0 <= t <= x1]
    for t in xticks:
        X = px(t)
        label = f"{t:,.0f}" if abs(t) >= 1 else f"{t:g}"
        out.append(f'<line x1="{X:.1f}" y1="{H - B}" x2="{X:.1f}" y2="{H - B + 5}" stroke="black"/>')
        out.append(f'<text x="{X:.1f}" y="{H - B + 18}" text-anchor="middle">{label}</text>')
    for t in nice_ticks(y0, y1):
        if not (y0 <= t <= y1):
            continue
        Y = py(t)
        out.append(f'<line x1="{L - 5}" y1="{Y:.1f}" x2="{W - R}" y2="{Y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 8}" y="{Y + 4:.1f}" text-anchor="end">{t:g}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">{escape(xlabel)}</text>')
    out.append(f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(T + H - B) / 2})">{escape(ylabel)}</text>')
    for k, (name, s, as_line) in enumerate(series):
        c = COLOURS[k % len(COLOURS)]
        if as_line and len(s) > 1:
            d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s)
            width = 1 if len(s) > 40 else 2
            out.append(f'<polyline class="series" data-name="{escape(name)}" points="{d}" fill="none" '
                       f'stroke="{c}" stroke-width="{width}"/>')
        # Dense curves (training reports) are drawn as lines alone; sparse ones get dots.
        for x, y in (s if len(s) <= 40 or not as_line else []):
            out.append(f'<circle class="point" data-name="{escape(name)}" cx="{px(x):.1f}" cy="{py(y):.1f}" '
                       f'r="{3 if as_line else 5}" fill="{c}"/>')
            if labels and not as_line:
                out.append(f'<text x="{px(x) + 8:.1f}" y="{py(y) - 6:.1f}" fill="{c}">{escape(name)}</text>')
        Y = T + 16 * k
        out.append(f'<rect x="{W - R + 12}" y="{Y}" width="10" height="10" fill="{c}"/>')
        out.append(f'<text x="{W - R + 27}" y="{Y + 9}" font-size="10">{escape(name)}</text>')
    out.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, path)


def read_log(path):
    events = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return events


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manaka", required=True, help="the manaka binary (cargo build --release -p manaka-cli)")
    ap.add_argument("--shapes", required=True, help="comma-separated shapes (compiled-in ones: `manaka shape list`)")
    ap.add_argument("--data", nargs="+", required=True, help="training files (HCPE, PSV or HCPE3), the same for every shape")
    ap.add_argument("--val", nargs="+", default=[], help="validation files")
    ap.add_argument("--samples", type=int, required=True, help="training samples per shape (steps = samples / batch)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1, help="training seed and the round robin's opening seed")
    ap.add_argument("--train-arg", action="append", default=[], help="extra `manaka train` argument (repeatable)")
    ap.add_argument("--games", type=int, default=20, help="games per pair in the round robin (even; 0: no round robin)")
    ap.add_argument("--byoyomi", type=int, default=300, help="milliseconds per move in the round robin")
    ap.add_argument("--bench-time", type=float, default=0.25, help="`manaka bench --time`")
    ap.add_argument("--go-simulations", type=int, default=20000, help="simulations of the sims/s measurement")
    ap.add_argument("--out", required=True, help="study directory (resumable)")
    args = ap.parse_args()

    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    if len(set(shapes)) != len(shapes) or len(shapes) < 1:
        sys.exit("study: --shapes needs distinct shapes")
    if args.games % 2:
        sys.exit("study: --games must be even (each opening is played once with each colour)")
    for f in args.data + args.val:
        if not os.path.exists(f):
            sys.exit(f"study: {f} does not exist")
    os.makedirs(args.out, exist_ok=True)
    steps = max(1, args.samples // args.batch)
    rows = {}

    # 1. Train every shape on the same data, the same number of steps.
    for shape in shapes:
        net = os.path.join(args.out, f"{shape}.mnw")
        summary = os.path.join(args.out, f"{shape}.train.json")
        cmd = [args.manaka, "train", "--shape", shape, "--data", *args.data, "--out", net,
               "--epochs", "1000", "--max-steps", str(steps), "--batch", str(args.batch), "--lr", str(args.lr),
               "--threads", str(args.threads), "--seed", str(args.seed),
               "--log", os.path.join(args.out, f"{shape}.log.jsonl"), "--report-every", "2s", "--json",
               *args.train_arg]
        if args.val:
            cmd[cmd.index("--out"):cmd.index("--out")] = ["--val", *args.val]
        t = train_resumable(cmd, net, summary)
        rows[shape] = {"shape": shape, "steps": t["steps"], "samples": t["samples"],
                       "val_value_loss": t.get("val_value_loss"), "val_policy_loss": t.get("val_policy_loss"),
                       "val_policy_accuracy": t.get("val_policy_accuracy"),
                       "train_value_loss": t.get("train_value_loss"), "train_policy_loss": t.get("train_policy_loss"),
                       "bytes": os.path.getsize(net)}

    # 2. Speed: the compiled engines (random weights: speed does not depend on the values) and
    #    the search on the trained weights.
    bench = run_json([args.manaka, "bench", "--shapes", ",".join(shapes), "--time", str(args.bench_time),
                      "--scaling-simulations", "0", "--json"], os.path.join(args.out, "bench.json"))
    for b in bench["rows"]:
        if b["shape"] in rows:
            rows[b["shape"]].update({"params": b["params"], "evals_per_s": b["evals_per_s"],
                                     "batch_evals_per_s": b.get("batch_evals_per_s")})
    for shape in shapes:
        g = run_json([args.manaka, "go", "--weights", os.path.join(args.out, f"{shape}.mnw"),
                      "--simulations", str(args.go_simulations), "--json"],
                     os.path.join(args.out, f"{shape}.go.json"))
        rows[shape]["simulations_per_s"] = g["nps"]
        rows[shape]["search_network"] = g["network"]

    # 3. Strength at equal time: a round robin.
    pairs = {}
    if args.games > 0 and len(shapes) > 1:
        match = lambda a, b: os.path.join(args.out, f"match-{a}-vs-{b}.json")  # noqa: E731
        play_matches([([sys.executable, os.path.join(HERE, "strength.py"), "--manaka", args.manaka,
                        "--evalfile", os.path.abspath(os.path.join(args.out, f"{a}.mnw")),
                        "--opponent", "manaka",
                        "--opponent-evalfile", os.path.abspath(os.path.join(args.out, f"{b}.mnw")),
                        "--games", str(args.games), "--byoyomi", str(args.byoyomi), "--seed", str(args.seed)],
                       match(a, b)) for a, b in itertools.combinations(shapes, 2)])
        for a, b in itertools.combinations(shapes, 2):
            out = match(a, b)
            with open(out) as f:
                m = json.load(f)
            pairs[(a, b)] = {"wins": m["wins"], "draws": m["draws"], "losses": m["losses"], "games": m["games"],
                             "elo": m["elo"], "elo_low": m["elo_low"], "elo_high": m["elo_high"]}
        elo = bradley_terry(shapes, pairs)
        for s in shapes:
            rows[s]["elo"] = elo[s]

    result = {"shapes": shapes, "samples": args.samples, "batch": args.batch, "lr": args.lr, "seed": args.seed,
              "data": args.data, "val": args.val, "games_per_pair": args.games, "byoyomi_ms": args.byoyomi,
              "simd": bench.get("simd"), "rows": [rows[s] for s in shapes],
              "pairs": [{"a": a, "b": b, **r} for (a, b), r in pairs.items()],
              "command": " ".join(["scripts/study.py"] + sys.argv[1:])}
    tmp = os.path.join(args.out, "study.json.tmp")
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, os.path.join(args.out, "study.json"))

    # 4. The table and the pictures.
    def f(v, fmt):
        return "—" if v is None else format(v, fmt)

    md = [f"Shape study: {len(shapes)} shapes, {args.samples:,} samples each (batch {args.batch}, lr {args.lr}, "
          f"seed {args.seed}), data {', '.join(args.data)}; validation {', '.join(args.val) or 'none'}; "
          f"round robin {args.games} games a pair at {args.byoyomi} ms a move.", "",
          "| shape | parameters | bytes | evals/s | simulations/s | val value loss | val policy loss | top-1 | Elo |",
          "|---|---|---|---|---|---|---|---|---|"]
    for s in shapes:
        r = rows[s]
        acc = r.get("val_policy_accuracy")
        md.append(f"| `{s}` | {f(r.get('params'), ',')} | {r['bytes']:,} | {f(r.get('evals_per_s'), ',.0f')} | "
                  f"{f(r.get('simulations_per_s'), ',.0f')} | {f(r.get('val_value_loss'), '.4f')} | "
                  f"{f(r.get('val_policy_loss'), '.4f')} | {'—' if acc is None else f'{100 * acc:.1f}%'} | "
                  f"{f(r.get('elo'), '+.0f')} |")
    if pairs:
        md += ["", "| pair | W | D | L | Elo of the first [95%] |", "|---|---|---|---|---|"]
        for (a, b), r in pairs.items():
            md.append(f"| `{a}` vs `{b}` | {r['wins']} | {r['draws']} | {r['losses']} | {elo_interval(r)} |")
    md += ["", f"Command: `{result['command']}`", ""]
    with open(os.path.join(args.out, "study.md") + ".tmp", "w") as fh:
        fh.write("\n".join(md))
    os.replace(os.path.join(args.out, "study.md") + ".tmp", os.path.join(args.out, "study.md"))

    speed = [(s, [(rows[s]["evals_per_s"], rows[s].get("elo", 0.0))], False) for s in shapes
             if rows[s].get("evals_per_s")]
    svg_plot(os.path.join(args.out, "elo-vs-speed.svg"), "Strength at equal time against speed",
             "evaluations per second (compiled engine, log scale)",
             "Elo (Bradley-Terry, mean 0)" if pairs else "Elo (no round robin: 0)", speed, log_x=True)
    curves = []
    for s in shapes:
        ev = read_log(os.path.join(args.out, f"{s}.log.jsonl"))
        train_pts = [(e["samples"], e["value_loss"] + e["policy_loss"]) for e in ev
                     if e.get("event") == "report" and e.get("samples")]
        val_pts = [(e["step"] * args.batch, e["value_loss"] + e["policy_loss"]) for e in ev
                   if e.get("event") == "validation" and e.get("step")]
        if val_pts:
            curves.append((f"{s} (validation)", val_pts, True))
        if train_pts:
            curves.append((f"{s} (training)", train_pts, True))
    svg_plot(os.path.join(args.out, "loss.svg"), "Loss (value + policy) against samples", "samples",
             "loss", curves, labels=False)
    print("\n".join(md))


if __name__ == "__main__":
    main()
