// b/foo.c: a/foo.c's target region, adding 100 instead of 1: the
// two files share a name, so kernel names made from the name alone (as
// offcc's stable names make them for files compiled by relative name from
// their own directories) are one name for two kernels.
static int f(int *x, int n) {
#pragma omp target map(tofrom : x[0 : n])
  for (int i = 0; i < n; i++)
    x[i] += 100;
  return 0;
}
int fb(int *x, int n) { return f(x, n); }
