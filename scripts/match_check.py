#!/usr/bin/env python3
"""Protocol-robustness match: Manaka against fairy-stockfish under a real match runner.

Plays `manaka usi` against fairy-stockfish (USI mode) for N games at a fixed byoyomi, alternating
colours (each pair of games shares a random quiet opening), under one of two runners:

  --runner cshogi      cshogi's match runner (cshogi.cli.main), pondering with its `ponder=True`
  --runner shogiarena  shogiarena (PyPI), one `shogiarena run tournament` per game

Manaka is started through a logging proxy (this script, `--proxy`), so every USI line both ways
is written with a timestamp to OUT/game-NNN/usi.log whichever runner plays. Each game's log is
then checked independently of the runner's own verdict:

  illegal moves     a `bestmove` not legal in the position its `go` was given (or the runner
                    declaring an illegal move / illegal action by Manaka)
  time losses       a `bestmove` arriving later than byoyomi (+ remaining main time) + --margin
                    after `go` (or after `ponderhit`), or the runner declaring a loss on time
  protocol errors   no `bestmove` within the limit (a hang: the proxy kills the engine), no
                    `usiok`/`readyok`, a `bestmove` with no search pending or before `stop` /
                    `ponderhit` during `go ponder` (a bestmove for the wrong side), a slow answer
                    to `stop`, an illegal ponder move or PV move, an unparsable line, an
                    `info string error` line, the engine exiting before `quit` or with a
                    non-zero status

  scripts/match_check.py --runner cshogi --games 10 --byoyomi 1000 --out /tmp/mc-cshogi \\
      --option Threads=2 --option USI_Ponder=true --json /tmp/mc-cshogi/summary.json

Defaults for Manaka's options: Threads 2, MultiPV 1, USI_Ponder true (tree reuse is always on
in the engine). --option NAME=VALUE overrides or adds. Games already in --out are skipped
(resumable). Exit status 1 if any illegal move, time loss or protocol error occurred, 2 on a
usage or set-up error. docs/matches.md describes the checks and records the results.
"""

import argparse
import json
import os
import random
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
import time

HERE = os.path.abspath(__file__)

DEFAULT_OPTIONS = {"Threads": "2", "MultiPV": "1", "USI_Ponder": "true"}


# ---------------------------------------------------------------------------------------------
# The logging proxy: the runner starts this as "the engine"; it starts the real engine.
# ---------------------------------------------------------------------------------------------

def side_to_move(position_line):
    """'b' or 'w' for a `position` command (None if it cannot be read)."""
    toks = position_line.split()
    if len(toks) < 2:
        return None
    if toks[1] == "startpos":
        first, rest = "b", toks[2:]
    elif toks[1] == "sfen" and len(toks) >= 6:
        first, rest = toks[3], toks[6:]
    else:
        return None
    n = len(rest) - 1 if rest[:1] == ["moves"] else 0
    if first not in ("b", "w"):
        return None
    return first if n % 2 == 0 else ("w" if first == "b" else "b")


def go_params(line):
    toks = line.split()[1:]
    out, i = {"ponder": False, "infinite": False, "mate": False}, 0
    while i < len(toks):
        t = toks[i]
        if t in ("ponder", "infinite"):
            out[t] = True
        elif t == "mate":
            out["mate"] = True
            i += 1
        elif t in ("btime", "wtime", "binc", "winc", "byoyomi", "movetime", "nodes", "depth", "movestogo"):
            if i + 1 < len(toks):
                try:
                    out[t] = int(toks[i + 1])
                except ValueError:
                    pass
            i += 1
        i += 1
    return out


def allowed_ms(params, side):
    """How long the engine may think on this `go` before it loses on time (None: no limit)."""
    if params.get("infinite") or params.get("mate"):
        return None
    if "movetime" in params:
        return params["movetime"]
    main = params.get("btime" if side == "b" else "wtime", 0) or 0
    inc = params.get("binc" if side == "b" else "winc", 0) or 0
    byo = params.get("byoyomi", 0) or 0
    if not any(k in params for k in ("btime", "wtime", "byoyomi", "binc", "winc")):
        return None  # nodes / depth only
    return main + inc + byo


