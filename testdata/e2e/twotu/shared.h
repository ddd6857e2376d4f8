// shared.h: declare-target global and function shared by tu_a.c and tu_b.c.
#ifndef OFFCC_E2E_SHARED_H
#define OFFCC_E2E_SHARED_H

#define TABLE_LEN 256

#pragma omp declare target
extern int table[TABLE_LEN]; // defined in tu_b.c
int scale(int x);            // defined in tu_b.c
#pragma omp end declare target

// Host-side helper defined in tu_b.c.
void table_init(int base);

#endif
