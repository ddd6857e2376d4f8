package ccob

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Limits that keep a lying header from making the reader allocate much.
const (
	// maxPrealloc caps the output buffer reserved up front from a header's
	// UncompressedSize; larger outputs grow as data actually arrives.
	maxPrealloc = 64 << 20
	// zlibMaxRatio bounds how many bytes one byte of a deflate stream can
	// expand to (the format's limit is about 1032).
	zlibMaxRatio = 1040
	// zstdMaxRatio bounds how many bytes one byte of a zstd frame can expand
	// to: an RLE block is 4 bytes and yields at most 128 KiB.
	zstdMaxRatio = 32768
	// ratioSlack is added to the ratio bounds for tiny payloads.
	ratioSlack = 1024
	// minZstdWindow and maxZstdWindow bound the zstd window the reader
	// accepts. 128 MiB is zstd's default decoder limit
	// (ZSTD_WINDOWLOG_LIMIT_DEFAULT) and the window LLVM's long-distance
	// matching uses; 8 MiB is the largest window Go's and C's encoders
	// declare for small inputs.
	minZstdWindow = 8 << 20
	maxZstdWindow = 128 << 20
)

// DecompressOptions configures DecompressWith.
type DecompressOptions struct {
	// Base is added to the offsets reported in errors, e.g. the offset of the
	// envelope in its section or file.
	Base int64
	// Verbose, when not nil, receives clang-offload-bundler's -verbose report
	// of the decompression.
	Verbose io.Writer
}

// Decompress decompresses the envelope at the start of b and returns the
// uncompressed bundle and the header.
//
// For versions 2 and 3 the envelope ends at TotalSize and bytes after it are
// ignored. A version 1 envelope has no size field: its payload is the first
// zlib stream or zstd frame after the header, and bytes after that stream are
// ignored.
//
// The uncompressed size and the hash are always checked. Errors are *Error,
// with offsets relative to b. Decompress never trusts the header's sizes for
// allocation: it reserves at most 64 MiB up front, rejects sizes the payload
// cannot expand to, and stops decoding once the output exceeds the header's
// UncompressedSize.
func Decompress(b []byte) (data []byte, h Header, err error) {
	return DecompressWith(b, DecompressOptions{})
}

// DecompressWith is Decompress with options: a base offset for errors and a
// verbose report.
func DecompressWith(b []byte, o DecompressOptions) (data []byte, h Header, err error) {
	off := o.Base
	h, err = parseHeader(b, off)
	if err != nil {
		return nil, h, err
	}
	payload := b[h.Size:]
	if h.Version >= 2 {
		if h.TotalSize > uint64(len(b)) {
			return nil, h, errorf(off, ErrTruncated, "total size %d runs past the end of the %d-byte input", h.TotalSize, len(b))
		}
		payload = b[h.Size:h.TotalSize]
	} else if h.Method == Zstd {
		if n, ok := zstdFrameLen(payload); ok {
			payload = payload[:n]
		}
	}
	if err := checkPlausible(h, len(payload), off); err != nil {
		return nil, h, err
	}

	start := time.Now()
	var n int64
	var used int
	if h.Method == Zstd && h.UncompressedSize <= maxPrealloc && oneFrameOfSize(payload, h.UncompressedSize) {
		// The usual case: decode straight into a buffer of the announced size.
		data, err = zstdDecodeAll(payload, h.UncompressedSize)
		n, used = int64(len(data)), len(payload)
	} else {
		var buf bytes.Buffer
		buf.Grow(int(min(h.UncompressedSize, maxPrealloc)) + bytes.MinRead) // ReadFrom wants MinRead spare bytes
		n, used, err = decodeStream(h.Method, payload, h.UncompressedSize, &buf)
		data = buf.Bytes()
	}
	if err != nil {
		if errors.Is(err, errTooLong) {
			return nil, h, errorf(off, ErrSizeMismatch, "data exceeds the header's %d bytes", h.UncompressedSize)
		}
		return nil, h, &Error{Offset: off, Kind: ErrCorrupt, Detail: h.Method.String(), Err: err}
	}
	elapsed := time.Since(start)
	if h.Version == 1 {
		payload = payload[:used]
	}
	sum := Hash(data)
	if o.Verbose != nil {
		writeDecompressReport(o.Verbose, h, len(payload), uint64(n), sum, elapsed)
	}
	if uint64(n) != h.UncompressedSize {
		return nil, h, errorf(off, ErrSizeMismatch, "header %d, data %d", h.UncompressedSize, n)
	}
	if sum != h.Hash {
		return nil, h, errorf(off, ErrHashMismatch, "header %#016x, data %#016x", h.Hash, sum)
	}
	return data, h, nil
}

// checkPlausible rejects an UncompressedSize that the payload cannot expand to.
func checkPlausible(h Header, payloadLen int, off int64) error {
	ratio := uint64(zlibMaxRatio)
	if h.Method == Zstd {
		ratio = zstdMaxRatio
	}
	limit := uint64(payloadLen)*ratio + ratioSlack
	if h.UncompressedSize > limit {
		return errorf(off, ErrSizeMismatch, "header claims %d bytes, more than %d compressed bytes can hold", h.UncompressedSize, payloadLen)
	}
	return nil
}

// errTooLong reports a stream that decodes to more than the expected size.
var errTooLong = errors.New("decoded data exceeds the expected size")

