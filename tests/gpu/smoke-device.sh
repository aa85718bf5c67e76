#!/usr/bin/env bash
# Runs issue 6's GPU suites (tests/gpu/smoke_gpu_test.cpp) on a GPU host and
# writes everything they print under $OUT (default ./gpu-out). The binaries:
# tests/gpu/device-binaries.sh (build-carry/ when it runs here, else CMake).
set -u
root=$(pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
echo "== host"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
grep PRETTY /etc/os-release; ldd --version | head -1
command -v cmake ninja g++ python3 nvcc /usr/local/cuda/bin/nvcc

# shellcheck source=tests/gpu/device-binaries.sh
. "$root/tests/gpu/device-binaries.sh"
device_binaries orchestrate gpu_smoke
export ORC_SOURCE_DIR=$root ORC_ORCHESTRATE=$bin/orchestrate ORCHESTRATE_KERNELS_DIR=$root/kernels ORC_GPU_RECORD_DIR=$out

echo "== gpu tests"
for suite in Matrix SmokeCommand DoctorCommand FrameworkBuild; do
  start=$SECONDS
  "$bin/gpu_smoke" --gtest_filter="$suite.*" > "$out/gtest-$suite.txt" 2>&1
  echo "$suite: rc=$? ($((SECONDS - start)) s)"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected|Which is|actual" "$out/gtest-$suite.txt" | head -20
done
echo "== kernels as PTX for compute_75 only (JIT: wmma runs, bf16/fp8/cluster are compiled out) and as sm_80 SASS only (none)"
/usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_75,code=compute_75 -o /tmp/k75.fatbin kernels/smoke_kernels.cu
/usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_80,code=sm_80 -o /tmp/k80.fatbin kernels/smoke_kernels.cu
"$bin/orchestrate" smoke --fatbin /tmp/k75.fatbin; echo "rc=$?"
"$bin/orchestrate" smoke --fatbin /tmp/k80.fatbin; echo "rc=$?"
echo "== libraries doctor judges 'none'/'jit', loaded for real: every fatbin they embed, on this GPU"
site=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
for lib in nvidia/cu13/lib/libcufft.so.12 nvidia/cu13/lib/libcufile.so.0 torch/lib/libtorch_cuda.so; do
  start=$SECONDS
  timeout 150 "$bin/orchestrate" smoke --fatbin /tmp/k75.fatbin --artifact "$site/$lib" --json > "$out/artifact-$(basename "$lib").json"
  echo "$lib: rc=$? ($((SECONDS - start)) s)"
  python3 - "$out/artifact-$(basename "$lib").json" <<'PY'
import json, sys, collections
j = json.load(open(sys.argv[1]))
for g in j["gpus"]:
    c = collections.Counter((a["predicted"], a["load"]["outcome"], a["load"]["error"]) for a in g["artifacts"])
    print(f'  {g["name"]} {g["cc"]}: {len(g["artifacts"])} fatbins (predicted, observed, error): {dict(c)}')
PY
done
