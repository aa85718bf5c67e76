// A shared library whose kernel run() launches.
#include <cuda_runtime.h>
__global__ void add(float* a);
extern "C" int run() {
  float* a = nullptr;
  cudaError_t e = cudaMalloc(&a, 32 * sizeof(float));
  if (e == cudaSuccess) {
    add<<<1, 32>>>(a);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return static_cast<int>(e);
}
