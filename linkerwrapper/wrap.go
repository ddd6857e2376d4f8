package linkerwrapper

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/toolchain"
)

// wrappedImage is one linked device image ready for registration: the blob
// holding it re-packed as an OffloadBinary, and where the image bytes lie
// inside that blob.
type wrappedImage struct {
	blob        []byte
	imageOffset uint64
	imageSize   uint64
}

// packImage re-packs a linked device image as clang-linker-wrapper does for
// OpenMP: one OffloadBinary with the arch and triple keys (arch is empty for
// a "generic" link), image kind ELF, offload kind OpenMP. It returns the
// blob and the offset of the image bytes in it.
func packImage(triple, arch string, data []byte) ([]byte, uint64) {
	blob := packager.Marshal([]packager.Image{{
		Kind:    packager.ImageObject,
		Offload: packager.OffloadOpenMP,
		Strings: []packager.KeyValue{{Key: "triple", Value: triple}, {Key: "arch", Value: arch}},
		Data:    data,
	}})
	// Entry.ImageOffset is at byte 56 of a v1 blob (FORMATS.md §1.3).
	return blob, binary.LittleEndian.Uint64(blob[56:64])
}

// openMPWrapperIR returns the registration module clang-linker-wrapper
// generates for OpenMP (llvm/lib/Frontend/Offloading/OffloadWrapper.cpp,
// createBinDesc), as LLVM IR text for the host triple, with the release's
// offload entries (toolchain.Profile.OffloadEntriesSection, whose __start_
// and __stop_ symbols it names, and OffloadEntry, the type of one entry).
// LLVM 19's module is 22's with its entries (its dummy entry has no
// explicit alignment, the type's own, 8, and it prints the images'
// getelementptrs over their array types: llc writes the same object from
// either text). The data layout is left to the code generator, so the
// same text serves every ELF host. Each blob is an internal constant in
// section .llvm.offloading (which LLVM gives type SHT_LLVM_OFFLOADING),
// aligned to 8, named as LLVM names it (.omp_offloading.device_image, then
// .1, .2, ...), so that the object is the wrapper's byte for byte.
func openMPWrapperIR(triple string, release *toolchain.Profile, images []wrappedImage) string {
	var b strings.Builder
	size := 8192
	for _, im := range images {
		size += 3 * len(im.blob)
	}
	b.Grow(size)
	b.WriteString("; ModuleID = 'offload.wrapper.module'\n")
	b.WriteString("source_filename = \"offload.wrapper.module\"\n")
	fmt.Fprintf(&b, "target triple = \"%s\"\n", irAsmEscape(triple))
	sec := release.OffloadEntriesSection
	fmt.Fprintf(&b, `
%%struct.__tgt_offload_entry = type %s
%%__tgt_device_image = type { ptr, ptr, ptr, ptr }
%%__tgt_bin_desc = type { i32, ptr, ptr, ptr }

@__start_%s = external hidden constant [0 x %%struct.__tgt_offload_entry]
@__stop_%s = external hidden constant [0 x %%struct.__tgt_offload_entry]
@__dummy.%s = internal constant [0 x %%struct.__tgt_offload_entry] zeroinitializer, section "%s", align 8
@llvm.compiler.used = appending global [1 x ptr] [ptr @__dummy.%s], section "llvm.metadata"
`, release.OffloadEntry, sec, sec, sec, sec, sec)
	for i, im := range images {
		fmt.Fprintf(&b, "@%s = internal unnamed_addr constant [%d x i8] c\"%s\", section \".llvm.offloading\", align 8\n",
			imageSymbol(i), len(im.blob), irString(im.blob))
	}
	fmt.Fprintf(&b, "@.omp_offloading.device_images = internal unnamed_addr constant [%d x %%__tgt_device_image] [", len(images))
	for i, im := range images {
		if i > 0 {
			b.WriteString(", ")
		}
		sym := imageSymbol(i)
		fmt.Fprintf(&b, "%%__tgt_device_image { ptr getelementptr (i8, ptr @%s, i64 %d), ptr getelementptr (i8, ptr @%s, i64 %d), ptr @__start_%s, ptr @__stop_%s }",
			sym, im.imageOffset, sym, im.imageOffset+im.imageSize, sec, sec)
	}
	b.WriteString("]\n")
	fmt.Fprintf(&b, "@.omp_offloading.descriptor = internal constant %%__tgt_bin_desc { i32 %d, ptr @.omp_offloading.device_images, ptr @__start_%s, ptr @__stop_%s }\n", len(images), sec, sec)
	b.WriteString(`@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @.omp_offloading.descriptor_reg, ptr null }]

define internal void @.omp_offloading.descriptor_reg() section ".text.startup" {
entry:
  call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)
  %0 = call i32 @atexit(ptr @.omp_offloading.descriptor_unreg)
  ret void
}

declare void @__tgt_register_lib(ptr)

declare i32 @atexit(ptr)

define internal void @.omp_offloading.descriptor_unreg() section ".text.startup" {
entry:
  call void @__tgt_unregister_lib(ptr @.omp_offloading.descriptor)
  ret void
}

declare void @__tgt_unregister_lib(ptr)
`)
	return b.String()
}

// imageSymbol names blob i as LLVM does: its second global of the same
// name gets ".1", and so on.
func imageSymbol(i int) string {
	if i == 0 {
		return ".omp_offloading.device_image"
	}
	return fmt.Sprintf(".omp_offloading.device_image.%d", i)
}

// irAsmEscape escapes s for a quoted assembler string inside an IR
// "module asm" string: backslashes and quotes for the assembler, then for
// the IR string (irEscape).
func irAsmEscape(s string) string {
	return irEscape(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
}

// irCString returns the IR type and initializer of a NUL-terminated string
// constant holding s, e.g. `[4 x i8] c"abc\00"`.
func irCString(s string) string {
	return fmt.Sprintf("[%d x i8] c\"%s\\00\"", len(s)+1, irEscape(s))
}

// irName returns an IR global name, quoted when it needs to be.
func irName(s string) string { return "\"" + irEscape(s) + "\"" }

// irEscape escapes s for an IR string: quotes, backslashes and bytes
// outside printable ASCII become \XX.
func irEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, `\%02X`, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
