#!/bin/bash
# What a checkpoint of application data costs the program (issue: checkpoints
# in memory): scripts/bench/craas_commit.c, each rank holding MIB MiB,
# rewriting PERCENT of it before each of K checkpoints, through
#   service  CRaaS to mpcrs-ckptd's memory (--ckpt-service localhost, flushed
#            only at the end)
#   files    CRaaS without a service, every commit flushed by its process
#            to the checkpoint directory (--ckpt-service-flush 1)
#   fti-l1   mpcrs's FTI API at level 1 (node-local files, Head = 1)
#   mpich    FTI on MPICH at level 1 (with FTI_PREFIX)
# next to the same run without checkpoints (none), in rounds that interleave
# them (this machine is noisy). Reports medians: the job's wall time (with
# the service's last flush to files), the time until every checkpoint is
# held where it is kept ("held", from the program), the cost per checkpoint
# ((held - none's) / K) and what that is as bandwidth, and the median and
# longest wait of a rank in one checkpoint call.
#
# Usage: scripts/craas-bench.sh [ROUNDS]     (default 3)
# Environment: MIB (64), K (5), PERCENT (100), LAYOUTS ("8:2;16:4"),
#   RECOVERY_ONLY=1 (only the recovery table: relaunch against in place),
#   FTI_PREFIX (FTI built against MPICH, ../shared/tools/anchors/build.sh),
#   OUT (scratch, default /tmp/mpcrs-craas-bench).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
rounds=${1:-3}
MIB=${MIB:-64}; K=${K:-5}; PERCENT=${PERCENT:-100}
LAYOUTS=${LAYOUTS:-"8:2;16:4"}
OUT=${OUT:-/tmp/mpcrs-craas-bench}
case "$OUT" in /|"") echo "craas-bench: bad OUT" >&2; exit 2 ;; esac
rm -rf "$OUT"; mkdir -p "$OUT/logs" || exit 1
src=$here/scripts/bench/craas_commit.c
"$bin/mpcrs-cc" -O2 -o "$OUT/craas_commit" "$src" -lcraas || exit 1
"$bin/mpcrs-cc" -O2 -DUSE_FTI -o "$OUT/fti_commit" "$src" -lfti || exit 1
variants="none service files fti-l1"
if [ -n "${FTI_PREFIX:-}" ] && [ -f "$FTI_PREFIX/include/fti.h" ]; then
  mpicc.mpich -O2 -DUSE_FTI -I"$FTI_PREFIX/include" -o "$OUT/fti_mpich" "$src" \
    -L"$FTI_PREFIX/lib" -Wl,-rpath,"$FTI_PREFIX/lib" -lfti -lm || exit 1
  variants="$variants mpich"
fi
. "$here/scripts/bench/fti_config.sh"
config() { mkdir -p "$1"; fti_config "$1/config.fti" 0 "$2" "$1" 2; } # DIR NODE_SIZE
run() { # VARIANT RANKS PROCS LOG
  local v=$1 n=$2 p=$3 log=$4 d="$OUT/run-$v"
  rm -rf "$d"; mkdir -p "$d"
  local start=$(date +%s.%N)
  case $v in
    none) "$bin/mpcrs-run" -n "$n" -p "$p" "$OUT/craas_commit" "$MIB" "$K" "$PERCENT" none ;;
    service) "$bin/mpcrs-run" -n "$n" -p "$p" --checkpoint "$d/ck" --ckpt-service localhost \
               --ckpt-service-flush never "$OUT/craas_commit" "$MIB" "$K" "$PERCENT" craas ;;
    files) "$bin/mpcrs-run" -n "$n" -p "$p" --checkpoint "$d/ck" --ckpt-service-flush 1 \
               "$OUT/craas_commit" "$MIB" "$K" "$PERCENT" craas ;;
    fti-l1) config "$d" $((n / p)); "$bin/mpcrs-run" -n "$n" -p "$p" "$OUT/fti_commit" "$MIB" "$K" "$PERCENT" fti "$d/config.fti" ;;
    mpich) config "$d" $((n / p)); mpiexec.mpich -n "$n" "$OUT/fti_mpich" "$MIB" "$K" "$PERCENT" fti "$d/config.fti" ;;
  esac > "$log" 2>&1
  local st=$?
  local end=$(date +%s.%N)
  rm -rf "$d"
  [ $st -eq 0 ] || { echo "craas-bench: $v -n $n failed, see $log" >&2; echo "nan"; return; }
  echo "$end - $start" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
