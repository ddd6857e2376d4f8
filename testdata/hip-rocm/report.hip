// report.hip: host code only, no kernels. Under -Wall it warns once, on
// purpose: e2e/hip_rocm_test.go counts the warnings of a HIP file without
// kernels.
#include "common.h"
#include <cstdio>

float host_total(const float *v, int n) {
  float total = 0;
  for (int i = 0; i < n; i++)
    total += v[i];
  return total;
}

void report(const char *what, const float *v, int n) {
  int unused_count = n;
  std::printf("%s: n=%d first=%.3f total=%.3f\n", what, n, v[0], host_total(v, n));
}
