#!/bin/sh
# fixed-simulation A/B: $1 name, $2 sims, then option pairs for the tested side; opponent is BatchSize 8 (the default)
name=$1; sims=$2; shift 2
opts=""; for o in "$@"; do opts="$opts --option $o"; done
for s in 1 2 3 4 5; do
  /work/main/scripts/strength.py --manaka /work/d17/manaka-head $opts --option Simulations=$sims --opponent manaka --opponent-option Simulations=$sims --games 20 --byoyomi 20000 --seed $s --json $name-s$s.json > $name-s$s.log 2>&1
  cat $name-s$s.log
done
