// main.cpp: host code only (no kernels): calls each kernel's host entry
// point. Kernel calls do nothing on the host; the stand-in runtime
// (syclstub.c) prints what the program registered at start-up.
#include <stdio.h>

#include "sycl_min.h"

int main() {
  int a[4] = {1, 2, 3, 4};
  float f[4] = {1, 2, 3, 4};
  long l = 21;
  run_add(a);
  run_scale(a, 2);
  run_scale(f, 0.5f);
  run_fill(a, 4);
  run_functor(f);
  run_twice(&l);
  printf("main: kernels called\n");
  fflush(stdout);
  return 0;
}
