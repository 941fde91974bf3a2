#!/usr/bin/env bash
# Perft speed, one thread each, in one run: `manaka perft` against fairy-stockfish's
# `go perft` and shunsai 0.1.2 (the fastest Rust shogi move generator on crates.io), on the
# same positions. Prints nodes, seconds (best of REPEAT runs, more for short counts; the count
# alone, without process start-up) and how many times faster Manaka is.
#
#   scripts/perft-vs.sh            # build in release, then time
#   REPEAT=5 scripts/perft-vs.sh   # more runs per measurement (default 3)
#   scripts/perft-vs.sh --no-build # use the binaries already built
#
# All three count the last ply without playing it (bulk counting). Debian's fairy-stockfish
# generates pawn-drop mates, so its count for the 593-move position at depth 3 is too high;
# the table marks counts that differ from Manaka's.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/games"

if ! command -v fairy-stockfish >/dev/null 2>&1; then
  echo "perft-vs: fairy-stockfish not found (Debian: apt-get install fairy-stockfish)" >&2
  exit 2
fi
if [ "${1:-}" != "--no-build" ]; then
  echo "==> building manaka and the shunsai timer (release)" >&2
  cargo build --release --quiet -p manaka-cli
  cargo build --release --quiet -p manaka --example perft_shunsai
fi
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

REPEAT="${REPEAT:-3}" MANAKA="$target_dir/release/manaka" \
  SHUNSAI="$target_dir/release/examples/perft_shunsai" python3 - <<'EOF'
import json, os, subprocess, time

POSITIONS = [
    ("startpos", "startpos", 5),
    ("matsuri", "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1", 3),
    ("593 moves", "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1", 3),
]
repeat = int(os.environ["REPEAT"])


def json_run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    v = json.loads(out)
    return v["nodes"], v["seconds"]


def manaka(sfen, depth):
    return json_run([os.environ["MANAKA"], "perft", "--sfen", sfen, "--depth", str(depth), "--json"])


def shunsai(sfen, depth):
    full = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1" if sfen == "startpos" else sfen
    return json_run([os.environ["SHUNSAI"], full, str(depth)])


class Fairy:
    """One fairy-stockfish process; each perft is timed from the command to its answer."""

    def __init__(self):
        self.p = subprocess.Popen(["fairy-stockfish"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("usi")
        self.wait("usiok")
        self.send("setoption name UCI_Variant value shogi")
        self.send("setoption name Threads value 1")
        self.send("isready")
        self.wait("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def wait(self, prefix):
        for line in self.p.stdout:
            if line.startswith(prefix):
                return line
        raise RuntimeError("fairy-stockfish exited")

    def __call__(self, sfen, depth):
        self.send("position " + ("startpos" if sfen == "startpos" else "sfen " + sfen))
        self.send("isready")
        self.wait("readyok")
        t = time.perf_counter()
        self.send(f"go perft {depth}")
        line = self.wait("Nodes searched")
        return int(line.split(":")[1]), time.perf_counter() - t


def best(f, sfen, depth, budget=0.0):
    """Best of `repeat` runs, and of more while their total stays under `budget` seconds
    (short counts are timed many times: a busy machine makes single runs noisy)."""
    runs = [f(sfen, depth)]
    while len(runs) < repeat or (sum(s for _, s in runs) < budget and len(runs) < 100):
        runs.append(f(sfen, depth))
    return runs[0][0], min(s for _, s in runs)


fairy = Fairy()
head = f"{'position':<10} {'depth':>5} {'nodes':>12} {'manaka s':>9} {'fairy-sf s':>10} {'vs fsf':>7} {'shunsai s':>9} {'vs shunsai':>10}"
print(head)
print("-" * len(head))
notes = []
for name, sfen, depth in POSITIONS:
    n_m, s_m = best(manaka, sfen, depth, 2.0)
    n_f, s_f = best(fairy, sfen, depth)
    n_s, s_s = best(shunsai, sfen, depth, 2.0)
    mark = ""
    if n_f != n_m:
        mark = "*"
        notes.append(f"* {name} depth {depth}: fairy-stockfish counts {n_f} nodes, Manaka and shunsai {n_m}")
    if n_s != n_m:
        notes.append(f"! {name} depth {depth}: shunsai counts {n_s} nodes, Manaka {n_m}")
    print(f"{name:<10} {depth:>5} {n_m:>12} {s_m:>9.3f} {s_f:>9.3f}{mark:1} {s_f / s_m:>6.1f}x {s_s:>9.3f} {s_s / s_m:>9.2f}x")
fairy.send("quit")
print()
print(f"seconds: best of {repeat} runs (Manaka and shunsai: of more, up to 2 s in all); 'vs' columns: how many times faster Manaka is (higher is better)")
for n in notes:
    print(n)
EOF
