#!/bin/bash
# g16a / g16b: generation 12 (g15) fine-tuned with g15's recipe (--eval-scale 1200, --lambda 0.7,
# --mirror, 3 epochs, lr 1e-3 decay 0.7, one thread, seed 1) on generation 12's inputs plus
# generation 12's own games: data/labels/sp121..sp126-gen12-d9-s4 (unpacked to /work/arch by
# `scripts/dataset.py unpack --all --to /work/arch`; /work/g12in made by
# docs/history/2026-12-06-d19/inputs.py). g16b lists the generation-12 sets twice (weight 2).
# $1 = a or b.
set -euo pipefail
M=${M:-/work/main/target/release/manaka}  # release build of b58bc20 (the search of 4b64d44)
v=$1; out=/work/d20/g16$v; mkdir -p $out
g12=(/work/arch/sp12{1,2,3,4,5,6}-gen12-d9-s4.hcpe)
[ "$v" = b ] && g12+=("${g12[@]}")
cd /work/g12in
$M train --shape pair0_d128_o2_h256_kp --init /work/d19/g15.mnw --out $out/g16$v.mnw --log $out/g16$v.jsonl \
  --data rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe \
    rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe \
    s95rest-d9.hcpe s3-d9.hcpe s4-d9-a.hcpe s4-d9-b.hcpe "${g12[@]}" \
  --teacher-only rest-children-d9.hcpe d11-children.hcpe vsc-d9.hcpe \
  --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
  --eval-scale 1200 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7 \
  --seed 1 --threads ${THREADS:-1} > $out/g16$v.log 2>&1
