// cuda_min.h: the few CUDA declarations clang's CUDA code generation needs,
// for building without the CUDA toolkit (-nocudainc -nocudalib).
#ifndef CUDA_MIN_H
#define CUDA_MIN_H
#include <stddef.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __constant__ __attribute__((constant))
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};
typedef struct CUstream_st *cudaStream_t;
extern "C" int cudaLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream);
extern "C" unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem = 0, cudaStream_t stream = 0);
extern "C" int __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, cudaStream_t *stream);
#endif
