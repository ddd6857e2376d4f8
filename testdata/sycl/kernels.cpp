// kernels.cpp: three kernels named by a template instantiated twice, one
// calling a [[clang::sycl_external]] function defined in device.cpp, and
// one more named by a type in a namespace.
#include "sycl_min.h"

struct AddKernel;
template <typename T> struct ScaleKernel;
namespace ns {
struct Twice;
}

void run_add(int *p) {
  kernel_single_task<AddKernel>([=]() { p[0] = offset_of(p[1]) + p[2]; });
}

template <typename T> void run_scale(T *p, T s) {
  kernel_single_task<ScaleKernel<T>>([=]() {
    for (int i = 0; i < 4; i++)
      p[i] *= s;
  });
}
template void run_scale<int>(int *, int);
template void run_scale<float>(float *, float);

void run_twice(long *p) {
  kernel_single_task<ns::Twice>([=]() { p[0] += p[0]; });
}
