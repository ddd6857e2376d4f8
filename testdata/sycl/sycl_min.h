// sycl_min.h: the one piece of SYCL that the test programs need, for
// building with clang -fsycl and no SYCL headers or runtime. A call to
// kernel_single_task<Name>(f) makes f's body the device kernel named by the
// type Name (mangled _ZTS<Name>); on the host the call does nothing.
// clang-linker-wrapper registers the linked SPIR-V image through
// __sycl_register_lib, which syclstub.c defines.
#ifndef SYCL_MIN_H
#define SYCL_MIN_H

template <typename KernelName, typename KernelType>
[[clang::sycl_kernel_entry_point(KernelName)]] void kernel_single_task(KernelType kernelFunc) {
  kernelFunc();
}

// Defined in device.cpp, called from a kernel in kernels.cpp: the device
// link (clang-sycl-linker) resolves it across translation units.
[[clang::sycl_external]] int offset_of(int i);

// The host entry points of the kernels, called by main.cpp.
void run_add(int *p);
template <typename T> void run_scale(T *p, T s);
void run_fill(int *p, int n);
void run_functor(float *p);
void run_twice(long *p);

#endif
