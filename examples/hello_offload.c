// hello_offload.c: the offcc demo. Runs a SAXPY-style loop in an OpenMP
// target region and prints proof that it ran on an offload device.
//
//   bin/offcc -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu examples/hello_offload.c -o hello
//   OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=/usr/lib/llvm-22/lib ./hello
//
// With -fopenmp-targets=x86_64-pc-linux-gnu the "device" is the host CPU
// driven through libomptarget's host plugin, so this runs on any x86-64 Linux
// machine; the target region still executes as offloaded device code.
#include <omp.h>
#include <stdio.h>

#define N 4096

int main(void) {
  static float x[N], y[N];
  const float a = 2.5f;
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }

  int ndev = omp_get_num_devices();
  int dev = omp_get_default_device();
  int initial = 1, teams = 0;

#pragma omp target teams distribute parallel for map(to : x) map(tofrom : y)          \
    map(tofrom : initial, teams) device(dev)
  for (int i = 0; i < N; i++) {
    if (i == 0) {
      initial = omp_is_initial_device();
      teams = omp_get_num_teams();
    }
    y[i] = a * x[i] + y[i];
  }

  double checksum = 0;
  int bad = 0;
  for (int i = 0; i < N; i++) {
    checksum += y[i];
    if (y[i] != a * (float)i + 1.0f)
      bad++;
  }

  printf("offload devices available: %d (default device %d)\n", ndev, dev);
  printf("target region ran on device %d: omp_is_initial_device() == %d, teams=%d\n", dev,
         initial, teams);
  printf("saxpy checksum: %.1f (%s)\n", checksum, bad ? "WRONG" : "ok");
  if (initial) {
    fprintf(stderr, "hello_offload: the target region ran on the host, not on a device\n");
    return 2;
  }
  if (bad) {
    fprintf(stderr, "hello_offload: %d wrong results\n", bad);
    return 3;
  }
  printf("hello from the offload device!\n");
  return 0;
}
