// Launches the fixture's kernels, one line each ("add 0 ran", "mul 209
// cudaErrorNoKernelImageForDevice"), and exits 0 when every one ran, 4 when
// some did, 1 when none did.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void add(float* a);
#ifdef WITH_MUL
__global__ void mul(float* a);
#endif

static bool report(const char* name, cudaError_t e) {
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  std::printf("%s %d %s\n", name, static_cast<int>(e), e == cudaSuccess ? "ran" : cudaGetErrorName(e));
  return e == cudaSuccess;
}

int main() {
  float* a = nullptr;
  const cudaError_t alloc = cudaMalloc(&a, 32 * sizeof(float));
  if (alloc != cudaSuccess) return report("cudaMalloc", alloc), 1;
  int ran = 0, launched = 0;
  add<<<1, 32>>>(a);
  ++launched;
  ran += report("add", cudaGetLastError());
#ifdef WITH_MUL
  mul<<<1, 32>>>(a);
  ++launched;
  ran += report("mul", cudaGetLastError());
#endif
  return ran == launched ? 0 : ran > 0 ? 4 : 1;
}
