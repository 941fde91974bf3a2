#!/bin/sh
# How well each judge predicts the results of the games its positions come from (held-out
# sets; mate and clamped scores and drawn games left out). A = the unpacked archive.
A=${A:-/work/arch}
python3 - <<PY
import numpy as np
T = np.dtype([("hcp","u1",(32,)),("eval","<i2"),("move","<u2"),("result","u1"),("dummy","u1")])
for name in ("val", "vs1-val", "vs2-val"):
    a = np.fromfile("$A/%s.hcpe" % name, T)
    m = (np.abs(a["eval"].astype(int)) < 30000) & (a["result"] != 0)
    a[m].tofile("%s-und.hcpe" % name)
PY
# fairy-stockfish depth 9 (the teacher's labels): at the fitted scale and at 600
scripts/calibrate.py val-und.hcpe vs1-val-und.hcpe vs2-val-und.hcpe
# a network: its value's log loss against the game result alone (--lambda 0), no learning
for net in gen6.mnw g13.mnw g14s.mnw; do
  for f in val-und vs1-val-und vs2-val-und; do
    rm -f x.mnw x.mnw.state
    manaka train --shape pair0_d128_o2_h256_kp --init $net --data $f.hcpe --val $f.hcpe \
        --lambda 0 --epochs 1 --lr 1e-12 --out x.mnw --threads 1 | grep 'validation  step'
  done
done
