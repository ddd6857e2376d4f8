// main.c: runs a/foo.c's and b/foo.c's kernels and prints what they did.
#include <stdio.h>
int fa(int *x, int n);
int fb(int *x, int n);
int main(void) {
  int x[4] = {0}, y[4] = {0};
  fa(x, 4);
  fb(y, 4);
  printf("fa %d fb %d\n", x[0], y[0]);
  return x[0] == 1 && y[0] == 100 ? 0 : 1;
}
