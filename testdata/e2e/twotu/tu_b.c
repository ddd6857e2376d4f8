// tu_b.c: defines the declare-target global array and function.
#include "shared.h"

#pragma omp declare target
int table[TABLE_LEN];

int scale(int x) { return 3 * x + 1; }
#pragma omp end declare target

void table_init(int base) {
  for (int i = 0; i < TABLE_LEN; i++)
    table[i] = base + i;
}
