// cudartstub.c: a stand-in for the CUDA runtime (libcudart.so) that prints
// what a program registers at start-up: the fat binary wrapper (magic,
// version, first bytes of the fat binary), each kernel and device variable,
// the end of the registration, and the unregistration at exit.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct fatbin_wrapper {
  uint32_t magic, version;
  const unsigned char *binary;
  const void *unused;
};

static void *modules[16];
static int nmodules;

void **__cudaRegisterFatBinary(const struct fatbin_wrapper *w) {
  printf("fatbin: magic=0x%08x version=%u data=%.8s\n", w->magic, w->version, (const char *)w->binary);
  return &modules[nmodules++];
}

void __cudaRegisterFatBinaryEnd(void **mod) { printf("end: module %d\n", (int)(mod - modules)); }

void __cudaRegisterFunction(void **mod, const void *host, const char *dev, const char *name, int limit, void *a,
                            void *b, void *c, void *d, int *e) {
  (void)host, (void)dev, (void)limit, (void)a, (void)b, (void)c, (void)d, (void)e;
  printf("kernel: module %d %s\n", (int)(mod - modules), name);
}

void __cudaRegisterVar(void **mod, void *var, const char *hostVar, const char *devVar, int ext, size_t size,
                       int constant, int global) {
  (void)var, (void)hostVar;
  printf("var: module %d %s size=%zu extern=%d constant=%d global=%d\n", (int)(mod - modules), devVar, size, ext,
         constant, global);
}

void __cudaRegisterManagedVar(void **mod, void **pointer, void *init, const char *name, size_t size, unsigned align) {
  (void)pointer, (void)init;
  printf("managed: module %d %s size=%zu align=%u\n", (int)(mod - modules), name, size, align);
}

void __cudaUnregisterFatBinary(void **mod) { printf("unregister: module %d\n", (int)(mod - modules)); }

struct dim3 { unsigned x, y, z; };
int cudaLaunchKernel(const void *f, struct dim3 g, struct dim3 b, void **args, size_t shmem, void *stream) {
  (void)f, (void)g, (void)b, (void)args, (void)shmem, (void)stream;
  return 0;
}
unsigned __cudaPushCallConfiguration(struct dim3 g, struct dim3 b, size_t shmem, void *stream) {
  (void)g, (void)b, (void)shmem, (void)stream;
  return 0;
}
int __cudaPopCallConfiguration(struct dim3 *g, struct dim3 *b, size_t *shmem, void **stream) {
  (void)g, (void)b, (void)shmem, (void)stream;
  return 0;
}
