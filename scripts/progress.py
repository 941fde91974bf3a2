#!/usr/bin/env python3
"""The training loop's progress as a picture: each shipped generation's score against
fairy-stockfish at every level, read from the "Progress by generation" table of
docs/strength.md (the one home of those figures), drawn as an SVG line chart with the goal —
half the games against full strength at 1 s — as a line of its own.

  scripts/progress.py                       # docs/strength.md -> docs/strength-progress.svg
  scripts/progress.py --json                # the scores the chart shows, for a script

A cell such as `19–1` (wins–losses) or `18–1–1` (wins–draws–losses) is a score of
(W + D/2) / N; the chart plots it in per cent against the generation's number.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from study import svg_plot  # noqa: E402  (the scripts' one home)

HEADING = "## Progress by generation"
RESULT = re.compile(r"^\s*(\d+)\s*[–-]\s*(\d+)(?:\s*[–-]\s*(\d+))?\s*$")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_table(text):
    """(columns, rows) of the first Markdown table under HEADING; rows as lists of cells."""
    at = text.find(HEADING)
    if at < 0:
        raise ValueError(f"no section {HEADING!r}")
    lines = [l for l in text[at:].splitlines()[1:]]
    start = next((i for i, l in enumerate(lines) if l.lstrip().startswith("|")), None)
    if start is None:
        raise ValueError(f"no table under {HEADING!r}")
    table = []
    for l in lines[start:]:
        if not l.lstrip().startswith("|"):
            break
        table.append(cells(l))
    if len(table) < 3:
        raise ValueError(f"the table under {HEADING!r} has no rows")
    return table[0], table[2:]


def score(cell):
    """(W + D/2) / N of a `W–L` or `W–D–L` cell, or None for any other cell."""
    m = RESULT.match(cell.replace("*", ""))
    if not m:
        return None
    a, b, c = (int(g) if g is not None else None for g in m.groups())
    w, d, l = (a, 0, b) if c is None else (a, b, c)
    n = w + d + l
    return (w + d / 2) / n if n else None


def generation(cell):
    m = re.match(r"\**\s*(\d+)", cell)
    return int(m.group(1)) if m else None


def progress(text):
    """{column name: [(generation, score), ...]} for every column of W–L cells."""
    columns, rows = read_table(text)
    series = {}
    for row in rows:
        g = generation(row[0])
        if g is None:
            continue
        for name, cell in zip(columns[1:], row[1:]):
            s = score(cell)
            if s is not None:
                series.setdefault(name, []).append((g, s))
    return series


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--doc", default=os.path.join(HERE, "..", "docs", "strength.md"))
    ap.add_argument("--out", default=os.path.join(HERE, "..", "docs", "strength-progress.svg"))
    ap.add_argument("--json", action="store_true", help="print the scores as JSON as well")
    args = ap.parse_args()
    try:
        with open(args.doc, encoding="utf-8") as f:
            series = progress(f.read())
    except (OSError, ValueError) as e:
        sys.exit(f"progress: {args.doc}: {e}")
    if not series:
        sys.exit(f"progress: {args.doc}: no W–L results in the table under {HEADING!r}")
    lines = [(f"fairy-stockfish {name.replace('fairy-stockfish', '').strip(' ,')}".strip(),
              [(g, 100 * s) for g, s in pts], True) for name, pts in series.items()]
    gens = sorted({g for _, pts, _ in lines for g, _ in pts})
    lines.append(("goal: half of the games at full strength, 1 s", [(gens[0], 50.0), (gens[-1], 50.0)], True))
    svg_plot(args.out, "Score against fairy-stockfish by generation",
             "generation (shipped)", "score (%)", lines)
    if args.json:
        print(json.dumps({name: [{"generation": g, "score": s} for g, s in pts] for name, pts in series.items()},
                         indent=1))
    print(f"progress: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
