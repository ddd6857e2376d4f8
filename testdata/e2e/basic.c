// basic.c: one target region that must run on an offload device.
//
// Build: offcc -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu basic.c -o basic
// Run:   OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=/usr/lib/llvm-22/lib ./basic
//
// Exits non-zero if the target region ran on the host (initial device) or the
// result is wrong.
#include <omp.h>
#include <stdio.h>

#define N 1000

int main(void) {
  int on_host = 1;
  long sum = 0;

#pragma omp target map(from : on_host) map(tofrom : sum)
  {
    on_host = omp_is_initial_device();
    for (int i = 1; i <= N; i++)
      sum += i;
  }

  printf("on device: %s, sum=%ld\n", on_host ? "no" : "yes", sum);
  if (on_host) {
    fprintf(stderr, "basic: target region ran on the host\n");
    return 2;
  }
  if (sum != (long)N * (N + 1) / 2) {
    fprintf(stderr, "basic: wrong sum %ld\n", sum);
    return 3;
  }
  return 0;
}
