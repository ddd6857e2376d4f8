// kernels.h: the kernels library's API, callable from C and C++.
#ifndef KERNELS_H
#define KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

// y[i] = a*x[i] + y[i] on the default device.
void k_saxpy(int n, float a, const float *x, float *y);
// The dot product of x and y, computed on the default device.
double k_dot(int n, const double *x, const double *y);
// 1 if target regions run on an offload device (not the initial device).
int k_on_device(void);
// The number of offload devices.
int k_num_devices(void);

#ifdef __cplusplus
}
#endif

#endif
