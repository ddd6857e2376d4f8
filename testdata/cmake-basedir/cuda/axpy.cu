// axpy.cu: y = a*x + y, launched with <<<>>>.
#include "shapes.h"

__global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

void launch_axpy(float a, const float *x, float *y, int n) {
  axpy<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(a, x, y, n);
}
