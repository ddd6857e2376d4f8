// Package nvfatbin reads NVIDIA fat binaries: the container that nvcc's
// fatbinary tool writes (.fatbin files), that nvcc and clang embed in the
// .nv_fatbin section of a CUDA host object (__nv_relfatbin for relocatable
// device code), and that a linked program's .nv_fatbin holds one of per
// translation unit, back to back.
//
// NVIDIA does not document the layout. What this package reads was put
// together from public reverse-engineering work and checked against real
// fat binaries written by nvcc (see testdata/README.md):
//
//   - NVIDIA's fatbinary.h, as copied into public repositories (for
//     example an LLVM fork's openmp __openmp_cuda_host_wrapper.h): the file
//     header fatBinaryHeader, FATBIN_MAGIC, FATBIN_VERSION and the code
//     kinds fatBinaryCodeKind.
//   - n-eiling/cuda-fatbin-decompression, fatbin-decompress.h and .c
//     (Apache-2.0): the entry header (fat_text_header), the flag bits
//     FATBIN_FLAG_64BIT, _DEBUG, _LINUX, _COMPRESS (0x2000) and the LZ4
//     style decompressor.
//   - jiegec/fatbinary, fatbinary/src/lib.rs and fatbinary.ksy (MIT): the
//     same entry header with the options and identifier fields, the host
//     and producer flags.
//   - GrigoryEvko/nvopen-tools, fatbin/FORMAT_SPECIFICATION.md and
//     fatbin_extract_ptx.c: entry headers of 64, 80 and 112 bytes,
//     payloads padded to 8 bytes, ZSTD compression in CUDA 12.8 and later.
//   - gpgpu-sim and gVirtuS (__cudaFatCudaBinary2EntryRec): the same entry
//     header under other names, and a compression flag 0x1000.
//   - A CUDA runtime shim's CudartFatbinFileHeader and a fat binary tool's
//     flag list (FATBIN_FLAG_COMPRESS 0x1000, _COMPRESS2 0x2000,
//     _ZCOMPRESS 0x8000): LZ4 is 0x2000 and ZSTD 0x8000.
//
// # Layout
//
// All fields are little-endian. A fat binary is a 16-byte header followed
// by entries:
//
//	off size field
//	0   4    magic       0xBA55ED50 (FATBIN_MAGIC)
//	4   2    version     1
//	6   2    header size 16; the entries start here
//	8   8    fat size    bytes of entries that follow the header
//
// Each entry is a header of HeaderSize bytes (64 or more) and the payload
// right after it; the next entry follows the payload:
//
//	off size field
//	0   2    kind               1 PTX, 2 ELF (cubin); see Kind
//	2   2    version            0x0101 in every sample; meaning unknown
//	4   4    header size        64, or more to hold the strings below
//	8   8    payload size       stored payload bytes, padded to 8
//	16  4    compressed size    bytes of compressed stream; 0 if none
//	20  4    options offset     from the entry start, of {u32 offset, u32
//	                            size} locating the ptxas options; 0 if none
//	24  2    code version minor PTX ISA version for PTX, 7 for cubins
//	26  2    code version major PTX ISA version for PTX, 1 for cubins
//	28  4    sm arch            e.g. 90 for sm_90
//	32  4    identifier offset  from the entry start; 0 if none
//	36  4    identifier size    bytes
//	40  8    flags              see Flags
//	48  8    unknown            0 in every sample
//	56  8    uncompressed size  payload size before compression; 0 if none
//
// Checked against fat binaries nvcc wrote (CUDA 10.x era; see
// testdata/README.md): the file header, the entry chaining (header size +
// payload size, back to back up to the fat size), kind, code version (the
// PTX ISA version matches the decompressed PTX's .version directive;
// cubins read 1.7, as cuobjdump prints it), sm arch (matches the cubin's
// ELF e_flags), the 64-bit, Linux and LZ4 flags, the compressed and
// uncompressed sizes (LZ4 decoding yields exactly UncompressedSize bytes),
// the payload padding to 8 bytes, the identifier and the ptxas options.
// Known from the sources only: the meaning of the debug flag (seen set),
// the ZSTD flag 0x8000 (one public CUDA 13.1 header dump shows it with a
// compressed size below the uncompressed size), the legacy flag 0x1000,
// the producer, Mac, Windows and optimisation-level flags, kinds other
// than 1 and 2, and the extra header bytes of sm_100 and later entries (80
// or 112 byte headers), which this package does not interpret. The field
// at offset 48 and the entry version are unknown.
//
// Parse never panics and never allocates more than the input size
// justifies; payloads alias the input. Decompress decodes LZ4-compressed
// payloads only: no real ZSTD-compressed fat binary was available to check
// NVIDIA's use of ZSTD against, so such entries are reported with their
// sizes and left compressed.
package nvfatbin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
)

