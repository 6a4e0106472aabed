__device__ float heavy(const float* p, int n);
__global__ void kc(float* p, int n) { p[threadIdx.x] = heavy(p, n); }
extern "C" void launch_c(float* p, int n) { kc<<<1, 32>>>(p, n); }
