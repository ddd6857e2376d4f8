// devinfo.c: where target regions run.
#include <omp.h>

#include "kernels.h"

int k_on_device(void) {
  int initial = 1;
#pragma omp target map(from : initial)
  initial = omp_is_initial_device();
  return !initial;
}

int k_num_devices(void) { return omp_get_num_devices(); }
