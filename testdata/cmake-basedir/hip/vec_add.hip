// vec_add.hip: a grid-stride kernel, launched with hipLaunchKernelGGL.
#include <hip/hip_runtime.h>
#include "shapes.h"

__global__ void vec_add(const float *a, const float *b, float *c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

void launch_vec_add(const float *a, const float *b, float *c, int n) {
  hipLaunchKernelGGL(vec_add, dim3((n + BLOCK - 1) / BLOCK), dim3(BLOCK), 0, 0, a, b, c, n);
}
