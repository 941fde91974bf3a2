#!/usr/bin/env bash
# Makes the embedded default network (manaka-runtime/nets/default.mnw) from nothing:
# material self-play → fairy-stockfish labels → a first net → its self-play → labels → the
# generation-2 default → its self-play → labels → generation 3 → its self-play → labels →
# generation 4 → its self-play → deeper labels → generation 6 → fine-tuned on the archive of its
# labelled games → generation 12 (the network `g15`) → on its own games → generation 13 (`g16b`)
# → on its own games → generation 14 (`g17b`) → widened to a 512-unit head, on its own games and
# on positions one move off them → generation 15 (`g21`), the shipped default. These are the
# commands, seeds and settings the shipped net was made with (docs/training.md, "The trained
# default: recipe"); about 8 h on 2 cores, 85% of it fairy-stockfish labelling. Every step is skipped
# when its output exists, and labelling and training resume where they stopped, so the script
# can simply be run again after an interruption.
#
#   scripts/train-default.sh [WORK_DIR]        (default: ./default-net)
#
# Needs fairy-stockfish (apt install fairy-stockfish) and a release build of manaka
# (cargo build --release -p manaka-cli), or MANAKA=/path/to/manaka. Bigger machine: raise
# --threads everywhere, the game counts, the label depth.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manaka=${MANAKA:-$root/target/release/manaka}
fairy=${FAIRY:-/usr/games/fairy-stockfish}
work=${1:-default-net}
threads=${THREADS:-2}
shape=pair0_d128_o2_h256_kp
mkdir -p "$work"
cd "$work"

step() { echo "== $*" >&2; }
label() { # label IN OUT DEPTH
    [ -f "$2" ] || "$manaka" label --engine "$fairy" --depth "$3" --positions "$1" --out "$2" --threads "$threads"
}
train_net() { # train_net NAME [TRAIN FLAGS…]: trains NAME.mnw (resumable; NAME.done when finished)
    [ -f "$1.done" ] && return
    "$manaka" train --shape $shape --out "$1.mnw" --threads "$threads" --seed 1 --log "$1.jsonl" \
        "${@:2}" $([ -f "$1.mnw.state" ] && echo --resume)
    touch "$1.done"
}
own_games() { # own_games NET GAMES SIMULATIONS SEED NAME [SELFPLAY FLAGS…]: a net's self-play,
    # labelled at depth 7; the first 20,000 records (HCPE: 38 bytes each) validate, the rest
    # is NAME-train.hcpe.
    "$manaka" selfplay --weights "$1" --games "$2" --simulations "$3" --max-considered 16 \
        --gumbel-scale 1.5 --max-moves 256 --seed "$4" --threads "$threads" --out "sp-$5" "${@:6}"
    [ -f "$5.hcpe3" ] || cat "sp-$5"/selfplay-*.hcpe3 > "$5.hcpe3"
    label "$5.hcpe3" "$5-d7.hcpe" 7
    [ -f "$5-val.hcpe" ] || head -c 760000 "$5-d7.hcpe" > "$5-val.hcpe"
    [ -f "$5-train.hcpe" ] || tail -c +760001 "$5-d7.hcpe" > "$5-train.hcpe"
}

# 1. Self-play with the material evaluator (no network needed): 4,000 and 6,000 games.
step "material self-play"
"$manaka" selfplay --weights builtin:material --games 4000 --simulations 32 --max-moves 256 \
    --seed 11 --threads "$threads" --out sp-material
"$manaka" selfplay --weights builtin:material --games 6000 --simulations 48 --gumbel-scale 1.5 \
    --max-moves 256 --seed 23 --threads "$threads" --out sp-material2

# 2. fairy-stockfish labels. The first run's files 1-15 and 16-39 at depth 6 (file 0 unused);
#    the validation set is the first 20,000 records of the second part (HCPE: 38 bytes each).
step "labelling the material games"
[ -f sp15.hcpe3 ] || cat sp-material/selfplay-0000{01..15}.hcpe3 > sp15.hcpe3
[ -f sp40.hcpe3 ] || cat sp-material/selfplay-0000{16..39}.hcpe3 > sp40.hcpe3
label sp15.hcpe3 sp15-d6.hcpe 6
label sp40.hcpe3 sp40-d6.hcpe 6
[ -f val.hcpe ] || head -c 760000 sp40-d6.hcpe > val.hcpe
[ -f sp40-train.hcpe ] || tail -c +760001 sp40-d6.hcpe > sp40-train.hcpe
mkdir -p sp2parts
files=(sp-material2/selfplay-*.hcpe3)
for i in 0 1 2 3 4 5; do
    [ -f sp2parts/in-$i.hcpe3 ] || cat "${files[@]:$((i * 10)):10}" > sp2parts/in-$i.hcpe3
    label sp2parts/in-$i.hcpe3 sp2parts/d7-$i.hcpe 7
