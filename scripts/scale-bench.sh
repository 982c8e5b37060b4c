#!/bin/bash
# Per-rank costs from 64 to 65,536 ranks in one process (threads) and up to
# 262,144 over 4 processes (-p 4), with runtime/examples/scale: start-up to
# the first barrier's return (from the launch), barrier, allreduce 8 B, bcast
# 8 B, alltoall 8 B per pair (up to 4,096 ranks), dup, split, a token's lap
# of the ring, and resident memory per rank. Each size is run ROUNDS times;
# the table shows each figure's median, per call and per rank (us).
#
# Usage: scripts/scale-bench.sh [ROUNDS]          (default 3)
# Environment: THREADS (sizes in one process, default 64 ... 65536),
#   PROCS4 (sizes over -p 4, default 4096 16384 65536 262144), ITERS (20).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
rounds=${1:-3}
THREADS=${THREADS:-"64 256 1024 4096 8192 16384 32768 65536"}
PROCS4=${PROCS4:-"4096 16384 65536 262144"}
ITERS=${ITERS:-20}
[ -x "$bin/examples/scale" ] || cargo build --release -p mpcrs --example scale >&2 || exit 1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# one LABEL N ARGS...: ROUNDS runs, their lines appended to $out/LABEL-N.
one() {
  local label=$1 n=$2; shift 2
  local iters=$ITERS
  [ "$n" -ge 65536 ] && iters=5
  for _ in $(seq "$rounds"); do
    SCALE_T0=$(date +%s.%N) timeout 1800 "$bin/mpcrs-run" -n "$n" "$@" \
      "$bin/examples/scale" "$iters" 4096 >>"$out/$label-$n" 2>&1 ||
      echo "failed ($?)" >>"$out/$label-$n"
    rm -rf /dev/shm/mpcrs-* 2>/dev/null
  done
}

# Sizes in turn, each ROUNDS times back to back (a round of every size would
# take an hour at the largest).
for n in $THREADS; do one threads "$n"; done
for n in $PROCS4; do one p4 "$n" -p 4; done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
field() { grep -o "$1=[^ ]*" "$2" | cut -d= -f2 | grep -v '^-$' | median; }
per_rank() { awk -v t="$1" -v n="$2" 'BEGIN { if (t == "-") print "-"; else printf "%.3f", t / n }'; }

printf '| layout | ranks | start-up s | barrier us (/rank) | allreduce 8 B (/rank) | bcast 8 B (/rank) | alltoall 8 B | dup (/rank) | split (/rank) | ring lap (/hop) | RSS KiB/rank |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for label in threads p4; do
  sizes=$THREADS
  [ "$label" = p4 ] && sizes=$PROCS4
  for n in $sizes; do
    f=$out/$label-$n
    if grep -q failed "$f" || ! grep -q ' ok$' "$f"; then
      printf '| %s | %s | failed: %s |\n' "$label" "$n" "$(grep -v '^ranks=' "$f" | tail -1)"
      continue
    fi
    row="| $([ "$label" = p4 ] && echo '-p 4' || echo 'threads') | $n | $(field startup_s "$f")"
    for k in barrier_us allreduce_us bcast_us; do
      t=$(field "$k" "$f")
      row="$row | $t ($(per_rank "$t" "$n"))"
    done
    row="$row | $(field alltoall_us "$f")"
    for k in dup_us split_us ring_lap_us; do
      t=$(field "$k" "$f")
      row="$row | $t ($(per_rank "$t" "$n"))"
    done
    row="$row | $(field rss_kib_per_rank "$f") |"
    echo "$row"
  done
done
