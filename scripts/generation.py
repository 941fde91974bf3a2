#!/usr/bin/env python3
"""One generation of the training loop (issue 19, docs/training.md "The next generation").

From a parent network to a measured child, every step kept in --out DIR and skipped when its
output is there, so an interrupted generation resumes by running the same command again:

  1. self-play     the parent plays --games games (`manaka selfplay`, Gumbel targets and game
                   results; --random-plies opening diversity, --resign-below if wanted)
  2. labels        fairy-stockfish searches every position to --depth (`manaka label`,
                   resumable); its score and best move are the targets. With --archive NAME
                   they are also packed into the archive (data/labels/, scripts/dataset.py)
  3. split         the first --val-records records validate, the rest train
  4. training      the parent fine-tuned on them (`manaka train --init`), plus any
                   --extra-data sets (older generations' labelled games; the archive's
                   data/labels/*.hcpe.xz are taken as they are) and --extra-teacher-only
                   sets (labelled positions without a game: trained on the teacher alone)
  5. matches       child against parent, --match-games games per opening seed, --lanes
                   matches at once (scripts/strength.py: paired openings, one thread each);
                   and, with --fairy-skills, against fairy-stockfish at those Skill Levels
  6. report        generation.json (every figure and the commands) and generation.md (the
                   rows for docs/history.md and docs/strength.md) — and the verdict: the child
                   is better only when its interval against the parent clears zero; whether
                   it replaces the default is scripts/candidate.py's decision (its two gates)

Generation 8, as run on 2026-12-02 (12 minutes of self-play and 40 of labels on 2 cores):

  scripts/generation.py --manaka target/release/manaka --parent manaka-runtime/nets/default.mnw \\
      --out gen8 --games 1600 --simulations 128 --selfplay-seed 81 --depth 9

To embed a better child: judge it with scripts/candidate.py; if it passes both gates,
cp DIR/net.mnw manaka-runtime/nets/default.mnw (and record it).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from study import finite, play_matches, record_text, read_log, result_cells, run_json, total, train_resumable  # noqa: E402  (the scripts' one home)
from dataset import ARCHIVE, HCPE_BYTES, DatasetError, is_archived, unpack_file, write_atomically  # noqa: E402


def say(*a):
    print("generation:", *a, file=sys.stderr, flush=True)


def run(cmd):
    """Runs one step's command with its output on stderr; a failure ends the run, naming it."""
    say("$", " ".join(cmd))
    if subprocess.run(cmd, stdout=sys.stderr).returncode != 0:
        sys.exit(f"generation: this step failed (run the same command again to resume): {' '.join(cmd)}")


