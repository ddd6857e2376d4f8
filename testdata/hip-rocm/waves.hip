// waves.hip: device math (sinf, cosf) in a kernel, a __device__ helper
// and a kernel template with a dynamic shared memory buffer.
#include "common.h"

__device__ float wave(float x, float phase) { return sinf(x + phase) * 0.5f + cosf(x) * 0.25f; }

template <int Scale> __global__ void waves(float *out, float phase, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? wave(i * 0.01f, phase) : 0.0f;
  __syncthreads();
  if (i < n)
    out[i] = Scale * tile[(threadIdx.x + 1) % blockDim.x];
}

void launch_waves(float *out, float phase, int n) {
  hipLaunchKernelGGL(waves<2>, dim3((n + BLOCK - 1) / BLOCK), dim3(BLOCK), BLOCK * sizeof(float), 0, out, phase, n);
}
