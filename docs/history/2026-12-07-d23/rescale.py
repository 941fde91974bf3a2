"""Rewrites a self-play HCPE3 file's evals from dlshogi's scale (756.0864962951762, docs/data.md
"Scores and evals") to a teacher scale S (the recipe's --eval-scale 1200), so that `manaka train
--eval-scale S` reads the search's root value as the win probability it stands for:
eval' = round(eval · S / 756.086), clamped to ±30000 (a stored mate, ±30000, stays one).
Moves and visit counts are copied unchanged. Usage: rescale.py IN.hcpe3 OUT.hcpe3 [S]"""
import os, struct, sys

src, dst = sys.argv[1], sys.argv[2]
scale = float(sys.argv[3]) if len(sys.argv) > 3 else 1200.0
k = scale / 756.0864962951762
data = bytearray(open(src, "rb").read())
at, games, moves = 0, 0, 0
while at < len(data):
    (n,) = struct.unpack_from("<H", data, at + 32)
    at += 36
    for _ in range(n):
        mv, ev, cands = struct.unpack_from("<HhH", data, at)
        if abs(ev) < 30000:
            ev = max(-30000, min(30000, round(ev * k)))
        struct.pack_into("<HhH", data, at, mv, ev, cands)
        at += 6 + 4 * cands
        moves += 1
    games += 1
if at != len(data):
    sys.exit(f"rescale: {src} ends inside a game")
tmp = dst + ".tmp"
open(tmp, "wb").write(data)
os.replace(tmp, dst)
print(f"{dst}: {games} games, {moves} moves, evals ×{k:.4f}")
