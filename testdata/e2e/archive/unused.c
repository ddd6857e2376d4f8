// unused.c: archive member that main.c never references. Its target region
// must not be needed (nor break the link) when libkern.a is linked.
#include <omp.h>

int unused_kernel(int n) {
  int r = 0;
#pragma omp target map(tofrom : r)
  for (int i = 0; i < n; i++)
    r += i ^ 0x55;
  return r;
}
