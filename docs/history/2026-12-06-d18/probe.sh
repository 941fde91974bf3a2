#!/bin/sh
# Capacity probe, second round: the default's shape and twice its embedding, trained from
# random weights on every archived depth-9 set of games (1.25 M positions; the depth-11
# relabels in place of their depth-9 labels) and the children teacher-only (0.18 M), the
# teacher read at its fitted scale; validation on the three held-out sets after each epoch.
# One thread each, side by side. Paths as on the machine that ran it (the archive unpacked).
M=${M:-/work/d18/manaka-1bb4454}
cd /work/d11
for S in pair0_d128_o2_h256_kp pair0_d256_o2_h256_kp; do
  $M train --shape $S --out /work/d18/probe/$S.mnw --log /work/d18/probe/$S.jsonl \
    --data rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe \
      rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe \
      s95rest-d9.hcpe /work/d96/s3-d9.hcpe /work/d97/s4-d9-a.hcpe /work/d97/s4-d9-b.hcpe \
    --teacher-only rest-children-d9.hcpe d11-children.hcpe /work/child2/vsc-d9.hcpe \
    --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
    --eval-scale 1200 --lambda 0.7 --mirror --epochs 4 --batch 256 --lr 5e-3 --lr-decay 0.7 \
    --threads 1 --seed 1 > /work/d18/probe/$S.log 2>&1 &
done
wait
