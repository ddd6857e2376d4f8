// The device code of the vecops library (relocatable device code).
#pragma once

// scale returns a * x; defined in src/scale.cu, called from src/axpy.cu.
__device__ float scale(float a, float x);

// axpy computes y[i] = a * x[i] + y[i] for i < n.
__global__ void axpy(int n, float a, const float *x, float *y);

// launch_axpy runs axpy on n elements of device memory and waits for it;
// it returns the CUDA error code (0 on success).
int launch_axpy(int n, float a, const float *x, float *y);