def run_proxy(argv):
    ap = argparse.ArgumentParser(prog="match_check.py --proxy")
    ap.add_argument("--proxy", action="store_true")
    ap.add_argument("--log", required=True)
    ap.add_argument("--hang-ms", type=int, default=10000,
                    help="beyond the time allowed, how long to wait for bestmove before killing the engine")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    t0 = time.monotonic()
    logf = open(a.log, "a", encoding="utf-8", errors="replace")
    lock = threading.Lock()

    def log(direction, text):
        with lock:
            logf.write("%.3f %s %s\n" % ((time.monotonic() - t0) * 1000.0, direction, text))
            logf.flush()

    log("#", "start %s pid %d cmd %s" % (time.strftime("%Y-%m-%dT%H:%M:%S%z"), os.getpid(), shlex.join(cmd)))
    eng = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    state = {"quit": False, "killed": False, "deadline": None, "what": None, "side": None, "pending": False}

    def on_term(signum, _frame):
        log("#", "proxy got signal %d; terminating the engine" % signum)
        state["killed"] = True
        try:
            eng.terminate()
        except OSError:
            pass

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    def pump_in():
        stdin = sys.stdin.buffer
        while True:
            raw = stdin.readline()
            if not raw:
                log("#", "runner closed stdin")
                try:
                    eng.stdin.close()
                except OSError:
                    pass
                return
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            now = time.monotonic()
            log(">", line)
            word = line.split()[0] if line.split() else ""
            with lock:
                if word == "position":
                    state["side"] = side_to_move(line)
                elif word == "go":
                    p = go_params(line)
                    state["pending"] = True
                    lim = None if p["ponder"] else allowed_ms(p, state["side"])
                    state["deadline"] = None if lim is None else now + (lim + a.hang_ms) / 1000.0
                    state["what"] = line
                    state["go"] = p
                elif word == "ponderhit" and state["pending"]:
                    lim = allowed_ms(state.get("go", {}), state["side"])
                    state["deadline"] = None if lim is None else now + (lim + a.hang_ms) / 1000.0
                    state["what"] = line
                elif word == "stop" and state["pending"]:
                    state["deadline"] = now + a.hang_ms / 1000.0
                    state["what"] = line
                elif word == "quit":
                    state["quit"] = True
                    state["deadline"] = now + a.hang_ms / 1000.0
                    state["what"] = line
                elif word in ("gameover", "usinewgame"):
                    state["pending"] = False
                    state["deadline"] = None
            try:
                eng.stdin.write(raw if raw.endswith(b"\n") else raw + b"\n")
                eng.stdin.flush()
            except (OSError, ValueError):
                log("#", "could not write to the engine (it has exited)")

    def pump_err():
        for raw in iter(eng.stderr.readline, b""):
            log("!", raw.decode("utf-8", "replace").rstrip("\r\n"))

    def watchdog():
        while eng.poll() is None:
            time.sleep(0.05)
            with lock:
                d = state["deadline"]
            if d is not None and time.monotonic() > d:
                log("#", "fatal: no answer to `%s` within the limit + %d ms; killing the engine" % (state["what"], a.hang_ms))
                state["killed"] = True
                eng.kill()
                return

    for f in (pump_in, pump_err, watchdog):
        threading.Thread(target=f, daemon=True).start()
    out = sys.stdout.buffer
    for raw in iter(eng.stdout.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        log("<", line)
        if line.startswith("bestmove"):
            with lock:
                state["pending"] = False
                state["deadline"] = None
        try:
            out.write(raw)
            out.flush()
        except (OSError, ValueError):
            pass
    code = eng.wait()
    log("#", "exit %d quit_sent %s killed %s" % (code, state["quit"], state["killed"]))
    logf.close()
    return 0


# ---------------------------------------------------------------------------------------------
# Checking one game's log.
# ---------------------------------------------------------------------------------------------

MOVE_RE = re.compile(r"^([1-9][a-i][1-9][a-i]\+?|[PLNSGBR]\*[1-9][a-i])$")
INT_KEYS = {"depth", "seldepth", "time", "nodes", "nps", "hashfull", "multipv", "cpuload", "currmovenumber"}


def check_info(line):
    """None if the `info` line is well-formed, else why not. Returns (error, pv list)."""
    toks = line.split()[1:]
    i, pv = 0, None
    while i < len(toks):
        k = toks[i]
        if k in INT_KEYS:
            if i + 1 >= len(toks) or not re.fullmatch(r"-?\d+", toks[i + 1]):
                return "`%s` without a number" % k, None
            i += 2
        elif k == "score":
            if i + 2 >= len(toks) + 0 and i + 1 >= len(toks):
                return "`score` without a value", None
            kind = toks[i + 1] if i + 1 < len(toks) else ""
            val = toks[i + 2] if i + 2 < len(toks) else ""
            if kind == "cp" and re.fullmatch(r"-?\d+", val):
                i += 3
            elif kind == "mate" and re.fullmatch(r"[+-]?\d*", val) and val:
                i += 3
            else:
                return "bad score `%s %s`" % (kind, val), None
            if i < len(toks) and toks[i] in ("lowerbound", "upperbound"):
                i += 1
        elif k == "currmove":
            if i + 1 >= len(toks) or not MOVE_RE.match(toks[i + 1]):
                return "bad currmove", None
            i += 2
        elif k == "pv":
            pv = toks[i + 1:]
            bad = [m for m in pv if not MOVE_RE.match(m)]
            if not pv or bad:
                return "bad pv move %r" % (bad[:1] or ["<empty>"]), None
            return None, pv
        elif k == "string":
            return None, None
        else:
            return "unknown info field `%s`" % k, None
    return None, pv


def board_for(position_line):
    import cshogi
    b = cshogi.Board()
    b.set_position(position_line[len("position "):])
    return b


def legal(board, usi):
    if not MOVE_RE.match(usi):
        return False
    m = board.move_from_usi(usi)
    return bool(m) and board.is_legal(m)


def analyze_log(path, margin_ms, stop_limit_ms, ready_limit_ms=60000):
    res = {"illegal": [], "time_losses": [], "protocol_errors": [], "warnings": [],
           "manaka_moves": 0, "ponder_starts": 0, "ponderhits": 0, "ponder_stops": 0,
           "max_move_ms": 0.0, "moves_over_byoyomi": 0, "reused_searches": 0, "searches": 0,
           "reused_visits": 0, "lines": 0,
           # answer times: n, total and max ms of bestmove after `go`, after `ponderhit`, after `stop`
           "answer_ms": {k: {"n": 0, "sum": 0.0, "max": 0.0} for k in ("go", "ponderhit", "stop")}}

    def timing(kind, ms):
        a = res["answer_ms"][kind]
        a["n"] += 1
        a["sum"] = round(a["sum"] + ms, 1)
        a["max"] = max(a["max"], round(ms, 1))

    def err(kind, t, line, why=""):
        res["protocol_errors"].append({"kind": kind, "t_ms": round(t, 1), "line": line, "why": why})

    if not os.path.exists(path):
        err("no log", 0, "", "the engine was never started")
        return res
    position = None  # last `position` line sent
    pending = []     # searches awaiting bestmove: dicts
    waiting = {}     # "usi"/"isready" -> t sent
    quit_t, exit_seen, last_t = None, False, 0.0
    info_board_cache = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        rows = f.read().splitlines()
    for row in rows:
        parts = row.split(" ", 2)
        if len(parts) < 2:
            continue
        try:
            t = float(parts[0])
        except ValueError:
            continue
        last_t = t
        d, line = parts[1], parts[2] if len(parts) > 2 else ""
        res["lines"] += 1
        word = line.split()[0] if line.split() else ""
        if d == ">":
            if word in ("usi", "isready"):
                waiting[word] = t
            elif word == "position":
                position = line
            elif word == "go":
                p = go_params(line)
                if p["mate"]:
                    continue
                side = side_to_move(position) if position else None
                pending.append({"t": t, "go": line, "params": p, "position": position,
                                "ponder": p["ponder"], "start": None if p["ponder"] else t,
                                "stopped": None, "allowed": allowed_ms(p, side)})
                if p["ponder"]:
                    res["ponder_starts"] += 1
            elif word == "ponderhit":
                if pending and pending[-1]["ponder"] and pending[-1]["start"] is None and pending[-1]["stopped"] is None:
                    pending[-1]["start"] = t
                    pending[-1]["ponder"] = False
                    res["ponderhits"] += 1
                else:
                    res["warnings"].append({"t_ms": t, "line": line, "why": "runner sent ponderhit with no ponder search pending"})
            elif word == "stop":
                for s in pending:
                    if s["stopped"] is None:
                        s["stopped"] = t
                if any(s["ponder"] for s in pending):
                    res["ponder_stops"] += 1
            elif word in ("gameover", "usinewgame"):
                for s in pending:
                    if s["stopped"] is None and not s["ponder"]:
                        err("no bestmove", t, s["go"], "`%s` arrived while a timed search was pending" % word)
                pending = []
            elif word == "quit":
                quit_t = t
        elif d == "<":
            if word == "usiok":
                waiting.pop("usi", None)
            elif word == "readyok":
                if "isready" in waiting and t - waiting["isready"] > ready_limit_ms:
                    err("slow readyok", t, line, "%.0f ms after isready" % (t - waiting["isready"]))
                waiting.pop("isready", None)
            elif word in ("id", "option", "checkmate"):
                pass
            elif word == "info":
                e, pv = check_info(line)
                if e:
                    err("unparsable line", t, line, e)
                if line.startswith("info string"):
                    s = line[len("info string"):].strip()
                    if s.lower().startswith("error"):
                        err("info string error", t, line)
                    elif s.lower().startswith("warning"):
                        res["warnings"].append({"t_ms": t, "line": line, "why": "info string warning"})
                    m = re.search(r"\breused_visits (\d+)", s)
                    if m:
                        res["searches"] += 1
                        if int(m.group(1)) > 0:
                            res["reused_searches"] += 1
                            res["reused_visits"] += int(m.group(1))
                if pv and pending and pending[0]["position"]:
                    pos = pending[0]["position"]
                    try:
                        b = info_board_cache.get(pos) or board_for(pos)
                        info_board_cache = {pos: b}
                        pushed = 0
                        for mv in pv:
                            if not legal(b, mv):
                                err("illegal pv move", t, line, "`%s` is not legal there (position: %s)" % (mv, pos))
                                break
                            b.push_usi(mv)
                            pushed += 1
                        for _ in range(pushed):
                            b.pop()
                    except Exception as ex:  # a position cshogi cannot read: the runner's problem
                        res["warnings"].append({"t_ms": t, "line": pos, "why": "cannot replay: %r" % ex})
            elif word == "bestmove":
                toks = line.split()
                if len(toks) < 2 or (len(toks) > 2 and not (len(toks) == 4 and toks[2] == "ponder")):
                    err("unparsable line", t, line, "bestmove <move> [ponder <move>]")
                if not pending:
                    err("bestmove with no search pending", t, line,
                        "no `go` awaits an answer: a second or stale bestmove (a bestmove for the wrong side)")
                    continue
                s = pending.pop(0)
                mv = toks[1] if len(toks) > 1 else ""
                if s["ponder"] and s["stopped"] is None:
                    err("bestmove during go ponder", t, line,
                        "answered `%s` before stop/ponderhit (the runner would take it as the move of the wrong side)" % s["go"])
                    continue
                if s["stopped"] is not None and (s["ponder"] or s["start"] is None):
                    # the answer to `stop` of a ponder search: the GUI discards it, but it must come
                    timing("stop", t - s["stopped"])
                    if t - s["stopped"] > stop_limit_ms:
                        err("slow stop", t, line, "%.0f ms after stop" % (t - s["stopped"]))
                    if mv not in ("resign", "win"):
                        try:
                            if s["position"] and not legal(board_for(s["position"]), mv):
                                err("illegal bestmove after stop", t, line, "not legal in %s" % s["position"])
                        except Exception:
                            pass
                    continue
                # a move that will be played
                res["manaka_moves"] += 1
                if s["start"] is not None:
                    el = t - s["start"]
                    timing("go" if s["start"] == s["t"] else "ponderhit", el)
                    res["max_move_ms"] = max(res["max_move_ms"], round(el, 1))
                    if s["allowed"] is not None:
                        if el > s["allowed"]:
                            res["moves_over_byoyomi"] += 1
                        if el > s["allowed"] + margin_ms:
                            res["time_losses"].append({"t_ms": round(t, 1), "line": line, "elapsed_ms": round(el, 1),
                                                       "allowed_ms": s["allowed"], "go": s["go"],
                                                       "after": "ponderhit" if s["start"] != s["t"] else "go"})
                if s["stopped"] is not None and s["start"] is not None and t - s["stopped"] > stop_limit_ms:
                    err("slow stop", t, line, "%.0f ms after stop" % (t - s["stopped"]))
                if mv == "resign":
                    continue
                if not s["position"]:
                    err("bestmove with no position", t, line)
                    continue
                try:
                    b = board_for(s["position"])
                except Exception as ex:
                    res["warnings"].append({"t_ms": t, "line": s["position"], "why": "cannot replay: %r" % ex})
                    continue
                if mv == "win":
                    if not b.is_nyugyoku():
                        res["illegal"].append({"t_ms": round(t, 1), "line": line, "position": s["position"],
                                               "why": "declaration (win) not valid under CSA rule 27 as cshogi judges it"})
                    continue
                if not legal(b, mv):
                    res["illegal"].append({"t_ms": round(t, 1), "line": line, "position": s["position"]})
                    continue
                if len(toks) == 4:
                    b.push_usi(mv)
                    if not legal(b, toks[3]):
                        err("illegal ponder move", t, line, "ponder move not legal after %s" % mv)
            elif line == "" :
                res["warnings"].append({"t_ms": t, "line": line, "why": "empty line"})
            else:
                err("unparsable line", t, line, "not a USI engine message")
        elif d == "#":
            if line.startswith("fatal"):
                err("hang", t, line)
            elif line.startswith("exit "):
                exit_seen = True
                m = re.match(r"exit (-?\d+) quit_sent (\w+) killed (\w+)", line)
                if m:
                    code, qs, killed = int(m.group(1)), m.group(2) == "True", m.group(3) == "True"
                    if killed:
                        if not any(e["kind"] == "hang" for e in res["protocol_errors"]):
                            res["warnings"].append({"t_ms": t, "line": line, "why": "the runner terminated the engine"})
                    elif not qs:
                        err("crash", t, line, "the engine exited before `quit`")
                    elif code != 0:
                        err("crash", t, line, "non-zero exit status after `quit`")
                    elif quit_t is not None and t - quit_t > 5000:
                        err("slow quit", t, line, "%.0f ms after quit" % (t - quit_t))
        elif d == "!":
            res["warnings"].append({"t_ms": t, "line": line, "why": "stderr"})
    for w, t in waiting.items():
        err("no usiok" if w == "usi" else "no readyok", t, w, "never answered")
    for s in pending:
        if not s["ponder"] or s["stopped"] is not None:
            err("no bestmove", s["t"], s["go"], "never answered")
    if not exit_seen:
        res["warnings"].append({"t_ms": last_t, "line": "", "why": "the log ends before the engine exited"})
    return res


# ---------------------------------------------------------------------------------------------
# Runners.
# ---------------------------------------------------------------------------------------------

def make_openings(n_pairs, plies, seed):
    import cshogi
    rng = random.Random(seed)
    out = []
    for _ in range(n_pairs):
        board, moves = cshogi.Board(), []
        for _ in range(plies):
            quiet = [m for m in board.legal_moves if not cshogi.move_cap(m)]
            m = rng.choice(quiet)
            moves.append(cshogi.move_to_usi(m))
            board.push(m)
        out.append(moves)
    return out


def write_wrapper(gdir, manaka, hang_ms):
    path = os.path.join(gdir, "manaka-usi")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec %s %s --proxy --log %s --hang-ms %d -- %s usi\n" % (
            shlex.quote(sys.executable), shlex.quote(HERE), shlex.quote(os.path.join(gdir, "usi.log")),
            hang_ms, shlex.quote(os.path.abspath(manaka))))
    os.chmod(path, 0o755)
    return path


