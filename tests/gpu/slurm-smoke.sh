#!/usr/bin/env bash
# Issue 15 on the GPU host: the H200 as the GPU node of a one-node Slurm
# cluster (Debian 12's slurmctld, slurmd and munge, unpacked from the .debs
# tests/gpu/carry-slurm.sh put in build-carry/debs), a docker-registry on
# 127.0.0.1 as the remote. `orchestrate build --engine slurm` builds a CMake
# CUDA library for a tier of H200s in a job on the node (host engine, this
# machine's nvcc), pushes it, and the submitter pulls and verifies it; then
# `orchestrate smoke --engine slurm` runs the smoke kernels and the set's own
# fatbins on the H200 inside a job that asked for gres gpu:1, attests the
# result, pushes the attested set, and the submitter pulls it. Everything
# printed goes to $OUT/slurm-smoke.txt.
set -u
root=$(pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
exec > >(tee "$out/slurm-smoke.txt") 2>&1
echo "== host"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
grep PRETTY /etc/os-release; ldd --version | head -1

echo "== Debian's Slurm and munge, unpacked"
prefix=/opt/orc-debs
mkdir -p "$prefix"
for deb in "$root"/build-carry/debs/*.deb; do dpkg -x "$deb" "$prefix"; done
# Debian names the daemons slurmd-wlm etc. and links them through
# update-alternatives, which dpkg -x does not run; slurmd starts slurmstepd
# at its built-in /usr/sbin path.
for pair in slurmd:slurmd-wlm slurmstepd:slurmstepd-wlm slurmctld:slurmctld-wlm; do
  [ -e "/usr/sbin/${pair%%:*}" ] || ln -s "$prefix/usr/sbin/${pair#*:}" "/usr/sbin/${pair%%:*}"
done
export PATH=$prefix/usr/sbin:$prefix/usr/bin:$prefix/sbin:$PATH
export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu/slurm-wlm:$prefix/usr/lib/x86_64-linux-gnu:$prefix/lib/x86_64-linux-gnu:$root/build-carry/lib
getent passwd munge >/dev/null || useradd --system --no-create-home munge
for tool in slurmctld slurmd sbatch scontrol munged docker-registry; do
  printf '%s: ' "$tool"; command -v "$tool" || echo missing
done
slurmctld -V || { echo "Debian 12's slurmctld does not run here"; exit 3; }

echo "== cluster and registry"
work=$(mktemp -d /tmp/orc-gpu-slurm.XXXXXX)
chmod 0755 "$work"
"$root/scripts/start-slurm.sh" "$work/slurm" --gpu-node --plugin-dir "$prefix/usr/lib/x86_64-linux-gnu/slurm-wlm" ||
  { tail -n 30 "$work"/slurm/*.log; exit 3; }
. "$work/slurm/env"
sinfo -N -o '%N %P %f %G %T'
"$root/scripts/start-registry.sh" "$work/registry" || exit 3
port=$(cat "$work/registry/port")

export ORCHESTRATE_CACHE_DIR=$work/cache ORCHESTRATE_KEYS_DIR=$work/keys ORCHESTRATE_HOST_TOOLKITS=/usr/local/cuda
export ORCHESTRATE_KERNELS_DIR=$root/kernels
cat >"$work/orchestrate.yaml" <<YAML
remote: http://127.0.0.1:$port/team/artifacts
tiers:
  tier-h200:
    gpus: [H200]
    slurm: {partition: gpu}
recipes:
  - name: lib
    framework: cmake
    source: {path: $root/tests/integration/nested-project}
    tiers: [tier-h200]
    build:
      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
      - cmake --build build
    artifacts: ["**/libx.so"]
YAML
orc=$root/build-carry/orchestrate
echo "== orchestrate build tier-h200 --engine slurm --node-engine host"
start=$SECONDS
"$orc" build tier-h200 -f "$work/orchestrate.yaml" --engine slurm --node-engine host; echo "rc=$? ($((SECONDS - start)) s)"
echo "== orchestrate smoke tier-h200 --engine slurm"
start=$SECONDS
"$orc" smoke tier-h200 -f "$work/orchestrate.yaml" --engine slurm --json > "$work/smoke.json"; rc=$?
cat "$work/smoke.json"; echo "rc=$rc ($((SECONDS - start)) s)"
echo "== Slurm's records of the jobs (jobcomp)"
cat "$work/slurm/jobcomp.txt"
echo "== the attested set in the submitter's store"
"$orc" cache ls
"$root/scripts/stop-registry.sh" "$work/registry"
"$root/scripts/stop-slurm.sh" "$work/slurm"
