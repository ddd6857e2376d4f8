package ccob

import (
	"bytes"
	"io"
)

// Split splits b, a run of compressed bundles such as a .hip_fatbin section,
// into its envelopes. It returns sub-slices of b, each starting with "CCOB".
//
// Version 2 and 3 envelopes are bounded by their TotalSize; Split never
// scans for the magic inside them, since compressed data may contain the
// bytes "CCOB" or "__CLANG_OFFLOAD_BUNDLE__". Zero bytes between envelopes
// (alignment padding) and at the end are skipped. A version 1 envelope has
// no size field: it ends where its zlib stream or zstd frame ends, found by
// walking the zstd block headers or by decoding the zlib stream; only when
// that fails does Split fall back to scanning for the next "CCOB", as LLVM
// does.
//
// Split does not decompress or verify the envelopes (see Decompress). Any
// other byte where an envelope should start, a bad header, or a TotalSize
// past the end of b is an *Error with the offset of that envelope in b;
// the envelopes found before it are returned with the error.
func Split(b []byte) ([][]byte, error) {
	var out [][]byte
	off := 0
	for {
		for off < len(b) && b[off] == 0 {
			off++
		}
		if off == len(b) {
			return out, nil
		}
		rest := b[off:]
		h, err := parseHeader(rest, int64(off))
		if err != nil {
			return out, err
		}
		var n int
		if h.Version >= 2 {
			if h.TotalSize > uint64(len(rest)) {
				return out, errorf(int64(off), ErrTruncated, "total size %d runs past the end of the input (%d bytes left)", h.TotalSize, len(rest))
			}
			n = int(h.TotalSize)
		} else {
			n = v1Len(h, rest)
		}
		out = append(out, rest[:n:n])
		off += n
	}
}

// v1Len returns the length of the version 1 envelope at the start of b.
func v1Len(h Header, b []byte) int {
	payload := b[h.Size:]
	switch h.Method {
	case Zstd:
		if n, ok := zstdFrameLen(payload); ok {
			return h.Size + n
		}
	case Zlib:
		if _, used, err := decodeStream(Zlib, payload, h.UncompressedSize, io.Discard); err == nil {
			return h.Size + used
		}
	}
	if i := bytes.Index(payload, []byte(Magic)); i >= 0 {
		return h.Size + i
	}
	return len(b)
}
