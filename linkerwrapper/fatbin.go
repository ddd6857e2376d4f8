package linkerwrapper

import (
	"fmt"
	"strings"
)

// fatbinRuntime names what differs between the HIP and the CUDA
// registration code clang-linker-wrapper 22 generates
// (llvm/lib/Frontend/Offloading/OffloadWrapper.cpp, createFatbinDesc and
// createRegisterFatbinFunction).
type fatbinRuntime struct {
	prefix        string // "hip" or "cuda": .hip.fatbin_reg, __hipRegisterFatBinary, ...
	fatbinSection string // where the fat binary lies
	wrapSection   string // where its wrapper struct lies
	magic         uint32 // the wrapper's magic
	offloadKind   int    // the entries registered: OFK_HIP or OFK_Cuda
	// surfaces says whether surface and texture entries are registered
	// (HIP: yes; CUDA: clang-linker-wrapper passes false).
	surfaces bool
	// registerEnd says whether __cudaRegisterFatBinaryEnd follows the
	// registration (CUDA only).
	registerEnd bool
}

var (
	hipRuntime = fatbinRuntime{prefix: "hip", fatbinSection: ".hip_fatbin", wrapSection: ".hipFatBinSegment",
		magic: 0x48495046, offloadKind: 4, surfaces: true}
	cudaRuntime = fatbinRuntime{prefix: "cuda", fatbinSection: ".nv_fatbin", wrapSection: ".nvFatBinSegment",
		magic: 0x466243b1, offloadKind: 2, registerEnd: true}
)

