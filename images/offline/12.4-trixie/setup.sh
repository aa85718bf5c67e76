#!/bin/sh
# orchestrate/cuda:12.4-trixie: CUDA 12.4 (nvcc 12.4.131) from Debian trixie's
# non-free nvidia-cuda-toolkit, with g++-13: nvcc 12.4 takes GCC <= 13 and
# trixie's default g++ is 14, so builds pass `-ccbin g++-13` (or
# CUDAHOSTCXX=g++-13).
# Runs in the chroot; see ../common.sh for its environment.
. "$(dirname "$0")/common.sh"

orc_sources
orc_no_daemons
# shellcheck disable=SC2086  # one word per package
orc_install $ORC_PACKAGES
nvcc --version | grep -q 'release 12\.4'
g++-13 --version >/dev/null
orc_cleanup
