// y = a*x + y on the GPU, checked against the host. Without a GPU (a build
// machine) it says so and exits 0: the build is what this example proves.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("saxpy: no CUDA device; nothing to run\n");
    return 0;
  }
  constexpr int n = 1 << 20;
  constexpr float a = 2.0f;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = 1.0f;
  }
  float *dx = nullptr, *dy = nullptr;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  saxpy<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
  // "no kernel image is available" shows up here, on the launch.
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) {
    std::printf("saxpy: launch failed: %s\n", cudaGetErrorString(launch));
    return 1;
  }
  cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(y[i] - (a * static_cast<float>(i % 1000) + 1.0f)) > 1e-5f) ++wrong;
  std::printf("saxpy: %d of %d results wrong\n", wrong, n);
  return wrong == 0 ? 0 : 1;
}
