#!/bin/bash
# One round of generation 15's self-play for generation 16 (the recipe of sp145-gen14-d9-s4),
# resumable: `round.sh 152` made sp152-gen15-d9-s4 (seeds 151-153 so far).
set -euo pipefail
S=${1:?seed, e.g. 152}
cd /work/g16
M=/work/q/manaka-g15
$M selfplay --weights gen15.mnw --games 3200 --simulations 128 --random-plies 4 --seed $S --threads 2 --out sp$S
[ -f games$S.hcpe3 ] || cat sp$S/selfplay-*.hcpe3 > games$S.hcpe3
$M label --engine /usr/games/fairy-stockfish --depth 9 --positions games$S.hcpe3 --sample 4 --threads 2 --out s$S-d9.hcpe
