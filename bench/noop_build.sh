#!/usr/bin/env bash
# A no-op `orchestrate build tier-new` (everything cached) beside `ninja -n`
# on a no-op tree, measured in one run, alternating so load hits both alike.
# The tier is the README's tier-new (A100, RTX 3090, RTX 4090, H100); the
# recipe compiles one kernel with the host's nvcc through the host engine,
# once before the timed runs. Each command is spawned N times, alternated,
# without a shell in between (bench/spawn_times.py: a `date +%s%N` pair adds
# two process starts, about 3 ms here, to every figure). Prints the median,
# fastest and 90th percentile for:
#   - the whole no-op build command,
#   - `orchestrate --version` (process start-up: libraries, CLI),
#   - their difference (the in-process work of a no-op build),
#   - `ninja -n` on a tree that is up to date.
#
#   bench/noop_build.sh [BUILD_DIR] [N]   (defaults: build, 51)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${2:-51}
orc=$build/orchestrator/orchestrate
[ -x "$orc" ] || { echo "noop bench: build $orc first" >&2; exit 2; }
command -v python3 >/dev/null || { echo "noop bench: needs python3 (scripts/install-deps.sh)" >&2; exit 2; }
command -v ninja >/dev/null || { echo "noop bench: ninja is not installed" >&2; exit 2; }
[ -x /usr/local/cuda/bin/nvcc ] || { echo "noop bench: no nvcc at /usr/local/cuda" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/orc-noop-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/ninja"
printf '__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n' >"$work/src/k.cu"
cat >"$work/orchestrate.yaml" <<YAML
toolkits: ["13.0"]
tiers:
  tier-new:
    gpus: ["A100", "RTX 3090", "GeForce RTX 4090", "H100"]
recipes:
  - name: kernel
    framework: nvcc
    source: {path: src}
    tiers: [tier-new]
    build: [[nvcc, -c, k.cu, -o, k.o]]
    artifacts: [k.o]
YAML
export ORCHESTRATE_CACHE_DIR="$work/store" ORCHESTRATE_KEYS_DIR="$work/keys"
export ORCHESTRATE_HOST_TOOLKITS=/usr/local/cuda
build_cmd=("$orc" build tier-new -f "$work/orchestrate.yaml" --engine host)
"${build_cmd[@]}" >"$work/first.txt" 2>"$work/first.err" || { cat "$work/first.err" >&2; exit 3; }
"${build_cmd[@]}" 2>/dev/null | grep -q ': cached' || { echo "noop bench: the second build was no hit" >&2; exit 1; }

# A ninja tree of 100 objects, built once so `ninja -n` has nothing to do.
{
  echo 'rule cp'
  echo '  command = cp $in $out'
  for i in $(seq 1 100); do echo "build o$i: cp i$i"; done
} >"$work/ninja/build.ninja"
for i in $(seq 1 100); do echo "$i" >"$work/ninja/i$i"; done
ninja -C "$work/ninja" >/dev/null

# Median, fastest and 90th percentile in ms of each command, spawned
# alternately without a shell in between (bench/spawn_times.py).
mapfile -t t < <(python3 "$root/bench/spawn_times.py" "$runs" -- "${build_cmd[@]}" -- "$orc" --version \
  -- ninja -n -C "$work/ninja")
read -r b_med b_best b_p90 <<<"${t[0]}"
read -r v_med v_best v_p90 <<<"${t[1]}"
read -r n_med n_best n_p90 <<<"${t[2]}"
printf '%-46s | %-10s | %-10s | %-10s\n' "figure ($runs runs, alternating)" "median" "fastest" "90th pct"
printf '%-46s | %7s ms | %7s ms | %7s ms\n' "orchestrate build tier-new (all cached)" "$b_med" "$b_best" "$b_p90"
printf '%-46s | %7s ms | %7s ms | %7s ms\n' "orchestrate --version (start-up)" "$v_med" "$v_best" "$v_p90"
printf '%-46s | %7s ms | %7s ms |\n' "in-process part (build - --version)" \
  "$(awk -v a="$b_med" -v b="$v_med" 'BEGIN { printf "%.2f", a - b }')" \
  "$(awk -v a="$b_best" -v b="$v_best" 'BEGIN { printf "%.2f", a - b }')"
printf '%-46s | %7s ms | %7s ms | %7s ms\n' "ninja -n, 100 objects up to date" "$n_med" "$n_best" "$n_p90"
printf 'target: the no-op build at most 10 ms\n'