done
stage2_data=(sp15-d6.hcpe sp40-train.hcpe sp2parts/d7-{0..5}.hcpe)

# 3. A first network (1.4 M positions, 3 epochs: about 2.5 minutes).
step "training the stage-2 network"
train_net s2b --data "${stage2_data[@]}" --val val.hcpe --epochs 3 --lr 5e-3 --lr-decay 0.5

# 4. Its own games (4,000), labelled at depth 7; their first 20,000 positions validate too.
step "self-play with the stage-2 network"
own_games s2b.mnw 4000 32 31 sp3

# 5. The default: every position (1.8 M), 6 epochs (about 6 minutes).
step "training the default network"
train_net default --data "${stage2_data[@]}" sp3-train.hcpe --val val.hcpe sp3-val.hcpe \
    --epochs 6 --lr 5e-3 --lr-decay 0.7
# 6. Generation 3 (2026-12-01): 4,000 games of the default above with
#    64 simulations a move, labelled at depth 7; the first 20,000 records validate. Trained
#    from the generation-2 weights (--init) on the new positions only, at a lower rate.
step "self-play with the generation-2 network"
own_games default.mnw 4000 64 41 sp4
step "training generation 3"
train_net gen3 --init default.mnw --data sp4-train.hcpe --val sp4-val.hcpe \
    --epochs 3 --lr 1e-3 --lr-decay 0.7
# 7. Generation 4 (2026-12-01, the default until generation 6): 6,000 games of generation 3, each from 4
#    random plies (2,000 resigning below 2% with a tenth played out, 4,000 played to the end),
#    labelled at depth 7. Trained from generation 3 on these and generation 3's own data, with
#    30% of the value target from the game results (--lambda 0.7): 30-1-9 against generation
#    3 (docs/history.md); the same with --lambda 1 scored 29-0-11, and the two drew 10-10.
step "self-play with generation 3"
own_games gen3.mnw 2000 64 51 sp5 --random-plies 4 --resign-below 0.02 --resign-playout 0.1
own_games gen3.mnw 4000 64 61 sp6 --random-plies 4
step "training generation 4"
train_net gen4 --init gen3.mnw --data sp6-train.hcpe sp5-train.hcpe sp4-train.hcpe \
    --val sp6-val.hcpe sp4-val.hcpe --epochs 3 --lr 1e-3 --lr-decay 0.7 --lambda 0.7
# 8. Generation 6 (2026-12-02, the shipped default): 6,000 full games of generation 4 from 4
#    random plies (generation 5's games), labelled by fairy-stockfish at depth 9 as well as 7;
#    the first 358,919 positions take their depth-9 label (where the labelling for the
#    shipped net stopped), the rest their depth-7 one. Trained from generation 4 on these and
#    generation 4's data as generation 4 was: 69-1-30 against generation 4, where the same
#    games with depth-7 labels only (generation 5) scored 55-0-45 (docs/history.md).
step "self-play with generation 4, labels at depth 9"
own_games gen4.mnw 6000 64 71 sp7 --random-plies 4
label sp7.hcpe3 sp7-d9.hcpe 9
if [ ! -f sp7mix-train.hcpe ]; then
    n=358919
    head -c $((n * 38)) sp7-d9.hcpe > sp7mix.hcpe
    tail -c +$((n * 38 + 1)) sp7-d7.hcpe >> sp7mix.hcpe
    head -c 760000 sp7mix.hcpe > sp7mix-val.hcpe
    tail -c +760001 sp7mix.hcpe > sp7mix-train.tmp && mv sp7mix-train.tmp sp7mix-train.hcpe
fi
step "training generation 6"
train_net gen6 --init gen4.mnw --data sp7mix-train.hcpe sp6-train.hcpe sp5-train.hcpe \
    --val sp7mix-val.hcpe sp6-val.hcpe --epochs 3 --lr 1e-3 --lr-decay 0.7 --lambda 0.7
