#include "vecops.cuh"

__global__ void axpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = scale(a, x[i]) + y[i];
}

int launch_axpy(int n, float a, const float *x, float *y) {
  axpy<<<(n + 255) / 256, 256>>>(n, a, x, y);
  return static_cast<int>(cudaDeviceSynchronize());
}
