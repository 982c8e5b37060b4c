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
#
# scripts/ckpt-bench.sh --incremental [DIR] [MiB...] (default 1024 4096):
# incremental images instead. Two ranks of one process hold MiB each
# (scripts/bench/rewrite.c, a smooth field of doubles) and rewrite 5% or 30%
# of it before each of 5 checkpoints (node-local images only), taken full
# (--full-every 1), incremental, and incremental with --compress zstd:1.
# Per variant: the full image's bytes, stall and write rate, the median of
# the incremental epochs', the compute time between checkpoints, the time of
# 10 passes over all the memory after the last checkpoint (the first pays a
# fault per page written since it; the other 9 show what tracking writes costs
# a program that is not checkpointing: full images track nothing) and the
# restart time to the end of the job, less those passes, with a cold page
# cache where it can be dropped.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo cold || echo warm; }
if [ "${1:-}" = --incremental ]; then
  shift
  dir=${1:-/tmp/mpcrs-ckpt-bench}
  shift || true
  sizes=${*:-1024 4096}
  cargo build --release --workspace -q --manifest-path "$here/Cargo.toml" || exit 1
  mkdir -p "$dir"
  "$bin/mpcrs-cc" -O2 -DWITH_MPIX "$here/scripts/bench/rewrite.c" -o "$dir/rewrite" -lm || exit 1
  median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }
  printf '%-6s %-4s %-12s %-8s %-28s %-30s %-9s %-16s %s\n' MiB pct variant wall \
    "full: MB stored, stall, MB/s" "incremental (median): MB, stall, MB/s" compute "after: 1st, 9" restart
  after() { echo "$1" | sed -n 's/after: first pass \([0-9.]*\) s, 9 more \([0-9.]*\) s/\1 s, \2 s/p'; }
  for mib in $sizes; do
    for pct in 5 30; do
      # The same program without checkpoints: what each variant's wall time
      # adds to.
      s=$(date +%s.%N); out=$("$bin/mpcrs-run" -n 2 "$dir/rewrite" "$mib" "$pct" 5 10 2>&1); e=$(date +%s.%N)
      printf '%-6s %-4s %-12s %-8s %-28s %-30s %-9s %-16s %s\n' "$mib" "$pct" none "$(awk "BEGIN { printf \"%.2f s\", $e - $s }")" \
        - - "$(echo "$out" | grep -o 'compute [0-9.]* s' | awk '{ print $2 }') s" "$(after "$out")" -
      for variant in full incremental zstd; do
        case $variant in
          full) opts=(--full-every 1) ;;
          incremental) opts=(--full-every 8) ;;
          zstd) opts=(--full-every 8 --compress zstd:1) ;;
        esac
        ck=$dir/inc-$mib-$pct-$variant
        rm -rf "$ck" "$dir/local"
        s=$(date +%s.%N)
        out=$("$bin/mpcrs-run" -n 2 --keep 6 --levels 1:1 --checkpoint "$ck" --checkpoint-local "$dir/local" \
          "${opts[@]}" "$dir/rewrite" "$mib" "$pct" 5 10 2>&1)
        wall=$(awk "BEGIN { printf \"%.2f s\", $(date +%s.%N) - $s }")
        lines=$(echo "$out" | grep -o 'epoch [0-9]*: [0-9]* bytes ([0-9]* stored).*stall [0-9.]* ms, write [0-9]* MB/s' \
          | sed 's/epoch \([0-9]*\): [0-9]* bytes (\([0-9]*\) stored).*stall \([0-9.]*\) ms, write \([0-9]*\) MB.s/\1 \2 \3 \4/')
        first=$(echo "$lines" | awk '$1 == 1 { printf "%.0f MB, %s ms, %s", $2 / 1e6, $3, $4 }')
        rest=$(echo "$lines" | awk '$1 > 1')
        inc="$(echo "$rest" | awk '{ print $2 / 1e6 }' | median) MB, $(echo "$rest" | awk '{ print $3 }' | median) ms, $(echo "$rest" | awk '{ print $4 }' | median)"
        compute=$(echo "$out" | grep -o 'compute [0-9.]* s' | awk '{ print $2 }')
        cache=$(drop_caches)
        s=$(date +%s.%N); rout=$("$bin/mpcrs-run" --restart "$ck" 2>&1) || echo "restart of $ck failed"; e=$(date +%s.%N)
        # The passes after the last checkpoint are the program's, not the restart's.
        e=$(awk "BEGIN { printf \"%.6f\", $e - ($(after "$rout" | sed 's/ s, / + /; s/ s$//')) }")
        printf '%-6s %-4s %-12s %-8s %-28s %-30s %-9s %-16s %.2f s (%s)\n' "$mib" "$pct" "$variant" "$wall" "$first" \
          "$inc" "${compute} s" "$(after "$out")" "$(awk "BEGIN { print $e - $s }")" "$cache"
        rm -rf "$ck" "$dir/local"
      done
    done
  done
  exit 0
fi
dir=${1:-/tmp/mpcrs-ckpt-bench}
shift || true
sizes=${*:-256 1024 4096}
cargo build --release --workspace --examples -q --manifest-path "$here/Cargo.toml" || exit 1
mkdir -p "$dir"
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
