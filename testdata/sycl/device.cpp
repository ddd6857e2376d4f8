// device.cpp: defines the [[clang::sycl_external]] function kernels.cpp's
// AddKernel calls, and two more kernels: one whose body is a lambda, one a
// function object (its type names the kernel).
#include "sycl_min.h"

[[clang::sycl_external]] int offset_of(int i) { return i * 3 + 1; }

struct FillKernel;

void run_fill(int *p, int n) {
  kernel_single_task<FillKernel>([=]() {
    for (int i = 0; i < n; i++)
      p[i] = offset_of(i);
  });
}

struct Functor {
  float *p;
  void operator()() const { p[0] = p[0] * 0.5f + 1.0f; }
};

void run_functor(float *p) { kernel_single_task<Functor>(Functor{p}); }
