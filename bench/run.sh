#!/usr/bin/env bash
# Orchestrate's benchmarks: each figure measured in this run beside what a
# user would use instead, one row per figure:
#
#   figure | orchestrate | comparison | ratio | target
#
# Builds nothing: it runs $BUILD_DIR/orchestrator/orchestrate (default
# build/, see README). Times are the best of $BENCH_RUNS runs (default 5)
# with the page cache warm; hyperfine does the timing when installed,
# otherwise a date +%s%N loop does.
#
# Adding a benchmark: write a bench_<name> function that calls `row` once per
# figure, and append its name to k_benches at the bottom.
#
#   bench/run.sh                  every benchmark
#   bench/run.sh inspect_listing  only those named
set -euo pipefail

k_root=$(cd "$(dirname "$0")/.." && pwd)
k_build=${BUILD_DIR:-$k_root/build}
[[ $k_build = /* ]] || k_build=$k_root/$k_build
k_orc=$k_build/orchestrator/orchestrate
k_runs=${BENCH_RUNS:-5}
# The library issue 3 names: 541 MB, 5449 cubins and 288 PTX.
k_cublaslt=${BENCH_CUBLASLT:-/usr/local/cuda/lib64/libcublasLt.so.13}

# cuobjdump 13.0 is not installed on the build machines. Its figures were
# measured on the GPU host (device tool, NVIDIA H200, 16 cores, CUDA 13.0,
# cuobjdump 13.0.85) on 2026-11-29, best of 3 over the same 541,595,600-byte
# libcublasLt.so.13: --list-elf 2.106 s, --list-ptx 2.030 s; its stdout had
# the same sha256 as ours (615e67039e35190f..., f90c0ed843fd74c3...).
# Issue 3 quotes 17.5 s and 11.9 s for "these machines"; we use the faster,
# measured H200 figures, which make the ratio harder to meet. When a
# cuobjdump 13 is on PATH it is measured instead.
k_cuobjdump_elf_s=2.106
k_cuobjdump_ptx_s=2.030
k_cuobjdump_source="cuobjdump 13.0.85, H200 host, best of 3"

die() { echo "bench: $*" >&2; exit 2; }

row() {  # figure orchestrate comparison ratio target
  printf '%-44s | %-14s | %-52s | %-9s | %s\n' "$1" "$2" "$3" "$4" "$5"
}

# Best wall-clock seconds of $k_runs runs of the command; its output and
# exit status are ignored (cuobjdump exits 255 on some inputs).
best_wall() {
  if command -v hyperfine >/dev/null 2>&1; then
    local csv
    csv=$(mktemp)
    hyperfine --runs "$k_runs" --warmup 1 --style none --ignore-failure --export-csv "$csv" \
      -- "$(printf '%q ' "$@")" >/dev/null 2>&1
    # The "min" column, found by name (hyperfine 1.12 added "median" before it).
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "min") c = i } NR == 2 { printf "%.4f", $c }' "$csv"
    rm -f "$csv"
    return
  fi
  local best="" start end
  "$@" >/dev/null 2>&1 || true  # warm-up
  for ((i = 0; i < k_runs; i++)); do
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    if [[ -z $best || $((end - start)) -lt $best ]]; then best=$((end - start)); fi
  done
  awk -v ns="$best" 'BEGIN { printf "%.4f", ns / 1e9 }'
}

# Best wall-clock seconds of two commands given as strings, printed as
# "A B". Without hyperfine the runs alternate (A B A B ...), so a burst of
# load from other processes on a shared machine hits both sides alike.
best_wall_pair() {
  local a=$1 b=$2
  if command -v hyperfine >/dev/null 2>&1; then
    echo "$(best_wall bash -c "$a") $(best_wall bash -c "$b")"
    return
  fi
  local best_a="" best_b="" start end
  bash -c "$a" >/dev/null 2>&1 || true
  bash -c "$b" >/dev/null 2>&1 || true
  for ((i = 0; i < k_runs; i++)); do
    start=$(date +%s%N); bash -c "$a" >/dev/null 2>&1 || true; end=$(date +%s%N)
    if [[ -z $best_a || $((end - start)) -lt $best_a ]]; then best_a=$((end - start)); fi
    start=$(date +%s%N); bash -c "$b" >/dev/null 2>&1 || true; end=$(date +%s%N)
    if [[ -z $best_b || $((end - start)) -lt $best_b ]]; then best_b=$((end - start)); fi
  done
  awk -v a="$best_a" -v b="$best_b" 'BEGIN { printf "%.4f %.4f\n", a / 1e9, b / 1e9 }'
}

# Peak resident set size of the command, in KiB.
peak_rss_kib() {
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f '%M' -o /dev/stderr "$@" 2>&1 >/dev/null | tail -n 1
  else
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
  fi
}

secs() { awk -v s="$1" 'BEGIN { if (s < 1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else { r = a / b; printf (r >= 100 ? "%.0fx" : "%.2fx"), r } }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

warm_cache() { cat "$1" >/dev/null; }

have_cuobjdump13() {
  command -v cuobjdump >/dev/null 2>&1 && cuobjdump --version 2>/dev/null | grep -q 'release 13\.'
}

# (a) The two listings against cuobjdump's, and together (target: 100x).
bench_inspect_listing() {
  [[ -f $k_cublaslt ]] || { row "inspect --list-elf/--list-ptx" "-" "skipped: $k_cublaslt missing" "-" "-"; return; }
  warm_cache "$k_cublaslt"
  local lines elf ptx ref_elf ref_ptx source
  lines=$("$k_orc" inspect --list-elf --list-ptx "$k_cublaslt" | wc -l)
  elf=$(best_wall "$k_orc" inspect --list-elf "$k_cublaslt")
  ptx=$(best_wall "$k_orc" inspect --list-ptx "$k_cublaslt")
  if have_cuobjdump13; then
    ref_elf=$(best_wall cuobjdump --list-elf "$k_cublaslt")
    ref_ptx=$(best_wall cuobjdump --list-ptx "$k_cublaslt")
    source="cuobjdump $(cuobjdump --version | grep -o 'V[0-9.]*'), measured here"
  else
    ref_elf=$k_cuobjdump_elf_s
    ref_ptx=$k_cuobjdump_ptx_s
    source=$k_cuobjdump_source
  fi
  local both ref_both
  both=$(awk -v a="$elf" -v b="$ptx" 'BEGIN { print a + b }')
  ref_both=$(awk -v a="$ref_elf" -v b="$ref_ptx" 'BEGIN { print a + b }')
  row "--list-elf libcublasLt.so.13 (best of $k_runs)" "$(secs "$elf")" "$(secs "$ref_elf"): $source" \
    "$(ratio "$ref_elf" "$elf")" "faster"
  row "--list-ptx libcublasLt.so.13 (best of $k_runs)" "$(secs "$ptx")" "$(secs "$ref_ptx"): $source" \
    "$(ratio "$ref_ptx" "$ptx")" "faster"
  row "both listings together ($lines lines)" "$(secs "$both")" "$(secs "$ref_both"): $source" \
    "$(ratio "$ref_both" "$both")" ">= 100x faster"
}

# (b) The report with its SHA-256 against hashing alone (target: 1.2x).
bench_inspect_sha256() {
  [[ -f $k_cublaslt ]] || { row "inspect --json vs openssl dgst" "-" "skipped: $k_cublaslt missing" "-" "-"; return; }
  command -v openssl >/dev/null 2>&1 || { row "inspect --json vs openssl dgst" "-" "skipped: no openssl" "-" "-"; return; }
  warm_cache "$k_cublaslt"
  local ours theirs orc_digest ssl_digest note=""
  orc_digest=$("$k_orc" inspect --json "$k_cublaslt" | grep -o '"sha256": "[0-9a-f]*"' | head -n 1 | grep -o '[0-9a-f]\{64\}')
  ssl_digest=$(openssl dgst -sha256 "$k_cublaslt" | grep -o '[0-9a-f]\{64\}$')
  [[ $orc_digest == "$ssl_digest" ]] || note=" DIGEST MISMATCH"
  read -r ours theirs < <(best_wall_pair "$(printf '%q ' "$k_orc" inspect --json "$k_cublaslt")" \
    "$(printf '%q ' openssl dgst -sha256 "$k_cublaslt")")
  row "inspect --json (sha256 + report) (best of $k_runs)" "$(secs "$ours")" \
    "$(secs "$theirs"): openssl dgst -sha256 alone$note" "$(ratio "$ours" "$theirs")" "<= 1.2x"
}

# (c) Peak memory: the listing maps the file and touches headers only; the
# report hashes every byte, so its file-backed pages all count.
bench_inspect_rss() {
  [[ -f $k_cublaslt ]] || { row "peak RSS" "-" "skipped: $k_cublaslt missing" "-" "-"; return; }
  warm_cache "$k_cublaslt"
  local size list json
  size=$(($(stat -c %s "$k_cublaslt") / 1024))
  list=$(peak_rss_kib "$k_orc" inspect --list-elf --list-ptx "$k_cublaslt")
  json=$(peak_rss_kib "$k_orc" inspect --json "$k_cublaslt")
  row "peak RSS, --list-elf --list-ptx" "$(mib "$list")" "file size $(mib "$size") (mapped, not read)" \
    "$(ratio "$list" "$size")" "< file size"
  row "peak RSS, --json (hashes every byte)" "$(mib "$json")" "file size $(mib "$size") (page cache)" \
    "$(ratio "$json" "$size")" "-"
}

# (d) A build that is already in the store: plan, source tree hash, key and
# one store lookup, no engine (target: < 50 ms). The README's main job:
# `build tier-new` of recipes/orchestrate.yaml on the host engine with the
# toolkits of ./toolchains (scripts/install-cuda-toolkits.sh); without them,
# tier-next, which the host's CUDA 13.0 serves. The first build fills a
# temporary ORCHESTRATE_CACHE_DIR and is the comparison.
bench_build_cache() {
  local tier=tier-next
  [[ -x $k_root/toolchains/cuda-12.4/bin/nvcc ]] && tier=tier-new
  local tmp
  tmp=$(mktemp -d)
  local -a env=(ORCHESTRATE_CACHE_DIR="$tmp/cache" ORCHESTRATE_HOST_TOOLKITS="$k_root/toolchains")
  local -a cmd=("$k_orc" build "$tier" --engine host -f "$k_root/recipes/orchestrate.yaml")
  local start end first hit
  start=$(date +%s%N)
  if ! env "${env[@]}" "${cmd[@]}" >"$tmp/first.log" 2>&1; then
    row "build cache hit, $tier" "-" "skipped: the first build failed ($(tail -n 1 "$tmp/first.log"))" "-" "-"
    rm -rf "$tmp"
    return
  fi
  end=$(date +%s%N)
  first=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.4f", ns / 1e9 }')
  hit=$(best_wall env "${env[@]}" "${cmd[@]}")
  row "build cache hit, $tier" "$(secs "$hit")" "first build: $(secs "$first")" "$(ratio "$first" "$hit")" "< 50 ms"
  rm -rf "$tmp"
}

# (e) plan on configurations far larger than any cluster's (issue 11: 125,000
# tiers took 33 s, quadratic): 12,500, 50,000 and 125,000 tiers of one recipe
# that uses them all (bench/tiers_config.sh). Time grows with the tiers, so
# the comparison is the smallest run scaled by size: linear is ratio ~1.
bench_plan_tiers() {
  local tmp n base="" t
  tmp=$(mktemp -d)
  for n in 12500 50000 125000; do
    "$k_root/bench/tiers_config.sh" "$n" >"$tmp/orchestrate.yaml"
    t=$(best_wall "$k_orc" plan --json -f "$tmp/orchestrate.yaml")
    if [[ -z $base ]]; then
      base=$t
      row "plan --json, $n tiers ($(du -k "$tmp/orchestrate.yaml" | cut -f1) KiB)" "$(secs "$t")" "-" "-" "-"
      continue
    fi
    local linear
    linear=$(awk -v b="$base" -v n="$n" 'BEGIN { print b * n / 12500 }')
    row "plan --json, $n tiers ($(du -k "$tmp/orchestrate.yaml" | cut -f1) KiB)" "$(secs "$t")" \
      "$(secs "$linear"): 12,500 tiers' time x $((n / 12500))" "$(ratio "$t" "$linear")" "<= 1.5x (linear)"
  done
  rm -rf "$tmp"
}

k_benches=(inspect_listing inspect_sha256 inspect_rss build_cache plan_tiers)

main() {
  [[ -x $k_orc ]] || die "$k_orc not found: build first (cmake -S . -B build -G Ninja && ninja -C build orchestrate)"
  local selected=("$@")
  [[ ${#selected[@]} -gt 0 ]] || selected=("${k_benches[@]}")
  for b in "${selected[@]}"; do
    declare -F "bench_$b" >/dev/null || die "no benchmark '$b' (known: ${k_benches[*]})"
  done
  local timer="date +%s%N loop"
  command -v hyperfine >/dev/null 2>&1 && timer=$(hyperfine --version)
  echo "# orchestrate benchmarks: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, timer: $timer, best of $k_runs"
  row "figure" "orchestrate" "comparison" "ratio" "target"
  for b in "${selected[@]}"; do "bench_$b"; done
}

main "$@"
