// tu2.c: shared.h's kernel alone.
#include "shared.h"
int use2(int *x, int n) { return shared_kernel(x, n); }
