#!/usr/bin/env python3
"""Differential-test cases for Manaka's shogi rules, with cshogi as the oracle.

Prints one JSON object per line. Each object is a game: a start SFEN, the USI moves played from
it, and for every position along the way (the start and after each move) the facts cshogi
reports, so the Rust test (tests/rules_oracle_cshogi.rs) can replay the game and compare.

Deterministic for a given --seed: the only randomness is `random.Random(seed)`.

Facts per position (key: meaning):
  sfen   cshogi's SFEN of the position (move number included)
  legal  every legal move, USI, space-separated, sorted
  check  the side to move is in check
  mates  every legal move that mates at once, found exactly here by playing each legal move and
         asking whether the opponent is then in check with no legal reply (cshogi's own
         mate_move_in_1ply is a fast heuristic that may miss mates, so it is not the oracle)
  cmate  cshogi's mate_move_in_1ply (only asked when not in check), or null
  rep    cshogi's is_draw() over the whole history: none/draw/win/lose/superior/inferior
  repn   cshogi's is_draw(rep_ply) with the game's rep_ply
  senn   the game rule (fourth occurrence of a position), computed here from cshogi's keys and
         check flags: null, or draw/win/lose from the side to move's view (perpetual check
         loses for the checking side)
  nyu27  cshogi's is_nyugyoku(LAW_27): 28 points for Black, 27 for White
  nyu24  cshogi's is_nyugyoku(LAW_24): a win needs 31 points
  uchi   the pawn drop that would mate (uchifuzume, so illegal and absent from legal), or null
Per game, move16[i] is cshogi's 16-bit encoding of moves[i].

Kinds of game, all needed because uniform random play almost never repeats a position, gives
perpetual check or enters a king:
  random     uniform random moves from the start position
  greedy     prefers captures and checks: full hands, many drops, mates and uchifuzume chances
  shuffle    often replays the inverse of its own move two plies back (A B A' B' cycles)
  seek       prefers moves that recreate a position already seen (draw by repetition)
  seekboard  prefers moves that recreate a board seen before with other hands
             (superior/inferior repetitions)
  checker    one side prefers checks that recreate positions: perpetual check
  placement  random legal placements (promoted pieces, full hands) then random play
  nyugyoku   random placements with the king and many pieces in the enemy camp, point totals
             around the 24/27/28/31 thresholds, then a few random plies
"""

import argparse
import json
import random
import sys

import cshogi

REP_NAMES = {
    cshogi.NOT_REPETITION: "none",
    cshogi.REPETITION_DRAW: "draw",
    cshogi.REPETITION_WIN: "win",
    cshogi.REPETITION_LOSE: "lose",
    cshogi.REPETITION_SUPERIOR: "superior",
    cshogi.REPETITION_INFERIOR: "inferior",
}

START = cshogi.STARTING_SFEN


def usi(m):
    return cshogi.move_to_usi(m)


