// options.hip: host code only, no kernels: runtime error checks and the
// command line.
#include "common.h"
#include <cstdio>
#include <cstdlib>

void hip_check(hipError_t err, const char *what, const char *file, int line) {
  if (err == hipSuccess)
    return;
  std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, hipGetErrorString(err));
  std::exit(1);
}

int parse_size(int argc, char **argv, int fallback) {
  if (argc < 2)
    return fallback;
  int n = std::atoi(argv[1]);
  return n > 0 ? n : fallback;
}
