__global__ void own(float* p) { __shared__ float s[256]; s[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = s[(threadIdx.x + 1) & 255]; }
