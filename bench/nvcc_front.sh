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
# milliseconds. Issue 27's target: the as-planned overhead under 2% of a
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
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (a - b) / b * 100 }'; }
echo "nvcc front ($(du -h "$front" | cut -f1), static) vs $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/nvcc \2/p'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs each"
printf '%-44s %12s %12s\n' "ms, median" "time" "vs nvcc"
base=$(awk -v a="$(med "${t[0]}")" -v b="$(med "${t[5]}")" 'BEGIN { printf "%.2f", (a + b) / 2 }')
printf '%-44s %12s %12s\n' "nvcc alone: one-file compile, 4 targets" "$(med "${t[0]}")" "(first)"
printf '%-44s %12s %12s\n' "nvcc alone, the same" "$(med "${t[5]}")" "(last)"
printf '%-44s %12s %12s\n' "front (verify), as planned" "$(med "${t[1]}")" "$(pct "$(med "${t[1]}")" "$base")"
printf '%-44s %12s %12s\n' "front (enforce), -arch=sm_75 rewritten" "$(med "${t[2]}")" "$(pct "$(med "${t[2]}")" "$base")"
printf '%-44s %12s %12s\n' "nvcc --version" "$(med "${t[3]}")" ""
printf '%-44s %12s %12s\n' "front --version (the front's own cost)" "$(med "${t[4]}")" \
  "$(awk -v a="$(med "${t[4]}")" -v b="$(med "${t[3]}")" 'BEGIN { printf "%+.2f ms", a - b }')"
echo "calls logged: $(wc -l <"$work/verify/calls.jsonl") (verify), $(wc -l <"$work/enforce/calls.jsonl") (enforce)"
echo "target: the as-planned overhead under 2% of the one-file compile"
