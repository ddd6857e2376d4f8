// templates.cpp: C++ templates and lambdas inside OpenMP target regions.
// Build with offcc++ (g++ driver mode):
//   offcc++ -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu templates.cpp -o templates
#include <omp.h>

#include <cstdio>
#include <cstdlib>

template <typename T> struct Affine {
  T a, b;
  T operator()(T x) const { return a * x + b; }
};

// Templated kernel: instantiated for int and double below.
template <typename T> T dot_affine(const T *x, int n, Affine<T> f, int *on_host) {
  T acc = T(0);
  int h = 1;
#pragma omp target map(to : x[0 : n]) map(tofrom : acc) map(from : h)
  {
    h = omp_is_initial_device();
    for (int i = 0; i < n; i++)
      acc += f(x[i]) * x[i];
  }
  *on_host = h;
  return acc;
}

template <typename T> T host_dot_affine(const T *x, int n, Affine<T> f) {
  T acc = T(0);
  for (int i = 0; i < n; i++)
    acc += f(x[i]) * x[i];
  return acc;
}

int main() {
  constexpr int n = 64;
  int xi[n];
  double xd[n];
  for (int i = 0; i < n; i++) {
    xi[i] = i - 7;
    xd[i] = 0.5 * i + 0.25;
  }

  int host_i = 1, host_d = 1, host_l = 1;
  int ri = dot_affine<int>(xi, n, Affine<int>{3, -2}, &host_i);
  double rd = dot_affine<double>(xd, n, Affine<double>{1.5, 0.125}, &host_d);

  // A lambda that captures by value, created and called inside the region.
  const int k = 5;
  long rl = 0;
#pragma omp target map(tofrom : rl) map(from : host_l)
  {
    host_l = omp_is_initial_device();
    auto mul = [k](long v) { return v * k; };
    for (int i = 0; i < n; i++)
      rl += mul(i);
  }

  const int want_i = host_dot_affine<int>(xi, n, Affine<int>{3, -2});
  const double want_d = host_dot_affine<double>(xd, n, Affine<double>{1.5, 0.125});
  const long want_l = 5L * (n - 1) * n / 2;

  const bool on_device = !host_i && !host_d && !host_l;
  std::printf("on device: %s, int=%d, double=%.3f, lambda=%ld\n", on_device ? "yes" : "no",
              ri, rd, rl);
  if (!on_device) {
    std::fprintf(stderr, "cxx: a target region ran on the host\n");
    return 2;
  }
  if (ri != want_i || rd != want_d || rl != want_l) {
    std::fprintf(stderr, "cxx: wrong result (want int=%d double=%.3f lambda=%ld)\n", want_i,
                 want_d, want_l);
    return 3;
  }
  return 0;
}
