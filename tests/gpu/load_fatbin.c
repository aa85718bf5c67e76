/* Loads each fatbin given on the command line with the CUDA driver API
 * (cuModuleLoadData) on GPU 0 and prints the outcome per file:
 *   <file> <CUresult> <name> <binaryVersion of the loaded kernel or -> <jit|native|none>
 * "jit" when the kernel's binaryVersion comes from PTX compiled for this
 * device (no cubin for this CC in the file), "native" when a cubin loaded.
 * Built on the GPU host: cc load_fatbin.c -I/usr/local/cuda/include -lcuda */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void* slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = malloc((size_t)n + 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); fclose(f); return NULL; }
  buf[n] = 0;
  fclose(f);
  return buf;
}

int main(int argc, char** argv) {
  CUdevice dev;
  CUcontext ctx;
  int major = 0, minor = 0, driver = 0;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, NULL, 0, dev)) { fprintf(stderr, "no CUDA device\n"); return 3; }
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cuDriverGetVersion(&driver);
  printf("device CC %d.%d, driver CUDA %d\n", major, minor, driver);
  for (int i = 1; i < argc; ++i) {
    void* image = slurp(argv[i]);
    CUmodule mod;
    CUresult r = image ? cuModuleLoadData(&mod, image) : CUDA_ERROR_FILE_NOT_FOUND;
    const char* name = "?";
    cuGetErrorName(r, &name);
    int bin = -1;
    if (r == CUDA_SUCCESS) {
      CUfunction fn;
      if (cuModuleGetFunction(&fn, mod, "_Z3addPf") == CUDA_SUCCESS) cuFuncGetAttribute(&bin, CU_FUNC_ATTRIBUTE_BINARY_VERSION, fn);
      cuModuleUnload(mod);
    }
    printf("%s %d %s %d\n", strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i], (int)r, name, bin);
    free(image);
  }
  return 0;
}
