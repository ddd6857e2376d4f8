// two_errors.c: each AMD device compile fails with its own message, the
// host compile succeeds.
//
// Build: offcc -fopenmp --offload-arch=gfx906,gfx90a -nogpulib -c two_errors.c
// Both device diagnostics must be shown, as clang shows them.
#if defined(__gfx906__)
#error "offcc-e2e: gfx906 device error"
#elif defined(__gfx90a__)
#error "offcc-e2e: gfx90a device error"
#endif

int main(void) {
  int r = 0;
#pragma omp target map(tofrom : r)
  r = 1;
  return r == 1 ? 0 : 1;
}
