__device__ __noinline__ float heavy(const float* p, int n) { float a[64]; for (int i=0;i<64;i++) a[i]=p[(i*n)&1023]*i; float s=0; for(int i=0;i<n;i++) s+=a[(i*7)&63]*a[(i*3)&63]; __shared__ float sh[256]; sh[threadIdx.x]=s; __syncthreads(); return sh[(threadIdx.x+1)&255]; }
__global__ void kc(float* p, int n) { p[threadIdx.x] = heavy(p, n); }
