// shared.h: a kernel in an inline function, with a declare-target helper
// and a parallel region, that two translation units compile alike.
#include <stdio.h>
#pragma omp declare target
static int sq(int v) { return v * v + 1; }
#pragma omp end declare target
static inline int shared_kernel(int *x, int n) {
#pragma omp target teams distribute parallel for map(tofrom : x[0 : n])
  for (int i = 0; i < n; i++)
    x[i] += sq(i);
  return 0;
}