def supervise(cmd, gdir, stall_s, total_s, env=None):
    """Runs a runner process; kills it when the proxy reported a fatal error, when nothing is
    logged for stall_s seconds, or after total_s. Returns (returncode, note)."""
    out = open(os.path.join(gdir, "runner.out"), "w")
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=gdir, start_new_session=True, env=env)
    log = os.path.join(gdir, "usi.log")
    start, fatal_at, note = time.monotonic(), None, None
    last_size, last_change = -1, time.monotonic()
    while p.poll() is None:
        time.sleep(0.5)
        now = time.monotonic()
        size = os.path.getsize(log) if os.path.exists(log) else 0
        if size != last_size:
            last_size, last_change = size, now
        if fatal_at is None and size:
            with open(log, encoding="utf-8", errors="replace") as f:
                tail = f.read()[-4000:]
            if " # fatal:" in tail or re.search(r"# exit \S+ quit_sent False", tail):
                fatal_at = now
        if fatal_at is not None and now - fatal_at > 10:
            note = "the engine hung or died and the runner did not end the game: killed the runner"
        elif now - last_change > stall_s:
            note = "no USI traffic for %d s: killed the runner" % stall_s
        elif now - start > total_s:
            note = "the game took more than %d s: killed the runner" % total_s
        if note:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            break
    out.close()
    return p.returncode, note


