#!/usr/bin/env bash
# The CUDA evaluator on a real GPU, in one call (docs/gpu.md, "Running the GPU check"):
#   1. every compiled-in shape on the GPU against the reference evaluator (fresh random
#      weights, random positions, outputs poisoned with NaN first, relative error <= 1e-4,
#      every output written);
#   2. leaves per second at batch sizes 64..4096 for the baseline and the NNUE shape, end to
#      end and kernels only, against the roofline (assumed H200 figures, printed);
#   3. the USI engine with Backend cuda names the device and plays a move.
# Finishes in well under 5 minutes on an H200 (about a minute once the binary is there).
#
# The GPU machine reaches no registry, so build the binary where cargo works and carry it:
#   scripts/gpu-check.sh --build            # here: cargo build --release, copy to target/gpu-check/
#   scripts/gpu-check.sh                    # there: runs target/gpu-check/manaka
#   scripts/gpu-check.sh --binary PATH [-- gpu-check flags, e.g. --json]
# Exit status: 0 all checks passed, 1 a check failed, 2 no usable GPU / set-up problem.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> %s\n' "$*" >&2; }
CARRY_DIR=target/gpu-check
BIN=""
BUILD=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=1; shift ;;
    --binary) BIN="${2:?--binary needs a path}"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) break ;;
  esac
done

if [ "$BUILD" = 1 ]; then
  say "building manaka (release, feature cuda)"
  target="${CARGO_TARGET_DIR:-target}"
  cargo build --release --locked -p manaka-cli --features cuda
  mkdir -p "$CARRY_DIR"
  cp "$target/release/manaka" "$CARRY_DIR/manaka"
  say "binary: $CARRY_DIR/manaka ($(du -h "$CARRY_DIR/manaka" | cut -f1)); carry '$CARRY_DIR' to the GPU machine"
  exit 0
fi

if [ -z "$BIN" ]; then
  if [ -x "$CARRY_DIR/manaka" ]; then
    BIN="$CARRY_DIR/manaka"
  elif command -v cargo >/dev/null 2>&1; then
    say "no $CARRY_DIR/manaka: building it (needs crates.io or vendored crates)"
    "$0" --build
    BIN="$CARRY_DIR/manaka"
  else
    say "no binary: run 'scripts/gpu-check.sh --build' where cargo works, then carry $CARRY_DIR"
    exit 2
  fi
fi
[ -x "$BIN" ] || { say "not an executable: $BIN"; exit 2; }

# The driver library (libcuda.so.1) and a toolkit's NVRTC, where images usually keep them.
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/local/cuda/lib64; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
# NVRTC: a toolkit's (the runtime looks in /usr/local/cuda/lib64 itself), else PyPI's wheel.
if [ -z "${MANAKA_NVRTC_LIB:-}" ] && ! ls /usr/local/cuda/lib64/libnvrtc.so.* >/dev/null 2>&1; then
  if dir=$(python3 - 2>/dev/null <<'PY'
import glob, os, sys
import nvidia
for base in nvidia.__path__:
    for lib in sorted(glob.glob(os.path.join(base, "*", "lib", "libnvrtc.so.*"))):
        if ".alt." not in lib:
            print(os.path.dirname(lib))
            sys.exit(0)
sys.exit(1)
PY
  ); then
    export MANAKA_NVRTC_LIB="$dir"
  fi
fi

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
fi
say "$BIN gpu-check $*"
set +e
timeout 280 "$BIN" gpu-check "$@"
status=$?
set -e
if [ "$status" = 124 ]; then
  say "gpu-check ran past 280 s"
  exit 1
fi

say "USI engine with Backend cuda"
usi_out=$( (printf 'setoption name Backend value cuda\nsetoption name BatchSize value 64\nisready\nposition startpos\ngo nodes 2048\n'
  sleep 5
  printf 'quit\n') | timeout 60 "$BIN" usi 2>&1) || true
printf '%s\n' "$usi_out" | grep -E '^(info string|bestmove)' || true
if ! printf '%s\n' "$usi_out" | grep -q 'CUDA, ' || ! printf '%s\n' "$usi_out" | grep -q '^bestmove '; then
  say "the USI engine did not run on the GPU"
  [ "$status" = 0 ] && status=1
fi
exit "$status"
