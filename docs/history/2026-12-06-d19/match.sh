#!/usr/bin/env bash
# The clock checks that shipped g15 as generation 12 (docs/strength.md, "Generation 12").
# Release build of b58bc20 (the search of 4b64d44), one thread each, 2-core machine, two
# matches at a time. gen6.mnw is generation 6 (`git show 4b64d44:manaka-runtime/nets/default.mnw`),
# g15.mnw generation 12 (the embedded default from 2026-12-06).
set -euo pipefail
S=scripts/strength.py; M=${MANAKA:-target/release/manaka}
# 1. against its parent at the goal's 1 s (seeds 21 and 22 at once)
for s in 21 22; do
    $S --manaka $M --evalfile $PWD/g15.mnw --opponent manaka --opponent-evalfile $PWD/gen6.mnw \
        --games 30 --byoyomi 1000 --seed $s --json g15-1s-s$s.json --csa g15-1s-s$s.csa &
done; wait
# 2. against fairy-stockfish: full strength at 1 s in one lane, Skill 20/10/5/0 at 300 ms in the other
$S --manaka $M --evalfile $PWD/g15.mnw --opponent fairy --fairy-skill 20 --games 20 --byoyomi 1000 \
    --seed 1 --json fs20-1s-s1.json --csa fs20-1s-s1.csa &
for k in 20 10 5 0; do
    $S --manaka $M --evalfile $PWD/g15.mnw --opponent fairy --fairy-skill $k --games 20 --byoyomi 300 \
        --seed 1 --json fs$k-300-s1.json --csa fs$k-300-s1.csa
done; wait
