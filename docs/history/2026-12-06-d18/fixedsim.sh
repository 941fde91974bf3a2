#!/bin/sh
# Head to head at a fixed 3,000 simulations a move (BatchSize 8, the engine's default), so
# two nets of one shape meet at equal work and a 100-game match takes minutes, not an hour:
# $1 = a name, $2 = the net, then the seeds (100 games each, paired openings) against gen 6.
name=$1; net=$2; shift 2
M=${M:-/work/d18/manaka-1bb4454}
for s in "$@"; do
  /work/main/scripts/strength.py --manaka $M --evalfile $net --option Simulations=3000 \
    --opponent manaka --opponent-evalfile /work/g11/gen6.mnw --opponent-option Simulations=3000 \
    --games 100 --byoyomi 20000 --seed $s --json $name-s$s.json > $name-s$s.log 2>&1
  cat $name-s$s.log
done
