#!/usr/bin/env bash
# Why util::write_all issues page-cache writes in pieces of 64 KiB
# (orchestrator/util/write.hpp): the same bytes written into a new file
# through the page cache with write(2) calls of different sizes, each size
# run ROUNDS times in alternation, with the wall and CPU seconds (dd's
# user+sys) of every run. On the 2-core Linux 6.18 / ext4 build VM, calls of
# 1 MiB and more were 6-7x slower than 16-64 KiB ones once the file passed
# about 512 MiB, nearly all of it CPU time in the kernel's copy into the
# page cache (bench/results/fetch-rounds-vm.txt).
#
#   bench/write_pieces.sh [DIR] [TOTAL_MIB] [ROUNDS]   (defaults: /tmp, 2048, 2)
set -euo pipefail
dir=${1:-${TMPDIR:-/tmp}}
total_mib=${2:-2048}
rounds=${3:-2}
file=$(mktemp "$dir/orc-write-pieces.XXXXXX")
trap 'rm -f "$file"' EXIT
printf '%-28s %10s %10s %10s\n' "write(2) size, $total_mib MiB" "wall s" "cpu s" "MB/s"
for round in $(seq "$rounds"); do
  for kib in 16 64 256 1024 4096; do
    count=$((total_mib * 1024 / kib))
    sync
    start=$(date +%s.%N)
    cpu=$( { /usr/bin/time -f '%U %S' dd if=/dev/zero of="$file" bs="${kib}K" count="$count" status=none; } 2>&1 |
      awk '{ print $1 + $2 }')
    end=$(date +%s.%N)
    rm -f "$file"
    awk -v k="$kib" -v s="$start" -v e="$end" -v c="$cpu" -v m="$total_mib" -v r="$round" \
      'BEGIN { printf "%-28s %10.2f %10.2f %10.0f\n", "bs=" k " KiB (round " r ")", e - s, c, m * 1048576 / 1e6 / (e - s) }'
    sleep 3
  done
done
