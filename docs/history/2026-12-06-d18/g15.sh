#!/bin/sh
# g15: g14s's recipe (gen 6 fine-tuned, --eval-scale 1200, 3 epochs, lr 1e-3) on the probe's
# data, which adds sp97 (229,855 positions of 9,600 more games) to g14s's.
M=${M:-/work/d18/manaka-1bb4454}
cd /work/d11
$M train --shape pair0_d128_o2_h256_kp --init /work/g11/gen6.mnw --out /work/d18/g15/g15.mnw --log /work/d18/g15/g15.jsonl \
  --data rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe \
    rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe \
    s95rest-d9.hcpe /work/d96/s3-d9.hcpe /work/d97/s4-d9-a.hcpe /work/d97/s4-d9-b.hcpe \
  --teacher-only rest-children-d9.hcpe d11-children.hcpe /work/child2/vsc-d9.hcpe \
  --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
  --eval-scale 1200 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7 \
  --threads ${THREADS:-1} > /work/d18/g15/g15.log 2>&1
