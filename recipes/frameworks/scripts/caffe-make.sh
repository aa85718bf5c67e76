#!/bin/sh
# Builds Caffe with its Makefile. Orchestrate exports CUDA_ARCH (the -gencode
# flags of the tier) and CUDA_DIR; Makefile.config takes them from here.
set -eu
cp Makefile.config.example Makefile.config
cat >>Makefile.config <<CONFIG
CUDA_DIR := ${CUDA_DIR:-/usr/local/cuda}
CUDA_ARCH := ${CUDA_ARCH}
USE_CUDNN := 0
BLAS := open
CONFIG
make -j"$(nproc)" all
