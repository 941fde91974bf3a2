#!/bin/bash
# After round 153: generation 16's first candidate g22 (generation 15 + sp151-153 twice), then its gates.
set -euo pipefail
cd /work/g16
while pgrep -f run153.sh >/dev/null; do sleep 30; done
grep -q "positions labelled" run153.log
[ -f /work/arch/sp153-gen15-d9-s4.hcpe ] || cp s153-d9.hcpe /work/arch/sp153-gen15-d9-s4.hcpe
THREADS=2 ./g22.sh
grep -q finished g22/g22.log
cd /work/main
python3 scripts/candidate.py --manaka /work/q/manaka-g15 --candidate /work/g16/g22/g22.mnw --parent /work/g16/gen15.mnw --out /work/g16/cand-g22 --fixed-seeds 101,102 --clock-seeds 101,102,103,104 --lanes 2
