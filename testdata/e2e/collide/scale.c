// scale.c: compiled twice, -DSCALE=1 and -DSCALE=100 (with -DNAME=f1 and
// -DNAME=f100), into one program: clang names both kernels after this
// file and the line.
static int scale(int *x, int n) {
#pragma omp target map(tofrom : x[0 : n])
  for (int i = 0; i < n; i++)
    x[i] += SCALE;
  return 0;
}
int NAME(int *x, int n) { return scale(x, n); }