def cshogi_child(config_path):
    """Runs one game with cshogi.cli.main (in a child process: cshogi has no timeouts)."""
    import contextlib
    import io
    import cshogi.cli
    with open(config_path) as f:
        c = json.load(f)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        r = cshogi.cli.main(c["engine1"], c["engine2"], options1=c["options1"], options2=c["options2"],
                            names=c["names"], games=1, byoyomi=c["byoyomi"], time=c["time"],
                            draw=c["draw"], ponder=c["ponder"], no_swap=True,
                            opening=c["opening"], opening_index=0, opening_moves=1000,
                            csa=c["csa"], multi_csa=True, debug=False)
    text = buf.getvalue()
    m = re.search(r"^まで(\d+)手で(.*)$", text, re.M)
    r["ending"] = m.group(0) if m else None
    r["plies"] = int(m.group(1)) if m else None
    r["stdout"] = text[-3000:]
    with open(c["result"], "w") as f:
        json.dump(r, f, ensure_ascii=False)


def play_cshogi(args, gdir, wrapper, manaka_black, opening, ours, fairy_opts):
    ponder = ours.get("USI_Ponder", "false").lower() == "true"
    opening_file = os.path.join(gdir, "opening.txt")
    with open(opening_file, "w") as f:
        f.write("startpos moves " + " ".join(opening) + "\n")
    e = [(wrapper, ours, "manaka"), (args.fairy, fairy_opts, "fairy-stockfish")]
    if not manaka_black:
        e.reverse()
    # cshogi's clock: with `time`, a move loses once ceil(elapsed) exceeds the remaining main time
    # by 1000 ms or more, the byoyomi not counted; with a main time of 0 that is exactly a 1 s
    # byoyomi. For other byoyomi the clock would be wrong, so it is not given (then `go` carries
    # no btime/wtime and cshogi never declares a time loss; this script's own check still does).
    c = {"engine1": e[0][0], "engine2": e[1][0], "options1": e[0][1], "options2": e[1][1],
         "names": [e[0][2], e[1][2]], "byoyomi": args.byoyomi, "time": 0 if args.byoyomi == 1000 else None,
         "draw": args.max_plies, "ponder": ponder, "opening": opening_file,
         "csa": os.path.join(gdir, "game.csa"), "result": os.path.join(gdir, "runner.json")}
    with open(os.path.join(gdir, "runner-config.json"), "w") as f:
        json.dump(c, f, indent=1)
    rc, note = supervise([sys.executable, HERE, "--cshogi-child", os.path.join(gdir, "runner-config.json")],
                         gdir, args.stall_s, args.game_timeout_s)
    r = {"runner_rc": rc, "runner_note": note}
    try:
        with open(c["result"]) as f:
            rr = json.load(f)
    except (OSError, ValueError):
        r["runner_verdict"] = None
        return r
    ending = rr.get("ending") or ""
    r["runner_verdict"] = ending
    r["plies"] = rr.get("plies")
    # engine1 is Black
    black_won = rr["engine1_won"] == 1
    white_won = rr["engine2_won"] == 1
    if rr["draw"] == 1:
        r["result"] = "draw"
    elif (black_won and manaka_black) or (white_won and not manaka_black):
        r["result"] = "win"
    elif black_won or white_won:
        r["result"] = "loss"
    # who lost by the runner's rules: the loser is the side that did not win
    manaka_lost = r.get("result") == "loss"
    if manaka_lost and "反則" in ending:
        r["runner_illegal"] = ending
    if manaka_lost and "切れ負け" in ending:
        r["runner_time_loss"] = ending
    r["reason"] = ending
    return r


