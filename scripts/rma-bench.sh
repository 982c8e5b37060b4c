#!/bin/bash
# One-sided communication against Open MPI and MPICH: the OSU micro-benchmarks'
# one-sided latency and bandwidth tests (osu_put_latency, osu_get_latency,
# osu_acc_latency, osu_fop_latency, osu_cas_latency, osu_put_bw, osu_get_bw),
# each built unmodified with mpcrs-cc, mpicc.openmpi and mpicc.mpich, run
# between two ranks: mpcrs in threads (one process) and at -p 2 (two
# processes on this node), the peers as two processes. Rounds interleave
# every configuration (this machine is noisy); the table gives, per size, the
# median of the rounds and the ratios to each peer.
#
# Usage: scripts/rma-bench.sh OMB [ROUNDS]      (default 3 rounds)
#   OMB: the OSU micro-benchmarks, a source tree (with c/mpi/one-sided) or a
#        bare git directory (fetch github:lrbison/osu-micro-benchmarks; the
#        commit OMB_REV, default bfa562c, OMB 7.0.1, is exported).
# Environment: SIZES (default "8 65536 1048576"), OUT (scratch, default
#   /tmp/mpcrs-rma-bench), OMPI_CC/MPICH_CC/OMPI_RUN/MPICH_RUN.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
[ $# -ge 1 ] || { sed -n 2,16p "$0" >&2; exit 2; }
src=$1
rounds=${2:-3}
SIZES=${SIZES:-"8 65536 1048576"}
OUT=${OUT:-/tmp/mpcrs-rma-bench}
OMPI_CC=${OMPI_CC:-mpicc.openmpi}
MPICH_CC=${MPICH_CC:-mpicc.mpich}
OMPI_RUN=${OMPI_RUN:-mpirun.openmpi --oversubscribe --allow-run-as-root}
MPICH_RUN=${MPICH_RUN:-mpirun.mpich}
case "$OUT" in /|"") echo "rma-bench: bad OUT" >&2; exit 2 ;; esac
[ -x "$bin/mpcrs-cc" ] || { echo "rma-bench: build mpcrs first (cargo build --release)" >&2; exit 2; }
mkdir -p "$OUT/bin"
if [ -d "$src/c/mpi/one-sided" ]; then
  omb=$src
else
  omb=$OUT/omb
  rm -rf "$omb" && mkdir -p "$omb"
  git --git-dir="$src" archive "${OMB_REV:-bfa562c}" | tar -x -C "$omb" || { echo "rma-bench: cannot export $src" >&2; exit 2; }
fi
benches="osu_put_latency osu_get_latency osu_acc_latency osu_fop_latency osu_cas_latency osu_put_bw osu_get_bw"
for m in mpcrs ompi mpich; do
  case $m in mpcrs) cc=$bin/mpcrs-cc ;; ompi) cc=$OMPI_CC ;; mpich) cc=$MPICH_CC ;; esac
  for b in $benches; do
    (cd "$omb/c" && $cc -O2 -Iutil -DPACKAGE_VERSION='"7"' "mpi/one-sided/$b.c" util/osu_util.c \
      util/osu_util_mpi.c util/osu_util_graph.c util/osu_util_papi.c -lm -o "$OUT/bin/$b.$m") \
      > "$OUT/bin/$b.$m.log" 2>&1 || { echo "rma-bench: $b does not build with $m (see $OUT/bin/$b.$m.log)" >&2; exit 1; }
  done
done
run() { # config bench -> "size value" lines
  local cfg=$1 b=$2 m
  case $cfg in
    threads) m=mpcrs; set -- "$bin/mpcrs-run" -n 2 ;;
    p2) m=mpcrs; set -- "$bin/mpcrs-run" -n 2 -p 2 ;;
    ompi) m=ompi; set -- $OMPI_RUN -n 2 ;;
    mpich) m=mpich; set -- $MPICH_RUN -n 2 ;;
  esac
  timeout 300 "$@" "$OUT/bin/$b.$m" -m 1:1048576 2>/dev/null | awk '/^[0-9]/ {print $1, $2}'
}
configs="threads p2 ompi mpich"
: > "$OUT/raw.txt"
for r in $(seq "$rounds"); do
  for b in $benches; do
    for c in $configs; do
      run "$c" "$b" | sed "s/^/$b $c /" >> "$OUT/raw.txt"
    done
  done
done
python3 - "$OUT/raw.txt" "$SIZES" <<'PY'
import sys, statistics
from collections import defaultdict
vals = defaultdict(list)
for line in open(sys.argv[1]):
    b, c, size, v = line.split()
    vals[(b, c, int(size))].append(float(v))
sizes = [int(s) for s in sys.argv[2].split()]
benches = sorted({k[0] for k in vals}, key=lambda b: ("bw" in b, b))
print("| benchmark | bytes | mpcrs threads | mpcrs -p 2 | Open MPI | MPICH | threads/OMPI | threads/MPICH | -p 2/OMPI | -p 2/MPICH |")
print("|---|---|---|---|---|---|---|---|---|---|")
for b in benches:
    for s in sizes:
        m = {c: statistics.median(vals[(b, c, s)]) for c in ("threads", "p2", "ompi", "mpich") if vals.get((b, c, s))}
        if len(m) < 4:
            continue
        r = lambda a, p: f"{m[a] / m[p]:.2f}" if m[p] else "-"
        print(f"| {b} | {s} | {m['threads']:.2f} | {m['p2']:.2f} | {m['ompi']:.2f} | {m['mpich']:.2f} | {r('threads','ompi')} | {r('threads','mpich')} | {r('p2','ompi')} | {r('p2','mpich')} |")
print("latency in us (lower is better); bandwidth in MB/s (higher is better)")
PY
