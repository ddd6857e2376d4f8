// main.c: runs the project's target regions and prints what they computed.
#include <omp.h>
#include <stdio.h>
#include "kern.h"

void saxpy(int n, float a, const float *x, float *y);

#define N 1000

int main(void) {
  static float x[N], y[N];
  for (int i = 0; i < N; i++) {
    x[i] = 1.0f;
    y[i] = (float)i;
  }
  saxpy(N, 2.0f, x, y);
  double total = 0;
  for (int i = 0; i < N; i++)
    total += y[i];
  int on_device = 0;
#pragma omp target map(from : on_device)
  on_device = !omp_is_initial_device();
  printf("on device: %s\n", on_device ? "yes" : "no");
  printf("saxpy %.1f\n", total);
  printf("header %d\n", header_kernel(100));
  return 0;
}
