#!/usr/bin/env bash
# Builds the prediction-versus-observation matrix of issue 3/6 into DIR:
# one fatbin per case, the kernel `add` compiled by NVCC (default
# /usr/local/cuda/bin/nvcc) for exactly the targets the file name says.
set -euo pipefail
out=${1:?usage: make.sh DIR [NVCC]}
nvcc=${2:-/usr/local/cuda/bin/nvcc}
src=$(cd "$(dirname "$0")" && pwd)/k.cu
mkdir -p "$out"
build() { "$nvcc" -fatbin "${@:2}" -o "$out/$1.fatbin" "$src"; }
build sm80 -gencode arch=compute_80,code=sm_80
build compute80 -gencode arch=compute_80,code=compute_80
build sm90 -gencode arch=compute_90,code=sm_90
build sm90a -gencode arch=compute_90a,code=sm_90a
build sm86-compute86 -gencode 'arch=compute_86,code=[sm_86,compute_86]'
build sm100 -gencode arch=compute_100,code=sm_100
build compute120 -gencode arch=compute_120,code=compute_120
build sm75-compute75 -gencode 'arch=compute_75,code=[sm_75,compute_75]'
