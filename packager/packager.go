// Package packager reads and writes LLVM offload binaries (magic 0x10FF10AD,
// format version 1), byte-identical to LLVM 22's llvm-offload-binary.
package packager

import (
	"bytes"
	"strings"
)

// ImageKind is the OffloadBinary image kind (IMG_*).
type ImageKind uint16

// OffloadKind is the OffloadBinary offload kind (OFK_*). It is not the
// driver's offload-kind bit set.
type OffloadKind uint16

// KeyValue is one string entry of an image, in the order it is written.
type KeyValue struct{ Key, Value string }

// Image is one entry of an offload binary: its kinds, its string entries
// and its bytes.
type Image struct {
	Kind    ImageKind
	Offload OffloadKind
	Flags   uint32
	Strings []KeyValue
	Data    []byte
}

// Get returns the value of key (the last one when repeated) and whether it exists.
func (im *Image) Get(key string) (string, bool) {
	v, ok := "", false
	for _, kv := range im.Strings {
		if kv.Key == key {
			v, ok = kv.Value, true
		}
	}
	return v, ok
}

// ImageKind values (llvm::object::ImageKind).
const (
	ImageNone      ImageKind = 0 // IMG_None
	ImageObject    ImageKind = 1 // IMG_Object: ELF object
	ImageBitcode   ImageKind = 2 // IMG_Bitcode: LLVM IR bitcode
	ImageCubin     ImageKind = 3 // IMG_Cubin: CUDA cubin
	ImageFatbinary ImageKind = 4 // IMG_Fatbinary: CUDA fatbinary
	ImagePTX       ImageKind = 5 // IMG_PTX: PTX assembly
	ImageSPIRV     ImageKind = 6 // IMG_SPIRV: SPIR-V module
)

// OffloadKind values (llvm::object::OffloadKind).
const (
	OffloadNone   OffloadKind = 0 // OFK_None
	OffloadOpenMP OffloadKind = 1 // OFK_OpenMP
	OffloadCUDA   OffloadKind = 2 // OFK_Cuda
	OffloadHIP    OffloadKind = 4 // OFK_HIP
	OffloadSYCL   OffloadKind = 8 // OFK_SYCL
)

// String returns the name llvm-objdump --offloading prints for k: "elf",
// "llvm ir", "cubin", "fatbinary", "ptx", or "<none>" for anything else
// (IMG_SPIRV included, as LLVM 22 prints it).
func (k ImageKind) String() string {
	switch k {
	case ImageObject:
		return "elf"
	case ImageBitcode:
		return "llvm ir"
	case ImageCubin:
		return "cubin"
	case ImageFatbinary:
		return "fatbinary"
	case ImagePTX:
		return "ptx"
	}
	return "<none>"
}

// Extension returns the file extension (without the dot) llvm-offload-binary
// uses when it extracts an image of kind k: "o", "bc", "cubin", "fatbin",
// "s", or "" for the kinds it has no name for.
func (k ImageKind) Extension() string {
	switch k {
	case ImageObject:
		return "o"
	case ImageBitcode:
		return "bc"
	case ImageCubin:
		return "cubin"
	case ImageFatbinary:
		return "fatbin"
	case ImagePTX:
		return "s"
	}
	return ""
}

// String returns the name of k as used by kind= and llvm-objdump's
// "producer" line: "openmp", "cuda", "hip", "sycl", or "none".
func (k OffloadKind) String() string {
	switch k {
	case OffloadOpenMP:
		return "openmp"
	case OffloadCUDA:
		return "cuda"
	case OffloadHIP:
		return "hip"
	case OffloadSYCL:
		return "sycl"
	}
	return "none"
}

// ParseOffloadKind maps a kind= value to its OffloadKind like LLVM's
// getOffloadKind: "openmp", "cuda", "hip", "sycl"; anything else is
// OffloadNone.
func ParseOffloadKind(s string) OffloadKind {
	switch s {
	case "openmp":
		return OffloadOpenMP
	case "cuda":
		return OffloadCUDA
	case "hip":
		return OffloadHIP
	case "sycl":
		return OffloadSYCL
	}
	return OffloadNone
}

// ImageKindFor picks the image kind llvm-offload-binary records for the
// file name with contents data: bitcode (raw "BC\xC0\xDE" or the wrapper
// magic "\xDE\xC0\x17\x0B") whatever the name, otherwise by the extension
// of the name's last element (o, bc, cubin, fatbin, s; case-sensitive),
// otherwise ImageNone.
func ImageKindFor(name string, data []byte) ImageKind {
	if IsBitcode(data) {
		return ImageBitcode
	}
	base := name
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if base == "." || base == ".." {
		return ImageNone
	}
	i := strings.LastIndexByte(base, '.')
	if i < 0 {
		return ImageNone
	}
	switch base[i+1:] {
	case "o":
		return ImageObject
	case "bc":
		return ImageBitcode
	case "cubin":
		return ImageCubin
	case "fatbin":
		return ImageFatbinary
	case "s":
		return ImagePTX
	}
	return ImageNone
}

// IsBitcode reports whether data starts with LLVM bitcode: the raw magic
// "BC\xC0\xDE" or the bitcode wrapper's "\xDE\xC0\x17\x0B".
func IsBitcode(data []byte) bool {
	return bytes.HasPrefix(data, []byte{'B', 'C', 0xC0, 0xDE}) ||
		bytes.HasPrefix(data, []byte{0xDE, 0xC0, 0x17, 0x0B})
}
