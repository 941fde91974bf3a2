#!/usr/bin/env python3
"""Plays `manaka usi` against fairy-stockfish with cshogi's match runner (cshogi.cli.main)
and checks the games: every game complete, no illegal move, no time loss, no protocol error,
every line Manaka wrote ASCII and every scored info line carrying a pv.

Usage: cshogi_match.py ENGINE_SCRIPT FAIRY_STOCKFISH OUT_DIR
Writes the summary, a JSON object, to OUT_DIR/summary.json (and stdout); exits 1 when a
check fails.
Called by manaka-cli/tests/usi_cshogi.rs.
"""

import contextlib
import io
import json
import os
import re
import sys

import cshogi
import cshogi.cli

ENGINE, FAIRY, OUT = sys.argv[1], sys.argv[2], sys.argv[3]

MANAKA_OPTIONS = {
    "EvalFile": "builtin:material",
    "Simulations": "0",
    "MoveOverhead": "60",
    "USI_Hash": "64",
}
FAIRY_OPTIONS = {"Threads": "1", "Hash": "16"}

# (label, games, byoyomi [manaka, fairy], time, inc, ponder)
MATCHES = [
    ("byoyomi", 2, [300, 50], 0, None, False),
    ("fischer+ponder", 2, None, [3000, 1000], [100, 50], True),
]


def play(label, games, byoyomi, time, inc, ponder):
    csa = os.path.join(OUT, label.replace("+", "_") + ".csa")
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        result = cshogi.cli.main(
            ENGINE,
            FAIRY,
            options1=MANAKA_OPTIONS,
            options2=FAIRY_OPTIONS,
            names=["manaka", "fairy-stockfish"],
            games=games,
            byoyomi=byoyomi,
            time=time,
            inc=inc,
            draw=256,
            ponder=ponder,
            csa=csa,
            multi_csa=True,
            debug=True,
        )
    return result, log.getvalue(), csa


def main():
    failures = []
    summary = {"matches": []}
    for label, games, byoyomi, time, inc, ponder in MATCHES:
        try:
            result, log, csa = play(label, games, byoyomi, time, inc, ponder)
        except Exception as e:  # an engine died or broke the protocol
            failures.append("%s: the match runner failed: %r" % (label, e))
            continue
        with open(os.path.join(OUT, label.replace("+", "_") + ".log"), "w") as f:
            f.write(log)
        endings = re.findall(r"^まで\d+手で.*$", log, re.M)
        if result["total"] != games or len(endings) != games:
            failures.append("%s: %d of %d games finished" % (label, result["total"], games))
        for e in endings:
            if "反則" in e:
                failures.append("%s: illegal move or action: %s" % (label, e))
            if "切れ負け" in e:
                failures.append("%s: lost on time: %s" % (label, e))
        # cshogi's debug listener prefixes engine 1's lines with "1:" — when engines swap
        # sides each game, the prefix follows the listener, which stays with the engine.
        manaka_lines = [l[2:] for l in log.splitlines() if l.startswith("1:")]
        for l in manaka_lines:
            if not l.isascii():
                failures.append("%s: non-ASCII output: %r" % (label, l))
            if l.startswith("info") and " score " in l and " pv " not in l:
                failures.append("%s: scored info without pv: %s" % (label, l))
        bestmoves = [l for l in manaka_lines if l.startswith("bestmove")]
        with open(csa) as f:
            records = f.read()
        summary["matches"].append(
            {
                "label": label,
                "games": result["total"],
                "manaka_won": result["engine1_won"],
                "fairy_won": result["engine2_won"],
                "draws": result["draw"],
                "endings": endings,
                "manaka_bestmoves": len(bestmoves),
                "csa_endings": re.findall(r"^%\S+", records, re.M),
            }
        )
    summary["failures"] = failures
    text = json.dumps(summary, ensure_ascii=True)
    with open(os.path.join(OUT, "summary.json"), "w") as f:
        f.write(text)
    print(text)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
