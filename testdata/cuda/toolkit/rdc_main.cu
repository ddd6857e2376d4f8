// rdc_main.cu: the host program of a relocatable-device-code build over
// three translation units, one of them in a static library: its kernel
// calls scaled() from rdc_dev.cu, which calls cube() from rdc_lib.cu.
#include <cstdio>
#include <cuda_runtime.h>

extern __device__ float scaled(float);
extern __device__ int hits;

__global__ void apply(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    a[i] = scaled(a[i]);
    atomicAdd(&hits, 1);
  }
}

int main() {
  apply<<<1, 64>>>(nullptr, 0);
  std::printf("launched apply\n");
  return 0;
}
