#include <stdio.h>
int f1(int *x, int n);
int f100(int *x, int n);
int main(void) {
  int x[4] = {0}, y[4] = {0};
  f1(x, 4);
  f100(y, 4);
  printf("f1 %d f100 %d\n", x[0], y[0]);
  return x[0] == 1 && y[0] == 100 ? 0 : 1;
}
