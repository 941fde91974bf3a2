#!/usr/bin/env bash
# The clock checks of g16b (docs/strength.md, "Generation 13"): release build of b58bc20 (the
# search of 4b64d44), one thread each, 2-core machine, two matches at a time. g15.mnw is
# generation 12 (the embedded default from 2026-12-06), g16b.mnw the candidate.
set -euo pipefail
S=scripts/strength.py; M=${MANAKA:-target/release/manaka}
# against its parent at the goal's 1 s (seed 23), and fairy-stockfish at full strength, 1 s (seed 1)
$S --manaka $M --evalfile $PWD/g16b.mnw --opponent manaka --opponent-evalfile $PWD/g15.mnw \
    --games 20 --byoyomi 1000 --seed 23 --json g16b-1s-s23.json --csa g16b-1s-s23.csa &
$S --manaka $M --evalfile $PWD/g16b.mnw --opponent fairy --fairy-skill 20 --games 20 --byoyomi 1000 \
    --seed 1 --json fs20-1s-s1.json --csa fs20-1s-s1.csa &
wait
$S --manaka $M --evalfile $PWD/g16b.mnw --opponent fairy --fairy-skill 10 --games 20 --byoyomi 300 --seed 1 --json fs10-300-s1.json --csa fs10-300-s1.csa   # started when the full-strength match ended
# then Skill 0 and 5 at 300 ms, two at once
for k in 0 5; do
    $S --manaka $M --evalfile $PWD/g16b.mnw --opponent fairy --fairy-skill $k --games 20 --byoyomi 300 \
        --seed 1 --json fs$k-300-s1.json --csa fs$k-300-s1.csa &
done; wait
