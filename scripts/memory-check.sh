#!/usr/bin/env bash
# Peak memory of a long `go infinite` in a small hash (issue 15, "Memory"): starts `manaka usi`,
# sets USI_Hash, searches the position for SECONDS, stops, and prints the engine's peak resident
# set (VmHWM) beside the hash it was given, with the last info line (hashfull) and the recycling
# notice.
#   scripts/memory-check.sh [MANAKA] [SECONDS] [USI_HASH_MB]
set -euo pipefail
manaka=${1:-target/release/manaka}
seconds=${2:-600}
hash=${3:-64}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/in"
"$manaka" usi < "$dir/in" > "$dir/out" 2>&1 &
pid=$!
exec 3> "$dir/in"
printf 'usi\nsetoption name USI_Hash value %s\nisready\nposition startpos moves 7g7f 3c3d 2g2f 8c8d\ngo infinite\n' "$hash" >&3
peak=0
for ((i = 0; i < seconds; i++)); do
  sleep 1
  kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  peak=$kb
done
printf 'stop\n' >&3
sleep 1
printf 'quit\n' >&3
exec 3>&-
wait "$pid" || true
last=$(grep '^info depth' "$dir/out" | tail -1)
echo "seconds $seconds USI_Hash ${hash} MiB peak_rss $((peak / 1024)) MiB"
echo "last: ${last:0:160}"
grep -m1 'tree full' "$dir/out" || echo "(the tree never filled)"
grep -m1 '^bestmove' "$dir/out"
