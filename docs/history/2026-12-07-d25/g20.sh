#!/bin/bash
# Generation 15, third try (docs/strength.md, "Generation 15, third try"): generation 14 fine-tuned
# with its own recipe (--eval-scale 1200, --lambda 0.7, --mirror, 3 epochs, lr 1e-3 decay 0.7, seed 1)
# on g19a's data (the whole archive, generation 12-14's games listed twice) plus a *broad* set:
# the positions one uniformly random legal move off every position of generation 14's seed-145
# self-play games and off every training position of the two versus sets, labelled by
# fairy-stockfish at depth 5, listed twice (`--teacher-only`: their value target is the teacher's alone).
# Why: on held-out positions gen 14's network is further from depth 9 than fairy-stockfish's own
# depth-1 search is, and far further on positions of games against fairy-stockfish (the positions
# it is steered into: correlation 0.73 against 0.95, docs/history.md "Breadth"); depth 5 costs
# ~200 positions/s a thread where depth 9 costs ~26, so breadth is affordable.
#   broad.sfen: `manaka positions --children-of /work/d23/r145/games.hcpe3 --seed 201` (310,738)
#               + `--children-of vs12.hcpe --seed 202` (174,636; vs12 = vs1 and vs2 less their
#               first 5,000, the validation sets)
#   broad-d5.hcpe: `manaka label --engine /usr/games/fairy-stockfish --depth 5 --positions
#               broad.sfen --out broad-d5.hcpe --threads 2`
# With NAME=g21 SHAPE=pair0_d128_o2_h512_kp INIT=gen14-h512.mnw: the same data and recipe on
# generation 14 widened to a 512-unit head (`manaka weights widen /work/d23/gen14.mnw --shape
# pair0_d128_o2_h512_kp --seed 1 -o gen14-h512.mnw`; it evaluates exactly as generation 14).
# /work/arch is made by `scripts/dataset.py unpack --all --to /work/arch`, /work/g12in by
# docs/history/2026-12-06-d19/inputs.py.
set -euo pipefail
M=${M:-/work/main/target/release/manaka}
B=${B:-/work/q/bd}
NAME=${NAME:-g20}; SHAPE=${SHAPE:-pair0_d128_o2_h256_kp}; INIT=${INIT:-/work/d23/gen14.mnw}
out=${OUT:-/work/q/$NAME}; mkdir -p $out
g12=(/work/arch/sp12{1,2,3,4,5,6}-gen12-d9-s4.hcpe)
g13=(/work/arch/sp13{1,2,3,4}-gen13-d9-s4.hcpe)
g14=(/work/arch/sp14{1,2,3,4,5}-gen14-d9-s4.hcpe)
recent=("${g12[@]}" "${g12[@]}" "${g13[@]}" "${g13[@]}" "${g14[@]}" "${g14[@]}")
cd /work/g12in
data=(rest-train93.hcpe rest-sp91a-gen6-d9.hcpe rest-sp91b-gen6-d9.hcpe rest-sp92-gen6-d9.hcpe
      rest-vs1-train.hcpe rest-vs2-train.hcpe rest-s4-d9.hcpe rest-s4-part-d9.hcpe d11-games.hcpe
      s95rest-d9.hcpe s3-d9.hcpe s4-d9-a.hcpe s4-d9-b.hcpe "${recent[@]}"
      --teacher-only rest-children-d9.hcpe d11-children.hcpe vsc-d9.hcpe $B/broad-d5.hcpe $B/broad-d5.hcpe)
# A run stopped part way resumes from its checkpoint (--resume takes the place of --init).
start=(--init $INIT); [ -f $out/$NAME.mnw.state ] && start=(--resume)
$M train --shape $SHAPE "${start[@]}" --out $out/$NAME.mnw --log $out/$NAME.jsonl \
  --data "${data[@]}" \
  --val /work/arch/val.hcpe /work/arch/vs1-val.hcpe /work/arch/vs2-val.hcpe \
  --eval-scale 1200 --lambda 0.7 --mirror --epochs 3 --lr 1e-3 --lr-decay 0.7 \
  --seed 1 --threads ${THREADS:-1} >> $out/$NAME.log 2>&1
