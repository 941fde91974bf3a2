#!/usr/bin/env bash
# Runs every cargo-fuzz target for a fixed number of executions over its saved corpus
# (fuzz/corpus/<target>/, which grows with what the fuzzer keeps), and prints one line per
# target: executions, corpus size, and whether it crashed. docs/fuzzing.md.
#   scripts/fuzz.sh [RUNS_PER_TARGET] [TARGET...]
# Needs nightly and cargo-fuzz (`cargo install cargo-fuzz`). A crash leaves its input in
# fuzz/artifacts/<target>/; add it to the corpus once fixed, and tests/fuzz_corpora.rs
# replays it in every test run.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
runs=${1:-100000}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(sfen_moves usi_lines nnue records shape mnw_reader)
fi
status=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  log=$(mktemp)
  if cargo +nightly fuzz run "$t" "corpus/$t" -- -runs="$runs" -max_len=4096 -rss_limit_mb=2048 \
      >"$log" 2>&1; then
    result=ok
  else
    result="CRASH (see fuzz/artifacts/$t/)"
    status=1
  fi
  done_line=$(grep -E '^#[0-9]+.*DONE|^Done [0-9]+ runs' "$log" | tail -1 || true)
  echo "$t: runs $runs, corpus $(ls "corpus/$t" | wc -l) files, $result ${done_line:+($done_line)}"
  [ "$result" = ok ] || tail -30 "$log"
  rm -f "$log"
done
exit $status
