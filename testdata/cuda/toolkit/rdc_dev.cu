// rdc_dev.cu: device code called from another translation unit, calling
// into the static library's rdc_lib.cu.
__device__ int hits;
extern __device__ float cube(float);

__device__ float scaled(float x) { return cube(x) * 0.5f + __sinf(x); }

__global__ void reset() { hits = 0; }
