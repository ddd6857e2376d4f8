// common.h: what the translation units of testdata/hip-rocm share.
#pragma once
#include <hip/hip_runtime.h>

#define BLOCK 64

// HIP_CHECK reports a failed HIP runtime call (options.hip) and exits.
#define HIP_CHECK(call) hip_check((call), #call, __FILE__, __LINE__)
void hip_check(hipError_t err, const char *what, const char *file, int line);
int parse_size(int argc, char **argv, int fallback);

void launch_vec_add(const float *a, const float *b, float *c, int n);
void launch_block_sums(const float *in, float *sums, int n);
void launch_waves(float *out, float phase, int n);

float host_total(const float *v, int n);
void report(const char *what, const float *v, int n);
