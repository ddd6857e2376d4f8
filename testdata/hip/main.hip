// main.hip: a second translation unit with its own kernel.
#include "hip_min.h"
#include <stdio.h>

int launch(float *a, int n);

__global__ void in_main(int *p) { *p = 42; }

int main(void) {
  float a[8] = {0};
  in_main<<<1, 1>>>((int *)a);
  launch(a, 8);
  printf("main: done\n");
  return 0;
}
