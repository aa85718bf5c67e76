#!/usr/bin/env bash
# Fills build-carry/ for tests/gpu/verdicts-device.sh on the development
# machine: a stripped orchestrate with the shared libraries it needs (not
# glibc's or the compiler runtime's; nor libxml2 and ICU, which the GPU host
# (Ubuntu 24.04) has, and whose ICU data alone is 31 MB of the 64 MiB a
# device run carries), and the CUDA 11.8 fixtures built with
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
strip -o "$carry/orchestrate" "$build/orchestrator/orchestrate"
# libarchive is loaded when first needed (cmake/LazyLibrary.cmake), so ldd of
# the binary no longer names it: its chain comes from ldd of libarchive itself.
# libnettle stays behind too: the GPU host's GnuTLS (its curl) needs its own.
archive=$(ldconfig -p | awk '/libarchive\.so\.13 / {print $NF; exit}')
{ ldd "$build/orchestrator/orchestrate"; echo "x => $archive (0)"; ldd "$archive"; } | awk '$3 ~ /^\// {print $3}' |
  { grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*|libxml2|libicu[a-z]*|libnettle)\.so' || true; } |
  sort -u | while read -r lib; do cp -L "$lib" "$carry/lib/"; done
CUDART_DIR=$cudart "$root/tests/gpu/verdicts/make.sh" "$carry/fix118" "$nvcc118" cu118-
cp -L "$cudart"/libcudart.so.11.0 "$carry/fix118/"
rm -f "$carry/fix118"/*.log
du -sh "$carry"
