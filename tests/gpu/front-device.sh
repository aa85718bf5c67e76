#!/usr/bin/env bash
# Issue 27 on a GPU host: the nvcc front with a real GPU in the build
# machine. Fixture projects of tests/integration/front are built by
# `orchestrate build --engine host` (the GPU host's nvcc 13.0), with the
# binaries build-carry/ holds (orchestrate and orchestrate-nvcc, from
# tests/gpu/carry-front.sh on the development machine), then run here:
#   - pinned-cmake under verify: stops at CMakeLists.txt:7 (nothing stored);
#     under enforce: exactly the plan, and the binary runs on this GPU;
#   - probe-make: __nvcc_device_query answers for this GPU; for a tier
#     without this GPU's arch verify names the probe and the Makefile line,
#     enforce builds the plan; for a tier with it, the build is as planned
#     and the probe is said once; each built binary runs here;
#   - rdc-cmake (separable compilation) and cublas-cmake (links cuBLAS):
#     the plan's archs, the relocatable-only PTX and the needed
#     libcublas said, and both binaries run here;
#   - bench/nvcc_front.sh: the front's cost per call on this host.
# Everything it prints goes to $OUT/log.txt.
set -u
root=$(pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
echo "== host"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
command -v cmake make g++ /usr/local/cuda/bin/nvcc /usr/local/cuda/bin/__nvcc_device_query
echo "__nvcc_device_query prints: $(/usr/local/cuda/bin/__nvcc_device_query 2>&1)"
bin=$root/build-carry
export LD_LIBRARY_PATH=$bin/lib
orc=$bin/orchestrate
work=$(mktemp -d /tmp/orc-front-gpu.XXXXXX)
export ORCHESTRATE_CACHE_DIR=$work/cache ORCHESTRATE_KEYS_DIR=$work/keys ORCHESTRATE_HOST_TOOLKITS=/usr/local/cuda
fx=$root/tests/integration/front
cat >"$work/orchestrate.yaml" <<YAML
toolkits: ["13.0"]
tiers:
  tier-new:
    gpus: ["A100", "RTX 4090", "H100"]
  ampere:
    gpus: ["A100"]
recipes:
  - {name: pinned-verify, framework: cmake, source: {path: $fx/pinned-cmake}, tiers: [tier-new], artifacts: [pinned]}
  - {name: pinned-enforce, framework: cmake, nvcc: enforce, source: {path: $fx/pinned-cmake}, tiers: [tier-new], artifacts: [pinned]}
  - {name: probe, framework: nvcc, source: {path: $fx/probe-make}, tiers: [tier-new, ampere], build: [[make]], artifacts: [probe]}
  - {name: probe-enforce, framework: nvcc, nvcc: enforce, source: {path: $fx/probe-make}, tiers: [ampere], build: [[make]], artifacts: [probe]}
  - {name: rdc, framework: cmake, source: {path: $fx/rdc-cmake}, tiers: [tier-new], artifacts: [rdc]}
  - {name: cublas, framework: cmake, needs: [cublas], source: {path: $fx/cublas-cmake}, tiers: [tier-new], artifacts: [axpy]}
YAML
cd "$work"
build() {  # TIER RECIPE
  echo; echo "\$ orchestrate build $1 -r $2 --engine host -f orchestrate.yaml"
  "$orc" build "$1" -r "$2" --engine host -f orchestrate.yaml --json >"$work/$2-$1.json" 2>"$work/$2-$1.err"
  echo "exit $?"
  python3 - "$work/$2-$1.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["builds"][0]
print(f'status {b["status"]}; artifacts', [(a["name"], a["sass"], a["ptx"]) for a in b["artifacts"]])
for a in b["artifacts"]:
    if a.get("needs"):
        print("  needs:", ", ".join(n["soname"] for n in a["needs"]))
for w in b.get("warnings", []):
    print("  warning:", w[:160])
n = b.get("nvcc") or {}
seen = set()
for c in n.get("calls", []):
    if c["outcome"] in ("not-judged",):
        continue
    key = (c["tool"], c["outcome"], json.dumps(c["asked"]), c.get("note", "")[:60])
    if key in seen:
        continue
    seen.add(key)
    org = c.get("origin") or {}
    print(f'  {c["tool"]} {c["outcome"]}: asked {c["asked"]["sass"] + c["asked"]["ptx"]}'
          f'{"; compiled " + str(c["compiled"]["sass"] + c["compiled"]["ptx"]) if c.get("compiled") else ""}'
          f'{"; at " + org["file"] + ":" + str(org["line"]) if org else ""}'
          f'{"; " + c["note"].splitlines()[0] if c["tool"] != "nvcc" else ""}')
for e in b.get("errors", []):
    print("  error:", e.replace("\n", "\n    "))
import os, shutil, stat, subprocess
for a in b["artifacts"]:
    # Blobs in the store are read-only: run a copy.
    run = os.path.join(os.path.dirname(sys.argv[1]), os.path.basename(a["name"]) + "-" + b["recipe"] + "-" + b["tier"])
    shutil.copyfile(a["path"], run)
    os.chmod(run, stat.S_IRWXU)
    r = subprocess.run([run], capture_output=True, text=True)
    print("run:", a["name"], "exit", r.returncode, r.stdout.strip(), r.stderr.strip())
PY
}
build tier-new pinned-verify
build tier-new pinned-enforce
build ampere probe
build ampere probe-enforce
build tier-new probe
# Separable compilation and cuBLAS (the CUDA libraries come from the
# toolkit here, as a node's would: the set does not carry them).
LD_LIBRARY_PATH=$bin/lib:/usr/local/cuda/lib64 build tier-new rdc
LD_LIBRARY_PATH=$bin/lib:/usr/local/cuda/lib64 build tier-new cublas
echo; echo "== inspect --tier tier-new of the enforced pinned binary (this GPU: H200)"
p=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["builds"][0]["artifacts"][0]["path"])' "$work/pinned-enforce-tier-new.json")
"$orc" inspect --cc 9.0 "$p"; echo "exit $?"
echo; echo "== orchestrate smoke --artifact (its fatbins loaded on this GPU)"
/usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_90,code=sm_90 -o "$work/k90.fatbin" "$root/kernels/smoke_kernels.cu"
ORCHESTRATE_KERNELS_DIR=$root/kernels "$orc" smoke --fatbin "$work/k90.fatbin" --artifact "$p" 2>&1 | tail -12
echo "exit ${PIPESTATUS[0]}"
cd "$root"
echo; echo "== bench/nvcc_front.sh"
mkdir -p "$work/bench/orchestrator" && cp "$bin/orchestrate-nvcc" "$work/bench/orchestrator/"
bash bench/nvcc_front.sh "$work/bench" 30
rm -rf "$work"