def play_shogiarena(args, gdir, wrapper, manaka_black, opening, ours, fairy_opts):
    opening_file = os.path.join(gdir, "opening.txt")
    with open(opening_file, "w") as f:
        f.write("startpos moves " + " ".join(opening) + "\n")
    def eng(name, path, opts):
        toks = ["name=" + name, "path=" + path]
        toks += ["options.%s=%s" % (k, v) for k, v in opts.items()]
        return ["--engine"] + toks
    e = [eng("manaka", wrapper, ours), eng("fairy", args.fairy, fairy_opts)]
    if not manaka_black:
        e.reverse()
    run_dir = os.path.join(gdir, "arena")
    cmd = [args.shogiarena, "--output-dir", os.path.join(gdir, "arena-output"), "run", "tournament"] + e[0] + e[1] + [
        "--rules", "time_control.time_ms=0", "time_control.byoyomi_ms=%d" % args.byoyomi,
        "time_control.expiry_margin_ms=%d" % args.margin,
        # shogiarena's max_plies counts from move 1 of the SFEN's move number, as cshogi's does
        "adjudication.max_plies=%d" % args.max_plies, "adjudication.sync_max_plies_with_engine=false",
        "initial_positions.type=file", "initial_positions.source=" + opening_file,
        "initial_positions.flip_policy=none", "repetition_occurrences_to_draw=4",
        "--tournament", "games_per_pair=1", "num_parallel=1", "seed=%d" % args.seed,
        "--dashboard", "enabled=false", "--run-dir", run_dir, "--no-resume"]
    with open(os.path.join(gdir, "runner-command.txt"), "w") as f:
        f.write(shlex.join(cmd) + "\n")
    rc, note = supervise(cmd, gdir, args.stall_s, args.game_timeout_s)
    r = {"runner_rc": rc, "runner_note": note, "runner_verdict": None}
    db = os.path.join(run_dir, "game.db")
    try:
        con = sqlite3.connect(db)
        row = con.execute("select game_result, num_moves, end_comment from game").fetchone()
        con.close()
    except sqlite3.Error as ex:
        row, r["runner_note"] = None, (note or "") + " game.db: %r" % ex
    if row:
        res, n, comment = row
        r["runner_verdict"] = res + (" (%s)" % comment if comment else "")
        r["plies"] = n + len(opening)  # num_moves counts from the position after the opening
        # rsshogi's GameResult names: BLACK_WIN[_BY_TIMEOUT|_BY_ILLEGAL_MOVE|_BY_FORFEIT|...],
        # WHITE_WIN..., DRAW_BY_..., ERROR, INVALID, PAUSED
        u = res.upper()
        if u.startswith("DRAW"):
            r["result"] = "draw"
        elif u.startswith("BLACK_WIN") or u.startswith("WHITE_WIN"):
            r["result"] = "win" if u.startswith("BLACK") == manaka_black else "loss"
        if r.get("result") == "loss":
            if "ILLEGAL" in u:
                r["runner_illegal"] = r["runner_verdict"]
            if "TIMEOUT" in u:
                r["runner_time_loss"] = r["runner_verdict"]
            if "FORFEIT" in u:
                r["runner_error"] = r["runner_verdict"]
        if u in ("ERROR", "INVALID", "PAUSED"):
            r["runner_error"] = r["runner_verdict"]
        r["reason"] = r["runner_verdict"]
    # shogiarena copies each engine binary into the run directory: not worth keeping
    import shutil
    shutil.rmtree(os.path.join(run_dir, "engines"), ignore_errors=True)
    return r


