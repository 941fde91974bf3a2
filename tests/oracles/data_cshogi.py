"""cshogi oracle for the training-data formats (tests/data_cshogi.rs).

Usage: data_cshogi.py DIR

DIR/cases.txt has one case per line, tab-separated:
    sfen (board, side, hands; no move number)  game_ply  best_move_usi  eval  hcpe_result  psv_result

1. Decodes DIR/ours.hcpe and DIR/ours.psv (written by Manaka, one record per case, in order)
   with cshogi: Board.set_hcp / Board.set_psfen and the numpy dtypes
   cshogi.HuffmanCodedPosAndEval / cshogi.PackedSfenValue, and checks every field against
   the case.
2. Encodes every case with cshogi (Board.to_hcp, Board.to_psfen, move16, move16_to_psv) into
   DIR/theirs.hcpe and DIR/theirs.psv for Manaka to decode.

Prints one JSON object: {"checked": N, "mismatch_count": K, "mismatches": [first few]}.
"""

import json
import sys

import numpy as np
import cshogi


def main():
    d = sys.argv[1]
    cases = []
    with open(f"{d}/cases.txt") as f:
        for line in f:
            sfen, ply, usi, ev, res, psv_res = line.rstrip("\n").split("\t")
            cases.append((sfen, int(ply), usi, int(ev), int(res), int(psv_res)))

    ours_hcpe = np.fromfile(f"{d}/ours.hcpe", dtype=cshogi.HuffmanCodedPosAndEval)
    ours_psv = np.fromfile(f"{d}/ours.psv", dtype=cshogi.PackedSfenValue)
    mismatches = []

    def bad(i, what, got, want):
        mismatches.append(f"case {i} {what}: cshogi read {got!r}, expected {want!r}")

    if len(ours_hcpe) != len(cases) or len(ours_psv) != len(cases):
        bad(-1, "record count", (len(ours_hcpe), len(ours_psv)), len(cases))
    board = cshogi.Board()
    for i, (sfen, ply, usi, ev, res, psv_res) in enumerate(cases):
        if i < len(ours_hcpe):
            r = ours_hcpe[i]
            board.set_hcp(r["hcp"])
            got = " ".join(board.sfen().split()[:3])
            if got != sfen:
                bad(i, "HCPE position", got, sfen)
            else:
                m = board.move_from_move16(int(r["bestMove16"]) & 0xFFFF)
                if cshogi.move_to_usi(m) != usi or not board.is_legal(m):
                    bad(i, "HCPE bestMove16", cshogi.move_to_usi(m), usi)
            if int(r["eval"]) != ev:
                bad(i, "HCPE eval", int(r["eval"]), ev)
            if int(r["gameResult"]) != res or int(r["dummy"]) != 0:
                bad(i, "HCPE gameResult/dummy", (int(r["gameResult"]), int(r["dummy"])), (res, 0))
        if i < len(ours_psv):
            r = ours_psv[i]
            board.set_psfen(r["sfen"])
            got = " ".join(board.sfen().split()[:3])
            if got != sfen:
                bad(i, "PSV position", got, sfen)
            else:
                m = board.move_from_psv(int(r["move"]))
                if cshogi.move_to_usi(m) != usi or not board.is_legal(m):
                    bad(i, "PSV move", cshogi.move_to_usi(m), usi)
            fields = (int(r["score"]), int(r["gamePly"]), int(r["game_result"]), int(r["padding"]))
            if fields != (ev, ply, psv_res, 0):
                bad(i, "PSV score/gamePly/game_result/padding", fields, (ev, ply, psv_res, 0))

    theirs_hcpe = np.zeros(len(cases), dtype=cshogi.HuffmanCodedPosAndEval)
    theirs_psv = np.zeros(len(cases), dtype=cshogi.PackedSfenValue)
    for i, (sfen, ply, usi, ev, res, psv_res) in enumerate(cases):
        board.set_sfen(f"{sfen} {ply}")
        m = board.move_from_usi(usi)
        board.to_hcp(theirs_hcpe[i]["hcp"])
        theirs_hcpe[i]["eval"] = ev
        theirs_hcpe[i]["bestMove16"] = np.int16(np.uint16(cshogi.move16(m)).view(np.int16))
        theirs_hcpe[i]["gameResult"] = res
        board.to_psfen(theirs_psv[i]["sfen"])
        theirs_psv[i]["score"] = ev
        theirs_psv[i]["move"] = cshogi.move16_to_psv(cshogi.move16(m))
        theirs_psv[i]["gamePly"] = ply
        theirs_psv[i]["game_result"] = psv_res
    theirs_hcpe.tofile(f"{d}/theirs.hcpe")
    theirs_psv.tofile(f"{d}/theirs.psv")

    print(json.dumps({
        "checked": len(cases),
        "mismatch_count": len(mismatches),
        "mismatches": mismatches[:12],
    }))


if __name__ == "__main__":
    main()
