#!/usr/bin/env bash
# Side-by-side benchmarks: mpcrs, Open MPI and MPICH in one session, on the
# programs of ../shared/bench (pingpong, allreduce, heat). Column mpcrs: the C
# programs built with mpcrs-cc, run thread-based; column mpcrs-rust: their Rust
# ports (runtime/examples: same arguments, same output); columns
# mpcrs-procs-default and mpcrs-procs-tcp: the C programs in -p min(n, 4)
# processes over shared memory and over tcp.
#
# Usage: scripts/bench.sh [quick]
#   quick          fewer iterations, for a smoke run of the script itself
# Environment:
#   OUT            output dir (default target/bench; relative paths are
#                  taken from the repo root); binaries go to $OUT/<impl>/, run
#                  logs to $OUT/<impl>/logs/, the table to $OUT/results.txt
#   MPCRS_SHARED   the shared dir holding bench/ (default ../shared next to the repo)
#
# Every MPI run is wrapped in `timeout`; a run that hangs shows "timeout" in the
# table, one that exits non-zero or prints nothing parsable shows "fail".
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${MPCRS_SHARED:-$ROOT/../shared}
BENCH_SRC=$SHARED/bench
OUT=${OUT:-target/bench}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac

MODE=${1:-full}
case $MODE in
  full)
    AR_ITERS=(2000 200 20)   # n=2, 8, 64: MPICH oversubscribed needs ~0.5 s/call at n=64
    HEAT_ARGS=(256 200)
    ;;
  quick)
    AR_ITERS=(200 20 3)
    HEAT_ARGS=(256 20)
    ;;
  *) echo "usage: $0 [quick]" >&2; exit 2 ;;
esac
AR_NPS=(2 8 64)
HEAT_NPS=(4 64)
PP_MAX=$((4 << 20))
# Per-run limits in seconds; generous because the 2-core machine is often busy.
T_PINGPONG=60
T_ALLREDUCE=90
T_HEAT=180

[ -d "$BENCH_SRC" ] || { echo "no benchmark sources at $BENCH_SRC (set MPCRS_SHARED)" >&2; exit 1; }

# Results: RESULT["row|impl"] = value; ROWS keeps first-seen row order.
declare -A RESULT=()
ROWS=()
IMPLS=()

record() { # IMPL ROW VALUE
  [ -n "${RESULT["$2|"]+x}" ] || { RESULT["$2|"]=1; ROWS+=("$2"); }
  RESULT["$2|$1"]=$3
}

now() { date +%s.%N; }

# build IMPL MPICC: compiles the three programs into $OUT/IMPL/.
# Compiler chatter (MPICH's headers trigger a harmless -Wstringop-overflow in
# heat.c) goes to a log that is shown only on failure.
build() {
  local impl=$1 cc=$2 dir=$OUT/$1 prog
  mkdir -p "$dir/logs"
  for prog in pingpong allreduce heat; do
    if ! "$cc" -O2 -o "$dir/$prog" "$BENCH_SRC/$prog.c" -lm >"$dir/logs/build-$prog.log" 2>&1; then
      cat "$dir/logs/build-$prog.log" >&2
      echo "build of $prog with $cc failed" >&2
      exit 1
    fi
  done
}

# run_mpi LAUNCHER LOG SECS NP BIN ARGS...: runs one job, output to LOG.
# Returns the job's status; 124 means it timed out. timeout signals the whole
# process group, so launcher and ranks all go down together.
run_mpi() {
  local launcher=$1 log=$2 secs=$3 np=$4
  shift 4
  # shellcheck disable=SC2086 # LAUNCHER is a command line, split on purpose
  timeout -k 10 "$secs" $launcher -n "$np" "$@" >"$log" 2>&1 </dev/null
}

