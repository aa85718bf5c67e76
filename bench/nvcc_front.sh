#!/usr/bin/env bash
# What the nvcc front (orchestrate-nvcc) costs per nvcc call, beside nvcc
# alone in the same run. One .cu file (a kernel and a host main, as a
# project's file is) is compiled to an object for the plan's four targets
# (sm_80 sm_89 sm_90 compute_90):
#   nvcc alone          the real nvcc with the plan's -gencode list
#   front, as planned   the same command line through the front (verify:
#                       read, judged, logged, then exec of the real nvcc)
#   front, enforced     -arch=sm_75 through the front in enforce mode (the
#                       call rewritten to the plan's list, nvcc run and waited for)
# and, to see the front's own work without nvcc's noise, `--version` alone
# and through the front. Commands run alternated (bench/spawn_times.py), so
# load from other work hits all alike, nvcc alone both first and last in
# each round (the two medians show how much the order alone moves a
# figure; the front's rows are judged against their mean); medians in
# milliseconds, wall and CPU (user + system of the whole process tree, which
# moves far less from round to round than wall time on a machine with idle
# cores). Issue 27's target: the as-planned overhead under 2% of a
# one-file compile.
#
#   bench/nvcc_front.sh [BUILD_DIR] [RUNS]     (defaults: build, 15)
#   NVCC=path (default /usr/local/cuda/bin/nvcc)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-15}
front=$build/orchestrator/orchestrate-nvcc
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$front" ] || { echo "nvcc front bench: build $front first (cmake --build $build)" >&2; exit 2; }
[ -x "$nvcc" ] || { echo "nvcc front bench: no nvcc at $nvcc (set NVCC)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/orc-front-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Two staged fronts, as a build stages one: bin/nvcc and front.conf.
for policy in verify enforce; do
  mkdir -p "$work/$policy/bin" "$work/src"
  cp "$front" "$work/$policy/bin/nvcc"
  printf 'real_nvcc=%s\nplan=sm_80 sm_89 sm_90 compute_90\ndefault_arch=sm_75\npolicy=%s\ntier=bench\nrecipe=bench\nrecipe_where=bench:1\nsource=%s\nlog=%s\n' \
    "$nvcc" "$policy" "$work/src" "$work/$policy/calls.jsonl" >"$work/$policy/front.conf"
done
cat >"$work/k.cu" <<'CU'
#include <cstdio>
__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int main() {
  float *x, *y;
  cudaMalloc(&x, 1024 * sizeof(float));
  cudaMalloc(&y, 1024 * sizeof(float));
  saxpy<<<4, 256>>>(1024, 2.0f, x, y);
  std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
CU
plan=(-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_89,code=sm_89
      -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90)
compile=(-c "$work/k.cu" -o "$work/k.o")
mapfile -t t < <(python3 "$root/bench/spawn_times.py" "$runs" \
  -- "$nvcc" "${compile[@]}" "${plan[@]}" \
  -- "$work/verify/bin/nvcc" "${compile[@]}" "${plan[@]}" \
  -- "$work/enforce/bin/nvcc" "${compile[@]}" -arch=sm_75 \
  -- "$nvcc" --version \
  -- "$work/verify/bin/nvcc" --version \
  -- "$nvcc" "${compile[@]}" "${plan[@]}")
med() { echo "${1%% *}"; }
cpu() { echo "${1##* }"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (a - b) / b * 100 }'; }
mean() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (a + b) / 2 }'; }
echo "nvcc front ($(du -h "$front" | cut -f1), static) vs $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/nvcc \2/p'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs each"
printf '%-44s %10s %9s %10s %9s\n' "ms, median" "wall" "vs nvcc" "CPU" "vs nvcc"
base=$(mean "$(med "${t[0]}")" "$(med "${t[5]}")")
base_cpu=$(mean "$(cpu "${t[0]}")" "$(cpu "${t[5]}")")
row() {  # LABEL TIMES [JUDGED]
  if [ -n "${3:-}" ]; then
    printf '%-44s %10s %9s %10s %9s\n' "$1" "$(med "$2")" "$(pct "$(med "$2")" "$base")" "$(cpu "$2")" \
      "$(pct "$(cpu "$2")" "$base_cpu")"
  else
    printf '%-44s %10s %9s %10s %9s\n' "$1" "$(med "$2")" "" "$(cpu "$2")" ""
  fi
}
row "nvcc alone: one-file compile, 4 targets" "${t[0]}"
row "nvcc alone, the same (last in each round)" "${t[5]}"
row "front (verify), as planned" "${t[1]}" judged
row "front (enforce), -arch=sm_75 rewritten" "${t[2]}" judged
row "nvcc --version" "${t[3]}"
row "front --version" "${t[4]}"
echo "the front's own cost (--version through it, minus nvcc's): $(awk -v a="$(med "${t[4]}")" -v b="$(med "${t[3]}")" 'BEGIN { printf "%+.2f ms", a - b }') wall, $(awk -v a="$(cpu "${t[4]}")" -v b="$(cpu "${t[3]}")" 'BEGIN { printf "%+.2f ms", a - b }') CPU"
echo "calls logged: $(wc -l <"$work/verify/calls.jsonl") (verify), $(wc -l <"$work/enforce/calls.jsonl") (enforce)"
echo "target: the as-planned overhead under 2% of the one-file compile"