def concatenate(parts, path):
    tmp = path + ".tmp"
    with open(tmp, "wb") as out:
        for p in parts:
            with open(p, "rb") as f:
                shutil.copyfileobj(f, out)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manaka", required=True, help="the manaka binary (cargo build --release -p manaka-cli)")
    ap.add_argument("--parent", required=True, help="the parent network (MNW1), e.g. manaka-runtime/nets/default.mnw")
    ap.add_argument("--out", required=True, help="the generation's directory (resumable)")
    ap.add_argument("--name", default=None, help="the child's name in the report (default: the directory's)")
    ap.add_argument("--threads", type=int, default=2, help="self-play, labelling and training threads")
    g = ap.add_argument_group("self-play")
    g.add_argument("--games", type=int, default=1600)
    g.add_argument("--simulations", type=int, default=128, help="simulations a move")
    g.add_argument("--max-considered", type=int, default=16)
    g.add_argument("--gumbel-scale", type=float, default=1.5)
    g.add_argument("--max-moves", type=int, default=256)
    g.add_argument("--random-plies", type=int, default=4, help="random plies before each game (opening diversity)")
    g.add_argument("--selfplay-seed", type=int, required=True, help="self-play seed (a new one per generation)")
    g.add_argument("--selfplay-arg", action="append", default=[],
                   help="extra `manaka selfplay` argument (repeatable), e.g. --selfplay-arg=--resign-below=0.02")
    g = ap.add_argument_group("labels")
    g.add_argument("--fairy", default="/usr/games/fairy-stockfish", help="the teacher (any USI engine)")
    g.add_argument("--depth", type=int, default=9, help="the teacher's search depth")
    g.add_argument("--label-sample", type=int, default=1, metavar="K",
                   help="label about one position in K (`manaka label --sample K`): a set of the same size from K "
                        "times as many games teaches the value more (docs/history.md); play K times the games")
    g.add_argument("--val-records", type=int, default=20000, help="leading records kept for validation")
    g = ap.add_argument_group("training")
    g.add_argument("--extra-data", nargs="*", default=[],
                   help="older labelled sets trained on too: HCPE files, or the archive's .hcpe.xz "
                        "(data/labels/*.hcpe.xz; unpacked into DIR/extra/, checked against the manifest)")
    g.add_argument("--extra-teacher-only", nargs="*", default=[], metavar="FILE",
                   help="labelled sets without games (the children of `manaka positions --children-of`, "
                        "random positions; the archive's children5-d9, say): trained towards the teacher's "
                        "value whatever --lambda (`manaka train --teacher-only`), not towards the draw their "
                        "empty game result would read as")
    g.add_argument("--archive", metavar="NAME", default=None,
                   help="pack this generation's labels into the archive (data/labels/NAME.hcpe.xz, "
                        "scripts/dataset.py) once they are made, so later generations on any machine "
                        "can train on them; commit data/labels/ afterwards")
    g.add_argument("--archive-dir", default=ARCHIVE, help="the archive's directory (default: data/labels)")
    g.add_argument("--extra-val", nargs="*", default=[], help="older validation sets")
    g.add_argument("--epochs", type=int, default=3)
    g.add_argument("--lr", type=float, default=1e-3)
    g.add_argument("--lr-decay", type=float, default=0.7)
    g.add_argument("--lambda", dest="lam", type=float, default=0.7,
                   help="share of the value target from the teacher's score (the rest: the game result)")
    g.add_argument("--train-arg", action="append", default=[], help="extra `manaka train` argument (repeatable)")
    g = ap.add_argument_group("matches")
    g.add_argument("--match-games", type=int, default=20, help="games per opening seed (even; 0: no matches)")
    g.add_argument("--match-seeds", default="1,2,3,4,5", help="opening seeds, comma-separated")
    g.add_argument("--byoyomi", type=int, default=300, help="milliseconds per move")
    g.add_argument("--lanes", type=int, default=2, help="matches played at once (each keeps about one core busy)")
    g.add_argument("--fairy-skills", default="", help="fairy-stockfish Skill Levels to play too, e.g. 0,5,10,20")
    g.add_argument("--fairy-seeds", default="1", help="opening seeds of the fairy-stockfish matches")
    args = ap.parse_args()

    if args.label_sample < 1:
        sys.exit("generation: --label-sample must be at least 1 (1: label every position)")
    if args.match_games % 2:
        sys.exit("generation: --match-games must be even (each opening is played once with each colour)")
    for f in [args.manaka, args.parent, *args.extra_data, *args.extra_teacher_only, *args.extra_val]:
        if not os.path.exists(f):
            sys.exit(f"generation: {f} does not exist")
    try:
        seeds = [int(s) for s in args.match_seeds.split(",") if s.strip()]
        fairy_seeds = [int(s) for s in args.fairy_seeds.split(",") if s.strip()]
        skills = [int(s) for s in args.fairy_skills.split(",") if s.strip()]
    except ValueError:
        sys.exit("generation: --match-seeds, --fairy-seeds and --fairy-skills take comma-separated integers")
    out = args.out
    os.makedirs(out, exist_ok=True)
    name = args.name or os.path.basename(os.path.normpath(out))
    path = lambda f: os.path.join(out, f)  # noqa: E731
    parent = os.path.abspath(args.parent)
    shape = run_json([args.manaka, "weights", "inspect", parent, "--json"], path("parent.json"))["shape"]
    threads = str(args.threads)

    # 1. Self-play (`manaka selfplay` resumes by itself; its files are joined once it is done).
    games = path("games.hcpe3")
    selfplay = [args.manaka, "selfplay", "--weights", parent, "--games", str(args.games),
                "--simulations", str(args.simulations), "--max-considered", str(args.max_considered),
                "--gumbel-scale", str(args.gumbel_scale), "--max-moves", str(args.max_moves),
                "--random-plies", str(args.random_plies), "--seed", str(args.selfplay_seed),
                "--threads", threads, "--out", path("sp"), *args.selfplay_arg]
    if not os.path.exists(games):
        run(selfplay)
        parts = sorted(os.path.join(path("sp"), f) for f in os.listdir(path("sp")) if f.endswith(".hcpe3"))
        concatenate(parts, games)

    # 2. Labels (`manaka label` keeps a journal and resumes).
    sample = f"-s{args.label_sample}" if args.label_sample > 1 else ""
    labels = path(f"labels-d{args.depth}{sample}.hcpe")
    label = [args.manaka, "label", "--engine", args.fairy, "--depth", str(args.depth), "--positions", games,
             "--out", labels, "--threads", threads]
    if args.label_sample > 1:
        label += ["--sample", str(args.label_sample)]
    if not os.path.exists(labels):
        run(label)

    if args.archive and not is_archived(args.archive_dir, args.archive, labels):
        pack = [sys.executable, os.path.join(HERE, "dataset.py"), "--archive", args.archive_dir, "pack", labels,
                "--name", args.archive,
                "--describe", f"{args.games} self-play games of {os.path.basename(parent)} at {args.simulations} "
                              f"simulations a move, --random-plies {args.random_plies}, seed {args.selfplay_seed}; "
                              f"labelled at depth {args.depth}"
                              + (f", one position in {args.label_sample}" if args.label_sample > 1 else ""),
                "--command", " ".join(selfplay), "--command", " ".join(label)]
        run(pack)

    # 3. Validation and training sets.
    train_set, val_set = path("train.hcpe"), path("val.hcpe")
    if not os.path.exists(train_set):
        with open(labels, "rb") as f:
            data = f.read()
        cut = args.val_records * HCPE_BYTES
        if len(data) <= cut:
            sys.exit(f"generation: {labels} has {len(data) // HCPE_BYTES} records, not more than "
                     f"--val-records {args.val_records}: play more games or keep fewer for validation")
        write_atomically(val_set, data[:cut])
        write_atomically(train_set, data[cut:])
    records = os.path.getsize(train_set) // HCPE_BYTES + os.path.getsize(val_set) // HCPE_BYTES

    # 4. The child: the parent fine-tuned (`manaka train --resume` continues a stopped run).
    #    Archived sets (.hcpe.xz) are unpacked first, each checked against its manifest entry.
    def local(f):
        if not f.endswith(".xz"):
            return f
        os.makedirs(path("extra"), exist_ok=True)
        dest = path(os.path.join("extra", os.path.basename(f)[:-len(".xz")]))
        try:
            unpack_file(f, dest)
        except DatasetError as e:
            sys.exit(f"generation: {e}")
        return dest

    extra = [local(f) for f in args.extra_data]
    teacher_only = [local(f) for f in args.extra_teacher_only]
    net = path("net.mnw")
    train = [args.manaka, "train", "--shape", shape, "--init", parent, "--data", train_set, *extra,
             *(["--teacher-only", *teacher_only] if teacher_only else []),
             "--val", val_set, *args.extra_val, "--out", net, "--epochs", str(args.epochs), "--lr", str(args.lr),
             "--lr-decay", str(args.lr_decay), "--lambda", str(args.lam), "--threads", threads, "--seed", "1",
             "--log", path("train.jsonl"), "--json", *args.train_arg]
    trained = train_resumable(train, net, path("train.json"))
    validations = [e for e in read_log(path("train.jsonl")) if e.get("event") == "validation"]

    # 5. Matches: the child against its parent, then against fairy-stockfish.
    strength = [sys.executable, os.path.join(HERE, "strength.py"), "--manaka", os.path.abspath(args.manaka),
                "--evalfile", os.path.abspath(net), "--byoyomi", str(args.byoyomi)]
    jobs = []
    if args.match_games:
        for s in seeds:
            jobs.append((strength + ["--opponent", "manaka", "--opponent-evalfile", parent,
                                     "--games", str(args.match_games), "--seed", str(s)],
                         path(f"vs-parent-s{s}.json")))
        for k in skills:
            for s in fairy_seeds:
                jobs.append((strength + ["--opponent", "fairy", "--fairy", args.fairy, "--fairy-skill", str(k),
                                         "--games", str(args.match_games), "--seed", str(s)],
                             path(f"vs-fairy{k}-s{s}.json")))
    play_matches(jobs, max(1, args.lanes), who="generation")

    # 6. The report.
    def played(prefix, seed_list):
        runs = []
        for s in seed_list:
            with open(path(f"{prefix}-s{s}.json")) as f:
                runs.append(json.load(f))
        return runs

    rows = []
    if args.match_games:
        rows.append(("its parent", played("vs-parent", seeds), seeds))
        for k in skills:
            rows.append((f"fairy-stockfish Skill Level {k}", played(f"vs-fairy{k}", fairy_seeds), fairy_seeds))
    results = []
    for opponent, runs, seed_list in rows:
        t = total(runs)
        results.append({"opponent": opponent, "seeds": seed_list,
                        "per_seed": [record_text(r) for r in runs], **t})
    verdict = "no matches played"
    if results:
        p = results[0]
        low, high = p["elo_low"], p["elo_high"]
        if low is not None and low > 0:
            # A first look: the decision is the two gates of scripts/candidate.py (docs/strength.md).
            verdict = ("better than its parent at this budget: judge it with scripts/candidate.py --candidate {} "
                       "before embedding it").format(net)
        elif high is not None and high < 0:
            verdict = "worse than its parent: keep the parent"
        else:
            verdict = "no measurable difference from its parent: keep the parent, or play more seeds"
    report = {
        "name": name, "parent": parent, "shape": shape, "child": os.path.abspath(net),
        "games": args.games, "simulations": args.simulations, "depth": args.depth, "records": records,
        "val_records": args.val_records, "extra_data": args.extra_data,
        "extra_teacher_only": args.extra_teacher_only,
        "training": {k: trained.get(k) for k in ("steps", "samples", "val_value_loss", "val_policy_loss",
                                                   "val_policy_accuracy", "train_value_loss", "train_policy_loss")},
        "validations": [{k: e.get(k) for k in ("epoch", "step", "value_loss", "policy_loss")} for e in validations],
        "byoyomi_ms": args.byoyomi, "verdict": verdict,
        # JSON has no infinity: an unbounded Elo (a sweep, an interval leaving [0, 1]) is null.
        "results": [{k: finite(v) for k, v in r.items()} for r in results],
        "commands": {"selfplay": " ".join(selfplay), "label": " ".join(label), "train": " ".join(train),
                     "generation": " ".join(["scripts/generation.py"] + sys.argv[1:])},
    }
    write_atomically(path("generation.json"), (json.dumps(report, indent=1) + "\n").encode())

    md = [f"## {name}", "",
          f"Parent `{os.path.basename(parent)}` ({shape}); {args.games} self-play games at {args.simulations} "
          f"simulations a move, {records:,} positions labelled at depth {args.depth}; fine-tuned "
          f"{args.epochs} epoch{'s' if args.epochs != 1 else ''}, lr {args.lr}, λ {args.lam}.", ""]
    if validations:
        first, last = validations[0], validations[-1]
        md += [f"Validation (value / policy): {first['value_loss']:.4f} / {first['policy_loss']:.3f} after the "
               f"first epoch, {last['value_loss']:.4f} / {last['policy_loss']:.3f} after the last.", ""]
    if results:
        md += ["| network | against | byoyomi | games | W | D | L | score | Elo [95%] |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in results:
            seeds_text = f" (seed{'s' if len(r['seeds']) > 1 else ''} {','.join(map(str, r['seeds']))}: {', '.join(r['per_seed'])})"
            md.append(f"| {name} | {r['opponent']}{seeds_text} | {args.byoyomi} | {result_cells(r)} |")
        md.append("")
    md += [f"Verdict: {verdict}.", "", "```sh", report["commands"]["generation"], "```", ""]
    write_atomically(path("generation.md"), "\n".join(md).encode())
    print("\n".join(md))


if __name__ == "__main__":
    sys.exit(main())
