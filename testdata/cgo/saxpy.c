// saxpy.c: an OpenMP target region called from Go through cgo.
#include <omp.h>

#include "saxpy.h"

int saxpy(int n, float a, const float *x, float *y) {
  int initial = 1;
#pragma omp target teams distribute parallel for map(to : x[0 : n]) map(tofrom : y[0 : n]) \
    map(tofrom : initial)
  for (int i = 0; i < n; i++) {
    if (i == 0)
      initial = omp_is_initial_device();
    y[i] = a * x[i] + y[i];
  }
  return !initial;
}
