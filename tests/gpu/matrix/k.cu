__global__ void add(float*a){a[threadIdx.x]+=1;}
