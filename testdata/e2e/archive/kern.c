// kern.c: archive member with a declare-target function and a host function
// that launches a target region calling it.
#include <omp.h>

#pragma omp declare target
int kern_square(int x) { return x * x; }
#pragma omp end declare target

// kern_run returns sum_{i<n} i*i computed on the device; *on_host is set to
// omp_is_initial_device() as seen inside the target region.
long kern_run(int n, int *on_host) {
  long sum = 0;
  int h = 1;
#pragma omp target map(tofrom : sum) map(from : h)
  {
    h = omp_is_initial_device();
    for (int i = 0; i < n; i++)
      sum += kern_square(i);
  }
  *on_host = h;
  return sum;
}
