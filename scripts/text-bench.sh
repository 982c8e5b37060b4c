#!/bin/bash
# Memory and start-up of a C program with 64 MiB of code (scripts/bench/big_text.c)
# at several sizes in one process: the proportional set size (Pss, what the
# process holds, shared pages divided among their mappings), the resident set
# (Rss, every mapping of a shared page counted), the memfd pages of the
# ranks' copies (Pss_Shmem) and the run's time from launch to end (median of
# ROUNDS). With the code shared, Pss stays near 64 MiB + ranks x data.
#
# Usage: scripts/text-bench.sh [ROUNDS]          (default 3)
# Environment: SIZES (default "64 256"), MPCRS_BIN (default target/release).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${MPCRS_BIN:-$here/target/release}
rounds=${1:-3}
SIZES=${SIZES:-"64 256"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/mpcrs-cc" -O1 "$here/scripts/bench/big_text.c" -o "$work/big_text" || exit 1
echo "| ranks | start to end s | Pss MiB | Pss of memfds MiB | Rss MiB | anonymous MiB |"
echo "|---|---|---|---|---|---|"
for n in $SIZES; do
  times=() line=""
  for _ in $(seq "$rounds"); do
    t0=$(date +%s.%N)
    line=$(timeout 600 "$bin/mpcrs-run" -n "$n" "$work/big_text") || { echo "| $n | failed |"; continue 2; }
    times+=("$(echo "$(date +%s.%N) - $t0" | bc)")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((rounds + 1) / 2))p")
  read -r _ _ _ rss _ pss _ shmem _ anon <<<"$line"
  printf '| %s | %.2f | %d | %d | %d | %d |\n' "$n" "$median" $((pss / 1024)) $((shmem / 1024)) \
    $((rss / 1024)) $((anon / 1024))
done
