// reduce.hip: per-block sums in shared memory, __syncthreads between the
// steps of the tree.
#include "common.h"

__global__ void block_sums(const float *in, float *sums, int n) {
  __shared__ float part[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    sums[blockIdx.x] = part[0];
}

void launch_block_sums(const float *in, float *sums, int n) {
  hipLaunchKernelGGL(block_sums, dim3((n + BLOCK - 1) / BLOCK), dim3(BLOCK), 0, 0, in, sums, n);
}
