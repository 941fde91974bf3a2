#!/usr/bin/env python3
"""Games of Manaka against another USI engine at small budgets, every position kept for labelling.

Self-play only shows the network positions that it reaches against itself, where both sides
share its blind spots. Against another engine it reaches the positions that engine steers it
into — the attacks it misjudges (docs/strength.md, "Where the games against fairy-stockfish
are lost"). This script plays such games quickly — Manaka with `go nodes N`, the other engine
with a `go` of your choice (`depth 6`, `nodes 20000`) — and writes every position after the
opening as a cshogi HCPE record (38 bytes) with the game's result, eval 0 and no move.
`manaka label` then gives them a teacher's score and best move (keeping the result, so
`manaka train --lambda` can mix it in), and they train like any other labelled set:

  scripts/versus.py --manaka target/release/manaka --engine /usr/games/fairy-stockfish \\
      --engine-go "depth 6" --nodes 800 --games 2000 --seed 1 --out vs/
  cat vs/versus-*.hcpe > vs.hcpe
  manaka label --engine /usr/games/fairy-stockfish --depth 9 --positions vs.hcpe --out vs-d9.hcpe --threads 2

Game i starts from --opening-plies random quiet moves (no captures) drawn from (seed, i), and
Manaka plays Black in even games, White in odd ones. A game ends by checkmate, a resignation
or a declaration, fourfold repetition, or --max-plies (a draw). Games are written in files of
--games-per-file (DIR/versus-000000.hcpe, …), each atomically once complete; run the same
command again to resume (finished files are kept). --lanes plays files side by side, one pair
of engine processes each. A summary — Manaka's wins, draws and losses, and positions — goes to
stderr and, with --json, to a file.
"""

import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys

import cshogi
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset import write_atomically  # noqa: E402  (the scripts' one home)


MATE_CP = 30000  # a reported mate, as a score


class Usi:
    """A USI engine process driven line by line."""

    def __init__(self, cmd, options, name):
        self.name = name
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
        except OSError as e:
            raise SystemExit(f"versus: cannot start {name} ({' '.join(cmd)}): {e}")
        self.send("usi")
        self.wait_for("usiok")
        for k, v in options.items():
            self.send(f"setoption name {k} value {v}")
        self.send("isready")
        self.wait_for("readyok")

    def send(self, line):
        self.proc.stdin.write(line + "\n")

    def wait_for(self, word):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"versus: {self.name} exited while we waited for '{word}'")
            if line.split()[:1] == [word]:
                return line.split()

    def bestmove(self, moves, go):
        self.send("position startpos moves " + " ".join(moves) if moves else "position startpos")
        self.send("go " + go)
        return self.wait_for("bestmove")[1]

    def analyse(self, sfen, moves, go):
        """Search a position: (best move, the last score the engine reported, in centipawns for
        the side to move; a mate is ±MATE_CP, None if it reported no score)."""
        self.send(("position startpos" if sfen == "startpos" else f"position sfen {sfen}")
                  + (" moves " + " ".join(moves) if moves else ""))
        self.send("go " + go)
        score = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"versus: {self.name} exited while searching")
            words = line.split()
            if "score" in words[:-2]:
                i = words.index("score")
                kind, value = words[i + 1], words[i + 2]
                if kind == "cp" and value.lstrip("-").isdigit():
                    score = int(value)
                elif kind == "mate":
                    score = -MATE_CP if value.startswith("-") else MATE_CP
            if words[:1] == ["bestmove"]:
                return words[1], score

    def new_game(self):
        self.send("usinewgame")
        self.send("isready")
        self.wait_for("readyok")

    def close(self):
        try:
            self.send("quit")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def opening(seed, index, plies):
    """Random quiet plies (no captures) from the start position, drawn from (seed, game)."""
    rng = random.Random(seed * 1_000_003 + index)
    board = cshogi.Board()
    moves = []
    for _ in range(plies):
        quiet = [m for m in board.legal_moves if not cshogi.move_cap(m)]
        if not quiet:
            break
        m = rng.choice(quiet)
        moves.append(cshogi.move_to_usi(m))
        board.push(m)
    return moves