// fatbinWrapperIR returns the registration module for a HIP or CUDA fat
// binary as LLVM IR text: the fat binary as an internal constant in its
// section, the fatbin_wrapper struct, and a constructor (priority 101) that
// registers the fat binary, then every entry of the llvm_offload_entries
// section of its offload kind (kernels with ...RegisterFunction; variables
// by their type flags with ...RegisterVar, ...RegisterManagedVar and, for
// HIP, ...RegisterSurface and ...RegisterTexture), and arranges with atexit
// for the unregistration. This is the module clang-linker-wrapper 22
// builds, global for global and instruction for instruction, so that llc
// makes the object clang's link embeds, byte for byte.
func fatbinWrapperIR(triple string, rt fatbinRuntime, fatbin []byte) string {
	p := rt.prefix
	Reg := "__" + p + "Register"
	var b strings.Builder
	b.WriteString("; ModuleID = 'offload.wrapper.module'\n")
	b.WriteString("source_filename = \"offload.wrapper.module\"\n")
	b.Grow(3*len(fatbin) + 8192)
	fmt.Fprintf(&b, "target triple = \"%s\"\n\n", irAsmEscape(triple))
	fmt.Fprintf(&b, `%%struct.__tgt_offload_entry = type { i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }
%%fatbin_wrapper = type { i32, i32, ptr, ptr }

@__start_llvm_offload_entries = external hidden constant [0 x %%struct.__tgt_offload_entry]
@__stop_llvm_offload_entries = external hidden constant [0 x %%struct.__tgt_offload_entry]
@__dummy.llvm_offload_entries = internal constant [0 x %%struct.__tgt_offload_entry] zeroinitializer, section "llvm_offload_entries", align 8
@llvm.compiler.used = appending global [1 x ptr] [ptr @__dummy.llvm_offload_entries], section "llvm.metadata"
@.fatbin_image = internal constant [%[5]d x i8] c"%[6]s", section "%[4]s"
@.fatbin_wrapper = internal constant %%fatbin_wrapper { i32 %[1]d, i32 1, ptr @.fatbin_image, ptr null }, section "%[2]s", align 8
@.%[3]s.binary_handle = internal global ptr null
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @.%[3]s.fatbin_reg, ptr null }]

define internal void @.%[3]s.fatbin_reg() section ".text.startup" {
entry:
  %%0 = call ptr @__%[3]sRegisterFatBinary(ptr @.fatbin_wrapper)
  store ptr %%0, ptr @.%[3]s.binary_handle, align 8
  call void @.%[3]s.globals_reg(ptr %%0)
`, int32(rt.magic), rt.wrapSection, p, rt.fatbinSection, len(fatbin), irString(fatbin))
	if rt.registerEnd {
		b.WriteString("  call void @__cudaRegisterFatBinaryEnd(ptr %0)\n")
	}
	fmt.Fprintf(&b, `  %%1 = call i32 @atexit(ptr @.%[1]s.fatbin_unreg)
  ret void
}

define internal void @.%[1]s.fatbin_unreg() section ".text.startup" {
entry:
  %%0 = load ptr, ptr @.%[1]s.binary_handle, align 8
  call void @__%[1]sUnregisterFatBinary(ptr %%0)
  ret void
}

declare ptr @__%[1]sRegisterFatBinary(ptr)

declare void @__cudaRegisterFatBinaryEnd(ptr)

declare void @__%[1]sUnregisterFatBinary(ptr)

declare i32 @atexit(ptr)

declare i32 @%[2]sFunction(ptr, ptr, ptr, ptr, i32, ptr, ptr, ptr, ptr, ptr)

declare void @%[2]sVar(ptr, ptr, ptr, ptr, i32, i64, i32, i32)

declare void @%[2]sManagedVar(ptr, ptr, ptr, ptr, i64, i32)

declare void @%[2]sSurface(ptr, ptr, ptr, ptr, i32, i32)

declare void @%[2]sTexture(ptr, ptr, ptr, ptr, i32, i32, i32)

define internal void @.%[1]s.globals_reg(ptr %%0) section ".text.startup" {
entry:
  %%1 = icmp ne ptr @__start_llvm_offload_entries, @__stop_llvm_offload_entries
  br i1 %%1, label %%while.entry, label %%while.end

while.entry:
  %%entry1 = phi ptr [ @__start_llvm_offload_entries, %%entry ], [ %%16, %%if.end ]
  %%2 = getelementptr inbounds %%struct.__tgt_offload_entry, ptr %%entry1, i32 0, i32 4
  %%addr = load ptr, ptr %%2, align 8
  %%3 = getelementptr inbounds %%struct.__tgt_offload_entry, ptr %%entry1, i32 0, i32 8
  %%aux_addr = load ptr, ptr %%3, align 8
  %%4 = getelementptr inbounds %%struct.__tgt_offload_entry, ptr %%entry1, i32 0, i32 2
  %%kind = load i16, ptr %%4, align 2
  %%5 = getelementptr inbounds %%struct.__tgt_offload_entry, ptr %%entry1, i32 0, i32 5
  %%name = load ptr, ptr %%5, align 8
  %%6 = getelementptr inbounds %%struct.__tgt_offload_entry, ptr %%entry1, i32 0, i32 6
  %%size = load i64, ptr %%6, align 4
  %%7 = getelementptr inbounds %%struct.__tgt_offload_entry, ptr %%entry1, i32 0, i32 3
  %%flags = load i32, ptr %%7, align 4
  %%8 = getelementptr inbounds %%struct.__tgt_offload_entry, ptr %%entry1, i32 0, i32 7
  %%data = load i64, ptr %%8, align 4
  %%9 = trunc i64 %%data to i32
  %%type = and i32 %%flags, 7
  %%10 = and i32 %%flags, 8
  %%extern = lshr i32 %%10, 3
  %%11 = and i32 %%flags, 16
  %%constant = lshr i32 %%11, 4
  %%12 = and i32 %%flags, 32
  %%normalized = lshr i32 %%12, 5
  %%13 = icmp eq i16 %%kind, %[3]d
  br i1 %%13, label %%if.kind, label %%if.end

if.kind:
  %%14 = icmp eq i64 %%size, 0
  br i1 %%14, label %%if.then, label %%if.else

if.then:
  %%15 = call i32 @%[2]sFunction(ptr %%0, ptr %%addr, ptr %%name, ptr %%name, i32 -1, ptr null, ptr null, ptr null, ptr null, ptr null)
  br label %%if.end

if.else:
  switch i32 %%type, label %%if.end [
    i32 0, label %%sw.global
    i32 1, label %%sw.managed
    i32 2, label %%sw.surface
    i32 3, label %%sw.texture
  ]

sw.global:
  call void @%[2]sVar(ptr %%0, ptr %%addr, ptr %%name, ptr %%name, i32 %%extern, i64 %%size, i32 %%constant, i32 0)
  br label %%if.end

sw.managed:
  call void @%[2]sManagedVar(ptr %%0, ptr %%aux_addr, ptr %%addr, ptr %%name, i64 %%size, i32 %%9)
  br label %%if.end

sw.surface:
`, p, Reg, rt.offloadKind)
	if rt.surfaces {
		fmt.Fprintf(&b, "  call void @%sSurface(ptr %%0, ptr %%addr, ptr %%name, ptr %%name, i32 %%9, i32 %%extern)\n", Reg)
	}
	b.WriteString("  br label %if.end\n\nsw.texture:\n")
	if rt.surfaces {
		fmt.Fprintf(&b, "  call void @%sTexture(ptr %%0, ptr %%addr, ptr %%name, ptr %%name, i32 %%9, i32 %%normalized, i32 %%extern)\n", Reg)
	}
	b.WriteString(`  br label %if.end

if.end:
  %16 = getelementptr inbounds %struct.__tgt_offload_entry, ptr %entry1, i64 1
  %17 = icmp eq ptr %16, @__stop_llvm_offload_entries
  br i1 %17, label %while.end, label %while.entry

while.end:
  ret void
}
`)
	return b.String()
}

// irString escapes data for an LLVM IR c"..." string constant: printable
// ASCII as itself, other bytes (and '"' and '\\') as \XX.
func irString(data []byte) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(data) * 2)
	for _, c := range data {
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('\\')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
