#!/usr/bin/env bash
# The clock checks of generation 15's candidate (docs/strength.md, "Generation 15"): release build
# of b165f87 (the search of 4b64d44), one thread each, 2-core machine, two matches at a time.
# gen14.mnw is generation 14 (the embedded default from 2026-12-07), $1 the candidate's file.
set -euo pipefail
S=scripts/strength.py; M=${MANAKA:-target/release/manaka}; c=$1; n=$(basename $c .mnw)
# against its parent at the goal's 1 s (seed 24), and fairy-stockfish at full strength, 1 s (seed 1)
$S --manaka $M --evalfile $c --opponent manaka --opponent-evalfile $PWD/gen14.mnw \
    --games 20 --byoyomi 1000 --seed 24 --json $n-1s-s24.json --csa $n-1s-s24.csa &
$S --manaka $M --evalfile $c --opponent fairy --fairy-skill 20 --games 20 --byoyomi 1000 \
    --seed 1 --json $n-fs20-1s-s1.json --csa $n-fs20-1s-s1.csa &
wait
# then Skill 10, 5 and 0 at 300 ms
$S --manaka $M --evalfile $c --opponent fairy --fairy-skill 10 --games 20 --byoyomi 300 --seed 1 \
    --json $n-fs10-300-s1.json --csa $n-fs10-300-s1.csa &
$S --manaka $M --evalfile $c --opponent fairy --fairy-skill 5 --games 20 --byoyomi 300 --seed 1 \
    --json $n-fs5-300-s1.json --csa $n-fs5-300-s1.csa &
wait
$S --manaka $M --evalfile $c --opponent fairy --fairy-skill 0 --games 20 --byoyomi 300 --seed 1 \
    --json $n-fs0-300-s1.json --csa $n-fs0-300-s1.csa
