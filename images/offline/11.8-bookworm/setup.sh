#!/bin/sh
# orchestrate/cuda:11.8-bookworm: CUDA 11.8 (nvcc 11.8.89) from Debian
# bookworm's non-free nvidia-cuda-toolkit, with g++-11: nvcc 11.8 takes GCC
# <= 11 and bookworm's default g++ is 12, so GCC 11 is the image's gcc, g++,
# cc and c++ (plain `nvcc x.cu`, CMake and make use it with no -ccbin, CC or
# CUDAHOSTCXX). Also cuobjdump, nvdisasm, fatbinary 11.8 in /usr/bin,
# which list the sm_35/sm_37 cubins that cuobjdump 13.0 refuses.
# About 5.4 GB; debootstrap ~65 s plus ~130 s of apt here.
# Runs in the chroot; see ../common.sh for its environment.
. "$(dirname "$0")/common.sh"

orc_sources
orc_no_daemons
# shellcheck disable=SC2086  # one word per package
orc_install $ORC_PACKAGES
# Fail here, not in the first build, when the mirror served something else.
orc_default_compiler 11
nvcc --version | grep -q 'release 11\.8'
for cc in gcc g++ cc c++; do orc_check_compiler "$cc" 11; done
orc_cleanup
