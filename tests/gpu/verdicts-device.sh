#!/usr/bin/env bash
# Issue 10's H200 record: for every verdict fixture, `orchestrate inspect
# --cc <the GPU's> --driver <the node's>` against what the driver does, and
# doctor's line for every library of the installed PyTorch against one
# operation that uses it. Run on a GPU host from the repository root; writes
# under $OUT (default ./gpu-out).
#
# Observation per fixture: launch its kernels once with CUDA_DISABLE_PTX_JIT=1
# and once without (CUDA_CACHE_DISABLE=1 both times, so no cached JIT output
# answers): ran/ran = native, failed/ran = jit, failed/failed = none; some
# kernels ran and some did not (with JIT allowed) = partial.
#
# Fixtures: tests/gpu/verdicts/make.sh with this host's nvcc (cu13-*), the
# CUDA 11.8 ones built on the development machine with Debian's nvcc 11.8 and
# carried in build-carry/fix118 (with Debian's libcudart.so.11.0), and PTX
# whose `.version` is raised past what the driver knows, packed with
# fatbinary. The binaries: tests/gpu/device-binaries.sh (build-carry/, filled
# by carry-verdicts.sh, when it runs here, else CMake).
set -u
root=$(pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
echo "== host"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1 | tr -d ' ')
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' ')
/usr/local/cuda/bin/nvcc --version | tail -n 2 | head -n 1

if [[ -n ${ORC_ORCHESTRATE:-} ]]; then
  bin=$(dirname "$ORC_ORCHESTRATE")  # ctest's gpu_verdicts: the build's own
else
  # shellcheck source=tests/gpu/device-binaries.sh
  . "$root/tests/gpu/device-binaries.sh"
  device_binaries orchestrate
fi
orc=$bin/orchestrate

work=$(mktemp -d)
fix=$work/fixtures
echo "== fixtures"
tests/gpu/verdicts/make.sh "$fix" /usr/local/cuda/bin/nvcc cu13- | sed 's/^/  /'
[[ -d $root/build-carry/fix118 ]] && cp -a "$root/build-carry/fix118/." "$fix/"
cc -O2 -o "$work/launch" tests/gpu/verdicts/launch.c -I/usr/local/cuda/include -lcuda
# PTX the driver is too old for: compute_80 PTX of ISA 9.0 raised to 9.9; and
# a fatbin of compute_75 PTX (ISA 9.0) beside it, to see which one the driver takes.
(cd "$work" && /usr/local/cuda/bin/nvcc -ptx -arch=compute_80 -o add80.ptx "$root/tests/gpu/verdicts/add.cu" &&
  /usr/local/cuda/bin/nvcc -ptx -arch=compute_75 -o add75.ptx "$root/tests/gpu/verdicts/add.cu" &&
  sed 's/^\.version .*/.version 9.9/' add80.ptx >add80-isa99.ptx &&
  /usr/local/cuda/bin/fatbinary -64 --create="$fix/cu13-compute80-isa99.fatbin" --image3=kind=ptx,sm=80,file=add80-isa99.ptx &&
  /usr/local/cuda/bin/fatbinary -64 --create="$fix/cu13-compute75-isa90-compute80-isa99.fatbin" \
    --image3=kind=ptx,sm=75,file=add75.ptx --image3=kind=ptx,sm=80,file=add80-isa99.ptx) || echo "  raised-ISA fixtures not built"

# observe COMMAND...: "ran", "some" or "failed" under the current environment.
observe() {
  "$@" >"$work/obs.txt" 2>&1
  case $? in 0) echo ran ;; 4) echo some ;; *) echo failed ;; esac
}
verdict_of() {
  "$orc" inspect --cc="$cc" --driver="$driver" --json -- "$1" 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
v = [v for f in j["files"] for v in f.get("verdicts", [])]
print(v[0]["outcome"] if v else "no-verdict")'
}
detail_of() {
  "$orc" inspect --cc="$cc" --driver="$driver" --json -- "$1" 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
v = [v for f in j["files"] for v in f.get("verdicts", [])]
print(v[0]["detail"] if v else "")'
}

echo "== verdict matrix: inspect --cc $cc --driver $driver against the driver"
table=$out/verdicts-observed.txt
printf '%-44s %-9s %-8s %-8s %-9s %s\n' fixture predicted no-jit jit observed agree >"$table"
agree=0 total=0
for f in "$fix"/*; do
  name=${f##*/}
  case $name in
    *.log | *.so | *.so.* | *.ptx) continue ;;
    *.fatbin | *.cubin) run=("$work/launch" "$f") target=$f ;;
    *lib-*) run=("$f") target=$fix/lib${name%%lib-*}${name#*lib-}.so ;;
    *) run=("$f") target=$f ;;
  esac
  [[ -e $target ]] || { echo "  $name: no $target"; continue; }
  predicted=$(verdict_of "$target")
  nojit=$(CUDA_DISABLE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 observe "${run[@]}")
  jit=$(CUDA_CACHE_DISABLE=1 observe "${run[@]}")
  last=$(tr '\n' ';' <"$work/obs.txt")
  case $jit/$nojit in
    ran/ran) observed=native ;;
    ran/*) observed=jit ;;
    some/*) observed=partial ;;
    *) observed=none ;;
  esac
  total=$((total + 1))
  ok=no
  [[ $predicted == "$observed" ]] && ok=yes && agree=$((agree + 1))
  printf '%-44s %-9s %-8s %-8s %-9s %s\n' "${target##*/}" "$predicted" "$nojit" "$jit" "$observed" "$ok" >>"$table"
  printf '    %s\n    %s\n' "$(detail_of "$target")" "$last" >>"$out/verdicts-detail.txt"
