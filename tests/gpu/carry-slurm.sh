#!/usr/bin/env bash
# Fills build-carry/ for tests/gpu/slurm-smoke.sh on the development machine:
# orchestrate and its libraries (carry-orchestrate.sh), and Debian 12's
# Slurm, munge and docker-registry packages with the libraries they need that
# the GPU host (Ubuntu 24.04) may lack, as .debs the GPU host unpacks
# (dpkg -x) without installing: nothing there can be downloaded.
#   carry-slurm.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: carry-slurm.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$root/build-carry
rm -rf "$carry"
mkdir -p "$carry/debs"
# shellcheck source=tests/gpu/carry-orchestrate.sh
. "$root/tests/gpu/carry-orchestrate.sh"
carry_orchestrate "$build" "$carry"
(cd "$carry/debs" && apt-get download slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libmunge2 \
  docker-registry libhwloc15 liblua5.1-0 libjson-c5 libyaml-0-2 libnuma1 libdbus-1-3 >/dev/null)
du -sh "$carry"
