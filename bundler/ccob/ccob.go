// Package ccob reads and writes clang-offload-bundler's compressed bundle envelope ("CCOB").
//
// clang-offload-bundler -compress (and clang --offload-compress) compresses a
// finished offload bundle (binary, text or object form) once and prefixes it
// with a small header:
//
//	"CCOB" | u16 Version | u16 Method | sizes | u64 Hash | compressed payload
//
// Version 1 (read only) has a u32 UncompressedSize and no total size, version
// 2 a u32 TotalSize and a u32 UncompressedSize, version 3 a u64 TotalSize and
// a u64 UncompressedSize. All integers are little-endian. TotalSize counts the
// header. Method is the value of llvm::compression::Format: 0 for a zlib
// (RFC 1950) stream, 1 for a zstd frame. Hash is the first 8 bytes of the MD5
// digest of the uncompressed bundle, read as a little-endian integer.
//
// The reference implementation is CompressedOffloadBundle in LLVM's
// llvm/lib/Object/OffloadBundle.cpp (formerly clang/lib/Driver/OffloadBundler.cpp).
// Unlike LLVM, this package always verifies the hash and the uncompressed size
// when decompressing, and never trusts the header's sizes for allocation.
package ccob

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Magic is the four bytes that start every compressed bundle.
const Magic = "CCOB"

// Header sizes of the three envelope versions.
const (
	HeaderSizeV1 = 20 // "CCOB", u16 version, u16 method, u32 uncompressed size, u64 hash
	HeaderSizeV2 = 24 // "CCOB", u16 version, u16 method, u32 total size, u32 uncompressed size, u64 hash
	HeaderSizeV3 = 32 // "CCOB", u16 version, u16 method, u64 total size, u64 uncompressed size, u64 hash
)

// DefaultVersion is the envelope version written when Options.Version is 0.
// It matches LLVM 22's clang-offload-bundler.
const DefaultVersion = 3

// Method is the compression method of an envelope, numbered as
// llvm::compression::Format.
type Method uint16

// The compression methods clang-offload-bundler knows.
const (
	Zlib Method = 0 // an RFC 1950 zlib stream
	Zstd Method = 1 // a zstd frame
)