done
echo "$agree/$total agree" >>"$table"
cat "$table"
status=0
[[ $agree == "$total" && $total -gt 0 ]] || status=1

echo "== smoke --artifact on executables: every module loaded, the kernel modules decide"
/usr/local/cuda/bin/nvcc -fatbin -gencode arch=compute_90,code=sm_90 -o "$work/k90.fatbin" kernels/smoke_kernels.cu
for a in cu13-exe-sm75-compute75 cu118-exe-sm75-compute75 cu13-exe-two-modules-sm90-sm80 cu13-exe-rdc-sm75-80-90-dlink75 libcu13-rdc-sm75-80-90-dlink75.so cu13-exe-union-rdc90-rdc75 cu13-exe-mixed-rdc90-whole90; do
  [[ -e $fix/$a ]] || continue
  "$orc" smoke --fatbin "$work/k90.fatbin" --artifact "$fix/$a" --json >"$work/smoke.json" 2>"$work/smoke.err"
  echo "$a: smoke rc=$?"
  python3 - "$work/smoke.json" <<'PY'
import json, sys
for g in json.load(open(sys.argv[1]))["gpus"]:
    for a in g["artifacts"]:
        print(f'  {a["where"].split("/")[-1]}: predicted {a["predicted"]}, loaded {a["load"]["outcome"]}, kernels {a["kernels"]}')
PY
done

echo "== PyTorch's libraries: doctor's line against one operation each"
python3 - "$out/torch-ops.json" <<'PY'
import json, sys, torch
ops = {}
def run(name, fn):
    try:
        fn(); torch.cuda.synchronize(); ops[name] = "ran"
    except Exception as e:
        ops[name] = "failed: " + str(e).splitlines()[0][:160]
d = "cuda"
run("matmul (cuBLAS)", lambda: torch.randn(256, 256, device=d) @ torch.randn(256, 256, device=d))
run("matmul bf16 (cuBLASLt)", lambda: torch.nn.functional.linear(torch.randn(64, 256, device=d, dtype=torch.bfloat16), torch.randn(128, 256, device=d, dtype=torch.bfloat16), torch.randn(128, device=d, dtype=torch.bfloat16)))
run("fft (cuFFT)", lambda: torch.fft.fft(torch.randn(4096, device=d)))
run("conv2d (cuDNN)", lambda: torch.nn.functional.conv2d(torch.randn(8, 16, 32, 32, device=d), torch.randn(32, 16, 3, 3, device=d)))
run("solve (cuSOLVER)", lambda: torch.linalg.solve(torch.randn(64, 64, device=d) + 64 * torch.eye(64, device=d), torch.randn(64, 8, device=d)))
run("sparse mm (cuSPARSE)", lambda: torch.sparse.mm(torch.randn(128, 128, device=d).relu().to_sparse(), torch.randn(128, 16, device=d)))
run("randn (cuRAND)", lambda: torch.randn(1024, device=d))
json.dump({"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "ops": ops}, open(sys.argv[1], "w"), indent=1)
for k, v in ops.items(): print(f"  {k}: {v}")
PY
"$orc" doctor --json >"$out/doctor.json" 2>"$work/doctor.err"
echo "doctor rc=$?"; cat "$work/doctor.err"
python3 - "$out/doctor.json" "$out/torch-ops.json" "$out/torch-libraries.txt" <<'PY'
import json, sys, os
doc = json.load(open(sys.argv[1])); ops = json.load(open(sys.argv[2]))["ops"]
which = [("cublasLt", "matmul bf16 (cuBLASLt)"), ("cublas", "matmul (cuBLAS)"), ("cufft", "fft (cuFFT)"),
         ("cudnn", "conv2d (cuDNN)"), ("cusolver", "solve (cuSOLVER)"), ("cusparse", "sparse mm (cuSPARSE)"),
         ("curand", "randn (cuRAND)"), ("torch_cuda", "matmul (cuBLAS)")]
lines = ["%-40s %-9s %-8s %-24s %-8s %s" % ("library", "doctor", "runtime", "operation", "result", "agree")]
agree = total = 0
for lib in doc["libraries"]:
    if not lib["device_code"] or not lib["verdicts"]: continue
    base = os.path.basename(lib["path"])
    op = next((o for key, o in which if key in base), None)
    v = lib["verdicts"][0]
    if op is None:
        lines.append("%-40s %-9s %-8s %-24s %-8s %s" % (base, v["outcome"], v["runtime_kernels"], "-", "-", "not exercised")); continue
    ran = ops[op] == "ran"
    # A library that works must not be judged "none" unless the verdict says it builds its own kernels.
    ok = (v["outcome"] != "none" or v["runtime_kernels"]) if ran else v["outcome"] == "none"
    total += 1; agree += ok
    lines.append("%-40s %-9s %-8s %-24s %-8s %s" % (base, v["outcome"], v["runtime_kernels"], op, "ran" if ran else "failed", "yes" if ok else "NO"))
lines.append(f"{agree}/{total} agree")
open(sys.argv[3], "w").write("\n".join(lines) + "\n"); print("\n".join(lines))
sys.exit(0 if agree == total else 1)
PY
[[ $? == 0 ]] || status=1

echo "== cuobjdump 13.0 goldens for the inspect fixtures"
# Few files come back from a device run: the goldens travel as one archive.
tests/inspect/fixtures/record-goldens.sh /usr/local/cuda/bin/cuobjdump "$work/golden" /usr/local/cuda/bin/nvcc 2>&1 | tail -n 2
tar -czf "$out/golden-13.0.tgz" -C "$work/golden" .
rm -rf "$work"
echo "verdicts-device: $([[ $status == 0 ]] && echo 'every prediction agrees with the driver' || echo 'a prediction DISAGREES with the driver')"
exit "$status"
