// headers.c: a target region using a header and an -include file.
//
// Build: offcc -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -include config.h headers.c
#include <omp.h>
#include <stdio.h>

#include "scale.h"

int main(void) {
  int on_host = 1, v = 0;
#pragma omp target map(from : on_host, v)
  {
    on_host = omp_is_initial_device();
    v = scale(14);
  }
  printf("on device: %s, v=%d\n", on_host ? "no" : "yes", v);
  return on_host || v != 42;
}
