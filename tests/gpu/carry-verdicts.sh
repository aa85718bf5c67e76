#!/usr/bin/env bash
# Fills build-carry/ for tests/gpu/verdicts-device.sh on the development
# machine: a stripped orchestrate with the shared libraries it needs
# (carry-orchestrate.sh), and the CUDA 11.8 fixtures built with
# Debian's nvcc 11.8, next to Debian's libcudart.so.11.0 (package
# libcudart11.0, which the -cudart shared fixture needs at run time).
#   carry-verdicts.sh BUILD_DIR NVCC_11_8 CUDART_11_DIR
set -euo pipefail
build=${1:?usage: carry-verdicts.sh BUILD_DIR NVCC_11_8 CUDART_11_DIR}
nvcc118=${2:?}
cudart=${3:?}
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$root/build-carry
rm -rf "$carry"
mkdir -p "$carry/lib" "$carry/fix118"
# shellcheck source=tests/gpu/carry-orchestrate.sh
. "$root/tests/gpu/carry-orchestrate.sh"
carry_orchestrate "$build" "$carry"
CUDART_DIR=$cudart "$root/tests/gpu/verdicts/make.sh" "$carry/fix118" "$nvcc118" cu118-
cp -L "$cudart"/libcudart.so.11.0 "$carry/fix118/"
rm -f "$carry/fix118"/*.log
du -sh "$carry"
