#!/bin/bash
# One archive round with generation 14: self-play, then depth-9 labels of one position in four.
# $1 = seed. Resumable: each step skips when its output exists.
set -euo pipefail
S=$1; d=/work/d23/r$S; mkdir -p $d; cd $d
M=/work/d23/manaka
[ -e games.hcpe3 ] || {
  $M selfplay --weights /work/d23/gen14.mnw --games 3200 --simulations 128 --random-plies 4 --seed $S --threads 2 --out sp > selfplay.log 2>&1
  cat sp/selfplay-*.hcpe3 > games.hcpe3.tmp && mv games.hcpe3.tmp games.hcpe3; }
[ -e s4-d9.hcpe ] || $M label --engine /usr/games/fairy-stockfish --depth 9 --positions games.hcpe3 --sample 4 --threads 2 --out s4-d9.hcpe > label.log 2>&1
echo done > DONE