# 9. Generation 12 (2026-12-06, the network `g15`, the default until generation 13): generation 6 fine-tuned on the labelled-
#    position archive (data/labels/: 1.15 M positions of generation 6's own games and of its
#    games against fairy-stockfish at depth 9, one in eight relabelled at depth 11, and 0.18 M
#    children teacher-only; docs/training.md, "The labelled-position archive"). Those sets were
#    played by the embedded generation 6 over many sessions, so this step takes them from the
#    archive instead of playing them again. docs/history/2026-12-06-d19/inputs.py cuts them
#    into the files below (the held-out sets, the depth-11 relabels in place of their depth-9
#    labels); one thread (threads=1 for this call only), seed 1: with the embedded generation 6 as --init it gives
#    the shipped file bit for bit (sha256 8a339a39…d58135). 381-0-319 against generation 6 at
#    3,000 simulations a move (docs/strength.md, "Generation 12").
step "generation 12 from the archive"
# Unpacking checks each file already there against the manifest's sha256 and keeps it, so it
# runs every time (seconds): a work directory from before a set was archived gets it too.
python3 "$root/scripts/dataset.py" unpack --all --to arch
# inputs.py writes vsc-d9.hcpe last (each file atomically): its presence means it finished.
[ -f g12in/vsc-d9.hcpe ] || python3 "$root/docs/history/2026-12-06-d19/inputs.py" arch g12in
# The files and flags steps 9-11 share (steps 10 and 11 add each generation's own games).
archive_data=(g12in/{rest-train93,rest-sp91a-gen6-d9,rest-sp91b-gen6-d9,rest-sp92-gen6-d9,rest-vs1-train,rest-vs2-train,rest-s4-d9,rest-s4-part-d9,d11-games,s95rest-d9,s3-d9,s4-d9-a,s4-d9-b}.hcpe)
archive_flags=(--eval-scale 1200 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7
    --teacher-only g12in/{rest-children-d9,d11-children,vsc-d9}.hcpe --val arch/{val,vs1-val,vs2-val}.hcpe)
threads=1 train_net gen12 --init gen6.mnw "${archive_flags[@]}" --data "${archive_data[@]}"
# 10. Generation 13 (2026-12-06, the network `g16b`, the default until generation 14): generation 12 fine-tuned
#     the same way on the same files plus generation 12's own games from the archive
#     (sp121..sp126-gen12-d9-s4: 385,149 depth-9 positions, one in four of 16,000 games at
#     128 simulations), listed twice so they weigh double. One thread, seed 1: with
#     generation 12 as --init it gives the shipped file bit for bit (sha256 abbe7755…3b57a9).
#     117-0-83 against generation 12 at 3,000 simulations a move (docs/strength.md, "Generation 13").
step "generation 13: generation 12 on its own games"
gen12_games=(arch/sp12{1,2,3,4,5,6}-gen12-d9-s4.hcpe)
threads=1 train_net gen13 --init gen12.mnw "${archive_flags[@]}" \
    --data "${archive_data[@]}" "${gen12_games[@]}" "${gen12_games[@]}"
# 11. Generation 14 (2026-12-07, the network `g17b`, the default until generation 15): generation 13 fine-tuned
#     the same way on step 10's files plus generation 13's own games from the archive
#     (sp131..sp134-gen13-d9-s4: 272,657 depth-9 positions, one in four of 11,200 games at
#     128 simulations), both generations' games listed twice. One thread, seed 1: with
#     generation 13 as --init it gives the shipped file bit for bit (sha256 7971f092…f54a3e).
#     114-1-85 against generation 13 at 3,000 simulations a move (docs/strength.md, "Generation 14").
step "generation 14: generation 13 on its own games"
gen13_games=(arch/sp13{1,2,3,4}-gen13-d9-s4.hcpe)
threads=1 train_net gen14 --init gen13.mnw "${archive_flags[@]}" \
    --data "${archive_data[@]}" "${gen12_games[@]}" "${gen12_games[@]}" "${gen13_games[@]}" "${gen13_games[@]}"
# 12. Generation 15 (2026-12-07, the network `g21`, the shipped default): generation 14 widened to
#     a 512-unit head (`manaka weights widen`: new units' incoming weights seeded, every weight
#     reading them zero, so it evaluates exactly as generation 14), fine-tuned the same way on
#     step 11's files plus generation 14's own games from the archive (sp141..sp145-gen14-d9-s4,
#     listed twice) and, teacher-only and listed twice, the broad set broad145vs-d5 (485,374
#     positions one random move off generation 14's games and the versus games, fairy-stockfish
#     depth 5). One thread, seed 1 (sha256 8340668d…170b55; docs/history/2026-12-07-d25/g20.sh
#     with NAME=g21 made it). 135-0-65 against generation 14 at 3,000 simulations a move, 22-1-17
#     at 1 s (docs/strength.md, "Generation 15, third try").
step "generation 15: generation 14 widened, on its own games and the broad set"
[ -f gen14-h512.mnw ] || "$manaka" weights widen gen14.mnw --shape pair0_d128_o2_h512_kp --seed 1 -o gen14-h512.mnw
gen14_games=(arch/sp14{1,2,3,4,5}-gen14-d9-s4.hcpe)
shape=pair0_d128_o2_h512_kp threads=1 train_net gen15 --init gen14-h512.mnw "${archive_flags[@]}" \
    --teacher-only arch/broad145vs-d5.hcpe arch/broad145vs-d5.hcpe \
    --data "${archive_data[@]}" "${gen12_games[@]}" "${gen12_games[@]}" "${gen13_games[@]}" "${gen13_games[@]}" \
    "${gen14_games[@]}" "${gen14_games[@]}"
step "done: $work/gen15.mnw (copy it to manaka-runtime/nets/default.mnw to embed it)"
