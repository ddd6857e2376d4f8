#include <omp.h>
#include <stdio.h>
int use1(int *x, int n);
int use2(int *x, int n);
int other(int *x);
int main(void) {
  int x[4] = {0}, on_device = 0;
  use1(x, 4);
  use2(x, 4);
  other(x);
#pragma omp target map(from : on_device)
  on_device = !omp_is_initial_device();
  printf("x[1] %d\non device: %s\n", x[1], on_device ? "yes" : "no");
  return x[1] == 8 ? 0 : 1;
}
