#!/usr/bin/env bash
# Start-up time: `orchestrate --version`, and `inspect --list-elf --list-ptx`
# of a small nvcc-built .so (one kernel, sm_90 SASS + compute_90 PTX, the
# CUDA runtime linked shared), beside cuobjdump doing the same where it is
# installed, else beside `readelf -S` of that .so (a small C tool reading the
# same ELF) and /bin/true (what starting any process costs). The commands
# run alternated in one loop, so load from other work hits all alike; each
# is spawned RUNS times (posix_spawn from python3, stdout and stderr to
# /dev/null) and the median, the fastest and the 90th percentile are printed
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
python3 - "$runs" "$ref" "${cmds[@]}" <<'PY'
import os, statistics, sys, time
runs, ref, cmds = int(sys.argv[1]), sys.argv[2], [c.split() for c in sys.argv[3:]]
null = os.open(os.devnull, os.O_WRONLY)
actions = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
times = [[] for _ in cmds]
for i in range(runs + 3):  # the first three rounds warm the page cache
    for k, argv in enumerate(cmds):
        start = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
        os.waitpid(pid, 0)
        if i >= 3:
            times[k].append((time.perf_counter_ns() - start) / 1e6)
def stats(t):
    t = sorted(t)
    return statistics.median(t), t[0], t[int(len(t) * 0.9)]
rows = [("--version", 0, 2), ("--list-elf --list-ptx of the .so" if "cuobjdump" in ref else "listing of the .so (readelf -S)", 1, 3)]
print(f"{'ms, median (fastest / 90th pct) of ' + str(runs):<40} {'orchestrate':>24} {ref.split(' (')[0]:>24} {'ratio':>7}")
for name, ours, theirs in rows:
    o, t = stats(times[ours]), stats(times[theirs])
    print(f"{name:<40} {o[0]:>8.2f} ({o[1]:.2f} / {o[2]:.2f}) {t[0]:>8.2f} ({t[1]:.2f} / {t[2]:.2f}) {o[0] / t[0]:>6.2f}x")
b = stats(times[4])
print(f"{'/bin/true (starting any process)':<40} {b[0]:>8.2f} ({b[1]:.2f} / {b[2]:.2f})")
print("target: orchestrate's median under the comparison's (ratio < 1.00x)")
PY