class Game:
    """A cshogi board plus the history the facts need (keys, check flags)."""

    def __init__(self, sfen, rep_ply):
        self.start = sfen
        self.board = cshogi.Board(sfen)
        self.rep_ply = rep_ply
        self.moves = []
        self.move16 = []
        self.keys = [self.board.zobrist_hash()]
        self.boards = [self.board_part()]
        self.checks = [self.board.is_check()]
        self.facts = []

    def board_part(self):
        # Board and side to move, hands left out: the "same board" of superior/inferior.
        f = self.board.sfen().split(" ")
        return f[0] + " " + f[1]

    def sennichite(self):
        """The fourth occurrence rule, computed from the history (not by cshogi)."""
        n = len(self.keys) - 1
        key = self.keys[n]
        same = [j for j in range(n - 4, -1, -2) if self.keys[j] == key]
        if len(same) < 3:
            return None
        first = min(same)
        # Position i was reached by the move of the side that was to move at i - 1; sides
        # alternate, so the side to move now made the moves into n-1, n-3, ...
        ours = all(self.checks[i] for i in range(n - 1, first, -2))
        theirs = all(self.checks[i] for i in range(n, first, -2))
        if ours:
            return "lose"
        if theirs:
            return "win"
        return "draw"

    def record(self):
        b = self.board
        moves = list(b.legal_moves)
        names = [usi(m) for m in moves]
        mates = []
        for m, name in zip(moves, names):
            b.push(m)
            if b.is_check() and b.is_game_over():
                mates.append(name)
            b.pop()
        check = b.is_check()
        uchi = self.pawn_drop_mate(names)
        cmate = None
        if not check:
            c = b.mate_move_in_1ply()
            if c:
                cmate = usi(c)
        self.facts.append(
            {
                "sfen": b.sfen(),
                "legal": " ".join(sorted(names)),
                "check": check,
                "mates": sorted(mates),
                "cmate": cmate,
                "rep": REP_NAMES[b.is_draw()],
                "repn": REP_NAMES[b.is_draw(self.rep_ply)],
                "senn": self.sennichite(),
                "nyu27": b.is_nyugyoku(cshogi.LAW_27),
                "nyu24": b.is_nyugyoku(cshogi.LAW_24),
                "uchi": uchi,
            }
        )
        return moves

    def pawn_drop_mate(self, legal_names):
        """The pawn drop in front of the enemy king, if it would mate (and so is illegal):
        counted by the Rust test to show that uchifuzume actually came up."""
        b = self.board
        us = b.turn
        if b.pieces_in_hand[us][0] == 0:
            return None
        k = b.king_square(1 - us)
        file, rank = k // 9, k % 9
        rank += 1 if us == cshogi.BLACK else -1
        if not 0 <= rank < 9:
            return None
        to = file * 9 + rank
        own_pawn = cshogi.BPAWN if us == cshogi.BLACK else cshogi.WPAWN
        if b.piece(to) != cshogi.NONE or any(b.piece(file * 9 + r) == own_pawn for r in range(9)):
            return None
        m = b.drop_move(to, cshogi.PAWN)
        b.push(m)
        mate = b.is_check() and b.is_game_over()
        b.pop()
        name = usi(m)
        if mate and name in legal_names:
            raise AssertionError("cshogi lists the pawn-drop mate " + name)
        return name if mate else None

    def play(self, m):
        self.moves.append(usi(m))
        self.move16.append(cshogi.move16(m))
        self.board.push(m)
        self.keys.append(self.board.zobrist_hash())
        self.boards.append(self.board_part())
        self.checks.append(self.board.is_check())

    def over(self, legal):
        return not legal or self.facts[-1]["senn"] is not None

    def to_json(self, kind):
        return json.dumps(
            {
                "kind": kind,
                "sfen": self.start,
                "rep_ply": self.rep_ply,
                "moves": self.moves,
                "move16": self.move16,
                "facts": self.facts,
            },
            separators=(",", ":"),
        )


def inverse_of(game, legal, back):
    """The legal move undoing the side to move's own move `back` plies ago, if any."""
    if len(game.moves) < back:
        return None
    name = game.moves[-back]
    if "*" in name or name.endswith("+"):
        return None
    inv = name[2:4] + name[0:2]
    for m in legal:
        if usi(m) == inv:
            return m
    return None


def moves_recreating(game, legal, seen, part):
    """Legal moves after which the position (or, with part, the board alone) was seen."""
    out = []
    b = game.board
    for m in legal:
        b.push(m)
        k = game.board_part() if part else b.zobrist_hash()
        b.pop()
        if k in seen:
            out.append(m)
    return out


def checking_moves(game, legal):
    out = []
    b = game.board
    for m in legal:
        b.push(m)
        if b.is_check():
            out.append(m)
        b.pop()
    return out


