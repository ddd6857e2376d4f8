// tu_a.c: uses the declare-target global and function from tu_b.c inside
// target regions, moving the global with `target update` and `map`.
#include <omp.h>
#include <stdio.h>

#include "shared.h"

int main(void) {
  int on_host = 1;
  long sum = 0;

  table_init(10);
#pragma omp target update to(table)

  // Read the device copy of the global and call the device function.
#pragma omp target map(from : on_host) map(tofrom : sum)
  {
    on_host = omp_is_initial_device();
    for (int i = 0; i < TABLE_LEN; i++)
      sum += scale(table[i]);
  }

  // Modify the global on the device only, then bring it back.
#pragma omp target
  for (int i = 0; i < TABLE_LEN; i++)
    table[i] = scale(i);
#pragma omp target update from(table)

  // Explicit map of the global. A declare-target global is always present on
  // the device, so `always` is needed to force the copies in and out.
#pragma omp target map(always, tofrom : table)
  for (int i = 0; i < TABLE_LEN; i++)
    table[i] += 1;

  long want = 0;
  for (int i = 0; i < TABLE_LEN; i++)
    want += 3 * (10 + i) + 1;

  int bad = 0;
  for (int i = 0; i < TABLE_LEN; i++)
    if (table[i] != 3 * i + 2)
      bad++;

  printf("on device: %s, sum=%ld, table[5]=%d, bad=%d\n", on_host ? "no" : "yes",
         sum, table[5], bad);
  if (on_host) {
    fprintf(stderr, "twotu: target region ran on the host\n");
    return 2;
  }
  if (sum != want || bad != 0) {
    fprintf(stderr, "twotu: wrong result: sum=%ld want %ld, bad=%d\n", sum, want, bad);
    return 3;
  }
  return 0;
}
