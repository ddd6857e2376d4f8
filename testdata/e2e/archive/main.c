// main.c: calls kern_run from libkern.a (archive built from kern.c and
// unused.c with `offcc -c` and `llvm-ar rcs`).
#include <stdio.h>

long kern_run(int n, int *on_host);

int main(void) {
  int on_host = 1;
  const int n = 100;
  long sum = kern_run(n, &on_host);
  long want = (long)(n - 1) * n * (2 * n - 1) / 6;
  printf("on device: %s, sum of squares=%ld\n", on_host ? "no" : "yes", sum);
  if (on_host) {
    fprintf(stderr, "archive: target region ran on the host\n");
    return 2;
  }
  if (sum != want) {
    fprintf(stderr, "archive: wrong sum %ld, want %ld\n", sum, want);
    return 3;
  }
  return 0;
}
