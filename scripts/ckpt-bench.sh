#!/bin/bash
# Checkpoint/restart figures for given amounts of rank memory (MiB, default
# 256 1024 4096), all in one session and one directory:
#   - application stall and image write rate of three checkpoints (mpcrs-run's
#     progress lines), next to dd writing as many bytes with fsync;
#   - restart time (mpcrs-run --restart, the job resuming and reading all its
#     memory back) next to reading the image files, both with a cold page cache
#     when this user may drop it;
#   - CRIU dumping and restoring a process of the same size, if criu works here.
# Usage: scripts/ckpt-bench.sh [DIR] [MiB...]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
dir=${1:-/tmp/mpcrs-ckpt-bench}
shift || true
sizes=${*:-256 1024 4096}
cargo build --release --workspace --examples -q --manifest-path "$here/Cargo.toml" || exit 1
mkdir -p "$dir"
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo cold || echo warm; }
for mib in $sizes; do
  ck=$dir/ckpt-$mib
  rm -rf "$ck"
  echo "== $mib MiB of rank memory (4 ranks, one process)"
  "$bin/mpcrs-run" -n 4 --keep 1 --checkpoint "$ck" "$bin/examples/ckpt_memory" "$mib" 3 2>&1 \
    | grep -o 'epoch [0-9]*: .*'
  # dd through the page cache (as most programs write) and with direct I/O (as
  # the image writer does where the file system takes it).
  dd if=/dev/zero of="$dir/dd.bin" bs=16M count=$((mib / 16)) conv=fsync 2>&1 | tail -1 | sed 's/^/dd: /'
  rm -f "$dir/dd.bin"
  dd if=/dev/zero of="$dir/dd.bin" bs=16M count=$((mib / 16)) oflag=direct conv=fsync 2>&1 | tail -1 \
    | sed 's/^/dd oflag=direct: /'
  rm -f "$dir/dd.bin"
  img=$(ls "$ck"/epoch-*/process-0.img | tail -1)
  # Alternately, three times each: this machine's disk is noisy.
  for round in 1 2 3; do
    cache=$(drop_caches)
    s=$(date +%s.%N); cat "$img" > /dev/null; e=$(date +%s.%N)
    printf 'read the image (%s cache): %.3f s\n' "$cache" "$(awk "BEGIN { print $e - $s }")"
    cache=$(drop_caches)
    s=$(date +%s.%N); out=$("$bin/mpcrs-run" --restart "$ck" 2>&1); e=$(date +%s.%N)
    printf 'restart (%s cache), to the end of the job: %.3f s; %s\n' "$cache" "$(awk "BEGIN { print $e - $s }")" \
      "$(echo "$out" | grep -o 'restarted: .*')"
  done
  if command -v criu > /dev/null; then
    python3 -c "import os,time; b=bytearray(os.urandom($mib*1048576)); open('$dir/ready','w').close(); time.sleep(600)" &
    pid=$!
    while [ ! -e "$dir/ready" ]; do sleep 0.1; done; rm -f "$dir/ready"
    rm -rf "$dir/criu"; mkdir -p "$dir/criu"
    s=$(date +%s.%N)
    if criu dump -t $pid -D "$dir/criu" --shell-job -o dump.log > /dev/null 2>&1; then
      e=$(date +%s.%N); sync
      printf 'criu dump: %.3f s (process frozen throughout)\n' "$(awk "BEGIN { print $e - $s }")"
      drop_caches > /dev/null
      s=$(date +%s.%N)
      criu restore -D "$dir/criu" --shell-job -d -o restore.log > /dev/null 2>&1 \
        && { e=$(date +%s.%N); printf 'criu restore (%s cache): %.3f s\n' cold "$(awk "BEGIN { print $e - $s }")"; } \
        || echo "criu restore failed: $(tail -1 "$dir/criu/restore.log")"
      pkill -f "time.sleep(600)" 2>/dev/null
    else
      echo "criu dump failed here: $(grep -i error "$dir/criu/dump.log" | tail -1)"
      kill $pid
    fi
    wait 2>/dev/null
  fi
done
