package ccob

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Default compression levels, as clang-offload-bundler uses them.
const (
	DefaultZstdLevel = 3
	DefaultZlibLevel = 6
)

// zstdMinLevel is zstd's lowest (fastest) level, ZSTD_minCLevel().
const zstdMinLevel = -(1 << 17)

// Options configures Compress.
type Options struct {
	// Version is the envelope version to write: 2 or 3. 0 means 3
	// (DefaultVersion), as LLVM 22 writes.
	Version uint16
	// Method is the compression method. LLVM 22 uses Zstd when it is built
	// with zstd, which the zero value (Zlib) is not: set it explicitly.
	Method Method
	// Level is the compression level: for zstd up to 22 (default 3), for
	// zlib 1 to 9 (default 6). 0 means the default.
	//
	// zstd levels are mapped onto github.com/klauspost/compress/zstd's four
	// encoder levels (below 3 fastest, 3–5 default, 6–9 better, 10 and up
	// best). That library has no long-distance matching, which LLVM enables;
	// the output is a valid frame either way, but not byte-identical to LLVM's.
	Level int
	// Verbose, when not nil, receives clang-offload-bundler's -verbose report
	// of the compression.
	Verbose io.Writer
}

// Compress compresses data (a finished offload bundle) and wraps it in a
// compressed bundle envelope. zstd output is one frame with the content size
// and no checksum; zlib output is one RFC 1950 stream. Writing version 2
// fails with an *Error of kind ErrTooLarge when a size exceeds 32 bits.
func Compress(data []byte, o Options) ([]byte, error) {
	v := o.Version
	if v == 0 {
		v = DefaultVersion
	}
	if v != 2 && v != 3 {
		return nil, errorf(-1, ErrOptions, "cannot write version %d (only 2 and 3)", v)
	}
	level, err := effectiveLevel(o.Method, o.Level)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var payload []byte
	switch o.Method {
	case Zstd:
		enc, err := zstdEncoder(zstd.EncoderLevelFromZstd(level))
		if err != nil {
			return nil, &Error{Offset: -1, Kind: ErrOptions, Detail: "zstd encoder", Err: err}
		}
		payload = enc.EncodeAll(data, make([]byte, 0, len(data)/2+64))
	case Zlib:
		payload, err = zlibCompress(data, level)
		if err != nil {
			return nil, &Error{Offset: -1, Kind: ErrOptions, Detail: "zlib encoder", Err: err}
		}
	}
	elapsed := time.Since(start)
	out, h, err := wrap(v, o.Method, data, payload)
	if err != nil {
		return nil, err
	}
	if o.Verbose != nil {
		writeCompressReport(o.Verbose, h, level, len(payload), elapsed)
	}
	return out, nil
}

// effectiveLevel validates a level and replaces 0 with the method's default.
func effectiveLevel(m Method, level int) (int, error) {
	switch m {
	case Zstd:
		if level == 0 {
			return DefaultZstdLevel, nil
		}
		if level < zstdMinLevel || level > 22 {
			return 0, errorf(-1, ErrOptions, "zstd level %d out of range", level)
		}
	case Zlib:
		if level == 0 {
			return DefaultZlibLevel, nil
		}
		if level < 1 || level > 9 {
			return 0, errorf(-1, ErrOptions, "zlib level %d out of range 1..9", level)
		}
	default:
		return 0, errorf(-1, ErrMethod, "method %d", uint16(m))
	}
	return level, nil
}

// zstdEncoders caches one stateless encoder per library level; EncodeAll is
// safe for concurrent use.
var zstdEncoders [zstd.SpeedBestCompression + 1]struct {
	once sync.Once
	enc  *zstd.Encoder
	err  error
}

func zstdEncoder(l zstd.EncoderLevel) (*zstd.Encoder, error) {
	e := &zstdEncoders[l]
	e.once.Do(func() {
		e.enc, e.err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(l),
			zstd.WithEncoderCRC(false),     // LLVM writes no checksum
			zstd.WithZeroFrames(true),      // a real frame even for empty input
			zstd.WithSingleSegment(true),   // window = content size, as zstd does for a known size
			zstd.WithEncoderConcurrency(1)) // EncodeAll is sequential anyway
	})
	return e.enc, e.err
}

// zlibCompress writes data as one zlib stream at the given level
// (zlib.NoCompression, 0, writes stored blocks).
func zlibCompress(data []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/2 + 64)
	zw, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// wrap builds a version 2 or 3 envelope around an already compressed payload.
func wrap(v uint16, m Method, data, payload []byte) ([]byte, Header, error) {
	h := Header{
		Version:          v,
		Method:           m,
		UncompressedSize: uint64(len(data)),
		Hash:             Hash(data),
		Size:             headerSize(v),
	}
	h.TotalSize = uint64(h.Size) + uint64(len(payload))
	if err := checkV2(h); err != nil {
		return nil, h, err
	}
	out := make([]byte, 0, h.TotalSize)
	out = appendHeader(out, h)
	out = append(out, payload...)
	return out, h, nil
}

// checkV2 fails when a version 2 header cannot hold h's sizes.
func checkV2(h Header) error {
	if h.Version != 2 {
		return nil
	}
	if h.UncompressedSize > math.MaxUint32 {
		return errorf(-1, ErrTooLarge, "uncompressed size %d exceeds the version 2 limit", h.UncompressedSize)
	}
	if h.TotalSize > math.MaxUint32 {
		return errorf(-1, ErrTooLarge, "total file size %d exceeds the version 2 limit", h.TotalSize)
	}
	return nil
}

// String formats a header for diagnostics.
func (h Header) String() string {
	return fmt.Sprintf("CCOB v%d %s total=%d uncompressed=%d hash=%#016x header=%d",
		h.Version, h.Method, h.TotalSize, h.UncompressedSize, h.Hash, h.Size)
}