def choose(rng, game, legal, kind, checker_side):
    if kind == "greedy":
        caps = [m for m in legal if cshogi.move_cap(m)]
        if caps and rng.random() < 0.5:
            return rng.choice(caps)
        if rng.random() < 0.3:
            chk = checking_moves(game, legal)
            if chk:
                return rng.choice(chk)
    elif kind == "shuffle":
        if rng.random() < 0.6:
            m = inverse_of(game, legal, 2)
            if m:
                return m
    elif kind == "seek":
        if rng.random() < 0.7:
            rec = moves_recreating(game, legal, set(game.keys), False)
            if rec:
                return rng.choice(rec)
        if rng.random() < 0.5:
            m = inverse_of(game, legal, 2)
            if m:
                return m
    elif kind == "seekboard":
        if rng.random() < 0.5:
            boards = set(game.boards[:-1])
            rec = moves_recreating(game, legal, boards, True)
            if rec:
                return rng.choice(rec)
        if rng.random() < 0.3:
            caps = [m for m in legal if cshogi.move_cap(m)]
            if caps:
                return rng.choice(caps)
        if rng.random() < 0.4:
            m = inverse_of(game, legal, 2)
            if m:
                return m
    elif kind == "checker":
        us = game.board.turn
        seen = set(game.keys)
        if us == checker_side:
            chk = checking_moves(game, legal)
            if chk and rng.random() < 0.95:
                again = moves_recreating(game, chk, seen, False)
                return rng.choice(again) if again and rng.random() < 0.9 else rng.choice(chk)
        else:
            again = moves_recreating(game, legal, seen, False)
            if again and rng.random() < 0.9:
                return rng.choice(again)
            m = inverse_of(game, legal, 2)
            if m and rng.random() < 0.5:
                return m
    return rng.choice(legal)


def playout(rng, start, kind, max_plies):
    game = Game(start, rng.choice([4, 6, 8, 10, 12, 16, 24]))
    checker_side = rng.choice([cshogi.BLACK, cshogi.WHITE])
    while True:
        # Sorted, so that the games depend on the seed and not on cshogi's generation order.
        legal = sorted(game.record(), key=usi)
        if game.over(legal) or len(game.moves) >= max_plies:
            return game
        game.play(choose(rng, game, legal, kind, checker_side))


# ----- random placements -------------------------------------------------------------------

POOL = ["P"] * 18 + ["L"] * 4 + ["N"] * 4 + ["S"] * 4 + ["G"] * 4 + ["B"] * 2 + ["R"] * 2
HAND_ORDER = "RBGSNLP"


def dead(kind, color, rank):
    """Whether an unpromoted `kind` of `color` on `rank` (1 = a) could never move."""
    r = rank if color == cshogi.BLACK else 10 - rank
    return (kind in "PL" and r == 1) or (kind == "N" and r <= 2)


def in_zone(color, rank):
    return rank <= 3 if color == cshogi.BLACK else rank >= 7


class Placement:
    def __init__(self):
        self.board = {}  # (file, rank) -> (kind, color, promoted)
        self.hands = [dict(), dict()]
        self.pawn_files = [set(), set()]

    def put(self, sq, kind, color, promoted):
        if kind == "P" and not promoted:
            if sq[0] in self.pawn_files[color]:
                return False
            self.pawn_files[color].add(sq[0])
        self.board[sq] = (kind, color, promoted)
        return True

    def place(self, rng, kind, color, squares, promote_p):
        for _ in range(20):
            sq = rng.choice(squares)
            if sq in self.board:
                continue
            promoted = kind not in "GK" and rng.random() < promote_p
            if kind not in "GK" and dead(kind, color, sq[1]):
                promoted = True
            if self.put(sq, kind, color, promoted):
                return True
        return False

    def give(self, kind, color):
        self.hands[color][kind] = self.hands[color].get(kind, 0) + 1

    def sfen(self, side):
        rows = []
        for rank in range(1, 10):
            row, empty = "", 0
            for file in range(9, 0, -1):
                p = self.board.get((file, rank))
                if p is None:
                    empty += 1
                    continue
                if empty:
                    row += str(empty)
                    empty = 0
                kind, color, promoted = p
                s = ("+" if promoted else "") + kind
                row += s if color == cshogi.BLACK else s.lower()
            if empty:
                row += str(empty)
            rows.append(row)
        hand = ""
        for color in (cshogi.BLACK, cshogi.WHITE):
            for k in HAND_ORDER:
                n = self.hands[color].get(k, 0)
                if n:
                    s = (str(n) if n > 1 else "") + k
                    hand += s if color == cshogi.BLACK else s.lower()
        return "/".join(rows) + (" b " if side == cshogi.BLACK else " w ") + (hand or "-") + " 1"


ALL_SQUARES = [(f, r) for f in range(1, 10) for r in range(1, 10)]


def acceptable(p, side):
    """Neither side in check: the side not to move must not be (its king could be taken), and
    the side to move is kept out of check so that no position has three checkers."""
    for s in (side, 1 - side):
        if cshogi.Board(p.sfen(s)).is_check():
            return False
    return True


