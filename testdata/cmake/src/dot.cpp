// dot.cpp: a C++ target region (a template with a lambda) in the kernels
// library.
#include "kernels.h"
#include "tuning.h"

namespace {

template <typename T, typename F>
T reduce_on_device(int n, const T *x, const T *y, F f) {
  T sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(to : x[0 : n], y[0 : n])
  for (int i = 0; i < n; i++)
    sum = f(x[i], y[i], sum);
  return sum;
}

} // namespace

extern "C" double k_dot(int n, const double *x, const double *y) {
  return reduce_on_device(n, x, y, [](double a, double b, double acc) { return k_fma(a, b, acc); });
}
