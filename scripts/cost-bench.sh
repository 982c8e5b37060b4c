#!/bin/bash
# What a checkpoint costs the program, not only its stall: heat.c
# (../shared/bench, -DWITH_MPIX) with 4 ranks in threads, in --process-mode
# and at -p 2, run without checkpoints and with K of them, interleaved and
# repeated; cost per checkpoint = (time with - time without) / K, next to
# dd oflag=direct of the same bytes (the blocking write). Per run: the
# heat loop's time, the job's wall time, and each checkpoint's progress
# line (stall, cost estimate, page faults, bytes copied in the stall).
# Variants: staging (the default), --checkpoint-staging off (copy-on-write
# alone); both with --full-every 1 (no write tracking) and the default 8.
# Then a restart of the last epoch to the job's end with a cold page cache
# (when this user may drop it), next to dd iflag=direct of the images.
#
# Usage: scripts/cost-bench.sh [DIR] [MiB per grid...]   (default: 64 512)
# ROUNDS (default 2), LAYOUTS (default "threads pm p2"), VARIANTS (default
# "none staged cow staged-tracked cow-tracked").
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release
dir=${1:-/tmp/mpcrs-cost-bench}
shift || true
sizes=${*:-64 512}
rounds=${ROUNDS:-2}
layouts=${LAYOUTS:-threads pm p2}
shared=${MPCRS_SHARED:-$here/../shared}
cargo build --release --workspace -q --manifest-path "$here/Cargo.toml" || exit 1
mkdir -p "$dir"
"$bin/mpcrs-cc" -O2 -DWITH_MPIX "$shared/bench/heat.c" -o "$dir/heat" -lm || exit 1
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo cold || echo warm; }
layout() {
  case $1 in
    threads) echo "-n 4" ;;
    pm) echo "-n 4 --process-mode" ;;
    p2) echo "-n 4 -p 2" ;;
  esac
}
# heat's iterations and checkpoint interval per size: 3 checkpoints in about
# 3 s of compute at 64 MiB; one in 20 iterations above 128 MiB (4.3 GB at 512
# MiB: more would only queue behind the disk).
plan() { if [ "$1" -le 128 ]; then echo "60 15"; else echo "20 10"; fi; }
summary() {
  awk '/seconds/ { for (i = 1; i < NF; i++) if ($i == "seconds") loop = $(i + 1) }
       /application stall/ {
         match($0, /stall [0-9.]+ ms/); s = substr($0, RSTART + 6, RLENGTH - 9)
         match($0, /at most [0-9.]+ ms/); c = substr($0, RSTART + 8, RLENGTH - 11)
         match($0, /\(([0-9]+) page faults/); f = substr($0, RSTART + 1, RLENGTH - 13)
         match($0, /[0-9]+ MB copied/); m = substr($0, RSTART, RLENGTH - 10)
         ck = ck sprintf(" [stall %s, +%s ms, %s faults, %s MB staged]", s, c, f, m) }
       END { printf "loop %s s%s", loop, ck }'
}
echo "# $(date -u +%F\ %H:%M) $(nproc) cores; $(uname -r)"
for mib in $sizes; do
  read -r iters every <<< "$(plan "$mib")"
  k=$(( (iters - 1) / every ))
  kib=$((mib * 1024))
  echo "== heat $kib KiB per grid (two grids per rank), 4 ranks, $iters iterations, $k checkpoints"
  for round in $(seq "$rounds"); do
    for l in $layouts; do
      for variant in ${VARIANTS:-none staged cow staged-tracked cow-tracked}; do
        case $variant in
          none) opts=() ;;
          staged) opts=(--full-every 1) ;;
          cow) opts=(--full-every 1 --checkpoint-staging off) ;;
          staged-tracked) opts=() ;;
          cow-tracked) opts=(--checkpoint-staging off) ;;
        esac
        ck=$dir/ck-$mib-$l-$variant
        rm -rf "$ck" "$dir/local"
        if [ "$variant" = none ]; then
          args=($(layout "$l") "$dir/heat" "$kib" "$iters")
        else
          args=($(layout "$l") --keep 1 --levels 1:1 --checkpoint "$ck" --checkpoint-local "$dir/local"
            "${opts[@]}" "$dir/heat" "$kib" "$iters" "$every")
        fi
        s=$(date +%s.%N)
        out=$("$bin/mpcrs-run" "${args[@]}" 2>&1)
        e=$(date +%s.%N)
        printf '%-7s %-14s round %s: wall %.2f s, %s\n' "$l" "$variant" "$round" \
          "$(awk "BEGIN { print $e - $s }")" "$(echo "$out" | summary)"
        if [ "$variant" = staged ] && [ "$round" = "$rounds" ]; then
          bytes=$(echo "$out" | grep -o 'epoch [0-9]*: [0-9]* bytes' | tail -1 | awk '{ print $3 }')
          if [ "$l" = threads ]; then
            dd if=/dev/zero of="$dir/dd.bin" bs=16M count=$((bytes / 16777216 + 1)) oflag=direct conv=fsync 2>&1 \
              | tail -1 | sed "s/^/dd oflag=direct of $bytes bytes: /"
            cache=$(drop_caches)
            s=$(date +%s.%N); dd if="$dir/dd.bin" of=/dev/null bs=16M iflag=direct 2>&1 | tail -1 \
              | sed "s/^/dd iflag=direct ($cache): /"; rm -f "$dir/dd.bin"
          fi
          cache=$(drop_caches)
          s=$(date +%s.%N); rout=$("$bin/mpcrs-run" --restart "$ck" 2>&1); e=$(date +%s.%N)
          printf '%-7s restart (%s cache) of %s bytes to the end: %.2f s; %s\n' "$l" "$cache" "$bytes" \
            "$(awk "BEGIN { print $e - $s }")" "$(echo "$rout" | grep -o 'restarted after iteration [0-9]*' | head -1)"
        fi
        rm -rf "$ck" "$dir/local"
      done
    done
  done
done
