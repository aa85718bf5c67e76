#!/usr/bin/env bash
# Builds the verdict fixtures of issue 10 into DIR with one nvcc:
#   make.sh DIR NVCC [PREFIX]
# Every fixture is a program that launches its kernels and exits 0 when they
# ran (main.cu, lib_main.cpp), or a fatbin/cubin for launch.c. File names say
# what was built; PREFIX ("cu13-", "cu118-") keeps two toolkits apart.
set -euo pipefail
out=${1:?usage: make.sh DIR NVCC [PREFIX]}
nvcc=${2:?usage: make.sh DIR NVCC [PREFIX]}
[[ $nvcc == */* ]] && nvcc=$(cd "$(dirname "$nvcc")" && pwd)/$(basename "$nvcc")
p=${3:-}
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cd "$out"
nv() { "$nvcc" -Wno-deprecated-gpu-targets "$@"; }
ok() { echo "built $1"; }
try() { local name=$1; shift; if "$@" >"$name.log" 2>&1; then ok "$name"; else echo "skipped $name: $(tail -n 1 "$name.log")"; fi; }

# Executables: one kernel module (add.cu) plus main.cu's and the device link's.
try "${p}exe-sm75-compute75" nv -gencode 'arch=compute_75,code=[sm_75,compute_75]' -o "${p}exe-sm75-compute75" "$src/main.cu" "$src/add.cu"
try "${p}exe-sm80" nv -gencode arch=compute_80,code=sm_80 -o "${p}exe-sm80" "$src/main.cu" "$src/add.cu"
try "${p}exe-sm90" nv -gencode arch=compute_90,code=sm_90 -o "${p}exe-sm90" "$src/main.cu" "$src/add.cu"
try "${p}exe-compute80" nv -gencode arch=compute_80,code=compute_80 -o "${p}exe-compute80" "$src/main.cu" "$src/add.cu"
# The shared runtime (NEEDED libcudart.so.N), found next to the program.
# CUDART_DIR: where libcudart.so lives when the toolkit has no lib64 copy
# (Debian's 11.8 keeps it in package libcudart11.0).
cudart_flags=(-cudart shared -Xlinker "-rpath=\$ORIGIN")
[[ -z ${CUDART_DIR:-} ]] || cudart_flags+=(-L"$CUDART_DIR")
try "${p}exe-sm80-cudart-shared" nv "${cudart_flags[@]}" -gencode 'arch=compute_80,code=[sm_80,compute_80]' -o "${p}exe-sm80-cudart-shared" "$src/main.cu" "$src/add.cu"
# Two kernel modules, one without code for 9.0: the worst decides.
try "${p}exe-two-modules-sm90-sm80" bash -c "$(printf '%q ' "$nvcc") -c -gencode arch=compute_90,code=sm_90 -o add90.o '$src/add.cu' && \
  $(printf '%q ' "$nvcc") -c -gencode arch=compute_80,code=sm_80 -o mul80.o '$src/mul.cu' && \
  $(printf '%q ' "$nvcc") -DWITH_MUL -gencode arch=compute_90,code=sm_90 -o '${p}exe-two-modules-sm90-sm80' '$src/main.cu' add90.o mul80.o"
# -rdc: relocatable code for several archs, device-linked for another set.
try "${p}exe-rdc-sm75-80-90-dlink75" bash -c "$(printf '%q ' "$nvcc") -rdc=true -c -gencode arch=compute_75,code=sm_75 \
  -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -o addr.o '$src/add.cu' && \
  $(printf '%q ' "$nvcc") -rdc=true -c -gencode arch=compute_75,code=sm_75 -o mainr.o '$src/main.cu' && \
  $(printf '%q ' "$nvcc") -rdc=true -gencode arch=compute_75,code=sm_75 -o '${p}exe-rdc-sm75-80-90-dlink75' mainr.o addr.o"
try "lib${p}rdc-sm75-80-90-dlink75.so" bash -c "$(printf '%q ' "$nvcc") -Xcompiler -fPIC -rdc=true -c \
  -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -o addp.o '$src/add.cu' && \
  $(printf '%q ' "$nvcc") -Xcompiler -fPIC -rdc=true -c -gencode arch=compute_75,code=sm_75 -o libp.o '$src/lib.cu' && \
  $(printf '%q ' "$nvcc") -shared -rdc=true -gencode arch=compute_75,code=sm_75 -o 'lib${p}rdc-sm75-80-90-dlink75.so' libp.o addp.o && \
  g++ -o '${p}lib-rdc-sm75-80-90-dlink75' '$src/lib_main.cpp' -L. -l'${p}rdc-sm75-80-90-dlink75' -Wl,-rpath,'\$ORIGIN'"
# Relocatable compute_80 PTX beside sm_75 SASS, device-linked for sm_75: on
# 9.0 the device-linked code has nothing, the relocatable PTX is what is left.
try "${p}exe-rdc-sm75-compute80-dlink75" bash -c "$(printf '%q ' "$nvcc") -rdc=true -c -gencode arch=compute_75,code=sm_75 \
  -gencode arch=compute_80,code=compute_80 -o addq.o '$src/add.cu' && \
  $(printf '%q ' "$nvcc") -rdc=true -c -gencode arch=compute_75,code=sm_75 -o mainq.o '$src/main.cu' && \
  $(printf '%q ' "$nvcc") -rdc=true -gencode arch=compute_75,code=sm_75 -o '${p}exe-rdc-sm75-compute80-dlink75' mainq.o addq.o"
# -dlto: LTO-IR and SASS up to sm_90 kept relocatable, the device link makes
# only compute_75 PTX: what the runtime loads is the PTX (JIT on 9.0).
try "lib${p}lto-dlink-compute75.so" bash -c "$(printf '%q ' "$nvcc") -Xcompiler -fPIC -rdc=true -c \
  -gencode arch=compute_75,code=lto_75 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -o addl.o '$src/add.cu' && \
  $(printf '%q ' "$nvcc") -Xcompiler -fPIC -rdc=true -c -gencode arch=compute_75,code=lto_75 -o libl.o '$src/lib.cu' && \
  $(printf '%q ' "$nvcc") -Xcompiler -fPIC -dlink -dlto -gencode arch=compute_75,code=compute_75 -o dlinkl.o libl.o addl.o && \
  $(printf '%q ' "$nvcc") -shared -o 'lib${p}lto-dlink-compute75.so' dlinkl.o libl.o addl.o && \
  g++ -o '${p}lib-lto-dlink-compute75' '$src/lib_main.cpp' -L. -l'${p}lto-dlink-compute75' -Wl,-rpath,'\$ORIGIN'"
# -rdc and whole-program modules in one program (shapes from a review): a
# relocatable sm_75+sm_90, b whole-program sm_75 (mixed) or sm_90 (mixed2),
# c relocatable sm_75 only, device-linked with a (union). Each kernel is
# launched by main.cu's WITH_MUL/-D names: add = a, mul = b or c.
try "${p}exe-mixed-rdc90-whole75" bash -c "$(printf '%q ' "$nvcc") -rdc=true -c -gencode arch=compute_75,code=sm_75 \
  -gencode arch=compute_90,code=sm_90 -o ma.o '$src/add.cu' && \
  $(printf '%q ' "$nvcc") -c -gencode arch=compute_75,code=sm_75 -o mb75.o '$src/mul.cu' && \
  $(printf '%q ' "$nvcc") -rdc=true -c -DWITH_MUL -gencode arch=compute_75,code=sm_75 -o mm.o '$src/main.cu' && \
  $(printf '%q ' "$nvcc") -dlink -gencode arch=compute_75,code=sm_75 -o mdl.o mm.o ma.o && \
  $(printf '%q ' "$nvcc") -o '${p}exe-mixed-rdc90-whole75' mm.o ma.o mb75.o mdl.o"
try "${p}exe-mixed-rdc90-whole90" bash -c "$(printf '%q ' "$nvcc") -c -gencode arch=compute_90,code=sm_90 -o mb90.o '$src/mul.cu' && \
  $(printf '%q ' "$nvcc") -o '${p}exe-mixed-rdc90-whole90' mm.o ma.o mb90.o mdl.o"
try "${p}exe-union-rdc90-rdc75" bash -c "$(printf '%q ' "$nvcc") -rdc=true -c -gencode arch=compute_75,code=sm_75 -o mc.o '$src/mul.cu' && \
  $(printf '%q ' "$nvcc") -dlink -gencode arch=compute_75,code=sm_75 -o udl.o mm.o ma.o mc.o && \
  $(printf '%q ' "$nvcc") -o '${p}exe-union-rdc90-rdc75' mm.o ma.o mc.o udl.o"
# Standalone images for launch.c.
try "${p}compute80.fatbin" nv -fatbin -gencode arch=compute_80,code=compute_80 -o "${p}compute80.fatbin" "$src/add.cu"
try "${p}sm90.cubin" nv -cubin -arch=sm_90 -o "${p}sm90.cubin" "$src/add.cu"
rm -f ./*.o
