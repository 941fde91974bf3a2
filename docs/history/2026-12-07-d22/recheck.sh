#!/usr/bin/env bash
# More games of a candidate against generation 14 at the goal's 1 s, run from the work directory
# that holds gen14.mnw (generation 14, the embedded default from 2026-12-07) and the candidate:
# new openings, seeds 25 and 26, 10 games each, two matches at once, otherwise match.sh's
# seed-24 row. $1 = the candidate's file (g18d.mnw, then g18c.mnw).
S=scripts/strength.py; M=${MANAKA:-target/release/manaka}; c=$1; n=$(basename $c .mnw)
for s in 25 26; do
  $S --manaka $M --evalfile $PWD/$c --opponent manaka --opponent-evalfile $PWD/gen14.mnw \
    --games 10 --byoyomi 1000 --seed $s --json $n-1s-s$s.json --csa $n-1s-s$s.csa &
done
wait
