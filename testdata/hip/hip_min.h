// hip_min.h: the few HIP declarations clang's HIP code generation needs,
// for building without ROCm (-nogpuinc -nogpulib). The stand-in runtime
// hipstub.c defines the functions.
#ifndef HIP_MIN_H
#define HIP_MIN_H
#include <stddef.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shmem, hipStream_t stream);
extern "C" unsigned __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shmem = 0, hipStream_t stream = 0);
extern "C" int __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, hipStream_t *stream);
#endif