// Magic starts every fat binary (FATBIN_MAGIC), little-endian.
const Magic = 0xBA55ED50

// Version is the only fat binary format version there is (FATBIN_VERSION).
const Version = 1

// HeaderSize is the size of the fat binary header (fatBinaryHeader).
const HeaderSize = 16

// EntryHeaderSize is the size of the entry header fields this package
// knows; an entry's header may be longer (HeaderSize).
const EntryHeaderSize = 64

// Kind is what an entry's payload is (fatBinaryCodeKind).
type Kind uint16

// Code kinds. KindPTX and KindELF are what nvcc and fatbinary write;
// KindOldCubin and KindNVVMIR are named by fatbinary.h only.
const (
	KindPTX      Kind = 1 // PTX assembly text
	KindELF      Kind = 2 // a cubin: an ELF file of machine code
	KindOldCubin Kind = 4 // the pre-ELF cubin format, no longer written
	KindNVVMIR   Kind = 8 // NVVM IR
)

// String names the kind: "PTX", "ELF", "old cubin", "NVVM IR" or
// "kind 0x…".
func (k Kind) String() string {
	switch k {
	case KindPTX:
		return "PTX"
	case KindELF:
		return "ELF"
	case KindOldCubin:
		return "old cubin"
	case KindNVVMIR:
		return "NVVM IR"
	}
	return fmt.Sprintf("kind %#x", uint16(k))
}

// Flags is an entry's flags field.
type Flags uint64

// Flag bits. Flag64Bit, FlagDebug, FlagLinux and FlagLZ4 are seen in real
// fat binaries; the others are known from the sources only.
const (
	Flag64Bit   Flags = 0x1    // compiled for a 64-bit host
	FlagDebug   Flags = 0x2    // carries debug information (nvcc -G)
	FlagCUDA    Flags = 0x4    // produced by CUDA
	FlagOpenCL  Flags = 0x8    // produced by OpenCL
	FlagLinux   Flags = 0x10   // host is Linux
	FlagMac     Flags = 0x20   // host is macOS
	FlagWindows Flags = 0x40   // host is Windows
	FlagOptMask Flags = 0xf00  // optimisation level (one source only)
	FlagLegacy  Flags = 0x1000 // compressed, format unknown (FATBIN_FLAG_COMPRESS)
	FlagLZ4     Flags = 0x2000 // compressed with LZ4 (FATBIN_FLAG_COMPRESS2)
	FlagZstd    Flags = 0x8000 // compressed with ZSTD (FATBIN_FLAG_ZCOMPRESS)
)

// Compression is how an entry's payload is compressed.
type Compression int

// Compression methods, from the flags.
const (
	CompressionNone   Compression = iota
	CompressionLZ4                // FlagLZ4: an LZ4 block (no frame)
	CompressionZstd               // FlagZstd: a ZSTD frame, per the sources
	CompressionLegacy             // FlagLegacy: format not known
)

// String names the method: "none", "lz4", "zstd" or "legacy".
func (c Compression) String() string {
	switch c {
	case CompressionLZ4:
		return "lz4"
	case CompressionZstd:
		return "zstd"
	case CompressionLegacy:
		return "legacy"
	}
	return "none"
}

// File is one fat binary.
type File struct {
	// Offset is where the fat binary starts in the data given to Parse or
	// ParseAll.
	Offset uint64
	// Version and HeaderSize are the header's fields; FatSize is the size
	// of the entries after the header.
	Version    uint16
	HeaderSize uint16
	FatSize    uint64
	// Entries are the entries in file order.
	Entries []Entry
}

// Size returns the bytes the fat binary covers: its header and entries.
func (f *File) Size() uint64 { return uint64(f.HeaderSize) + f.FatSize }