// decodeStream decodes payload into w, stopping with errTooLong once more
// than limit bytes come out. It returns the number of bytes written and the
// number of payload bytes the stream used. A zlib payload is one stream and
// bytes after it are ignored (as zlib's uncompress does); a zstd payload is a
// sequence of frames that must fill it.
func decodeStream(m Method, payload []byte, limit uint64, w io.Writer) (n int64, used int, err error) {
	lim := int64(math.MaxInt64)
	if limit < math.MaxInt64 {
		lim = int64(limit) + 1
	}
	br := bytes.NewReader(payload)
	switch m {
	case Zlib:
		zr, err := zlib.NewReader(br)
		if err != nil {
			return 0, 0, err
		}
		n, err = io.Copy(w, io.LimitReader(zr, lim))
		if err != nil {
			return n, 0, err
		}
		if uint64(n) > limit {
			return n, 0, errTooLong
		}
		return n, len(payload) - br.Len(), nil
	case Zstd:
		if hdr, ok := firstZstdHeader(payload); ok && hdr.HasFCS && hdr.FrameContentSize > limit {
			return 0, 0, errTooLong
		}
		window := uint64(maxZstdWindow)
		if limit < maxZstdWindow/2 {
			window = max(2*limit, minZstdWindow)
		}
		zr, err := zstd.NewReader(br,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(window))
		if err != nil {
			return 0, 0, err
		}
		defer zr.Close()
		n, err = io.Copy(w, io.LimitReader(zr, lim))
		if err != nil {
			return n, 0, err
		}
		if uint64(n) > limit {
			return n, 0, errTooLong
		}
		return n, len(payload), nil
	}
	return 0, 0, errors.New("unknown method")
}

// zstdAll is a shared decoder for zstdDecodeAll; DecodeAll is safe for
// concurrent use and allocates no window of its own.
var zstdAll struct {
	once sync.Once
	dec  *zstd.Decoder
	err  error
}

// oneFrameOfSize reports whether payload is exactly one zstd frame that
// announces a content size of size bytes.
func oneFrameOfSize(payload []byte, size uint64) bool {
	n, ok := zstdFrameLen(payload)
	if !ok || n != len(payload) {
		return false
	}
	h, ok := firstZstdHeader(payload)
	return ok && h.HasFCS && h.FrameContentSize == size
}

// zstdDecodeAll decodes payload, one frame announcing limit bytes, into a
// buffer of exactly limit bytes' capacity; a frame that produces more is
// corrupt.
func zstdDecodeAll(payload []byte, limit uint64) ([]byte, error) {
	zstdAll.once.Do(func() {
		zstdAll.dec, zstdAll.err = zstd.NewReader(nil,
			zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow))
	})
	if zstdAll.err != nil {
		return nil, zstdAll.err
	}
	data, err := zstdAll.dec.DecodeAll(payload, make([]byte, 0, limit))
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return nil, errTooLong
	}
	return data, err
}

// firstZstdHeader decodes the header of the first zstd frame in p.
func firstZstdHeader(p []byte) (zstd.Header, bool) {
	var h zstd.Header
	if err := h.Decode(p); err != nil || h.Skippable {
		return h, false
	}
	return h, true
}

// zstd frame magics (RFC 8878 §3.1).
const (
	zstdMagic          = 0xFD2FB528
	zstdSkippableMask  = 0xFFFFFFF0
	zstdSkippableMagic = 0x184D2A50
	zstdMaxBlock       = 128 << 10
)

// zstdFrameLen returns the length of the zstd frame (or skippable frame) at
// the start of p by walking its block headers, without decoding.
func zstdFrameLen(p []byte) (int, bool) {
	if len(p) < 4 {
		return 0, false
	}
	magic := binary.LittleEndian.Uint32(p)
	if magic&zstdSkippableMask == zstdSkippableMagic {
		if len(p) < 8 {
			return 0, false
		}
		n := uint64(binary.LittleEndian.Uint32(p[4:])) + 8
		if n > uint64(len(p)) {
			return 0, false
		}
		return int(n), true
	}
	if magic != zstdMagic || len(p) < 5 {
		return 0, false
	}
	fhd := p[4]
	if fhd&0x08 != 0 { // reserved bit
		return 0, false
	}
	single := fhd&0x20 != 0
	pos := 5
	if !single {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[fhd&3] // dictionary ID
	switch fhd >> 6 {                // frame content size
	case 0:
		if single {
			pos++
		}
	case 1:
		pos += 2
	case 2:
		pos += 4
	case 3:
		pos += 8
	}
	for {
		if pos+3 > len(p) {
			return 0, false
		}
		bh := uint32(p[pos]) | uint32(p[pos+1])<<8 | uint32(p[pos+2])<<16
		pos += 3
		last := bh&1 != 0
		size := int(bh >> 3)
		switch (bh >> 1) & 3 {
		case 0, 2: // raw, compressed
			if size > zstdMaxBlock {
				return 0, false
			}
			pos += size
		case 1: // RLE
			pos++
		default:
			return 0, false
		}
		if pos > len(p) {
			return 0, false
		}
		if last {
			break
		}
	}
	if fhd&0x04 != 0 { // content checksum
		pos += 4
		if pos > len(p) {
			return 0, false
		}
	}
	return pos, true
}
