#!/usr/bin/env bash
# Issue 16 on the GPU host: the coverage scan of a directory we did not lay
# out (the GPU host's site-packages: PyTorch's libraries and NVIDIA's
# wheels), judged for the H200, beside what the H200 really does with each
# library the scan names: an operation per CUDA library run through
# PyTorch, whose kernels come from that library. Then the stamp values
# for the same files. Everything printed goes to $OUT/image-coverage.txt.
#   needs: build-carry/ (tests/gpu/carry-orchestrate.sh)
set -u
root=$(pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
exec > >(tee "$out/image-coverage.txt") 2>&1
export LD_LIBRARY_PATH=$root/build-carry/lib
orc=$root/build-carry/orchestrate
echo "== host"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
site=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_arch_list())'
cat >"$out/h200.yaml" <<YAML
tiers:
  h200: {gpus: ["H200"], driver: "$driver"}
recipes: []
YAML

echo "== the scan: $site (PyTorch and the nvidia-* wheels among the rest), tier h200 (driver $driver)"
time "$orc" inspect "$site" -f "$out/h200.yaml" --json --report "$out/torch-coverage.html" >"$out/torch-coverage.json"
echo "inspect exit: $?"
"$orc" inspect "$site" -f "$out/h200.yaml" 2>&1 | head -80

echo "== what the H200 does: one operation per library, through PyTorch"
python3 - <<'PY'
import torch, traceback
dev = "cuda"
ops = {
    "cuBLAS / cuBLASLt (matmul)": lambda: torch.randn(512, 512, device=dev) @ torch.randn(512, 512, device=dev),
    "cuBLASLt (bf16 addmm)": lambda: torch.addmm(torch.randn(256, device=dev, dtype=torch.bfloat16),
                                                 torch.randn(256, 256, device=dev, dtype=torch.bfloat16),
                                                 torch.randn(256, 256, device=dev, dtype=torch.bfloat16)),
    "cuDNN (conv2d)": lambda: torch.nn.functional.conv2d(torch.randn(8, 16, 32, 32, device=dev),
                                                          torch.randn(32, 16, 3, 3, device=dev)),
    "cuFFT (fft)": lambda: torch.fft.fft(torch.randn(4096, device=dev)),
    "cuRAND-style RNG (torch.rand)": lambda: torch.rand(1 << 20, device=dev),
    "cuSOLVER (linalg.solve)": lambda: torch.linalg.solve(torch.randn(64, 64, device=dev) + 64 * torch.eye(64, device=dev),
                                                          torch.randn(64, 8, device=dev)),
    "cuSPARSE (sparse mm)": lambda: torch.sparse.mm(torch.randn(256, 256, device=dev).relu().to_sparse(),
                                                    torch.randn(256, 16, device=dev)),
    "libtorch_cuda (elementwise, reduce)": lambda: (torch.randn(1 << 20, device=dev).sin() * 2).sum(),
}
for name, op in ops.items():
    try:
        r = op()
        torch.cuda.synchronize()
        print("%-40s ran" % name)
    except Exception as e:
        print("%-40s FAILED: %s" % (name, str(e).splitlines()[0]))
PY

echo "== stamp values for the same files (what NVIDIA_REQUIRE_ARCH would say)"
python3 - "$out/torch-coverage.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
(tier,) = d["tiers"]
counts = {}
for row in tier["rows"]:
    for c in row["cells"]:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
print("libraries judged:", len(tier["rows"]), "cells:", counts)
for row in tier["rows"]:
    v = row["cells"][0]
    if v["verdict"] != "native":
        print("  %s: %s %s: %s" % (row["path"], v["verdict"], v["decided_by"], v["why"][:160]))
print("bill of materials:")
for c in d["bom"]:
    print("  %-22s %-14s %-34s %s" % (c["name"], c["version"], c["source"], c["built_with"]))
for r in d["runtime"]:
    print("runtime: CUDA %d, min driver %s, files %d" % (r["major"], r["min_driver"], len(r["files"])))
print("exit code:", d["exit_code"])
PY