# failure_word STATUS: what the table shows for a run that produced no number.
failure_word() { if [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; then echo timeout; else echo fail; fi; }

# Each measure_* takes IMPL BINDIR LAUNCHER and records its rows.

measure_pingpong() {
  local impl=$1 bin=$2 launcher=$3 log=$2/logs/pingpong.log st=0 lat bw
  local r_lat="pingpong 0 B one-way latency (us)" r_bw="pingpong 4 MiB bandwidth (MB/s)"
  run_mpi "$launcher" "$log" "$T_PINGPONG" 2 "$bin/pingpong" "$PP_MAX" || st=$?
  lat=$(awk '$1 == "0" { print $2 }' "$log")
  bw=$(awk -v m="$PP_MAX" '$1 == m { print $3 }' "$log")
  if [ "$st" -ne 0 ]; then lat=$(failure_word "$st"); bw=$lat; fi
  record "$impl" "$r_lat" "${lat:-fail}"
  record "$impl" "$r_bw" "${bw:-fail}"
}

measure_allreduce() {
  local impl=$1 bin=$2 launcher=$3 i np iters log st us
  for i in "${!AR_NPS[@]}"; do
    np=${AR_NPS[$i]} iters=${AR_ITERS[$i]} log=$bin/logs/allreduce-n$np.log st=0
    run_mpi "$launcher" "$log" "$T_ALLREDUCE" "$np" "$bin/allreduce" 1 "$iters" || st=$?
    # Output: "ranks count us_per_call ok|WRONG"; a wrong sum is a failure.
    us=$(awk -v n="$np" '$1 == n && $4 == "ok" { print $3 }' "$log")
    [ "$st" -eq 0 ] || us=$(failure_word "$st")
    record "$impl" "allreduce 1 double n=$np (us/call)" "${us:-fail}"
  done
}

measure_heat() {
  local impl=$1 bin=$2 launcher=$3 np log st t0 t1 secs wall sum
  for np in "${HEAT_NPS[@]}"; do
    log=$bin/logs/heat-n$np.log st=0
    t0=$(now)
    run_mpi "$launcher" "$log" "$T_HEAT" "$np" "$bin/heat" "${HEAT_ARGS[@]}" || st=$?
    t1=$(now)
    # Compute time as the program measures it, plus wall time including launch.
    secs=$(awk '$1 == "ranks" { for (i = 1; i < NF; i++) if ($i == "seconds") print $(i + 1) }' "$log")
    sum=$(awk '$1 == "checksum" { print $2 }' "$log")
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    if [ "$st" -ne 0 ]; then secs=$(failure_word "$st"); sum=$secs; wall=$secs; fi
    local what="heat ${HEAT_ARGS[0]} KiB x${HEAT_ARGS[1]} n=$np"
    record "$impl" "$what compute (s)" "${secs:-fail}"
    record "$impl" "$what wall incl. launch (s)" "$wall"
    record "$impl" "$what checksum" "${sum:-fail}"
  done
}

# measure_all IMPL BINDIR LAUNCHER: every measurement of one implementation.
measure_all() {
  local m
  IMPLS+=("$1")
  for m in pingpong allreduce heat; do
    echo "== $1: $m" >&2
    "measure_$m" "$1" "$2" "$3"
  done
}

# bench IMPL MPICC LAUNCHER: builds the C programs and runs everything.
bench() {
  local impl=$1 cc=$2 launcher=$3
  echo "== $impl: building with $cc" >&2
  build "$impl" "$cc"
  measure_all "$impl" "$OUT/$impl" "$launcher"
}

# mpcrs: the C programs through mpcrs-cc, and the Rust ports. Its allreduce is
# fast enough for ten times the iterations (less timer noise).
bench_mpcrs() {
  echo "== mpcrs: building with cargo" >&2
  (cd "$ROOT" && cargo build --release -q --workspace --bins --examples && cargo build --release -q -p mpcrs-abi)
  local rel=$ROOT/target/release saved=("${AR_ITERS[@]}")
  AR_ITERS=("${AR_ITERS[@]/%/0}")
  build mpcrs "$rel/mpcrs-cc"
  measure_all mpcrs "$OUT/mpcrs" "$rel/mpcrs-run"
  local dir=$OUT/mpcrs-rust
  mkdir -p "$dir/logs"
  cp "$rel"/examples/{pingpong,allreduce,heat} "$dir/"
  measure_all mpcrs-rust "$dir" "$rel/mpcrs-run"
  AR_ITERS=("${saved[@]}")
}

# mpcrs with ranks in several processes: the same C programs in -p min(n, 4)
# processes (pingpong: one rank per process), over the default network (shared
# memory) and over tcp only.
bench_mpcrs_processes() {
  local rel=$ROOT/target/release net wrapper impl saved=("${AR_ITERS[@]}")
  AR_ITERS=("${AR_ITERS[@]/%/0}")
  for net in default tcp; do
    impl=mpcrs-procs-$net
    wrapper=$OUT/$impl.launch
    mkdir -p "$OUT/$impl/logs"
    cp "$OUT"/mpcrs/{pingpong,allreduce,heat} "$OUT/$impl/"
    # Called as: LAUNCHER -n NP PROGRAM ARGS...
    cat >"$wrapper" <<WRAP
#!/bin/sh
np=\$2; shift 2
p=\$np; [ "\$p" -gt 4 ] && p=4
exec "$rel/mpcrs-run" -n "\$np" -p "\$p" --net $net "\$@"
WRAP
    chmod +x "$wrapper"
    measure_all "$impl" "$OUT/$impl" "$wrapper"
  done
  AR_ITERS=("${saved[@]}")
}

bench_mpcrs
bench_mpcrs_processes
# Open MPI refuses to start as root without --allow-run-as-root, and refuses
# more ranks than cores without --oversubscribe (it then also yields when idle).
bench openmpi mpicc.openmpi "mpirun.openmpi --allow-run-as-root --oversubscribe"
# Hydra starts local ranks by fork; naming the launcher keeps it off ssh.
bench mpich mpicc.mpich "mpirun.mpich -launcher fork"

# Table: one row per measurement, one column per implementation.
print_table() {
  local w=4 cw=8 row impl v
  for row in "${ROWS[@]}"; do
    [ ${#row} -le "$w" ] || w=${#row}
    for impl in "${IMPLS[@]}"; do
      v=${RESULT["$row|$impl"]:-}
      [ ${#v} -le "$cw" ] || cw=${#v}
    done
  done
  printf "%-${w}s" what
  for impl in "${IMPLS[@]}"; do printf "  %${cw}s" "$impl"; done
  printf "\n"
  for row in "${ROWS[@]}"; do
    printf "%-${w}s" "$row"
    for impl in "${IMPLS[@]}"; do printf "  %${cw}s" "${RESULT["$row|$impl"]:--}"; done
    printf "\n"
  done
  # The heat checksum must not depend on the implementation; say so if it does
  # (runs that timed out or failed have nothing to compare).
  local first
  for row in "${ROWS[@]}"; do
    [[ $row == *checksum ]] || continue
    first=
    for impl in "${IMPLS[@]}"; do
      v=${RESULT["$row|$impl"]:-}
      case $v in timeout | fail | "") continue ;; esac
      if [ -z "$first" ]; then
        first=$v
      elif [ "$v" != "$first" ]; then
        printf "note: %s differs between implementations\n" "$row"
        break
      fi
    done
  done
}

mkdir -p "$OUT"
print_table | tee "$OUT/results.txt"