# ---------------------------------------------------------------------------------------------

def main():
    if "--proxy" in sys.argv[1:2]:
        code = run_proxy(sys.argv[1:])
        # The stdin thread may still hold its lock: leave without the interpreter's shutdown.
        sys.stdout.flush()
        os._exit(code)
    if sys.argv[1:2] == ["--cshogi-child"]:
        return cshogi_child(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runner", choices=["cshogi", "shogiarena"], required=True)
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--byoyomi", type=int, default=1000, help="milliseconds per move, both sides")
    ap.add_argument("--margin", type=int, default=100,
                    help="ms past the byoyomi before a move counts as a time loss (default 100)")
    ap.add_argument("--stop-limit", type=int, default=500, help="ms allowed between `stop` and bestmove")
    ap.add_argument("--hang-ms", type=int, default=10000,
                    help="ms past the allowed time before a missing bestmove is a hang (the engine is killed)")
    ap.add_argument("--manaka", default="target/release/manaka")
    ap.add_argument("--option", action="append", default=[], help="Manaka USI option NAME=VALUE (repeatable)")
    ap.add_argument("--fairy", default="/usr/games/fairy-stockfish")
    ap.add_argument("--fairy-skill", type=int, default=20, help="fairy-stockfish Skill Level (20: full strength)")
    ap.add_argument("--fairy-option", action="append", default=[], help="fairy-stockfish option NAME=VALUE")
    ap.add_argument("--shogiarena", default="shogiarena", help="the shogiarena command")
    ap.add_argument("--max-plies", type=int, default=320, help="a game reaching this many plies is a draw")
    ap.add_argument("--opening-plies", type=int, default=6, help="random quiet plies before each pair of games")
    ap.add_argument("--seed", type=int, default=1, help="seed of the openings")
    ap.add_argument("--stall-s", type=int, default=120, help="kill a game with no USI traffic for this long")
    ap.add_argument("--game-timeout-s", type=int, default=None, help="kill a game after this long (default: from the clock)")
    ap.add_argument("--out", required=True, help="output directory (per-game logs; games already there are skipped)")
    ap.add_argument("--reanalyze", action="store_true", help="check the logs of games already in --out again")
    ap.add_argument("--json", nargs="?", const="-", default=None, help="write the summary as JSON to PATH (- or no value: stdout)")
    args = ap.parse_args()

    if not os.path.isfile(args.manaka):
        print("manaka binary not found: %s" % args.manaka, file=sys.stderr)
        return 2
    if not os.path.isfile(args.fairy):
        print("fairy-stockfish not found: %s" % args.fairy, file=sys.stderr)
        return 2
    try:
        import cshogi  # noqa: F401  (rules for the checks, and the cshogi runner)
    except ImportError:
        print("python package cshogi is needed (pip install cshogi)", file=sys.stderr)
        return 2
    if args.runner == "shogiarena" and subprocess.call(["sh", "-c", "command -v %s >/dev/null" % shlex.quote(args.shogiarena)]) != 0:
        print("shogiarena not found (pip install shogiarena)", file=sys.stderr)
        return 2
    if args.game_timeout_s is None:
        args.game_timeout_s = int(args.max_plies * (args.byoyomi + 500) / 1000 * 1.5) + 120
    ours = dict(DEFAULT_OPTIONS)
    for o in args.option:
        k, v = o.split("=", 1)
        ours[k] = v
    fairy_opts = {"Threads": "1", "Hash": "64", "Skill Level": str(args.fairy_skill)}
    # No USI_Ponder for fairy-stockfish: it does not list the option (shogiarena waits two minutes
    # for it and then fails the game); both runners ponder with an engine that does not list it
    # (cshogi sends `setoption name USI_Ponder` to both engines itself).
    for o in args.fairy_option:
        k, v = o.split("=", 1)
        fairy_opts[k] = v
    os.makedirs(args.out, exist_ok=True)
    openings = make_openings((args.games + 1) // 2, args.opening_plies, args.seed)
    setup = {"runner": args.runner, "byoyomi": args.byoyomi, "margin": args.margin, "options": ours,
             "fairy_options": fairy_opts, "seed": args.seed, "opening_plies": args.opening_plies,
             "max_plies": args.max_plies, "manaka": os.path.abspath(args.manaka)}
    games = []
    for i in range(args.games):
        gdir = os.path.join(args.out, "game-%03d" % (i + 1))
        rpath = os.path.join(gdir, "result.json")
        manaka_black = i % 2 == 0
        opening = openings[i // 2]
        if os.path.exists(rpath):
            with open(rpath) as f:
                g = json.load(f)
            if g.get("setup", {}).get("runner") == args.runner:
                if args.reanalyze:
                    g = finish(args, gdir, g["setup"], i, manaka_black, opening, g["runner_result"], g["seconds"])
                games.append(g)
                print("game %d: already in %s, %s" % (i + 1, gdir, "re-analysed" if args.reanalyze else "skipped"),
                      file=sys.stderr)
                continue
        if os.path.exists(gdir):
            import shutil
            shutil.rmtree(gdir)
        os.makedirs(gdir)
        wrapper = write_wrapper(gdir, args.manaka, args.hang_ms)
        t0 = time.time()
        play = play_cshogi if args.runner == "cshogi" else play_shogiarena
        r = play(args, gdir, wrapper, manaka_black, opening, ours, fairy_opts)
        g = finish(args, gdir, setup, i, manaka_black, opening, r, round(time.time() - t0, 1))
        games.append(g)
        print(game_line(g), file=sys.stderr)

    summary = summarize(games, setup)
    print(human(summary))
    if args.json:
        text = json.dumps(summary, indent=1, ensure_ascii=False)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    bad = summary["illegal"] + summary["time_losses"] + summary["protocol_errors"]
    return 1 if bad else 0


def finish(args, gdir, setup, i, manaka_black, opening, r, seconds):
    """Checks a played game's log and writes its result.json (r: what the runner said)."""
    a = analyze_log(os.path.join(gdir, "usi.log"), args.margin, args.stop_limit)
    if r.get("runner_illegal") and not a["illegal"]:
        a["illegal"].append({"line": r["runner_illegal"], "why": "declared by the runner"})
    if r.get("runner_time_loss") and not a["time_losses"]:
        a["time_losses"].append({"line": r["runner_time_loss"], "why": "declared by the runner"})
    if r.get("runner_error"):
        a["protocol_errors"].append({"kind": "runner", "line": r["runner_error"], "why": "the runner's verdict"})
    if r.get("runner_note"):
        a["protocol_errors"].append({"kind": "runner", "line": r["runner_note"], "why": "supervisor"})
    if r.get("runner_verdict") is None:
        a["protocol_errors"].append({"kind": "runner", "line": "",
                                     "why": "the runner gave no result (rc %s); see runner.out" % r.get("runner_rc")})
    g = {"game": i + 1, "setup": setup, "manaka_color": "black" if manaka_black else "white",
         "opening": " ".join(opening), "seconds": seconds, "runner_result": r}
    g.update(r)
    g.update(a)
    with open(os.path.join(gdir, "result.json"), "w") as f:
        json.dump(g, f, indent=1, ensure_ascii=False)
    return g


def game_line(g):
    return ("game %2d  manaka %-5s  %-4s  %3s plies  %-40s  moves %3d  ponderhit %3d/%3d  max %6.0f ms  "
            "illegal %d  time %d  protocol %d" % (
                g["game"], g["manaka_color"], g.get("result", "?"), g.get("plies", "?"),
                (g.get("reason") or "")[:40], g["manaka_moves"], g["ponderhits"], g["ponder_starts"],
                g["max_move_ms"], len(g["illegal"]), len(g["time_losses"]), len(g["protocol_errors"])))


def summarize(games, setup):
    keep = ("game", "manaka_color", "opening", "result", "reason", "plies", "manaka_moves", "ponder_starts",
            "ponderhits", "ponder_stops", "max_move_ms", "moves_over_byoyomi", "searches", "reused_searches", "answer_ms",
            "reused_visits", "seconds", "runner_verdict", "illegal", "time_losses", "protocol_errors")
    per = [{k: g.get(k) for k in keep} | {"warnings": len(g.get("warnings", []))} for g in games]
    res = [g.get("result") for g in games]
    return {
        "setup": setup,
        "games": len(games),
        "results": {"wins": res.count("win"), "draws": res.count("draw"), "losses": res.count("loss"),
                    "unknown": sum(1 for r in res if r not in ("win", "draw", "loss"))},
        "illegal": sum(len(g["illegal"]) for g in games),
        "time_losses": sum(len(g["time_losses"]) for g in games),
        "protocol_errors": sum(len(g["protocol_errors"]) for g in games),
        "warnings": sum(len(g.get("warnings", [])) for g in games),
        "manaka_moves": sum(g["manaka_moves"] for g in games),
        "ponderhits": sum(g["ponderhits"] for g in games),
        "ponder_starts": sum(g["ponder_starts"] for g in games),
        "max_move_ms": max([g["max_move_ms"] for g in games] or [0]),
        "moves_over_byoyomi": sum(g["moves_over_byoyomi"] for g in games),
        "answer_ms": {k: {"n": sum(g["answer_ms"][k]["n"] for g in games),
                          "mean": round(sum(g["answer_ms"][k]["sum"] for g in games)
                                        / max(1, sum(g["answer_ms"][k]["n"] for g in games)), 1),
                          "max": max([g["answer_ms"][k]["max"] for g in games] or [0])}
                      for k in ("go", "ponderhit", "stop")},
        "searches_with_reuse": sum(g["reused_searches"] for g in games),
        "searches": sum(g["searches"] for g in games),
        "per_game": per,
    }


def human(s):
    st = s["setup"]
    out = ["runner %s, byoyomi %d ms (+%d ms margin), Manaka options %s" % (
        st["runner"], st["byoyomi"], st["margin"], " ".join("%s=%s" % kv for kv in st["options"].items()))]
    for g in s["per_game"]:
        out.append(game_line(g))
    r = s["results"]
    out.append("%d games: Manaka +%d =%d -%d%s; %d moves, %d ponder searches, %d ponderhits, %d of %d searches "
               "(search summaries) carried visits over by tree reuse; slowest move %.0f ms (%d over the byoyomi)" % (
                   s["games"], r["wins"], r["draws"], r["losses"],
                   " (%d unknown)" % r["unknown"] if r["unknown"] else "", s["manaka_moves"], s["ponder_starts"],
                   s["ponderhits"], s["searches_with_reuse"], s["searches"], s["max_move_ms"], s["moves_over_byoyomi"]))
    out.append("bestmove after: " + ", ".join("%s %d× mean %.0f ms max %.0f ms" % (k, v["n"], v["mean"], v["max"])
                                              for k, v in s["answer_ms"].items()))
    out.append("illegal moves %d, time losses %d, protocol errors %d (warnings %d)" % (
        s["illegal"], s["time_losses"], s["protocol_errors"], s["warnings"]))
    for g in s["per_game"]:
        for k in ("illegal", "time_losses", "protocol_errors"):
            for e in g[k]:
                out.append("  game %d %s: %s" % (g["game"], k, json.dumps(e, ensure_ascii=False)))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main() or 0)
