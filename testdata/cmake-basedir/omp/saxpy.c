// saxpy.c: y = a*x + y on the offload device.
void saxpy(int n, float a, const float *x, float *y) {
#pragma omp target teams distribute parallel for map(to : x[0 : n]) map(tofrom : y[0 : n])
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}
