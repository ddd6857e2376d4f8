// kernels.cu: kernels, device and constant variables and their launches,
// compiled for several sm archs. (clang accepts __managed__ for HIP only.)
#include "cuda_min.h"

__device__ int counter;
__constant__ float coef[4];

__global__ void scale(float *a, float s, int n) {
  for (int i = 0; i < n; i++)
    a[i] *= s * coef[i % 4];
}

__global__ void accumulate(const float *a, int n) {
  for (int i = 0; i < n; i++)
    counter += (int)a[i];
}

template <typename T> __global__ void fill(T *a, T v, int n) {
  for (int i = 0; i < n; i++)
    a[i] = v;
}

int launch(float *a, int n) {
  scale<<<dim3(1), dim3(64)>>>(a, 2.0f, n);
  accumulate<<<1, 1>>>(a, n);
  fill<float><<<1, 1>>>(a, 0.5f, n);
  fill<int><<<1, 1>>>((int *)a, 3, n);
  return 0;
}
