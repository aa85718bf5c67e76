// Brightness/contrast on an image tensor: out = clamp(alpha * in + beta, 0, 1).
#include <torch/extension.h>

__global__ void adjust_kernel(const float* in, float* out, float alpha, float beta, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = fminf(fmaxf(alpha * in[i] + beta, 0.0f), 1.0f);
}

torch::Tensor adjust(torch::Tensor image, double alpha, double beta) {
  TORCH_CHECK(image.is_cuda() && image.scalar_type() == torch::kFloat, "adjust: a float CUDA tensor");
  auto in = image.contiguous();
  auto out = torch::empty_like(in);
  const int64_t n = in.numel();
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  if (n > 0)
    adjust_kernel<<<blocks, threads>>>(in.data_ptr<float>(), out.data_ptr<float>(), static_cast<float>(alpha),
                                       static_cast<float>(beta), n);
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("adjust", &adjust, "clamp(alpha * image + beta, 0, 1)"); }
