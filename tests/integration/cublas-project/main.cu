// A cooperative_groups kernel and a cuBLAS handle: built, linked against the
// shared runtime and cuBLAS; run only to see that it loads (there may be no GPU).
#include <cooperative_groups.h>
#include <cublas_v2.h>

#include <cstdio>

namespace cg = cooperative_groups;

__global__ void fill(float* x, int n) {
  const cg::thread_block block = cg::this_thread_block();
  const int i = static_cast<int>(blockIdx.x * block.size() + block.thread_rank());
  if (i < n) x[i] = 1.0f;
}

int main() {
  cublasHandle_t handle;
  const cublasStatus_t status = cublasCreate(&handle);
  std::printf("cublasCreate: %d\n", static_cast<int>(status));
  if (status == CUBLAS_STATUS_SUCCESS) cublasDestroy(handle);
  return 0;
}
