// a/foo.c: a target region in a static function, as b/foo.c has one: the
// two files share a name, so kernel names made from the name alone (as
// offcc's stable names make them for files compiled by relative name from
// their own directories) are one name for two kernels.
static int f(int *x, int n) {
#pragma omp target map(tofrom : x[0 : n])
  for (int i = 0; i < n; i++)
    x[i] += 1;
  return 0;
}
int fa(int *x, int n) { return f(x, n); }
