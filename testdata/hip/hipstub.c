// hipstub.c: a stand-in for the HIP runtime (libamdhip64.so) that prints
// what a program registers at start-up: each fat binary (the wrapper's
// magic and version, and the bundle's entries), each kernel and device
// variable, and the unregistration at exit. Launches do nothing.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct fatbin_wrapper {
  uint32_t magic, version;
  const void *binary;
  const void *unused;
};

static void *modules[16];
static int nmodules;

static uint64_t rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

void **__hipRegisterFatBinary(const struct fatbin_wrapper *w) {
  printf("fatbin: magic=0x%08x version=%u\n", w->magic, w->version);
  const unsigned char *b = w->binary;
  if (memcmp(b, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0) {
    uint64_t n = rd64(b + 24);
    const unsigned char *p = b + 32;
    for (uint64_t i = 0; i < n; i++) {
      uint64_t off = rd64(p), size = rd64(p + 8), idlen = rd64(p + 16);
      printf("fatbin: entry %.*s size=%llu%s\n", (int)idlen, (const char *)(p + 24),
             (unsigned long long)size,
             size >= 4 && memcmp(b + off, "\177ELF", 4) == 0 ? " elf" : "");
      p += 24 + idlen;
    }
  } else if (memcmp(b, "CCOB", 4) == 0) {
    printf("fatbin: compressed bundle\n");
  } else {
    printf("fatbin: unknown contents\n");
  }
  fflush(stdout);
  return &modules[nmodules++];
}

void __hipRegisterFunction(void **mod, const void *host, const char *dev, const char *name,
                           unsigned limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize) {
  (void)host, (void)dev, (void)limit, (void)tid, (void)bid, (void)bdim, (void)gdim, (void)wsize;
  printf("kernel: module %d %s\n", (int)(mod - modules), name);
}

void __hipRegisterVar(void **mod, void *var, const char *hostVar, const char *devVar, int ext,
                      size_t size, int constant, int global) {
  (void)var, (void)hostVar;
  printf("var: module %d %s size=%zu extern=%d constant=%d global=%d\n", (int)(mod - modules), devVar, size,
         ext, constant, global);
}

void __hipRegisterManagedVar(void **mod, void **pointer, void *init, const char *name, size_t size,
                             unsigned align) {
  (void)pointer, (void)init;
  printf("managed: module %d %s size=%zu align=%u\n", (int)(mod - modules), name, size, align);
}

void __hipRegisterSurface(void **mod, void *var, const char *hostVar, const char *devVar, int type, int ext) {
  (void)var, (void)hostVar;
  printf("surface: module %d %s type=%d extern=%d\n", (int)(mod - modules), devVar, type, ext);
}

void __hipRegisterTexture(void **mod, void *var, const char *hostVar, const char *devVar, int type, int norm,
                          int ext) {
  (void)var, (void)hostVar;
  printf("texture: module %d %s type=%d normalized=%d extern=%d\n", (int)(mod - modules), devVar, type, norm, ext);
}

void __hipUnregisterFatBinary(void **mod) { printf("unregister: module %d\n", (int)(mod - modules)); }

struct dim3 { unsigned x, y, z; };
int hipLaunchKernel(const void *f, struct dim3 g, struct dim3 b, void **args, size_t shmem, void *stream) {
  (void)f, (void)g, (void)b, (void)args, (void)shmem, (void)stream;
  return 0;
}
unsigned __hipPushCallConfiguration(struct dim3 g, struct dim3 b, size_t shmem, void *stream) {
  (void)g, (void)b, (void)shmem, (void)stream;
  return 0;
}
int __hipPopCallConfiguration(struct dim3 *g, struct dim3 *b, size_t *shmem, void **stream) {
  (void)g, (void)b, (void)shmem, (void)stream;
  return 0;
}
