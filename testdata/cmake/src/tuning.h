// tuning.h: device-side helpers of saxpy.c and dot.cpp (not devinfo.c, not
// the application): touching it rebuilds exactly those two objects.
#ifndef TUNING_H
#define TUNING_H

#pragma omp declare target
static inline double k_fma(double a, double x, double y) { return a * x + y; }
#pragma omp end declare target

#endif
