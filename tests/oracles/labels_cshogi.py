"""dlshogi move labels from cshogi, the oracle for Manaka's `labels` module.

Plays seeded random games with cshogi (captures preferred now and then, so hands fill and
drops abound) and prints one JSON line per sampled position: its SFEN and, for every legal
move, the USI text and `cshogi.dlshogi.make_move_label(move, side_to_move)`.

usage: labels_cshogi.py SEED POSITIONS
"""
import json
import random
import sys

import cshogi
from cshogi import dlshogi


def main():
    seed, want = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    emitted = 0
    while emitted < want:
        board = cshogi.Board()
        for _ply in range(rng.randint(20, 220)):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            # Sample about every third position, both colours to move.
            if rng.random() < 0.35:
                color = board.turn
                rows = [[cshogi.move_to_usi(m), dlshogi.make_move_label(m, color)] for m in moves]
                print(json.dumps({"sfen": board.sfen(), "moves": rows}))
                emitted += 1
                if emitted >= want:
                    break
            captures = [m for m in moves if cshogi.move_cap(m)]
            pool = captures if captures and rng.random() < 0.4 else moves
            board.push(rng.choice(pool))


if __name__ == "__main__":
    main()
