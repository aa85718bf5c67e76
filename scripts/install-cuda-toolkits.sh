#!/usr/bin/env bash
# Unpacks Debian's non-free NVIDIA toolkits into PREFIX/cuda-X.Y so the nvcc
# integration tests (tests/integration) can compare the toolkit table with
# real compilers:
#   cuda-11.8  bookworm nvidia-cuda-toolkit 11.8.89, plus g++-11 from bookworm
#              (CUDA 11.8 takes GCC <= 11; the host has GCC 12)
#   cuda-12.4  trixie   nvidia-cuda-toolkit 12.4.131 (takes GCC <= 13; the
#              host's g++-12 serves)
#
# Usage: scripts/install-cuda-toolkits.sh [PREFIX]   (default <repo>/toolchains)
#
# It changes nothing outside PREFIX: apt runs with a private state directory
# and a private sources list (mirror read from the host's debian.sources), the
# packages are fetched with `apt-get download` and unpacked with `dpkg-deb -x`;
# no dpkg -i, no edit under /etc/apt. A toolkit already unpacked (same tree
# layout, nvcc reporting its release) is skipped. Exit status: 0 done, 2 usage
# or local error, 3 the Debian mirror could not be read.
#
# Each PREFIX/cuda-X.Y looks like a standard toolkit (bin/nvcc, include/,
# lib64/, nvvm/libdevice), needs no environment, can be moved, and serves as
# CMAKE_CUDA_COMPILER=PREFIX/cuda-X.Y/bin/nvcc.
#
# Why this package set: a toolkit is complete when an ordinary project builds
# with it (orchestrate refuses toolkits that are not; `orchestrate doctor`
# lists what each lacks):
#   - nvcc -c/-cubin needs nvcc, cicc, ptxas, fatbinary, cudafe++ and
#     libdevice (all in nvidia-cuda-toolkit; cicc embeds NVVM, so libnvvm4 is
#     not needed);
#   - the CUDA headers and what a linking nvcc uses (libcudart_static.a,
#     libcudadevrt.a) are only in nvidia-cuda-dev, a 0.8-0.9 GB package of
#     which we keep /usr/include (13 MB), the static cudart and the
#     development links libcudart.so, libcublas.so, libcublasLt.so;
#   - CMake's FindCUDAToolkit wants libcudart.so (CUDA_CUDART): its library is
#     libcudart11.0 / libcudart12 (0.2 MB);
#   - cooperative_groups and anything using <cuda/std/...>, CUB or Thrust
#     need libcu++-dev, libcub-dev, libthrust-dev (headers, 1.5 MB; Debian
#     ships them apart from nvidia-cuda-dev);
#   - cuBLAS, the library projects link most (CUDA::cublas): libcublas11 +
#     libcublaslt11 / libcublas12 + libcublaslt12 (0.5-0.65 GB unpacked, most
#     of the tree). The other libraries nvidia-cuda-dev depends on (cuFFT,
#     cuRAND, cuSPARSE, cuSOLVER, NPP, nvJPEG, NVRTC: 1-2 GB more) are left
#     out; a recipe that declares `needs: [cufft]` is refused with these
#     toolkits and told which toolkit has it.
set -euo pipefail

readonly k_sources=/etc/apt/sources.list.d/debian.sources
readonly k_keyring=/usr/share/keyrings/debian-archive-keyring.gpg
readonly k_lib=usr/lib/x86_64-linux-gnu
# Bumped when the unpacked tree changes shape; an older tree is reinstalled.
readonly k_layout=3
# What nvidia-cuda-dev contributes: headers, what `nvcc -o` links, and the
# development links of the shared libraries kept (libcudart.so -> .so.12).
readonly k_dev_members=(./usr/include "./$k_lib/libcudart_static.a" "./$k_lib/libcudadevrt.a"
  "./$k_lib/libculibos.a" "./$k_lib/stubs/libcuda.so" "./$k_lib/libcudart.so" "./$k_lib/libcublas.so"
  "./$k_lib/libcublasLt.so")
# Header-only packages (libcu++, CUB, Thrust): only their /usr/include.
readonly k_header_packages=(libcu++-dev libcub-dev libthrust-dev)
readonly k_gcc11_packages=(g++-11 gcc-11 cpp-11 libstdc++-11-dev libgcc-11-dev gcc-11-base)

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(dirname "$script_dir")

die() {
  local code=$1
  shift
  echo "install-cuda-toolkits: error: $*" >&2
  exit "$code"
}
say() { echo "install-cuda-toolkits: $*"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

case ${1:-} in
  -h | --help)
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
    exit 0
    ;;
