#!/usr/bin/env bash
# What one artifact set of real CUDA libraries costs in the local store and
# how long `orchestrate push` of it takes to a local docker-registry, with the
# binaries of BUILD_DIR: the set is stored as a build stores it
# (bench_fetch_seed), then pushed ROUNDS times to a new repository each time
# (every blob uploaded) and once more to the last one (nothing uploaded:
# HEAD first). With OLD_BUILD_DIR, the set is stored by that build's seed
# instead (a store made by an older orchestrate) and BUILD_DIR's `cache gc`
# runs on it first. Then a fetch from the store and a `cache verify`. Prints
# bytes and seconds; issue 11's case was 602 MB of store for a 301 MB set.
#
#   bench/store_once.sh [BUILD_DIR] [ROUNDS] [OLD_BUILD_DIR]   (defaults: build, 3, none)
#   the set: $ORC_BENCH_LIBS, else libcurand, libcusparse and libcudart of /usr/local/cuda
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-3}
old=${3:-}
orc=$build/orchestrator/orchestrate
seed=$build/tests/integration/bench_fetch_seed
[ -n "$old" ] && seed=$(cd "$old" && pwd)/tests/integration/bench_fetch_seed
for f in "$orc" "$seed"; do
  [ -x "$f" ] || { echo "store bench: build $f first" >&2; exit 2; }
done
cuda=/usr/local/cuda/lib64
read -r -a libs <<<"${ORC_BENCH_LIBS:-$cuda/libcurand.so.10 $cuda/libcusparse.so.12 $cuda/libcudart.so.13}"

work=$(mktemp -d "${TMPDIR:-/tmp}/orc-store-bench.XXXXXX")
cleanup() { "$root/scripts/stop-registry.sh" "$work/registry" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"$root/scripts/start-registry.sh" "$work/registry" >/dev/null
port=$(cat "$work/registry/port")
export ORCHESTRATE_CACHE_DIR="$work/store" ORCHESTRATE_KEYS_DIR="$work/keys" ORCHESTRATE_CONFIG="$work/orchestrate.yaml"
cat >"$ORCHESTRATE_CONFIG" <<YAML
tiers:
  tier-bench:
    gpus: ["H100"]
recipes:
  - name: cuda-libs
    framework: nvcc
    source: {path: .}
    tiers: [tier-bench]
YAML
"$orc" key generate >/dev/null
mkdir -p "$work/in"
for lib in "${libs[@]}"; do cp -L "$lib" "$work/in/"; done

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
blob_bytes() { du -sb --apparent-size "$ORCHESTRATE_CACHE_DIR/blobs.v1" | cut -f1; }

set_bytes=$(du -cb "$work"/in/* | tail -1 | cut -f1)
start=$(now)
"$seed" "$ORCHESTRATE_CACHE_DIR" "$ORCHESTRATE_KEYS_DIR" cuda-libs tier-bench "$work"/in/* >/dev/null
echo "set: ${#libs[@]} files, $set_bytes bytes; stored in $(elapsed "$start") s by $seed"
echo "store after storing: $(blob_bytes) bytes of blobs"
if [ -n "$old" ]; then
  start=$(now)
  "$orc" cache gc
  echo "cache gc: $(elapsed "$start") s; store: $(blob_bytes) bytes of blobs"
fi
for round in $(seq "$rounds"); do
  sync
  start=$(now)
  ORCHESTRATE_REMOTE="http://127.0.0.1:$port/bench/r$round" "$orc" push cuda-libs --tier tier-bench >/dev/null
  echo "push $round (every blob uploaded): $(elapsed "$start") s"
done
start=$(now)
ORCHESTRATE_REMOTE="http://127.0.0.1:$port/bench/r$rounds" "$orc" push cuda-libs --tier tier-bench >/dev/null
echo "push again (nothing uploaded): $(elapsed "$start") s"
echo "store after pushing: $(blob_bytes) bytes of blobs"
sync
start=$(now)
"$orc" fetch cuda-libs --tier tier-bench -o "$work/out" >/dev/null
echo "fetch from the store: $(elapsed "$start") s"
start=$(now)
"$orc" cache verify >/dev/null
echo "cache verify: $(elapsed "$start") s"
layer=$(curl -sf "http://127.0.0.1:$port/v2/bench/r1/manifests/cuda-libs--tier-bench" \
  -H 'Accept: application/vnd.oci.image.manifest.v1+json' | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["digest"])')
echo "layer: $layer"
