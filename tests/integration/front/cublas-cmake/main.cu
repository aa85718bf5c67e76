#include <cublas_v2.h>

#include <cstdio>

__global__ void fill(float* x, float v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

int main() {
  const int n = 1 << 10;
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess) return 2;
  fill<<<(n + 255) / 256, 256>>>(x, 1.0f, n);
  fill<<<(n + 255) / 256, 256>>>(y, 2.0f, n);
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 3;
  const float a = 3.0f;
  const cublasStatus_t s = cublasSaxpy(handle, n, &a, x, 1, y, 1);
  cublasDestroy(handle);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("axpy: %s, cublas %d\n", cudaGetErrorString(e), static_cast<int>(s));
  return e == cudaSuccess && s == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}
