// rdc_lib.cu: device code linked from a static library (libdev.a): its
// member is extracted because rdc_dev.cu's device code needs cube().
__device__ float cube(float x) { return x * x * x; }

__device__ float unused_in_lib(float x) { return x + 1.0f; }
