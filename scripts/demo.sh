#!/usr/bin/env bash
# Demo: builds mpcrs and runs example jobs with many ranks per process on the
# machine's cores: a 2-D heat diffusion at 64 ranks (its checksum is the one Open
# MPI and MPICH print for ../shared/bench/heat.c), ping-pong between two ranks,
# allreduce at 64 ranks, the unmodified C heat.c built with mpcrs-cc, and heat.c
# taking checkpoints (MPIX_Checkpoint) that mpcrs-ckpt lists and verifies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-system.sh
cargo build --release --workspace --bins --examples
cargo build --release -p mpcrs-abi   # libmpi.so, for C programs
R=target/release
export PATH="$PWD/$R:$PATH"

echo "== heat diffusion, 64 ranks as user-level threads in one process"
mpcrs-run -n 64 $R/examples/heat 256 200
echo
echo "== ping-pong between two ranks on two workers (one-way latency, bandwidth)"
mpcrs-run -n 2 $R/examples/pingpong 4194304 | awk 'NR==1 || $1==0 || $1==4194304'
echo
echo "== allreduce of one double at 64 ranks (ranks count us_per_call)"
mpcrs-run -n 64 $R/examples/allreduce 1 2000
echo
echo "== the C benchmark heat.c, unmodified, built with mpcrs-cc: 64 ranks as threads"
SHARED=${MPCRS_SHARED:-../shared}
mkdir -p target/demo
mpcrs-cc -O2 -o target/demo/heat "$SHARED/bench/heat.c" -lm 2>/dev/null
mpcrs-run -n 64 target/demo/heat 256 200
echo
echo "== checkpoint, crash, restart: heat.c calling MPIX_Checkpoint every 1000 iterations, 16 ranks"
mpcrs-cc -O2 -DWITH_MPIX -o target/demo/heat-mpix "$SHARED/bench/heat.c" -lm 2>/dev/null
rm -rf target/demo/ckpt
echo "-- uninterrupted:"
mpcrs-run -n 16 target/demo/heat-mpix 256 8000 | grep checksum
echo "-- with checkpoints, killed with SIGKILL once an epoch is committed:"
mpcrs-run -n 16 --checkpoint target/demo/ckpt target/demo/heat-mpix 256 8000 1000 &
launcher=$!
until [ -e target/demo/ckpt/latest ]; do sleep 0.05; done
pkill -KILL -P "$launcher"
wait "$launcher" || true
mpcrs-ckpt ls target/demo/ckpt
mpcrs-ckpt verify target/demo/ckpt
echo "-- restarted from the latest epoch (same checksum as uninterrupted):"
mpcrs-run --restart target/demo/ckpt | grep -E "restarted|checksum"
