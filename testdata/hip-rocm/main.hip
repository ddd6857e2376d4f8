// main.hip: allocates, launches the kernels of the other files and a
// kernel of its own, and reports.
#include "common.h"
#include <vector>

__global__ void iota(float *a, float start, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = start + i;
}

int main(int argc, char **argv) {
  int n = parse_size(argc, argv, 1024);
  size_t bytes = n * sizeof(float);
  int blocks = (n + BLOCK - 1) / BLOCK;
  float *a, *b, *c, *sums;
  HIP_CHECK(hipMalloc(&a, bytes));
  HIP_CHECK(hipMalloc(&b, bytes));
  HIP_CHECK(hipMalloc(&c, bytes));
  HIP_CHECK(hipMalloc(&sums, blocks * sizeof(float)));
  hipLaunchKernelGGL(iota, dim3(blocks), dim3(BLOCK), 0, 0, a, 0.0f, n);
  hipLaunchKernelGGL(iota, dim3(blocks), dim3(BLOCK), 0, 0, b, 1.0f, n);
  launch_vec_add(a, b, c, n);
  launch_block_sums(c, sums, n);
  std::vector<float> host(blocks);
  HIP_CHECK(hipMemcpy(host.data(), sums, blocks * sizeof(float), hipMemcpyDeviceToHost));
  report("block sums", host.data(), blocks);
  launch_waves(c, 0.5f, n);
  host.resize(n);
  HIP_CHECK(hipMemcpy(host.data(), c, bytes, hipMemcpyDeviceToHost));
  report("waves", host.data(), n);
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipFree(b));
  HIP_CHECK(hipFree(c));
  HIP_CHECK(hipFree(sums));
  return 0;
}
