#!/usr/bin/env python3
"""The scale a teacher's scores are in: fits s in P(the side to move wins) = σ(eval / s) to
the game results of labelled positions (issue 19; docs/training.md, "The teacher's scale").

`manaka train` turns an HCPE record's score into the teacher's win probability σ(eval / 600)
(SPEC §5's scale) unless `--eval-scale S` says otherwise. A teacher whose centipawns are on
another scale gives targets that are too confident (or too timid): fairy-stockfish 11.1
started with `usi` alone, as `manaka label` runs it, scores about twice what the 600 scale
means. This script measures it on any labelled set whose records carry the result of the
game they come from (self-play and versus sets; not sets of positions without games):

  scripts/calibrate.py labels.hcpe                       # one file
  scripts/calibrate.py data/labels/sp9*.hcpe.xz --json   # archived sets, as a script reads it

For each file, and for all of them together: the records used (scores of ±30000 and beyond —
mates and clamped scores — say nothing about the scale and are left out, as are records of
games without a result when --skip-draws is given), the fitted scale, and the mean log loss
of the game results at the fit and at 600. The fit is the maximum of the likelihood (a draw
counts half a win), exact to 0.1%: the negative log likelihood is convex in 1/s, so a
golden-section search over 1/s finds its minimum.

Records are HCPE (38 bytes, docs/data.md): eval i16 at byte 32 from the side to move,
gameResult u8 at byte 36 (0 draw, 1 Black won, 2 White won), the side to move the first bit
of the HCP (1 = White). `.xz` files are read through Python's lzma.
"""

import argparse
import json
import lzma
import math
import sys

import numpy as np

RECORD = np.dtype([("hcp", "u1", (32,)), ("eval", "<i2"), ("move", "<u2"),
                   ("result", "u1"), ("dummy", "u1")])
assert RECORD.itemsize == 38

# SPEC §5: score cp = 600·ℓ, the scale `manaka train` assumes for HCPE.
SPEC_SCALE = 600.0
# Scores at or beyond this are mates or clamped (docs/data.md, "Scores and evals").
DECIDED = 30000


def read(path):
    """The records of one HCPE file (plain or .xz)."""
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) % RECORD.itemsize:
        raise SystemExit(f"calibrate: {path}: {len(data)} bytes is not a whole number of "
                         f"38-byte HCPE records")
    return np.frombuffer(data, dtype=RECORD)


def samples(records, skip_draws):
    """(scores, results) from the side to move: result 1 win, 0 loss, ½ draw."""
    white = (records["hcp"][:, 0] & 1).astype(bool)
    result = records["result"]
    bad = result > 2
    if bad.any():
        raise SystemExit(f"calibrate: gameResult {int(result[bad][0])} is not 0, 1 or 2")
    won = np.where(white, result == 2, result == 1)
    r = np.where(result == 0, 0.5, won.astype(float))
    score = records["eval"].astype(float)
    keep = np.abs(score) < DECIDED
    if skip_draws:
        keep &= result != 0
    return score[keep], r[keep]


def log_loss(score, r, scale):
    """Mean negative log likelihood of results r under σ(score / scale)."""
    z = score / scale
    # −[r ln σ(z) + (1 − r) ln σ(−z)] = softplus(−z) + (1 − r)·z, stable for any z.
    return float(np.mean(np.logaddexp(0.0, -z) + (1.0 - r) * z))


def fit(score, r, lo=20.0, hi=100000.0):
    """The scale of maximum likelihood in [lo, hi] (golden section over 1/s, convex)."""
    a, b = 1.0 / hi, 1.0 / lo
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = log_loss(score, r, 1.0 / c), log_loss(score, r, 1.0 / d)
    while (b - a) > 1e-4 * a:
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = log_loss(score, r, 1.0 / c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = log_loss(score, r, 1.0 / d)
    return 2.0 / (a + b)


def summary(name, score, r):
    if len(score) == 0:
        return {"file": name, "records": 0, "scale": None, "log_loss": None,
                "log_loss_at_600": None}
    s = fit(score, r)
    return {"file": name, "records": int(len(score)), "scale": round(s, 1),
            "log_loss": round(log_loss(score, r, s), 5),
            "log_loss_at_600": round(log_loss(score, r, SPEC_SCALE), 5)}


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE", help="HCPE files (.hcpe, .hcpe.xz)")
    ap.add_argument("--skip-draws", action="store_true",
                    help="leave out records of drawn games (gameResult 0)")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)

    rows, all_s, all_r = [], [], []
    for path in args.files:
        try:
            records = read(path)
        except OSError as e:
            raise SystemExit(f"calibrate: {path}: {e.strerror or e}")
        score, r = samples(records, args.skip_draws)
        rows.append(summary(path, score, r))
        all_s.append(score)
        all_r.append(r)
    total = summary("all", np.concatenate(all_s), np.concatenate(all_r))
    if args.json:
        json.dump({"files": rows, "all": total, "spec_scale": SPEC_SCALE}, sys.stdout)
        print()
        return
    print("| file | records | scale | log loss at the scale | at 600 |")
    print("|---|---|---|---|---|")
    for row in rows + ([total] if len(rows) > 1 else []):
        if row["records"] == 0:
            print(f"| {row['file']} | 0 | — | — | — |")
        else:
            print(f"| {row['file']} | {row['records']:,} | {row['scale']:.0f} | "
                  f"{row['log_loss']:.4f} | {row['log_loss_at_600']:.4f} |")
    if total["scale"]:
        print(f"\ntrain with: manaka train --eval-scale {total['scale']:.0f} …")


if __name__ == "__main__":
    main()
