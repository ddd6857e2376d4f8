// scale.h: read by every compile of headers.c, host and device.
#pragma omp declare target
static inline int scale(int x) { return x * SCALE; }
#pragma omp end declare target
