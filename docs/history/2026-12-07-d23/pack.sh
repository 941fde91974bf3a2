#!/bin/bash
# Pack round $1's labels into the archive. $2 = the label rate text, e.g. "1,800 s at 43.5/s".
set -euo pipefail
S=$1; d=/work/d23/r$S; cd /work/main
n=$(( $(stat -c %s $d/s4-d9.hcpe) / 38 )); all=$(grep -o "of [0-9]* positions" $d/label.log | head -1 | grep -o "[0-9]*")
python3 scripts/dataset.py pack $d/s4-d9.hcpe --name sp$S-gen14-d9-s4 \
  --describe "one position in 4 (label --sample 4: $(printf "%'d" $n) of $(printf "%'d" $all)) of 3,200 self-play games of generation 14 (the embedded default from 2026-12-07, g17b; 128 simulations, --random-plies 4, seed $S), labelled by fairy-stockfish 11.1 at depth 9 ($2 on 2 cores)" \
  --command "manaka selfplay --weights gen14.mnw --games 3200 --simulations 128 --random-plies 4 --seed $S --threads 2 --out sp" \
  --command "cat sp/selfplay-*.hcpe3 > games.hcpe3" \
  --command "manaka label --engine /usr/games/fairy-stockfish --depth 9 --positions games.hcpe3 --sample 4 --threads 2 --out s4-d9.hcpe"
