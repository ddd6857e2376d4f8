// plain.c: ordinary C with no offloading, for non-offload compile checks.
#include <stdio.h>

static int counter;
int exported_value = 42;
const char *greeting = "hello";

static int helper(int x) { return x * 2 + counter++; }

int plain_api(int x) { return helper(x) + exported_value; }

int main(void) {
  printf("%s %d\n", greeting, plain_api(3));
  return 0;
}
