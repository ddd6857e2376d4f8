package nvfatbin

import (
	"encoding/binary"
	"fmt"
)

// WrapperMagic starts a __fatBinC_Wrapper_t (FATBINC_MAGIC).
const WrapperMagic = 0x466243B1

// Wrapper versions (FATBINC_VERSION, FATBINC_LINK_VERSION). clang writes
// version 1 with or without -fgpu-rdc; nvcc writes 2 for relocatable
// device code.
const (
	WrapperVersion     = 1 // Filename is an offline file name (usually 0)
	WrapperLinkVersion = 2 // Filename points to an array of prelinked fat binaries
)

// Wrapper is the __fatBinC_Wrapper_t that nvcc and clang put in a host
// object's .nvFatBinSegment section for the CUDA runtime to register:
//
//	int magic;                  // WrapperMagic
//	int version;                // WrapperVersion or WrapperLinkVersion
//	const unsigned long long *data;
//	void *filename_or_fatbins;
//
// The pointers are addresses in a linked program and 0 (with relocations)
// in an object file. The layout is NVIDIA's fatbinary_section.h as quoted
// in public CUDA runtime reimplementations, and what clang's CGCUDANV.cpp
// emits; the versions are as nvcc's .fatbin.c files write them (1, and 2
// with __cudaPrelinkedFatbins for relocatable device code), and the magic
// and version 1 are checked against clang 22's output.
type Wrapper struct {
	Magic    uint32
	Version  uint32
	Data     uint64 // address of the fat binary
	Filename uint64 // filename_or_fatbins
}

// ParseWrappers reads the wrappers stored back to back in a .nvFatBinSegment
// section, with pointers of ptrSize bytes (8 for 64-bit hosts, 4 for
// 32-bit) in the given byte order. Every wrapper must have the magic.
func ParseWrappers(sec []byte, order binary.ByteOrder, ptrSize int) ([]Wrapper, error) {
	if ptrSize != 4 && ptrSize != 8 {
		return nil, fmt.Errorf("fat binary wrapper: pointer size %d is not 4 or 8", ptrSize)
	}
	size := 8 + 2*ptrSize
	if len(sec)%size != 0 {
		return nil, fmt.Errorf("fat binary wrappers: section size %d is not a multiple of %d", len(sec), size)
	}
	ptr := func(b []byte) uint64 {
		if ptrSize == 4 {
			return uint64(order.Uint32(b))
		}
		return order.Uint64(b)
	}
	ws := make([]Wrapper, 0, len(sec)/size)
	for off := 0; off < len(sec); off += size {
		b := sec[off : off+size]
		w := Wrapper{Magic: order.Uint32(b), Version: order.Uint32(b[4:]), Data: ptr(b[8:]), Filename: ptr(b[8+ptrSize:])}
		if w.Magic != WrapperMagic {
			return nil, fmt.Errorf("fat binary wrapper at offset %#x: magic %#x is not %#x", off, w.Magic, uint32(WrapperMagic))
		}
		ws = append(ws, w)
	}
	return ws, nil
}
