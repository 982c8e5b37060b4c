#!/bin/bash
# Application-level checkpoints, mpcrs against FTI on MPICH (seed 002,
# figures 12-14): scripts/bench/heat_fti.c, one source built against both,
# checkpointing at L2 and at L3 every EVERY iterations, with the levels made
# inline (Head = 0) or by FTI's head (Head = 1: an extra process per node
# for FTI, helper tasks on the scheduler for mpcrs). Every variant next to
# the same run without checkpoints, in rounds that interleave them (this
# machine is noisy); medians, overheads, and the two ratios of the goal:
# mpcrs's head overhead over FTI's, and over mpcrs's inline.
#
# Usage: scripts/fti-bench.sh [ROUNDS]        (default 3)
# Environment:
#   FTI_PREFIX  FTI built against MPICH (include/fti.h, lib/libfti.so), as
#               ../shared/tools/anchors/build.sh makes it in WORK/fti-mpich.
#   SIZES       "NAME:KIB:ITERATIONS:EVERY;..." (default heat, 8 MiB per rank,
#               and a LULESH-like 32 MiB per rank)
#   LAYOUTS     "RANKS:NODES;..." (default "8:2;16:4"): mpcrs runs -n RANKS
#               -p NODES; FTI simulates NODES nodes (Local_test = 1).
#   GROUP       group size of L3 (and FTI's group; default 2)
#   WHO         "mpcrs fti" (default), or "mpcrs" alone: FTI's runs take most
#               of the time, and its figures change less than ours.
#   OUT         scratch (default /tmp/mpcrs-fti-bench), a local disk.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
rounds=${1:-3}
SIZES=${SIZES:-"heat:4096:1500:250;lulesh-like:16384:400:80"}
LAYOUTS=${LAYOUTS:-"8:2;16:4"}
GROUP=${GROUP:-2}
OUT=${OUT:-/tmp/mpcrs-fti-bench}
MPIRUN=${MPIRUN:-mpirun.mpich}
WHO=${WHO:-"mpcrs fti"}
case "$OUT" in /|"") echo "fti-bench: bad OUT" >&2; exit 2 ;; esac
if [ "$WHO" != mpcrs ] && { [ -z "${FTI_PREFIX:-}" ] || [ ! -f "$FTI_PREFIX/include/fti.h" ]; }; then
  echo "fti-bench: FTI_PREFIX must name FTI built against MPICH (include/fti.h, lib/);" \
       "../shared/tools/anchors/build.sh WORK DMTCP_SRC FTI_SRC builds it in WORK/fti-mpich" >&2
  exit 2
fi
rm -rf "$OUT"
mkdir -p "$OUT/logs" || exit 1
src=$here/scripts/bench/heat_fti.c
"$bin/mpcrs-cc" -O2 -o "$OUT/heat_fti.mpcrs" "$src" -lfti -lm || exit 1
if [ "$WHO" != mpcrs ]; then
  mpicc.mpich -O2 -I"$FTI_PREFIX/include" -o "$OUT/heat_fti.fti" "$src" \
    -L"$FTI_PREFIX/lib" -Wl,-rpath,"$FTI_PREFIX/lib" -lfti -lm || exit 1
fi

# config FILE HEAD NODE_SIZE: the same configuration for both.
. "$here/scripts/bench/fti_config.sh"
config() { fti_config "$1" "$2" "$3" "$OUT/run" "$GROUP"; }

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
runs=0
# run TAG WHO RANKS NODES KIB ITERATIONS EVERY LEVEL HEAD: one timed run;
# prints "TAG seconds checksum X (log)".
run() {
  local tag=$1 who=$2 np=$3 nodes=$4 kib=$5 iters=$6 every=$7 level=$8 head=$9
  rm -rf "$OUT/run"; mkdir -p "$OUT/run"
  config "$OUT/run.fti" "$head" $((np / nodes + head))
  local s e out
  sync
  s=$(now)
  if [ "$who" = mpcrs ]; then
    out=$("$bin/mpcrs-run" -n "$np" -p "$nodes" "$OUT/heat_fti.mpcrs" \
          "$kib" "$iters" "$every" "$OUT/run.fti" "$level" 2>&1)
  else
    out=$(cd "$OUT/run" && "$MPIRUN" -n $((np + nodes * head)) -bind-to none \
          "$OUT/heat_fti.fti" "$kib" "$iters" "$every" "$OUT/run.fti" "$level" 2>&1)
  fi
  e=$(now)
  runs=$((runs + 1))
  echo "$out" > "$OUT/logs/run-$runs.txt"
  echo "$tag $(sub "$e" "$s") $(echo "$out" | grep -o 'checksum .*' || echo 'no checksum') (log run-$runs.txt)"
}

IFS=';' read -ra sizes <<< "$SIZES"
IFS=';' read -ra layouts <<< "$LAYOUTS"
echo "heat_fti, $rounds rounds, group size $GROUP; sizes: $SIZES"
for r in $(seq "$rounds"); do
  for size in "${sizes[@]}"; do
    IFS=: read -r name kib iters every <<< "$size"
    for layout in "${layouts[@]}"; do
      IFS=: read -r np nodes <<< "$layout"
      for who in $WHO; do
        run "[$name -n $np nodes $nodes] $who none" "$who" "$np" "$nodes" "$kib" "$iters" 0 1 0
        for level in 2 3; do
          for head in 0 1; do
            run "[$name -n $np nodes $nodes] $who L$level head=$head" "$who" "$np" "$nodes" \
              "$kib" "$iters" "$every" "$level" "$head"
          done
        done
      done
    done
  done
done | tee "$OUT/runs.txt"
rm -rf "$OUT/run"
echo "-- medians of $rounds rounds; overhead over the same implementation without checkpoints"
python3 - "$OUT/runs.txt" <<'PY'
import re, statistics, sys
runs, sums = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"(\[[^]]*\]) (\w+) (.*?) ([0-9.]+) (checksum \S+|no checksum)", line)
    if m:
        runs.setdefault((m[1], m[2], m[3]), []).append(float(m[4]))
        sums.setdefault((m[1], m[2]), set()).add(m[5])
for k, v in sums.items():
    if len(v) != 1:
        print(f"!! {k[0]} {k[1]}: checksums differ between runs: {sorted(v)}")
med = {k: statistics.median(v) for k, v in runs.items()}
over = {}
for (case, who, name), t in sorted(med.items()):
    none = med.get((case, who, "none"))
    line = f"{case} {who} {name}: {t:.2f} s"
    if none and name != "none":
        over[(case, who, name)] = t - none
        line += f", overhead {t - none:+.2f} s ({100 * (t - none) / none:.0f}%)"
    print(line)
print("-- goal: mpcrs head=1 overhead <= 0.5 x FTI head=1 and <= 0.5 x mpcrs head=0")
for case in sorted({k[0] for k in med}):
    for level in ("L2", "L3"):
        m1 = over.get((case, "mpcrs", f"{level} head=1"))
        m0 = over.get((case, "mpcrs", f"{level} head=0"))
        f1 = over.get((case, "fti", f"{level} head=1"))
        if m1 is None:
            continue
        vs_fti = f"{m1 / f1:.2f}" if f1 and f1 > 0 else "n/a"
        vs_inline = f"{m1 / m0:.2f}" if m0 and m0 > 0 else "n/a"
        print(f"{case} {level}: mpcrs head=1 / FTI head=1 = {vs_fti}; / mpcrs head=0 = {vs_inline}")
PY
