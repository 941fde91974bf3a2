#!/bin/sh
# versus check: g14s and gen6 (BatchSize 1, 800 simulations) against fairy-stockfish depth 8, seeds 4 and 5
cd /work/d17/g14
px() { w=/work/d17/g14/$1.mnw; [ $1 = gen6 ] && w=/work/g11/gen6.mnw
  /work/main/scripts/versus.py --manaka /work/d17/manaka-head --evalfile $w --option BatchSize=1 --engine /usr/games/fairy-stockfish --engine-go "depth 8" --engine-option Threads=1 --engine-option Hash=64 --nodes 800 --games 300 --seed $2 --lanes 1 --out px-$1-s$2 --json px-$1-s$2.json > px-$1-s$2.log 2>&1; }
px g14s 4 & px gen6 4; wait
px g14s 5 & px gen6 5; wait