echo "# CRaaS commit cost: $MIB MiB per rank, $K checkpoints, $PERCENT% rewritten before each; $rounds rounds"
IFS=';' read -ra layouts <<< "$LAYOUTS"
for l in "${layouts[@]}"; do
  [ -n "${RECOVERY_ONLY:-}" ] && break
  n=${l%%:*}; p=${l##*:}
  for r in $(seq "$rounds"); do
    for v in $variants; do
      t=$(run "$v" "$n" "$p" "$OUT/logs/$v-$n-$r.log")
      echo "$t" >> "$OUT/$v-$n.times"
    done
  done
  held_of() { grep -h "^wait" "$OUT"/logs/"$1"-"$n"-*.log | awk '{print $12}' | median; }
  none=$(held_of none)
  echo
  echo "## -n $n -p $p (MPICH: -n $n, FTI simulating nodes)"
  echo "| variant | wall s | held s | cost per checkpoint s | GB/s | rank wait median / max ms |"
  echo "|---|---|---|---|---|---|"
  for v in $variants; do
    w=$(median < "$OUT/$v-$n.times")
    waits=$(grep -h "^wait" "$OUT"/logs/"$v"-"$n"-*.log | awk '{print $3" / "$6}' | sort -g | awk '{a[NR]=$0} END {if (NR) print a[int((NR+1)/2)]}')
    h=$(held_of "$v")
    if [ "$v" = none ]; then
      printf "| %s | %.2f | %.3f | | | |\n" "$v" "$w" "$h"
    else
      cost=$(echo "($h - $none) / $K" | bc -l)
      gbs=$(echo "$n * $MIB * 1048576 / ($cost * 1000000000)" | bc -l 2>/dev/null)
      printf "| %s | %.2f | %.3f | %.3f | %.2f | %s |\n" "$v" "$w" "$h" "$cost" "${gbs:-0}" "${waits:-}"
    fi
  done
done

# Recovery: rank 1's process killed after checkpoint 3 (or K-1; every commit held
# first); the time from the kill to the last rank back in its loop with its
# data ("restored at" - "dying at"), each rank restoring its array from the
# service's memory or from files, when
#   relaunch  the job is started again by --max-restarts 1
#   in place  --recover in-place: a replacement process, the others run on and
#             their ranks start again from main in fresh copies
recover() { # VARIANT RANKS PROCS LOG
  local v=$1 n=$2 p=$3 log=$4 d="$OUT/run-$v" die=$(( K > 3 ? 3 : K - 1 ))
  rm -rf "$d"; mkdir -p "$d"
  local how=(--max-restarts 1)
  case $v in *-in-place) how=(--recover in-place) ;; esac
  case $v in
    service*) "$bin/mpcrs-run" -n "$n" -p "$p" --checkpoint "$d/ck" --ckpt-service localhost \
               --ckpt-service-flush never "${how[@]}" "$OUT/craas_commit" "$MIB" "$K" "$PERCENT" craas "$die" ;;
    files*) "$bin/mpcrs-run" -n "$n" -p "$p" --checkpoint "$d/ck" --ckpt-service-flush 1 \
               "${how[@]}" "$OUT/craas_commit" "$MIB" "$K" "$PERCENT" craas "$die" ;;
  esac > "$log" 2>&1
  rm -rf "$d"
  awk '/^dying at/ {d=$3} /^restored at/ {if ($3 > r) r=$3} END {if (d && r) printf "%.3f\n", r - d; else print "nan"}' "$log"
}
echo
echo "## Recovery, kill to every rank back in its loop with its data restored, s"
echo "| layout | relaunch, service's memory | relaunch, files | in place, service's memory | in place, files | in place / relaunch (service) |"
echo "|---|---|---|---|---|---|"
for l in "${layouts[@]}"; do
  n=${l%%:*}; p=${l##*:}
  for r in $(seq "$rounds"); do
    for v in service files service-in-place files-in-place; do
      recover "$v" "$n" "$p" "$OUT/logs/recover-$v-$n-$r.log" >> "$OUT/recover-$v-$n.times"
    done
  done
  m() { median < "$OUT/recover-$1-$n.times"; }
  printf "| -n %s -p %s | %s | %s | %s | %s | %.3f |\n" "$n" "$p" "$(m service)" "$(m files)" \
    "$(m service-in-place)" "$(m files-in-place)" "$(echo "$(m service-in-place) / $(m service)" | bc -l)"
done
