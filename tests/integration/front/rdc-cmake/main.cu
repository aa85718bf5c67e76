#include <cstdio>

__device__ float scale_one(float x, float a);

__global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = scale_one(x[i], a);
}

int main() {
  const int n = 1 << 10;
  float* x = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess) return 2;
  cudaMemset(x, 0, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("rdc: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
