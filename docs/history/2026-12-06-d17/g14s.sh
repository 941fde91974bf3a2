#!/bin/sh
# g14s: g13's data + sp96, the teacher's scores read at scale 1200 (fitted to the games' results:
# calib.py; fairy-stockfish's usi-only scores are about twice the 600 scale), fine-tuned from gen 6
set -e
cd /work/d11
M=/work/d17/manaka-head
$M train --shape pair0_d128_o2_h256_kp --init /work/g11/gen6.mnw --out /work/d17/g14/g14s.mnw \
 --data rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe s95rest-d9.hcpe /work/d96/s3-d9.hcpe \
 --teacher-only rest-children-d9.hcpe d11-children.hcpe /work/child2/vsc-d9.hcpe \
 --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
 --eval-scale 1200 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7 --threads 2 --log /work/d17/g14/g14s.jsonl > /work/d17/g14/g14s.log 2>&1
