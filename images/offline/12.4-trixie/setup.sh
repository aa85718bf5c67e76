#!/bin/sh
# orchestrate/cuda:12.4-trixie: CUDA 12.4 (nvcc 12.4.131) from Debian trixie's
# non-free nvidia-cuda-toolkit, with g++-13: nvcc 12.4 takes GCC <= 13 and
# trixie's default g++ is 14, so GCC 13 is the image's gcc, g++, cc and c++
# (plain `nvcc x.cu`, CMake and make use it with no -ccbin, CC or
# CUDAHOSTCXX).
# Runs in the chroot; see ../common.sh for its environment.
. "$(dirname "$0")/common.sh"

orc_sources
orc_no_daemons
# shellcheck disable=SC2086  # one word per package
orc_install $ORC_PACKAGES
orc_default_compiler 13
nvcc --version | grep -q 'release 12\.4'
for cc in gcc g++ cc c++; do orc_check_compiler "$cc" 13; done
orc_cleanup
