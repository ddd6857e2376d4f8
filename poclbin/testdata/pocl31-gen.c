#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src =
"kernel void vadd(global const float *a, global const float *b, global float *c) {\n"
"  size_t i = get_global_id(0); c[i] = a[i] + b[i];\n}\n"
"kernel void scale(global float *x, float f) { x[get_global_id(0)] *= f; }\n";
int main(int argc, char **argv) {
  cl_platform_id pf; cl_device_id dev; cl_int err;
  if (clGetPlatformIDs(1, &pf, NULL)) { fprintf(stderr, "no platform\n"); return 1; }
  if (clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)) { fprintf(stderr, "no device\n"); return 1; }
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  err = clBuildProgram(p, 1, &dev, "", NULL, NULL);
  if (err) { char log[8192]; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL); fprintf(stderr, "build %d: %s\n", err, log); return 1; }
  /* Force kernel compilation so the kernel cache dirs hold code. */
  cl_kernel k = clCreateKernel(p, "vadd", &err);
  size_t sz; clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof sz, &sz, NULL);
  unsigned char *bin = malloc(sz);
  clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
  FILE *f = fopen(argv[1], "wb"); fwrite(bin, 1, sz, f); fclose(f);
  printf("%zu bytes\n", sz);
  return 0;
}
