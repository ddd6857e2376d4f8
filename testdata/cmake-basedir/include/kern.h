// kern.h: a target region in a header, found through the include
// directory (-I<checkout>/include, an absolute path under the base
// directory).
#pragma once
static int header_kernel(int n) {
  int sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(tofrom : sum)
  for (int i = 1; i <= n; i++)
    sum += i;
  return sum;
}
