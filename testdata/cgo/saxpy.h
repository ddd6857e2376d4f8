// saxpy.h: C kernels the Go program calls.
#ifndef SAXPY_H
#define SAXPY_H

// saxpy runs y[i] = a*x[i] + y[i] in an OpenMP target region and returns
// 1 if the region ran on an offload device, 0 if on the host.
int saxpy(int n, float a, const float *x, float *y);

#endif
