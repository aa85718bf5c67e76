/* Loads a fatbin or cubin with the driver API and launches _Z3addPf once:
 * prints the CUresult and exits 0 when it ran, 1 when it did not, 3 without
 * a GPU. Built on the GPU host: cc launch.c -I/usr/local/cuda/include -lcuda */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* image = malloc((size_t)n + 1);
  if (fread(image, 1, (size_t)n, f) != (size_t)n) return 2;
  image[n] = 0;
  fclose(f);
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, NULL, 0, dev)) return 3;
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr a;
  CUresult r = cuModuleLoadData(&mod, image);
  if (r == CUDA_SUCCESS) r = cuModuleGetFunction(&fn, mod, "_Z3addPf");
  if (r == CUDA_SUCCESS) r = cuMemAlloc(&a, 32 * sizeof(float));
  void* args[] = {&a};
  if (r == CUDA_SUCCESS) r = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
  if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
  const char* name = "?";
  cuGetErrorName(r, &name);
  printf("%d %s\n", (int)r, name);
  return r == CUDA_SUCCESS ? 0 : 1;
}
