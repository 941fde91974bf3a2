#!/bin/bash
# g18c / g18d: generation 14 (the embedded default from 2026-12-07, g17b) fine-tuned with its own
# recipe (--eval-scale 1200, --lambda 0.7, --mirror, 3 epochs, lr 1e-3 decay 0.7, one thread,
# seed 1) on generation 14's data (scripts/train-default.sh step 11: the archive files with the
# generation-12 and -13 sets listed twice) plus generation 14's own games,
# data/labels/sp141..sp144-gen14-d9-s4: g18c lists them twice, as every generation since 13 did,
# g18d three times. /work/arch is made by `scripts/dataset.py unpack --all --to /work/arch`,
# /work/g12in by docs/history/2026-12-06-d19/inputs.py. $1 = c or d.
set -euo pipefail
M=${M:-/work/main/target/release/manaka}
v=$1; out=/work/d22/g18$v; mkdir -p $out
g12=(/work/arch/sp12{1,2,3,4,5,6}-gen12-d9-s4.hcpe)
g13=(/work/arch/sp13{1,2,3,4}-gen13-d9-s4.hcpe)
g14=(/work/arch/sp14{1,2,3,4}-gen14-d9-s4.hcpe)
g14x=("${g14[@]}" "${g14[@]}")
[ "$v" = d ] && g14x+=("${g14[@]}")
cd /work/g12in
$M train --shape pair0_d128_o2_h256_kp --init /work/d22/gen14.mnw --out $out/g18$v.mnw --log $out/g18$v.jsonl \
  --data rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe \
    rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe \
    s95rest-d9.hcpe s3-d9.hcpe s4-d9-a.hcpe s4-d9-b.hcpe "${g12[@]}" "${g12[@]}" "${g13[@]}" "${g13[@]}" "${g14x[@]}" \
  --teacher-only rest-children-d9.hcpe d11-children.hcpe vsc-d9.hcpe \
  --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
  --eval-scale 1200 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7 \
  --seed 1 --threads ${THREADS:-1} > $out/g18$v.log 2>&1
