// saxpy.c: a C target region in the kernels library.
#include "kernels.h"
#include "tuning.h"

void k_saxpy(int n, float a, const float *x, float *y) {
#pragma omp target teams distribute parallel for map(to : x[0 : n]) map(tofrom : y[0 : n])
  for (int i = 0; i < n; i++)
    y[i] = (float)k_fma(a, x[i], y[i]);
}