def play(args, manaka, other, index):
    """One game; its positions after the opening (HCPE rows) and Manaka's result (1, ½, 0)."""
    moves = opening(args.seed, index, args.opening_plies)
    board = cshogi.Board()
    for m in moves:
        board.push_usi(m)
    manaka_colour = cshogi.BLACK if index % 2 == 0 else cshogi.WHITE
    manaka.new_game()
    other.new_game()
    positions = []
    winner = None  # cshogi.BLACK / cshogi.WHITE, None for a draw
    seen = {}
    while True:
        if board.is_game_over():
            winner = cshogi.WHITE if board.turn == cshogi.BLACK else cshogi.BLACK
            break
        # Fourfold repetition, as cshogi's match runner judges it: a draw, or a loss for the
        # side that gave perpetual check.
        key = board.zobrist_hash()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] >= 4:
            rep = board.is_draw()
            if rep == cshogi.REPETITION_WIN:  # the side to move was checked perpetually
                winner = board.turn
            elif rep == cshogi.REPETITION_LOSE:
                winner = cshogi.WHITE if board.turn == cshogi.BLACK else cshogi.BLACK
            break
        if len(moves) >= args.max_plies:
            break
        hcp = np.empty(1, dtype=cshogi.HuffmanCodedPos)
        board.to_hcp(hcp)
        positions.append(hcp[0]["hcp"].tobytes())
        engine, go = (manaka, f"nodes {args.nodes}") if board.turn == manaka_colour else (other, args.engine_go)
        mv = engine.bestmove(moves, go)
        if mv == "resign":
            winner = cshogi.WHITE if board.turn == cshogi.BLACK else cshogi.BLACK
            break
        if mv == "win":  # an entering-king declaration
            winner = board.turn
            break
        m = board.move_from_usi(mv)
        if not m or not board.is_legal(m):
            raise SystemExit(f"versus: {engine.name} played {mv}, illegal in {board.sfen()}")
        board.push(m)
        moves.append(mv)
    # HCPE's gameResult: 0 draw, 1 Black won, 2 White won (cshogi's DRAW, BLACK_WIN, WHITE_WIN).
    result = 0 if winner is None else (1 if winner == cshogi.BLACK else 2)
    rows = np.zeros(len(positions), dtype=cshogi.HuffmanCodedPosAndEval)
    for k, p in enumerate(positions):
        rows[k]["hcp"] = np.frombuffer(p, dtype=np.uint8)
        rows[k]["gameResult"] = result
    score = 0.5 if winner is None else (1.0 if winner == manaka_colour else 0.0)
    return rows, score


def chunk_path(out, c):
    return os.path.join(out, f"versus-{c:06d}.hcpe")


def play_chunk(args, c):
    """Plays the games of file c and writes it atomically; Manaka's (wins, draws, losses)."""
    manaka = Usi([args.manaka, "usi"], {"EvalFile": args.evalfile or "<empty>", **dict(args.option)}, "manaka")
    other = Usi(args.engine.split(), dict(args.engine_option), os.path.basename(args.engine.split()[0]))
    tally = [0, 0, 0]
    parts = []
    try:
        first = c * args.games_per_file
        for i in range(first, min(first + args.games_per_file, args.games)):
            rows, score = play(args, manaka, other, i)
            parts.append(rows)
            tally[0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
    finally:
        manaka.close()
        other.close()
    data = np.concatenate(parts) if parts else np.zeros(0, dtype=cshogi.HuffmanCodedPosAndEval)
    write_atomically(chunk_path(args.out, c), data.tobytes())
    return tally, len(data)


def option(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return tuple(text.split("=", 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manaka", required=True, help="the manaka binary")
    ap.add_argument("--evalfile", default="", help="Manaka's EvalFile (empty: the embedded default)")
    ap.add_argument("--option", type=option, action="append", default=[], help="Manaka USI option NAME=VALUE")
    ap.add_argument("--nodes", type=int, default=800, help="Manaka's simulations a move (go nodes N)")
    ap.add_argument("--engine", required=True, help="the other engine's command (program and arguments)")
    ap.add_argument("--engine-go", default="depth 6", help="the other engine's go arguments, e.g. 'depth 6'")
    ap.add_argument("--engine-option", type=option, action="append", default=[],
                    help="the other engine's USI option NAME=VALUE (e.g. Threads=1)")
    ap.add_argument("--games", type=int, required=True)
    ap.add_argument("--games-per-file", type=int, default=100)
    ap.add_argument("--opening-plies", type=int, default=8, help="random quiet plies before the first searched move")
    ap.add_argument("--max-plies", type=int, default=256, help="a game this long is a draw")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lanes", type=int, default=1, help="files played side by side (a pair of engines each)")
    ap.add_argument("--out", required=True, help="output directory (resumable)")
    ap.add_argument("--json", default=None, help="write the summary here")
    args = ap.parse_args()
    if args.games < 1 or args.games_per_file < 1 or args.nodes < 1 or args.lanes < 1:
        ap.error("--games, --games-per-file, --nodes and --lanes must be at least 1")
    if args.opening_plies < 0 or args.max_plies < 1:
        ap.error("--opening-plies must be 0 or more and --max-plies at least 1")
    if not os.path.isfile(args.manaka):
        ap.error(f"--manaka {args.manaka}: no such file")
    if args.evalfile:
        if not os.path.isfile(args.evalfile):
            ap.error(f"--evalfile {args.evalfile}: no such file")
        args.evalfile = os.path.abspath(args.evalfile)
    os.makedirs(args.out, exist_ok=True)
    chunks = (args.games + args.games_per_file - 1) // args.games_per_file
    todo = [c for c in range(chunks) if not os.path.exists(chunk_path(args.out, c))]
    print(f"versus: {chunks - len(todo)} of {chunks} files already written, {len(todo)} to play", file=sys.stderr)
    tally, positions, done = [0, 0, 0], 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.lanes) as pool:
        for t, n in pool.map(lambda c: play_chunk(args, c), todo):
            tally = [a + b for a, b in zip(tally, t)]
            positions += n
            done += 1
            print(f"versus: {done}/{len(todo)} files, Manaka +{tally[0]} ={tally[1]} -{tally[2]}, "
                  f"{positions:,} positions", file=sys.stderr)
    summary = {"files": chunks, "played_files": len(todo), "wins": tally[0], "draws": tally[1],
               "losses": tally[2], "positions": positions, "nodes": args.nodes, "engine": args.engine,
               "engine_go": args.engine_go, "seed": args.seed}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