def kings(rng, p, black_sq=None):
    bk = black_sq or rng.choice(ALL_SQUARES)
    p.board[bk] = ("K", cshogi.BLACK, False)
    while True:
        wk = rng.choice(ALL_SQUARES)
        if max(abs(wk[0] - bk[0]), abs(wk[1] - bk[1])) > 1:
            p.board[wk] = ("K", cshogi.WHITE, False)
            return


def random_placement(rng):
    while True:
        p = Placement()
        kings(rng, p)
        on_board = rng.uniform(0.2, 0.8)
        promote_p = rng.uniform(0.0, 0.5)
        for kind in POOL:
            color = rng.choice([cshogi.BLACK, cshogi.WHITE])
            x = rng.random()
            if x < on_board:
                if not p.place(rng, kind, color, ALL_SQUARES, promote_p):
                    p.give(kind, color)
            elif x < on_board + (1 - on_board) * 0.8:
                p.give(kind, color)
        side = rng.choice([cshogi.BLACK, cshogi.WHITE])
        if acceptable(p, side):
            return p.sfen(side)


def nyugyoku_placement(rng):
    """The side to move has its king and 8-14 pieces in the enemy camp and some pieces in
    hand, so its declaration points land around the thresholds."""
    while True:
        p = Placement()
        side = rng.choice([cshogi.BLACK, cshogi.WHITE])
        zone = [sq for sq in ALL_SQUARES if in_zone(side, sq[1])]
        rest = [sq for sq in ALL_SQUARES if not in_zone(side, sq[1])]
        ksq = rng.choice(zone)
        if side == cshogi.BLACK:
            kings(rng, p, ksq)
        else:
            # Place White's king in its zone, Black's king anywhere else.
            p.board[ksq] = ("K", cshogi.WHITE, False)
            while True:
                bk = rng.choice(ALL_SQUARES)
                if max(abs(bk[0] - ksq[0]), abs(bk[1] - ksq[1])) > 1:
                    p.board[bk] = ("K", cshogi.BLACK, False)
                    break
        pool = POOL[:]
        rng.shuffle(pool)
        in_camp = rng.randint(8, 14)
        big_in_camp = rng.randint(0, 3)
        bigs = [k for k in pool if k in "BR"]
        smalls = [k for k in pool if k not in "BR"]
        placed = 0
        for kind in bigs[:big_in_camp] + smalls[: in_camp - min(big_in_camp, len(bigs))]:
            if p.place(rng, kind, side, zone, 0.5):
                placed += 1
        for kind in bigs[big_in_camp:]:
            x = rng.random()
            if x < 0.4:
                p.give(kind, side)
            elif x < 0.7:
                p.place(rng, kind, 1 - side, rest, 0.3)
        for kind in smalls[in_camp:]:
            x = rng.random()
            if x < 0.12:
                p.give(kind, side)
            elif x < 0.45:
                p.place(rng, kind, 1 - side, ALL_SQUARES, 0.2)
            elif x < 0.6:
                p.give(kind, 1 - side)
            elif x < 0.7:
                p.place(rng, kind, side, rest, 0.2)
        if acceptable(p, side):
            return p.sfen(side)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every game count")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    n = lambda x: max(1, int(x * a.scale))
    plan = [
        ("random", n(40), 160),
        ("greedy", n(70), 200),
        ("shuffle", n(30), 120),
        ("seek", n(40), 120),
        ("seekboard", n(60), 140),
        ("checker", n(60), 100),
    ]
    out = sys.stdout
    for kind, games, max_plies in plan:
        for _ in range(games):
            out.write(playout(rng, START, kind, max_plies).to_json(kind) + "\n")
    for _ in range(n(500)):
        sfen = random_placement(rng)
        kind = rng.choice(["random", "greedy", "checker", "seek"])
        out.write(playout(rng, sfen, kind, 16).to_json("placement") + "\n")
    for _ in range(n(300)):
        out.write(playout(rng, random_placement(rng), "checker", 60).to_json("perpetual") + "\n")
    for _ in range(n(1500)):
        out.write(playout(rng, nyugyoku_placement(rng), "random", 3).to_json("nyugyoku") + "\n")


if __name__ == "__main__":
    main()
