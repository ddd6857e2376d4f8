// kernels.cu: kernels with math library calls, a device variable, a
// constant table and a template, compiled with the CUDA toolkit's headers
// (clang's CUDA wrappers over cuda_runtime.h) for several sm archs.
#include <cuda_runtime.h>

__device__ int counter;
__constant__ float coef[4];

__global__ void wave(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = sinf(a[i]) * expf(-s * coef[i % 4]) + sqrtf(fabsf(a[i]));
}

__global__ void count(const float *a, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    if (a[i] > 0.5f)
      atomicAdd(&counter, 1);
}

template <typename T> __global__ void fill(T *a, T v, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    a[i] = v * (T)erf((double)i / n);
}

int launch(float *a, int n) {
  wave<<<(n + 63) / 64, 64>>>(a, 2.0f, n);
  count<<<1, 32>>>(a, n);
  fill<float><<<1, 32>>>(a, 0.5f, n);
  fill<double><<<1, 32>>>((double *)a, 3.0, n / 2);
  return 0;
}