// Entry is one entry of a fat binary: a PTX module or a cubin for one
// architecture. The fields up to UncompressedSize are the header's.
type Entry struct {
	Kind    Kind
	Version uint16 // 0x0101 in every sample seen; meaning unknown
	// Offset is where the entry's header starts in the data given to Parse
	// or ParseAll; its payload starts HeaderSize bytes later.
	Offset         uint64
	HeaderSize     uint32
	PayloadSize    uint64 // stored payload bytes, including padding
	CompressedSize uint32 // compressed stream bytes; 0 when uncompressed
	OptionsOffset  uint32 // of the options descriptor, from Offset; 0 if none
	// CodeMajor and CodeMinor are the code version: the PTX ISA version of
	// a PTX entry, the cubin format version (1.7) of an ELF entry.
	CodeMajor, CodeMinor uint16
	// SMArch is the target architecture number: 90 for sm_90.
	SMArch           uint32
	IdentifierOffset uint32 // from Offset; 0 if none
	IdentifierSize   uint32
	Flags            Flags
	Unknown48        uint64 // the field at offset 48; 0 in every sample
	UncompressedSize uint64 // 0 when uncompressed

	// Identifier is the identifier string (fatbinary --ident, usually the
	// source or object file name), without trailing NULs.
	Identifier string
	// Options are the ptxas options recorded for a PTX entry, without
	// trailing NULs.
	Options string
	// Data is the stored payload, aliasing the input: the compressed
	// stream (CompressedSize bytes) when compressed, else PayloadSize bytes
	// (a PTX payload may end in NUL padding).
	Data []byte
}

// PayloadOffset returns where the payload starts in the data given to Parse.
func (e *Entry) PayloadOffset() uint64 { return e.Offset + uint64(e.HeaderSize) }

// Compression returns how the payload is compressed, from the flags; when
// several compression flags are set the first of LZ4, ZSTD and legacy wins.
func (e *Entry) Compression() Compression {
	switch {
	case e.Flags&FlagLZ4 != 0:
		return CompressionLZ4
	case e.Flags&FlagZstd != 0:
		return CompressionZstd
	case e.Flags&FlagLegacy != 0:
		return CompressionLegacy
	}
	return CompressionNone
}

// Arch returns the architecture name, "sm_90" for SMArch 90.
func (e *Entry) Arch() string { return "sm_" + strconv.FormatUint(uint64(e.SMArch), 10) }

// Error reports a malformed fat binary.
type Error struct {
	// Offset is where the fat binary starts in the parsed data.
	Offset uint64
	// Entry is the index of the entry at fault, or -1 for the file header.
	Entry int
	// EntryOffset is where that entry starts in the parsed data.
	EntryOffset uint64
	// Msg says what is wrong.
	Msg string
}

