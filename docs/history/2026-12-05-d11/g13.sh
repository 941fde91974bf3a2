#!/bin/sh
# g13: g12's data + the rest of sp95 (s4) + 58,318 children of vs1/vs2 (teacher-only)
set -e
cd /work/d11
python3 -c "
import numpy as np, cshogi
T=cshogi.HuffmanCodedPosAndEval
a=np.fromfile('/work/d95/s4-d9.hcpe',dtype=T); p=np.fromfile('/work/d95/s4-part-d9.hcpe',dtype=T)
assert (a[:len(p)]==p).all(), 'the partial run is not a prefix'
a[len(p):].tofile('s95rest-d9.hcpe'); print('sp95 rest', len(a)-len(p))
"
M=/work/main/target/release/manaka
$M train --shape pair0_d128_o2_h256_kp --init /work/g11/gen6.mnw --out g13.mnw \
 --data rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe s95rest-d9.hcpe \
 --teacher-only rest-children-d9.hcpe d11-children.hcpe /work/child2/vsc-d9.hcpe \
 --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7 --threads 2 --log g13.jsonl > g13.log 2>&1
