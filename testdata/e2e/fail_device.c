// fail_device.c: compiles for the host, but the device compile fails.
//
// Two switches, each of which breaks only the device-side compile:
//
//  -Xopenmp-target=x86_64-pc-linux-gnu -DDEVICE_ONLY_ERROR
//      the macro reaches only the device cc1 job, which hits #error.
//
//  -DVARIANT_ERROR
//      every job sees the macro, but the static assertion sits in a
//      `begin declare variant match(device={kind(nohost)})` block, which the
//      parser keeps only in the device (nohost) compile.
//
// Without a switch (or with no offload targets) it builds and runs normally.
#include <stdio.h>

#ifdef DEVICE_ONLY_ERROR
#error "offcc-e2e: device-only compile error"
#endif

#ifdef VARIANT_ERROR
#pragma omp begin declare variant match(device = {kind(nohost)})
_Static_assert(0, "offcc-e2e: device-only static assertion");
#pragma omp end declare variant
#endif

int main(void) {
  int r = 0;
#pragma omp target map(tofrom : r)
  r = 7;
  printf("r=%d\n", r);
  return r == 7 ? 0 : 1;
}
