#!/bin/bash
# Collective MPI-IO against MPICH (ROMIO) and Open MPI (OMPIO): the same C
# program (scripts/bench/io_write.c) built with mpcrs-cc, mpicc.mpich and
# mpicc.openmpi writes one file of MIB MiB from NP ranks with one collective
# call, syncs it, and reads it back collectively (checked), in the same
# directory. Patterns: contiguous (one block per rank) and strided (1 MiB
# blocks dealt round-robin through a view). mpcrs runs in threads (one
# process) and at -p 2; the peers as NP processes. Rounds interleave every
# configuration (this machine is noisy); the table gives medians and ratios.
#
# Usage: scripts/io-bench.sh [ROUNDS]       (default 3)
# Environment: DIR (the files' directory, default /tmp), NP (16), MIB (1024),
#   OUT (scratch, default /tmp/mpcrs-io-bench), OMPI_CC/MPICH_CC/OMPI_RUN/MPICH_RUN.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
rounds=${1:-3}
DIR=${DIR:-/tmp}
NP=${NP:-16}
MIB=${MIB:-1024}
OUT=${OUT:-/tmp/mpcrs-io-bench}
OMPI_CC=${OMPI_CC:-mpicc.openmpi}
MPICH_CC=${MPICH_CC:-mpicc.mpich}
OMPI_RUN=${OMPI_RUN:-mpirun.openmpi --oversubscribe --allow-run-as-root}
MPICH_RUN=${MPICH_RUN:-mpirun.mpich}
case "$OUT" in /|"") echo "io-bench: bad OUT" >&2; exit 2 ;; esac
[ -x "$bin/mpcrs-cc" ] || { echo "io-bench: build mpcrs first (cargo build --release)" >&2; exit 2; }
mkdir -p "$OUT"
src=$here/scripts/bench/io_write.c
"$bin/mpcrs-cc" -O2 -o "$OUT/io_write.mpcrs" "$src" || exit 1
$MPICH_CC -O2 -o "$OUT/io_write.mpich" "$src" || exit 1
$OMPI_CC -O2 -o "$OUT/io_write.ompi" "$src" || exit 1
file=$DIR/mpcrs-io-bench.$$
run() { # config pattern -> the program's line
  local cfg=$1 pat=$2 m
  case $cfg in
    threads) m=mpcrs; set -- "$bin/mpcrs-run" -n "$NP" ;;
    p2) m=mpcrs; set -- "$bin/mpcrs-run" -n "$NP" -p 2 ;;
    mpich) m=mpich; set -- $MPICH_RUN -n "$NP" ;;
    ompi) m=ompi; set -- $OMPI_RUN -n "$NP" ;;
  esac
  timeout 600 "$@" "$OUT/io_write.$m" "$file" "$MIB" "$pat" 2>>"$OUT/errors.txt" | grep '^write_s'
}
configs="threads p2 mpich ompi"
: > "$OUT/raw.txt"
for r in $(seq "$rounds"); do
  for pat in contiguous strided; do
    for c in $configs; do
      line=$(run "$c" "$pat")
      [ -n "$line" ] && echo "$pat $c $line" >> "$OUT/raw.txt" || echo "io-bench: $c $pat failed (see $OUT/errors.txt)" >&2
      rm -f "$file"
    done
  done
done
python3 - "$OUT/raw.txt" "$NP" "$MIB" <<'PY'
import sys, statistics
from collections import defaultdict
vals = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    pat, cfg = f[0], f[1]
    kv = dict(zip(f[2::2], map(float, f[3::2])))
    kv["durable_s"] = kv["write_s"] + kv["sync_s"]
    for k in ("write_s", "sync_s", "durable_s", "read_s"):
        vals[(pat, cfg, k)].append(kv[k])
np, mib = sys.argv[2], sys.argv[3]
print(f"{mib} MiB from {np} ranks; seconds, median of the rounds (ratio: mpcrs / peer, lower is better)")
print("| pattern | phase | mpcrs threads | mpcrs -p 2 | MPICH | Open MPI | threads/MPICH | threads/OMPI | -p 2/MPICH | -p 2/OMPI |")
print("|---|---|---|---|---|---|---|---|---|---|")
for pat in ("contiguous", "strided"):
    for k, name in (("write_s", "write_all"), ("sync_s", "sync"), ("durable_s", "write_all + sync"), ("read_s", "read_all")):
        m = {c: statistics.median(vals[(pat, c, k)]) for c in ("threads", "p2", "mpich", "ompi") if vals.get((pat, c, k))}
        if len(m) < 4:
            continue
        r = lambda a, p: f"{m[a] / m[p]:.2f}" if m[p] else "-"
        print(f"| {pat} | {name} | {m['threads']:.3f} | {m['p2']:.3f} | {m['mpich']:.3f} | {m['ompi']:.3f} | {r('threads','mpich')} | {r('threads','ompi')} | {r('p2','mpich')} | {r('p2','ompi')} |")
PY
