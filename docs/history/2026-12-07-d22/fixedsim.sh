#!/bin/sh
# Head to head at a fixed 3,000 simulations a move (BatchSize 8, the engine's default) against
# generation 14 (/work/d22/gen14.mnw, the embedded default from 2026-12-07), paired openings:
# $1 = a name, $2 = the net, then the seeds (100 games each).
name=$1; net=$2; shift 2
M=${M:-/work/main/target/release/manaka}  # release build of b165f87
for s in "$@"; do
  /work/main/scripts/strength.py --manaka $M --evalfile $net --option Simulations=3000 \
    --opponent manaka --opponent-evalfile /work/d22/gen14.mnw --opponent-option Simulations=3000 \
    --games 100 --byoyomi 20000 --seed $s --json $name-s$s.json > $name-s$s.log 2>&1
  cat $name-s$s.log
done
