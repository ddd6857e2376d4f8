// main.cpp: runs the kernels library's target regions and checks the results.
// Prints "on device: yes" and one line per result; exits non-zero when a
// result is wrong or the target regions ran on the host.
#include <cstdio>
#include <vector>

#include "kernels.h"

extern "C" void report(const char *what, double got, double want);

int main() {
  const int n = 1000;
  std::vector<float> x(n), y(n, 1.0f);
  std::vector<double> a(n), b(n);
  for (int i = 0; i < n; i++) {
    x[i] = float(i);
    a[i] = i;
    b[i] = 2;
  }
  k_saxpy(n, 2.0f, x.data(), y.data());
  double ysum = 0;
  for (float v : y)
    ysum += v;
  double dot = k_dot(n, a.data(), b.data());

  int dev = k_on_device();
  std::printf("devices: %d\n", k_num_devices());
  std::printf("on device: %s\n", dev ? "yes" : "no");
  // sum(2*i + 1) = n*(n-1) + n; sum(2*i) = n*(n-1).
  const double wantY = double(n) * (n - 1) + n, wantDot = double(n) * (n - 1);
  report("saxpy sum", ysum, wantY);
  report("dot", dot, wantDot);
  return dev && ysum == wantY && dot == wantDot ? 0 : 1;
}
