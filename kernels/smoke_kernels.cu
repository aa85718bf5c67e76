// Smoke kernels: one source that builds for every tier (nvcc -fatbin with the
// tier's -gencode list) and exercises what differs between GPU generations.
// The runner (orchestrator/smoke/) loads the fatbin through the driver API
// and checks every kernel against a CPU reference.
//
// The convention the runner relies on (orchestrator/smoke/kernels.cpp):
//   extern "C" __global__ void orc_NAME(const float* a, const float* b,
//                                       float* out, int n, int* status)
//   status[0]  1 when the kernel ran its real code, k_unsupported (-1) when
//              the code was compiled for an arch that lacks the feature (the
//              runner reports the kernel as skipped, not failed)
//   status[1]  __CUDA_ARCH__ the running code was compiled for (750 when a
//              9.0 GPU runs compute_75 PTX through the JIT)
// Geometry, sizes and inputs per kernel are in the runner's table.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <mma.h>

namespace {

constexpr int k_unsupported = -1;
constexpr float k_saxpy_alpha = 2.5f;
constexpr int k_tile = 16;

__device__ bool first_thread() {
  return blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0;
}

// Every kernel says which code it ran, so a JIT from old PTX is visible.
__device__ void report(int* status, bool supported) {
  if (!first_thread()) return;
#ifdef __CUDA_ARCH__
  status[0] = supported ? 1 : k_unsupported;
  status[1] = __CUDA_ARCH__;
#endif
}

// Sum over a warp with butterfly shuffles: every lane ends with the total.
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over a block of 256 threads: warps first, then the first warp.
__device__ float block_sum(float v) {
  __shared__ float partial[8];
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < 8 ? partial[threadIdx.x] : 0.0f;
  if (threadIdx.x < 32) v = warp_sum(v);
  return v;
}

}  // namespace

// out[i] = 2.5 * a[i] + b[i]
extern "C" __global__ void orc_saxpy(const float* a, const float* b, float* out, int n, int* status) {
  report(status, true);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = k_saxpy_alpha * a[i] + b[i];
}

// out[block] = sum of a over the block's 256 elements (warp shuffles).
extern "C" __global__ void orc_reduce(const float* a, const float*, float* out, int n, int* status) {
  report(status, true);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float total = block_sum(i < n ? a[i] : 0.0f);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// out = a x b for n x n row-major matrices, 16 x 16 tiles in shared memory.
extern "C" __global__ void orc_matmul(const float* a, const float* b, float* out, int n, int* status) {
  report(status, true);
  __shared__ float ta[k_tile][k_tile];
  __shared__ float tb[k_tile][k_tile];
  const int row = blockIdx.y * k_tile + threadIdx.y;
  const int col = blockIdx.x * k_tile + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < n; t += k_tile) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < k_tile; ++k) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  out[row * n + col] = acc;
}

// The same product on tensor cores: one warp per 16 x 16 output tile, fp16
// inputs (converted in shared memory), fp32 accumulation.
extern "C" __global__ void orc_wmma(const float* a, const float* b, float* out, int n, int* status) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  namespace wmma = nvcuda::wmma;
  report(status, true);
  __shared__ __half ta[k_tile * k_tile];
  __shared__ __half tb[k_tile * k_tile];
  const int tile_row = blockIdx.y * k_tile;
  const int tile_col = blockIdx.x * k_tile;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int t = 0; t < n; t += k_tile) {
    for (int e = threadIdx.x; e < k_tile * k_tile; e += 32) {
      const int r = e / k_tile, c = e % k_tile;
      ta[e] = __float2half(a[(tile_row + r) * n + t + c]);
      tb[e] = __float2half(b[(t + r) * n + tile_col + c]);
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::load_matrix_sync(fa, ta, k_tile);
    wmma::load_matrix_sync(fb, tb, k_tile);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncwarp();
  }
  wmma::store_matrix_sync(out + tile_row * n + tile_col, acc, n, wmma::mem_row_major);
#else
  report(status, false);
  (void)a, (void)b, (void)out, (void)n;
#endif
}

// out[i] = bf16(a[i]) * bf16(b[i]) + 1, one bf16 fma (rounded to nearest even).
extern "C" __global__ void orc_bf16(const float* a, const float* b, float* out, int n, int* status) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  report(status, true);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const __nv_bfloat16 r = __hfma(__float2bfloat16(a[i]), __float2bfloat16(b[i]), __float2bfloat16(1.0f));
    out[i] = __bfloat162float(r);
  }
#else
  report(status, false);
  (void)a, (void)b, (void)out, (void)n;
#endif
}

// out[i] = float(fp8_e4m3(a[i])): round to nearest even, saturating at 448.
extern "C" __global__ void orc_fp8(const float* a, const float*, float* out, int n, int* status) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  report(status, true);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(__nv_fp8_e4m3(a[i]));
#else
  report(status, false);
  (void)a, (void)out, (void)n;
#endif
}

// Thread-block clusters of two blocks (launched with a cluster dimension):
// each block sums its 256 elements into its shared memory; block 0 of the
// cluster reads block 1's through distributed shared memory and writes
// out[cluster] = both sums.
extern "C" __global__ void orc_cluster(const float* a, const float*, float* out, int n, int* status) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  report(status, true);
  __shared__ float mine;
  cg::cluster_group cluster = cg::this_cluster();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float total = block_sum(i < n ? a[i] : 0.0f);
  if (threadIdx.x == 0) mine = total;
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    const float* other = cluster.map_shared_rank(&mine, 1);
    out[blockIdx.x / 2] = mine + *other;
  }
  // Block 1's shared memory must outlive block 0's read of it.
  cluster.sync();
#else
  report(status, false);
  (void)a, (void)out, (void)n;
#endif
}
