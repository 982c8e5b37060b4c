#!/bin/bash
# Many ranks on 2 cores, mpcrs against AMPI (Charm++'s MPI of virtual ranks):
# scripts/bench/scale.c built with mpcrs-cc and with AMPI's ampicc, run at
# each size in one process of ranks as threads (mpcrs-run -n N) and as AMPI
# virtual ranks on 2 worker threads of one process (+p2 +vp N), ROUNDS times
# interleaved. Prints the per-call times (slowest rank, microseconds) and the
# cost per rank.
#
# Usage: AMPI_DIR=/path/to/charm/multicore-linux-x86_64 scripts/ampi-bench.sh [ROUNDS]
# Environment: SIZES (default "64 1024 4096 16384"), ITERS (20).
# AMPI is built outside this tree: in a checkout of charmplusplus/charm,
#   ./build AMPI multicore-linux-x86_64 --with-production -j2
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
rounds=${1:-3}
SIZES=${SIZES:-"64 1024 4096 16384"}
ITERS=${ITERS:-20}
: "${AMPI_DIR:?set AMPI_DIR to a built AMPI (its bin/ampicc)}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/mpcrs-cc" -O2 "$here/scripts/bench/scale.c" -o "$work/scale-mpcrs" || exit 1
# ampicc leaves charmrun and ampirun where it runs.
(cd "$work" && "$AMPI_DIR/bin/ampicc" -O2 "$here/scripts/bench/scale.c" -o scale-ampi) || exit 1
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
echo "| ranks | MPI | barrier us (/rank) | allreduce 8 B us (/rank) | bcast 8 B us (/rank) |"
echo "|---|---|---|---|---|"
for n in $SIZES; do
  for _ in $(seq "$rounds"); do
    m=$(timeout 600 "$bin/mpcrs-run" -n "$n" "$work/scale-mpcrs" "$ITERS" 2>&1 | grep ranks=)
    a=$(cd "$work" && timeout 600 ./scale-ampi "$ITERS" +p2 +vp"$n" 2>&1 | grep ranks=)
    for pair in "mpcrs:$m" "AMPI:$a"; do
      line=${pair#*:}
      if [ -z "$line" ]; then echo "| $n | ${pair%%:*} | failed | | |"; continue; fi
      b=$(field barrier_us <<<"$line") r=$(field allreduce_us <<<"$line") c=$(field bcast_us <<<"$line")
      printf '| %s | %s | %s (%.3f) | %s (%.3f) | %s (%.3f) |\n' "$n" "${pair%%:*}" \
        "$b" "$(echo "$b / $n" | bc -l)" "$r" "$(echo "$r / $n" | bc -l)" "$c" "$(echo "$c / $n" | bc -l)"
    done
  done
done
