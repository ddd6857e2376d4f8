// syclstub.c: a stand-in for the SYCL runtime (libsycl.so) that prints what
// a program built with clang -fsycl registers: clang-linker-wrapper's
// start-up code calls __sycl_register_lib with a binary descriptor, and its
// exit code __sycl_unregister_lib with the same one. For each device image
// it prints the header fields, the image's size, FNV-1a 64 hash and whether
// it is SPIR-V, and the offload entries (kernel names) in stored order.
// With SYCLSTUB_DUMP=dir it also writes each image to
// dir/lib<L>-image<I>.bin (L counts registrations from 0).
//
// The layouts are those of LLVM 22's llvm/lib/Frontend/Offloading
// (OffloadWrapper.cpp: SYCLWrapper; Utility.cpp: getEntryTy).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// struct.__tgt_offload_entry (56 bytes).
struct offload_entry {
  uint64_t reserved;
  uint16_t version;
  uint16_t kind; // 8: OFK_SYCL
  uint32_t flags;
  void *addr;
  const char *name;
  uint64_t size;
  uint64_t data;
  void *aux_addr;
};

// __sycl.tgt_device_image (version 3).
struct device_image {
  uint16_t version;
  uint8_t kind;   // object::OffloadKind
  uint8_t format; // object::ImageKind
  const char *triple;
  const char *compile_options;
  const char *link_options;
  const unsigned char *image_start, *image_end;
  const struct offload_entry *entries_begin, *entries_end;
  const char *properties_begin, *properties_end;
};

// __sycl.tgt_bin_desc (version 1).
struct bin_desc {
  uint16_t version;
  uint16_t num_images;
  const struct device_image *images;
  const struct offload_entry *host_entries_begin, *host_entries_end;
};

static const struct bin_desc *registered[16];
static int nregistered;

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static const char *str(const char *s) { return s ? s : "(null)"; }

static void dump(int lib, int img, const unsigned char *p, size_t n) {
  const char *dir = getenv("SYCLSTUB_DUMP");
  if (!dir || !*dir)
    return;
  char path[4096];
  snprintf(path, sizeof path, "%s/lib%d-image%d.bin", dir, lib, img);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "syclstub: cannot write %s\n", path);
    exit(2);
  }
}

void __sycl_register_lib(const struct bin_desc *d) {
  int lib = nregistered;
  if (nregistered < 16)
    registered[nregistered++] = d;
  printf("register: lib %d version=%u images=%u host_entries=%s\n", lib, d->version, d->num_images,
         d->host_entries_begin ? "set" : "null");
  for (unsigned i = 0; i < d->num_images; i++) {
    const struct device_image *im = &d->images[i];
    size_t size = (size_t)(im->image_end - im->image_start);
    uint32_t magic = 0;
    if (size >= 4)
      memcpy(&magic, im->image_start, 4);
    printf("image %d.%u: version=%u kind=%u format=%u triple=%s\n", lib, i, im->version, im->kind, im->format,
           str(im->triple));
    printf("image %d.%u: compile_options=\"%s\" link_options=\"%s\"\n", lib, i, str(im->compile_options),
           str(im->link_options));
    printf("image %d.%u: size=%zu fnv1a64=%016llx%s\n", lib, i, size,
           (unsigned long long)fnv1a64(im->image_start, size), magic == 0x07230203u ? " spirv" : "");
    printf("image %d.%u: entries=%td properties=", lib, i, im->entries_end - im->entries_begin);
    if (im->properties_begin)
      printf("%td bytes\n", im->properties_end - im->properties_begin);
    else
      printf("null\n");
    for (const struct offload_entry *e = im->entries_begin; e < im->entries_end; e++)
      printf("entry %d.%u: %s version=%u kind=%u flags=%u size=%llu data=%llu addr=%s aux=%s\n", lib, i,
             str(e->name), e->version, e->kind, e->flags, (unsigned long long)e->size,
             (unsigned long long)e->data, e->addr ? "set" : "null", e->aux_addr ? "set" : "null");
    dump(lib, (int)i, im->image_start, size);
  }
  fflush(stdout);
}

void __sycl_unregister_lib(const struct bin_desc *d) {
  int lib = -1;
  for (int i = 0; i < nregistered; i++)
    if (registered[i] == d)
      lib = i;
  printf("unregister: lib %d images=%u\n", lib, d->num_images);
  fflush(stdout);
}
