#!/bin/bash
# Generation 16 candidate: generation 15 (pair0_d128_o2_h512_kp) fine-tuned with its own recipe
# (g21's: --eval-scale 1200, --lambda 0.7, --mirror, 3 epochs, lr 1e-3 decay 0.7, seed 1) on the
# whole archive with generations 12-15's self-play sets listed twice, plus broad145vs-d5 twice
# (teacher-only). G15 = the generation-15 sets (sp151-sp15N, unpacked into /work/arch).
set -euo pipefail
M=${M:-/work/q/manaka-g15}
B=${B:-/work/q/bd}
NAME=${NAME:-g22}; SHAPE=${SHAPE:-pair0_d128_o2_h512_kp}; INIT=${INIT:-/work/g16/gen15.mnw}
out=${OUT:-/work/g16/$NAME}; mkdir -p $out
g12=(/work/arch/sp12{1,2,3,4,5,6}-gen12-d9-s4.hcpe)
g13=(/work/arch/sp13{1,2,3,4}-gen13-d9-s4.hcpe)
g14=(/work/arch/sp14{1,2,3,4,5}-gen14-d9-s4.hcpe)
g15=(/work/arch/sp15?-gen15-d9-s4.hcpe)
recent=("${g12[@]}" "${g12[@]}" "${g13[@]}" "${g13[@]}" "${g14[@]}" "${g14[@]}" "${g15[@]}" "${g15[@]}")
cd /work/g12in
data=(rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe
      rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe
      s95rest-d9.hcpe s3-d9.hcpe s4-d9-a.hcpe s4-d9-b.hcpe "${recent[@]}"
      --teacher-only rest-children-d9.hcpe d11-children.hcpe vsc-d9.hcpe $B/broad-d5.hcpe $B/broad-d5.hcpe)
start=(--init $INIT); [ -f $out/$NAME.mnw.state ] && start=(--resume)
$M train --shape $SHAPE "${start[@]}" --out $out/$NAME.mnw --log $out/$NAME.jsonl \
  --data "${data[@]}" \
  --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
  --eval-scale 1200 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7 \
  --seed 1 --threads ${THREADS:-1} >> $out/$NAME.log 2>&1
