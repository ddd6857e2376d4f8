// rdc_shared.cu: relocatable device code whose kernel uses __shared__
// memory (a cubin section that takes no file space: .nv.shared.*), a
// constant table and a device array of its own, and calls scaled() from
// rdc_dev.cu.
#include <cuda_runtime.h>

extern __device__ float scaled(float);

__constant__ float weights[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__device__ float partial[1024];

__global__ void blocksum(const float *a, int n) {
  __shared__ float tile[4096];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? scaled(a[i]) * weights[i % 8] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      tile[threadIdx.x] += tile[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    partial[blockIdx.x % 1024] = tile[0];
}
