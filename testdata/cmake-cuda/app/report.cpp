#include "report.h"

#include <cmath>
#include <cstdio>

int report(const char *what, double got, double want) {
  bool ok = std::fabs(got - want) < 1e-3 * std::fabs(want) + 1e-6;
  std::printf("%s: %.1f (%s)\n", what, got, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
