// A second kernel in a translation unit (a module) of its own.
__global__ void mul(float* a) { a[threadIdx.x] *= 2; }