esac
[[ $# -le 1 ]] || die 2 "usage: $0 [PREFIX]"
prefix=${1:-$repo_root/toolchains}
mkdir -p "$prefix" || die 2 "cannot create $prefix"
prefix=$(cd "$prefix" && pwd -P)

for tool in apt-get dpkg-deb tar awk; do
  command -v "$tool" >/dev/null || die 2 "$tool not found (this script needs a Debian host)"
done
[[ -r $k_sources ]] || die 3 "cannot read the Debian mirror: $k_sources is missing"
mirror=$(awk '/^URIs:/ { print $2; exit }' "$k_sources")
[[ -n $mirror ]] || die 3 "cannot read the Debian mirror: no URIs: line in $k_sources"

work=""
cleanup() { [[ -z $work ]] || rm -rf "$work"; }
trap cleanup EXIT

# apt with a private configuration: SUITE COMPONENTS, then apt-get arguments.
private_apt() {
  local state=$work/apt
  apt-get -q \
    -o Dir::Etc::SourceList="$state/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State="$state/state" -o Dir::State::status="$state/state/status" \
    -o Dir::Cache="$state/cache" -o APT::Sandbox::User=root "$@"
}

# The debs of SUITE/COMPONENTS named in the remaining arguments, into $work/debs.
fetch() {
  local suite=$1 components=$2
  shift 2
  local state=$work/apt
  mkdir -p "$state/state/lists/partial" "$state/cache/archives/partial" "$work/debs"
  : >"$state/state/status"
  echo "deb [signed-by=$k_keyring] $mirror $suite $components" >"$state/sources.list"
  if ! private_apt update --error-on=any >"$work/update.log" 2>&1; then
    sed 's/^/  /' "$work/update.log" >&2
    die 3 "the Debian mirror $mirror did not serve '$suite $components' (apt-get update failed, log above)"
  fi
  if ! (cd "$work/debs" && private_apt download "$@") >"$work/download.log" 2>&1; then
    sed 's/^/  /' "$work/download.log" >&2
    die 3 "could not download $* from $mirror $suite (log above)"
  fi
}

deb_of() { compgen -G "$work/debs/${1}_*.deb" | head -n 1; }
deb_version() { dpkg-deb -f "$1" Version; }

# nvcc.profile with every path relative to nvcc's own directory, so the tree
# works wherever PREFIX is (and keeps working if it is moved).
write_profile() {
  local bin=$1
  rm -f "$bin/nvcc.profile"
  cat >"$bin/nvcc.profile" <<EOF
# Written by scripts/install-cuda-toolkits.sh: Debian's profile with its /usr
# paths replaced by paths inside this tree (_HERE_ = usr/lib/nvidia-cuda-toolkit/bin).
NVVMIR_LIBRARY_DIR = \$(_HERE_)/../libdevice
PATH += \$(_HERE_):\$(_HERE_)/../../../bin:
INCLUDES += "-I\$(_HERE_)/../../../include" \$(_SPACE_)
LIBRARIES =+ \$(_SPACE_) -L\$(_HERE_)/../../x86_64-linux-gnu/stubs -L\$(_HERE_)/../../x86_64-linux-gnu
EOF
}

# Debian's gcc/g++ wrappers look for g++-11 on PATH; CMake runs the host
# compiler nvcc reports outside nvcc's PATH, so they name the unpacked g++-11.
write_host_compiler() {
  local bin=$1 gcc_dir=$2 name
  for name in gcc g++; do
    cat >"$bin/$name" <<EOF
#!/bin/sh
# nvcc 11.8 takes GCC <= 11: bookworm's g++-11, unpacked by scripts/install-cuda-toolkits.sh.
exec "\$(dirname "\$(readlink -f "\$0")")/../../../../$gcc_dir/usr/bin/g++-11" "\$@"
EOF
  done
}

# PREFIX/cuda-X/bin/nvcc and the rest of a standard toolkit layout (bin/,
# include/, lib64/, nvvm/libdevice), which CMake's compiler detection looks
# for. nvcc checks the host compiler's version with the caller's PATH before
# it applies nvcc.profile, so the wrapper sets PATH too: Debian's gcc/g++
# wrappers pick the newest g++ this nvcc supports.
write_layout() {
  local root=$1 description=$2
  mkdir -p "$root/bin" "$root/nvvm"
  cat >"$root/bin/nvcc" <<EOF
#!/bin/sh
# $description, unpacked by scripts/install-cuda-toolkits.sh.
root=\$(dirname "\$(dirname "\$(readlink -f "\$0")")")
PATH="\$root/usr/lib/nvidia-cuda-toolkit/bin:\$root/usr/bin:\$PATH"
export PATH
exec "\$root/usr/lib/nvidia-cuda-toolkit/bin/nvcc" "\$@"
EOF
  chmod 755 "$root/bin/nvcc"
  local tool
  for tool in ptxas fatbinary nvlink cuobjdump nvdisasm cu++filt nvprune bin2c cudafe++; do
    [[ -e $root/usr/bin/$tool ]] && ln -sfn "../usr/bin/$tool" "$root/bin/$tool"
  done
  ln -sfn usr/include "$root/include"
  ln -sfn "$k_lib" "$root/lib64"
  ln -sfn ../usr/lib/nvidia-cuda-toolkit/libdevice "$root/nvvm/libdevice"
}

# VERSION SUITE COMPONENTS GCC_DIR LIBRARIES...: one toolkit into
# $prefix/cuda-VERSION; LIBRARIES are the shared-library packages unpacked
# whole (cudart and cuBLAS of that release).
install_toolkit() {
  local version=$1 suite=$2 components=$3 gcc_dir=$4
  shift 4
  local libraries=("$@")
  local dest=$prefix/cuda-$version started
  started=$(now)
  if grep -qx "layout: $k_layout" "$dest/.orc-toolkit" 2>/dev/null &&
    "$dest/bin/nvcc" --version 2>/dev/null | grep -q "release $version,"; then
    say "cuda-$version: already installed at $dest ($(sed -n 's/^packages: //p' "$dest/.orc-toolkit")), skipped"
    return
  fi
  work=$(mktemp -d "$prefix/.work-cuda-$version.XXXXXX")
  local packages=(nvidia-cuda-toolkit nvidia-cuda-dev "${libraries[@]}" "${k_header_packages[@]}")
  [[ -z $gcc_dir ]] || packages+=("${k_gcc11_packages[@]}")
  say "cuda-$version: downloading ${packages[*]} from $mirror $suite"
  fetch "$suite" "$components" "${packages[@]}"
  local downloaded
  downloaded=$(du -sh "$work/debs" | cut -f1)

  local stage=$work/root toolkit_deb dev_deb
  toolkit_deb=$(deb_of nvidia-cuda-toolkit)
  dev_deb=$(deb_of nvidia-cuda-dev)
  mkdir -p "$stage"
  dpkg-deb -x "$toolkit_deb" "$stage"
  dpkg-deb --fsys-tarfile "$dev_deb" | tar -x -C "$stage" "${k_dev_members[@]}"
  local manifest
  manifest="nvidia-cuda-toolkit=$(deb_version "$toolkit_deb") nvidia-cuda-dev=$(deb_version "$dev_deb")"
  local package deb
  for package in "${libraries[@]}"; do
    deb=$(deb_of "$package")
    dpkg-deb -x "$deb" "$stage"
    manifest+=" $package=$(deb_version "$deb")"
  done
  for package in "${k_header_packages[@]}"; do
    deb=$(deb_of "$package")
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$stage" ./usr/include
    manifest+=" $package=$(deb_version "$deb")"
  done
  if [[ -n $gcc_dir ]]; then
    for package in "${k_gcc11_packages[@]}"; do
      deb=$(deb_of "$package")
      dpkg-deb -x "$deb" "$stage/$gcc_dir"
    done
    rm -rf "${stage:?}/$gcc_dir/usr/share"
    manifest+=" g++-11=$(deb_version "$(deb_of g++-11)")"
  fi
  # Debian's /etc/nvcc.profile and /usr/bin/nvcc name absolute /usr paths.
  rm -rf "${stage:?}/etc" "${stage:?}/usr/share" "${stage:?}/usr/bin/nvcc"
  local link
  while IFS= read -r -d '' link; do
    rm -f "$link"
  done < <(find "$stage" -lname '/*' -print0)
  write_profile "$stage/usr/lib/nvidia-cuda-toolkit/bin"
  [[ -z $gcc_dir ]] || write_host_compiler "$stage/usr/lib/nvidia-cuda-toolkit/bin" "$gcc_dir"
  write_layout "$stage" "nvcc $version from Debian $suite ($manifest)"
  printf 'layout: %s\nversion: %s\nsuite: %s\npackages: %s\n' "$k_layout" "$version" "$suite" "$manifest" \
    >"$stage/.orc-toolkit"

  # Smoke test before the tree goes in place: the release, and one program
  # through the host compiler the wrappers pick that uses what makes the tree
  # complete: libcu++ (through cooperative_groups), cuBLAS, shared cudart.
  local reported
  reported=$("$stage/bin/nvcc" --version 2>&1 | tail -n 2 | head -n 1) || true
  [[ $reported == *"release $version,"* ]] ||
    die 2 "cuda-$version: unpacked nvcc does not report release $version: $reported"
  cat >"$work/k.cu" <<'EOF'
#include <cooperative_groups.h>
#include <cublas_v2.h>
#include <cuda/std/type_traits>
__global__ void k(int* p) { *p = cooperative_groups::this_thread_block().size(); }
int main() {
  cublasHandle_t h;
  return cublasCreate(&h) == CUBLAS_STATUS_SUCCESS && cuda::std::is_same<int, int>::value ? 0 : 1;
}
EOF
  "$stage/bin/nvcc" "$work/k.cu" -o "$work/k" -lcublas -cudart shared ||
    die 2 "cuda-$version: unpacked nvcc cannot build a program using cooperative_groups and cuBLAS (see above)"

  rm -rf "$dest"
  mv "$stage" "$dest"
  rm -rf "$work"
  work=""
  say "cuda-$version: installed $manifest at $dest"
  say "cuda-$version: $reported; downloaded $downloaded, unpacked $(du -sh "$dest" | cut -f1), $(elapsed "$started")"
}

total_started=$(now)
install_toolkit 11.8 bookworm "main non-free" gcc-11 libcudart11.0 libcublas11 libcublaslt11
install_toolkit 12.4 trixie "main non-free" "" libcudart12 libcublas12 libcublaslt12
say "done in $(elapsed "$total_started"); $prefix holds $(du -sh "$prefix" | cut -f1)"
