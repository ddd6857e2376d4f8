// report.c: host-only C code of the application.
#include <stdio.h>

void report(const char *what, double got, double want) {
  printf("%s: %.1f (%s)\n", what, got, got == want ? "ok" : "WRONG");
}
