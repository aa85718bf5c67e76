#!/usr/bin/env bash
# Fills build-carry/ for tests/gpu/front-device.sh on the development
# machine: a stripped orchestrate with the shared libraries it needs
# (carry-orchestrate.sh) and the static nvcc front beside it.
#   carry-front.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: carry-front.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$root/build-carry
rm -rf "$carry"
mkdir -p "$carry/lib"
# shellcheck source=tests/gpu/carry-orchestrate.sh
. "$root/tests/gpu/carry-orchestrate.sh"
carry_orchestrate "$build" "$carry"
strip -o "$carry/orchestrate-nvcc" "$build/orchestrator/orchestrate-nvcc"
du -sh "$carry"
