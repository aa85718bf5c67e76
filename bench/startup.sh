#!/usr/bin/env bash
# Start-up time: `orchestrate --version`, and `inspect --list-elf --list-ptx`
# of a small nvcc-built .so (one kernel, sm_90 SASS + compute_90 PTX, the
# CUDA runtime linked shared), beside cuobjdump doing the same where it is
# installed, else beside `readelf -S` of that .so (a small C tool reading the
# same ELF) and /bin/true (what starting any process costs). The commands
# run alternated in one loop, so load from other work hits all alike; each
# is spawned RUNS times (bench/spawn_times.py: posix_spawn, stdout and
# stderr to /dev/null) and the median, the fastest and the 90th percentile are printed
# in milliseconds, with the ratio of the medians. Issue 12's target: both
# orchestrate rows under cuobjdump's.
#
#   bench/startup.sh [BUILD_DIR] [RUNS]     (defaults: build, 300)
#   CUOBJDUMP=path, NVCC=path, SO=path (a .so to list instead of building one)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-300}
orc=$build/orchestrator/orchestrate
[ -x "$orc" ] || { echo "startup bench: build $orc first (cmake --build $build)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "startup bench: needs python3 (scripts/install-deps.sh)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/orc-startup-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

so=${SO:-}
if [ -z "$so" ]; then
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  [ -x "$nvcc" ] || { echo "startup bench: no nvcc to build the .so (set NVCC, or SO=FILE)" >&2; exit 2; }
  printf '__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\nvoid launch(float* x) { k<<<1, 32>>>(x); }\n' >"$work/k.cu"
  "$nvcc" -shared -cudart shared -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 \
    -gencode arch=compute_90,code=compute_90 -o "$work/libk.so" "$work/k.cu"
  so=$work/libk.so
fi

cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || true)}
[ -n "$cuobjdump" ] || [ ! -x /usr/local/cuda/bin/cuobjdump ] || cuobjdump=/usr/local/cuda/bin/cuobjdump
cmds=("$orc --version" "$orc inspect --list-elf --list-ptx $so")
if [ -n "$cuobjdump" ] && "$cuobjdump" --version >/dev/null 2>&1; then
  ref="cuobjdump $("$cuobjdump" --version | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\2/p')"
  cmds+=("$cuobjdump --version" "$cuobjdump --list-elf --list-ptx $so")
else
  ref="readelf -S (no cuobjdump here)"
  cmds+=("readelf --version" "readelf -S $so")
fi
cmds+=("/bin/true")

echo "start-up of $(basename "$orc") ($(du -h "$orc" | cut -f1) on disk), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "listed: $(basename "$so"), $(stat -c %s "$so") bytes; comparison: $ref"
# One "median fastest p90" line per command (bench/spawn_times.py).
args=()
for c in "${cmds[@]}"; do read -ra argv <<<"$c"; args+=(-- "${argv[@]}"); done
mapfile -t t < <(python3 "$root/bench/spawn_times.py" "$runs" "${args[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
cell() { read -r med best p90 <<<"$1"; printf '%8s (%s / %s)' "$med" "$best" "$p90"; }
printf '%-40s %24s %24s %7s\n' "ms, median (fastest / 90th pct) of $runs" orchestrate "${ref%% (*}" ratio
if [[ $ref == cuobjdump* ]]; then listing="--list-elf --list-ptx of the .so"; else listing="listing of the .so (readelf -S)"; fi
names=("--version" "$listing")
for k in 0 1; do
  printf '%-40s %24s %24s %7s\n' "${names[$k]}" "$(cell "${t[$k]}")" "$(cell "${t[$((k + 2))]}")" \
    "$(ratio "${t[$k]%% *}" "${t[$((k + 2))]%% *}")"
done
printf '%-40s %24s\n' "/bin/true (starting any process)" "$(cell "${t[4]}")"
echo "target: orchestrate's median under the comparison's (ratio < 1.00x)"