// String returns "zlib" or "zstd", or "method(N)" for an unknown value.
func (m Method) String() string {
	switch m {
	case Zlib:
		return "zlib"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("method(%d)", uint16(m))
}

// Header is a decoded compressed bundle header.
type Header struct {
	// Version is the envelope version: 1, 2 or 3.
	Version uint16
	// Method is the compression method of the payload.
	Method Method
	// TotalSize is the size of the whole envelope, header included. Version 1
	// has no such field and ParseHeader leaves it 0.
	TotalSize uint64
	// UncompressedSize is the size of the bundle before compression.
	UncompressedSize uint64
	// Hash is the first 8 bytes of the MD5 digest of the uncompressed bundle,
	// read little-endian (so the on-disk bytes equal md5[0:8]).
	Hash uint64
	// Size is the number of header bytes: 20, 24 or 32.
	Size int
}

// Sentinel errors, reported inside an *Error and matched with errors.Is.
var (
	ErrNotCompressed = errors.New("missing CCOB magic")
	ErrTruncated     = errors.New("truncated")
	ErrVersion       = errors.New("unsupported version")
	ErrMethod        = errors.New("unknown compression method")
	ErrTotalSize     = errors.New("bad total size")
	ErrSizeMismatch  = errors.New("uncompressed size mismatch")
	ErrHashMismatch  = errors.New("hash mismatch")
	ErrCorrupt       = errors.New("corrupt compressed data")
	ErrTooLarge      = errors.New("too large")
	ErrOptions       = errors.New("bad options")
)

// Error describes a malformed, inconsistent or unwritable compressed bundle.
// Its message names the structure and the byte offset of the envelope, e.g.
// "compressed bundle at offset 0x1000: hash mismatch (header 0x…, data 0x…)".
type Error struct {
	// Offset is the byte offset of the envelope's "CCOB" magic in the buffer
	// given to the failing function (plus the base given to DecompressAt), or
	// -1 when no input offset applies (Compress).
	Offset int64
	// Kind is one of the Err* sentinels.
	Kind error
	// Detail is extra context; it may be empty.
	Detail string
	// Err is the underlying cause (a decoder error); it may be nil.
	Err error
}

// Error formats the error as "compressed bundle at offset 0x…: kind (detail): cause".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("compressed bundle")
	if e.Offset >= 0 {
		fmt.Fprintf(&b, " at offset %#x", e.Offset)
	}
	b.WriteString(": ")
	if e.Kind != nil {
		b.WriteString(e.Kind.Error())
	} else {
		b.WriteString("error")
	}
	if e.Detail != "" {
		b.WriteString(" (" + e.Detail + ")")
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Kind and Err, so errors.Is matches both the sentinel and the cause.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func errorf(off int64, kind error, format string, args ...any) *Error {
	return &Error{Offset: off, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// IsCompressed reports whether b starts with the "CCOB" magic.
func IsCompressed(b []byte) bool {
	return len(b) >= len(Magic) && string(b[:len(Magic)]) == Magic
}

// headerSize returns the header size of a version, or 0 for an unknown one.
func headerSize(v uint16) int {
	switch v {
	case 1:
		return HeaderSizeV1
	case 2:
		return HeaderSizeV2
	case 3:
		return HeaderSizeV3
	}
	return 0
}

// ParseHeader decodes the header at the start of b. It checks the magic, the
// version, the method, that b holds the whole header and, for versions 2 and
// 3, that TotalSize is at least the header size. It does not check that b
// holds TotalSize bytes; Decompress and Split do. Errors are *Error with
// offset 0.
func ParseHeader(b []byte) (Header, error) {
	return parseHeader(b, 0)
}

func parseHeader(b []byte, off int64) (Header, error) {
	var h Header
	if !IsCompressed(b) {
		if len(b) < len(Magic) {
			return h, errorf(off, ErrTruncated, "%d bytes, need at least %d", len(b), len(Magic))
		}
		return h, errorf(off, ErrNotCompressed, "found % x", b[:len(Magic)])
	}
	if len(b) < 8 {
		return h, errorf(off, ErrTruncated, "header needs at least 8 bytes, have %d", len(b))
	}
	h.Version = binary.LittleEndian.Uint16(b[4:])
	h.Method = Method(binary.LittleEndian.Uint16(b[6:]))
	h.Size = headerSize(h.Version)
	if h.Size == 0 {
		return h, errorf(off, ErrVersion, "version %d", h.Version)
	}
	if len(b) < h.Size {
		return h, errorf(off, ErrTruncated, "version %d header needs %d bytes, have %d", h.Version, h.Size, len(b))
	}
	switch h.Version {
	case 1:
		h.UncompressedSize = uint64(binary.LittleEndian.Uint32(b[8:]))
		h.Hash = binary.LittleEndian.Uint64(b[12:])
	case 2:
		h.TotalSize = uint64(binary.LittleEndian.Uint32(b[8:]))
		h.UncompressedSize = uint64(binary.LittleEndian.Uint32(b[12:]))
		h.Hash = binary.LittleEndian.Uint64(b[16:])
	case 3:
		h.TotalSize = binary.LittleEndian.Uint64(b[8:])
		h.UncompressedSize = binary.LittleEndian.Uint64(b[16:])
		h.Hash = binary.LittleEndian.Uint64(b[24:])
	}
	if h.Method != Zlib && h.Method != Zstd {
		return h, errorf(off, ErrMethod, "method %d", uint16(h.Method))
	}
	if h.Version >= 2 && h.TotalSize < uint64(h.Size) {
		return h, errorf(off, ErrTotalSize, "total size %d is smaller than the %d-byte header", h.TotalSize, h.Size)
	}
	return h, nil
}

// appendHeader appends the encoding of h (Version 2 or 3) to dst.
func appendHeader(dst []byte, h Header) []byte {
	dst = append(dst, Magic...)
	dst = binary.LittleEndian.AppendUint16(dst, h.Version)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(h.Method))
	switch h.Version {
	case 1:
		dst = binary.LittleEndian.AppendUint32(dst, uint32(h.UncompressedSize))
	case 2:
		dst = binary.LittleEndian.AppendUint32(dst, uint32(h.TotalSize))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(h.UncompressedSize))
	default:
		dst = binary.LittleEndian.AppendUint64(dst, h.TotalSize)
		dst = binary.LittleEndian.AppendUint64(dst, h.UncompressedSize)
	}
	return binary.LittleEndian.AppendUint64(dst, h.Hash)
}

// Hash returns the truncated MD5 hash that a header stores for data: the
// first 8 bytes of MD5(data) read as a little-endian integer.
func Hash(data []byte) uint64 {
	sum := md5.Sum(data)
	return binary.LittleEndian.Uint64(sum[:8])
}
