// Launches the library's axpy (relocatable device code, through
// launch_axpy and directly) and a kernel of its own.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "report.h"
#include "vecops.cuh"

__global__ void fill(int n, float v, float *p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = scale(v, 1.0f);
}

int main() {
  const int n = 1000;
  float *x, *y;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&y, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  fill<<<(n + 255) / 256, 256>>>(n, 1.0f, x);
  fill<<<(n + 255) / 256, 256>>>(n, 2.0f, y);
#ifdef LAUNCH_FROM_MAIN
  axpy<<<(n + 255) / 256, 256>>>(n, 1.0f, x, y); // y = 3
  const double want = 5.0;
#else
  const double want = 4.0;
#endif
  if (int err = launch_axpy(n, 2.0f, x, y)) { // y += 2
    std::fprintf(stderr, "kernel failed: %s\n", cudaGetErrorString(static_cast<cudaError_t>(err)));
    return 1;
  }
  std::vector<float> h(n);
  cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
  double sum = 0;
  for (float v : h)
    sum += v;
  cudaFree(x);
  cudaFree(y);
  return report("axpy sum", sum, want * n);
}
