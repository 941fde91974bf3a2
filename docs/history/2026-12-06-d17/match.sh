#!/bin/sh
# $1 = net name (file $1.mnw here); against gen 6, 300 ms, seeds 1-5, two at once
cd /work/d17/g14
run() { /work/main/scripts/strength.py --manaka /work/d17/manaka-head --evalfile /work/d17/g14/$1.mnw --opponent manaka --opponent-evalfile /work/g11/gen6.mnw --games 20 --byoyomi 300 --seed $2 --json $1-vs-gen6-s$2.json --csa $1-vs-gen6-s$2 > $1-vs-gen6-s$2.log 2>&1; }
run $1 1 & run $1 2; wait
run $1 3 & run $1 4; wait
run $1 5
