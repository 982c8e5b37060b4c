#!/bin/bash
# Cost of the storage levels (seed 002 section 6.4): heat.c (../shared/bench)
# checkpointing with MPIX_Checkpoint every EVERY iterations at L2 and at L3,
# each level's work made inline (the ranks wait, as FTI without a head) or by
# helper tasks; wall time of the whole run next to the same run without
# checkpoints, in rounds that interleave the variants (this machine is noisy).
# Then restart times from L1, L2 and L3 (page cache dropped when allowed).
#
# Usage: scripts/levels-bench.sh [ROUNDS]        (default 3)
# Environment: KIB (per rank, one grid; default 4096), ITERATIONS (3000),
#   EVERY (500), LAYOUTS (default "-n 8 -p 2;-n 16 -p 4"), OUT (scratch,
#   default /tmp/mpcrs-levels-bench), MPCRS_SHARED (../shared).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
rounds=${1:-3}
KIB=${KIB:-4096}
ITERATIONS=${ITERATIONS:-3000}
EVERY=${EVERY:-500}
LAYOUTS=${LAYOUTS:-"-n 8 -p 2;-n 16 -p 4"}
OUT=${OUT:-/tmp/mpcrs-levels-bench}
SHARED=${MPCRS_SHARED:-$here/../shared}
rm -rf "$OUT/logs"
mkdir -p "$OUT/logs"
runs=0
"$bin/mpcrs-cc" -O2 -DWITH_MPIX -o "$OUT/heat" "$SHARED/bench/heat.c" || exit 1
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo cold || echo warm; }
# run NAME LAYOUT OPTIONS...: one timed run; prints "NAME wall" and checks the checksum.
run() {
  local name=$1 layout=$2; shift 2
  rm -rf "$OUT/ck" "$OUT/local"
  local s e out
  s=$(now)
  # shellcheck disable=SC2086
  out=$("$bin/mpcrs-run" $layout "$@" "$OUT/heat" "$KIB" "$ITERATIONS" "$EVERY" 2>&1)
  e=$(now)
  local sum; sum=$(echo "$out" | grep -o 'checksum .*')
  # Every run's output is kept, for the outliers.
  runs=$((runs + 1))
  echo "$out" > "$OUT/logs/run-$runs.txt"
  echo "$name $(sub "$e" "$s") $sum (log run-$runs.txt)"
}
ck=(--checkpoint "$OUT/ck" --checkpoint-local "$OUT/local")
echo "heat $KIB KiB per rank, $ITERATIONS iterations, a checkpoint every $EVERY; $rounds rounds"
IFS=';' read -ra layouts <<< "$LAYOUTS"
for layout in "${layouts[@]}"; do
  for r in $(seq "$rounds"); do
    run "[$layout] none" "$layout"
    run "[$layout] L1" "$layout" "${ck[@]}" --levels 1:1
    for level in 2 3; do
      run "[$layout] L$level inline" "$layout" "${ck[@]}" --levels "1:1,$level:1" --post-processing inline
      run "[$layout] L$level helpers" "$layout" "${ck[@]}" --levels "1:1,$level:1" --post-processing helpers
    done
  done
done | tee "$OUT/runs.txt"
# Overheads (median of the rounds): of the whole checkpoint over no
# checkpoints, and of the level's post-processing over L1 alone.
echo "-- overheads (median of $rounds rounds)"
python3 - "$OUT/runs.txt" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\[[^]]*\]) (.*?) ([0-9.]+) checksum", line)
    if m:
        runs.setdefault((m[1], m[2]), []).append(float(m[3]))
med = {k: statistics.median(v) for k, v in runs.items()}
for (layout, name), t in sorted(med.items()):
    none, l1 = med.get((layout, "none")), med.get((layout, "L1"))
    line = f"{layout} {name}: {t:.2f} s"
    if none and name != "none":
        line += f", over none {t - none:+.2f} s ({100 * (t - none) / none:.0f}%)"
    if l1 and name not in ("none", "L1"):
        line += f", post-processing over L1 {t - l1:+.2f} s"
    print(line)
for layout in sorted({k[0] for k in med}):
    l1 = med.get((layout, "L1"))
    for level in ("L2", "L3"):
        i, h = med.get((layout, level + " inline")), med.get((layout, level + " helpers"))
        if l1 and i and h and i > l1:
            print(f"{layout} {level}: helpers' post-processing cost is {100 * (h - l1) / (i - l1):.0f}% of inline's")
PY
# Restart from L1, L2 and L3: the same epoch, one process's image taken away.
layout=${layouts[0]}
rm -rf "$OUT/ck" "$OUT/local"
# shellcheck disable=SC2086
"$bin/mpcrs-run" $layout "${ck[@]}" --levels 1:1,2:1,3:1 "$OUT/heat" "$KIB" "$ITERATIONS" "$EVERY" > /dev/null 2>&1
k=$(sed 's/epoch-//' "$OUT/ck/latest")
img=$(ls "$OUT"/local/node-*/epoch-"$k"/process-1.img)
copy=$(ls "$OUT"/local/node-*/epoch-"$k"/partner-of-1.img)
cp -a "$img" "$OUT/l1.keep"; cp -a "$copy" "$OUT/l2.keep"
echo "-- restart [$layout] from epoch $k, to the end of the job"
for r in $(seq "$rounds"); do
  for from in L1 L2 L3; do
    cp -a "$OUT/l1.keep" "$img"; cp -a "$OUT/l2.keep" "$copy"; rm -rf "$OUT/ck/epoch-$k/rebuilt"
    case $from in L2) rm -f "$img" ;; L3) rm -f "$img" "$copy" ;; esac
    cache=$(drop)
    s=$(now); "$bin/mpcrs-run" --restart "$OUT/ck" > /dev/null 2>&1; e=$(now)
    echo "restart from $from ($cache cache): $(sub "$e" "$s") s"
  done
done
