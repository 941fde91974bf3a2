#!/bin/bash
# Generation 15, second try (docs/strength.md, "Generation 15"): generation 14 (the embedded
# default from 2026-12-07, g17b) fine-tuned with its own recipe (--eval-scale 1200, --lambda 0.7,
# --mirror, 3 epochs, lr 1e-3 decay 0.7, one thread, seed 1), generation 14's games now five
# sets (sp141..sp145-gen14-d9-s4), listed twice as every generation since 13 did.
#   a: the whole archive as in step 11 of scripts/train-default.sh, plus the five sets (g18c + sp145)
#   w: a window of the three latest generations' games only (gen 12, 13, 14, each listed twice):
#      none of generation 6's era (its self-play, versus games and children), as the
#      self-play loops of AlphaZero and KataGo train on a window of recent games
#   g: a's data plus every position of generation 14's seed-145 self-play games with their Gumbel
#      targets (the improved policy pi' of each searched move, docs/data.md) and the search's root
#      value as the teacher (/work/d23/r145/games.hcpe3, the self-play of round.sh 145, its evals
#      rewritten to the 1200 scale by rescale.py): the lineage's policy targets before generation 12
#      were of this kind, the archive's are fairy-stockfish's one best move
# /work/arch is made by `scripts/dataset.py unpack --all --to /work/arch`, /work/g12in by
# docs/history/2026-12-06-d19/inputs.py. $1 = a, w or g.
set -euo pipefail
M=${M:-/work/main/target/release/manaka}
v=$1; out=/work/d23/g19$v; mkdir -p $out
g12=(/work/arch/sp12{1,2,3,4,5,6}-gen12-d9-s4.hcpe)
g13=(/work/arch/sp13{1,2,3,4}-gen13-d9-s4.hcpe)
g14=(/work/arch/sp14{1,2,3,4,5}-gen14-d9-s4.hcpe)
recent=("${g12[@]}" "${g12[@]}" "${g13[@]}" "${g13[@]}" "${g14[@]}" "${g14[@]}")
cd /work/g12in
if [ "$v" = a ] || [ "$v" = g ]; then
  data=(rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe
        rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe
        s95rest-d9.hcpe s3-d9.hcpe s4-d9-a.hcpe s4-d9-b.hcpe "${recent[@]}"
        --teacher-only rest-children-d9.hcpe d11-children.hcpe vsc-d9.hcpe)
else
  data=("${recent[@]}")
fi
[ "$v" = g ] && data=(/work/d23/r145/games-s1200.hcpe3 "${data[@]}")
$M train --shape pair0_d128_o2_h256_kp --init /work/d23/gen14.mnw --out $out/g19$v.mnw --log $out/g19$v.jsonl \
  --data "${data[@]}" \
  --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
  --eval-scale 1200 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7 \
  --seed 1 --threads ${THREADS:-1} > $out/g19$v.log 2>&1
