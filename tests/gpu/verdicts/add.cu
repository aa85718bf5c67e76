// The kernel every verdict fixture launches: a[i] += 1.
__global__ void add(float* a) { a[threadIdx.x] += 1; }