// Error returns "NVIDIA fat binary at offset 0x…: [entry N at offset
// 0x…: ]<msg>".
func (e *Error) Error() string {
	if e.Entry < 0 {
		return fmt.Sprintf("NVIDIA fat binary at offset %#x: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("NVIDIA fat binary at offset %#x: entry %d at offset %#x: %s", e.Offset, e.Entry, e.EntryOffset, e.Msg)
}

// IsFatBinary reports whether data starts with the fat binary magic.
func IsFatBinary(data []byte) bool {
	return len(data) >= 4 && binary.LittleEndian.Uint32(data) == Magic
}

// Parse reads the fat binary at the start of data. Bytes after it (see
// File.Size) are not examined. Errors are *Error.
func Parse(data []byte) (*File, error) {
	return parseAt(data, 0)
}

// ParseAll reads the fat binaries stored back to back in data, as in a
// linked program's .nv_fatbin section, skipping zero bytes between them.
// Anything else after a fat binary is an error. Errors are *Error.
func ParseAll(data []byte) ([]*File, error) {
	var files []*File
	off := uint64(0)
	for off < uint64(len(data)) {
		if data[off] == 0 {
			off++
			continue
		}
		f, err := parseAt(data, off)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		off += f.Size()
	}
	if len(files) == 0 {
		return nil, &Error{Entry: -1, Msg: "no fat binary in the data (empty or all zero)"}
	}
	return files, nil
}

func parseAt(data []byte, at uint64) (*File, error) {
	ferr := func(format string, args ...any) error {
		return &Error{Offset: at, Entry: -1, Msg: fmt.Sprintf(format, args...)}
	}
	b := data[at:]
	if len(b) < HeaderSize {
		return nil, ferr("truncated header: %d bytes, want %d", len(b), HeaderSize)
	}
	le := binary.LittleEndian
	if m := le.Uint32(b); m != Magic {
		return nil, ferr("magic %#x is not %#x", m, uint32(Magic))
	}
	f := &File{Offset: at, Version: le.Uint16(b[4:]), HeaderSize: le.Uint16(b[6:]), FatSize: le.Uint64(b[8:])}
	if f.Version != Version {
		return nil, ferr("unsupported version %d (want %d)", f.Version, Version)
	}
	if f.HeaderSize < HeaderSize {
		return nil, ferr("header size %d is less than %d", f.HeaderSize, HeaderSize)
	}
	if uint64(f.HeaderSize) > uint64(len(b)) {
		return nil, ferr("header size %d runs past the end of the data (%#x bytes)", f.HeaderSize, len(b))
	}
	if f.FatSize > uint64(len(b))-uint64(f.HeaderSize) {
		return nil, ferr("fat size %#x runs past the end of the data (%#x bytes after the %d-byte header)",
			f.FatSize, uint64(len(b))-uint64(f.HeaderSize), f.HeaderSize)
	}
	end := uint64(f.HeaderSize) + f.FatSize // within b, so no overflow
	off := uint64(f.HeaderSize)
	for off < end {
		rest := b[off:end]
		// Zero bytes to the end are padding, not an entry.
		if allZero(rest) {
			break
		}
		e, err := parseEntry(rest, at+off)
		if err != nil {
			return nil, &Error{Offset: at, Entry: len(f.Entries), EntryOffset: at + off, Msg: err.Error()}
		}
		f.Entries = append(f.Entries, e)
		off += uint64(e.HeaderSize) + e.PayloadSize // checked against rest by parseEntry
	}
	return f, nil
}

// parseEntry reads the entry at the start of b, which ends where the fat
// binary does; at is b's offset in the parsed data.
func parseEntry(b []byte, at uint64) (Entry, error) {
	if len(b) < EntryHeaderSize {
		return Entry{}, fmt.Errorf("truncated entry header: %d bytes left in the fat binary, want %d", len(b), EntryHeaderSize)
	}
	le := binary.LittleEndian
	e := Entry{
		Kind:             Kind(le.Uint16(b[0:])),
		Version:          le.Uint16(b[2:]),
		Offset:           at,
		HeaderSize:       le.Uint32(b[4:]),
		PayloadSize:      le.Uint64(b[8:]),
		CompressedSize:   le.Uint32(b[16:]),
		OptionsOffset:    le.Uint32(b[20:]),
		CodeMinor:        le.Uint16(b[24:]),
		CodeMajor:        le.Uint16(b[26:]),
		SMArch:           le.Uint32(b[28:]),
		IdentifierOffset: le.Uint32(b[32:]),
		IdentifierSize:   le.Uint32(b[36:]),
		Flags:            Flags(le.Uint64(b[40:])),
		Unknown48:        le.Uint64(b[48:]),
		UncompressedSize: le.Uint64(b[56:]),
	}
	if e.HeaderSize < EntryHeaderSize {
		return Entry{}, fmt.Errorf("header size %d is less than %d", e.HeaderSize, EntryHeaderSize)
	}
	if uint64(e.HeaderSize) > uint64(len(b)) {
		return Entry{}, fmt.Errorf("header size %#x runs past the end of the fat binary (%#x bytes left)", e.HeaderSize, len(b))
	}
	hdr := b[:e.HeaderSize]
	left := uint64(len(b)) - uint64(e.HeaderSize)
	if e.PayloadSize > left {
		return Entry{}, fmt.Errorf("payload size %#x runs past the end of the fat binary (%#x bytes after the %d-byte header)", e.PayloadSize, left, e.HeaderSize)
	}
	payload := b[e.HeaderSize : uint64(e.HeaderSize)+e.PayloadSize]
	e.Data = payload
	if e.Compression() != CompressionNone {
		if uint64(e.CompressedSize) > e.PayloadSize {
			return Entry{}, fmt.Errorf("compressed size %#x exceeds the payload size %#x", e.CompressedSize, e.PayloadSize)
		}
		e.Data = payload[:e.CompressedSize]
	}
	if e.IdentifierOffset != 0 {
		s, err := headerString(hdr, e.IdentifierOffset, e.IdentifierSize)
		if err != nil {
			return Entry{}, fmt.Errorf("identifier: %v", err)
		}
		e.Identifier = s
	}
	if e.OptionsOffset != 0 {
		o := uint64(e.OptionsOffset)
		if o > uint64(len(hdr)) || uint64(len(hdr))-o < 8 {
			return Entry{}, fmt.Errorf("options descriptor at %#x runs past the %d-byte entry header", o, len(hdr))
		}
		if so, sz := le.Uint32(hdr[o:]), le.Uint32(hdr[o+4:]); so != 0 {
			s, err := headerString(hdr, so, sz)
			if err != nil {
				return Entry{}, fmt.Errorf("options: %v", err)
			}
			e.Options = s
		}
	}
	return e, nil
}

// headerString returns the string of size bytes at off in an entry header,
// without trailing NULs.
func headerString(hdr []byte, off, size uint32) (string, error) {
	if uint64(off)+uint64(size) > uint64(len(hdr)) {
		return "", fmt.Errorf("%d bytes at %#x run past the %d-byte entry header", size, off, len(hdr))
	}
	return string(bytes.TrimRight(hdr[off:off+size], "\x00")), nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
