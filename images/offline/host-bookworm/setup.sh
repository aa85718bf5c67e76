#!/bin/sh
# orchestrate/cuda:host-bookworm: Debian bookworm with the build tools and no
# CUDA of its own. Containers of it get the host's toolkit bind-mounted
# read-only at /usr/local/cuda (nvcc is /usr/local/cuda/bin/nvcc), so it
# serves whatever the host has: 13.0 on our machines, which accepts
# bookworm's g++ 12. Which toolkit that is, `orchestrate images build`
# records from nvcc --version run in a container of the image.
# Runs in the chroot; see ../common.sh for its environment.
. "$(dirname "$0")/common.sh"

orc_sources
orc_no_daemons
# shellcheck disable=SC2086  # one word per package
orc_install $ORC_PACKAGES
# The mount point, so the image documents where the toolkit goes.
mkdir -p /usr/local/cuda
# Bookworm's own GCC 12 is the default here (its g++ package brings gcc,
# cc and c++), and nvcc 13.0 takes it.
for cc in gcc g++ cc c++; do orc_check_compiler "$cc" 12; done
orc_cleanup
