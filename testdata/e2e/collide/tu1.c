// tu1.c: other kernels and a helper of its own, then shared.h's.
#include <stdio.h>
static int pre(int v) { return v + 3; }
int other(int *x) {
#pragma omp target parallel for map(tofrom : x[0 : 4])
  for (int i = 0; i < 4; i++)
    x[i] *= 2;
  printf("other %d\n", pre(x[0]));
  return 0;
}
#include "shared.h"
int use1(int *x, int n) { return shared_kernel(x, n); }
