package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Compressed blobs. A store writes each blob as zstd frames
// (github.com/klauspost/compress/zstd), as ccache compresses its results,
// unless that does not make it smaller; a blob's identity stays the size
// and SHA-256 of its bytes uncompressed, and readers verify those after
// decompressing (Verifier), so compression changes no key and can make no
// wrong hit. A stored blob says itself whether it is compressed (the zstd
// magic in a directory store, the hash's metadata field in Redis), so the
// level may change from one run to the next and old uncompressed blobs
// still read.
//
// Decoding is bounded, whoever wrote the bytes: a frame's window may be at
// most twice the blob's recorded size (and 8 MiB), which is all an honest
// encoder uses; no more than MaxStoredSize compressed bytes are read; and
// the Verifier fails as soon as more bytes than the recorded size come
// out. A frame that does not decode, or decodes to other bytes, is
// ErrCorrupt: a miss, never an error for the build.

// Compression says how a store writes blobs: zstd at a level, or as they
// are. Its zero value is the default, zstd level 1.
type Compression struct {
	// Off stores blobs as they are.
	Off bool
	// Level is a zstd level, as ccache's compression_level: 0 means the
	// default (DefaultCompressionLevel); levels are mapped onto
	// klauspost's four encoders (zstd.EncoderLevelFromZstd: 1 and 2 and
	// the negative levels are its fastest, 3-5 its default, 6-9 better,
	// 10 and up its best).
	Level int
}

// DefaultCompressionLevel is the zstd level of Compression's zero value:
// ccache's default, klauspost's fastest encoder.
const DefaultCompressionLevel = 1

// EnvCompressionLevel is the setting that chooses the cache's compression
// (ParseCompression reads its value).
const EnvCompressionLevel = "OFFCC_CACHE_COMPRESSION_LEVEL"

// maxCompressionLevel is the highest zstd level.
const maxCompressionLevel = 22

// ParseCompression reads a compression setting: a zstd level from -131072
// to 22 (0: the default), or "off" (also "none") for no compression.
func ParseCompression(text string) (Compression, error) {
	t := strings.ToLower(strings.TrimSpace(text))
	switch t {
	case "":
		return Compression{}, nil
	case "off", "none":
		return Compression{Off: true}, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(t, "+"))
	if err != nil || n < -(1<<17) || n > maxCompressionLevel {
		return Compression{}, fmt.Errorf("not a compression level; use a zstd level up to %d (0: the default, %d), or off, such as 3", maxCompressionLevel, DefaultCompressionLevel)
	}
	return Compression{Level: n}, nil
}

// CompressionFromEnv reads OFFCC_CACHE_COMPRESSION_LEVEL (see
// ParseCompression); unset, it is the default.
func CompressionFromEnv(getenv func(string) string) (Compression, error) {
	v := getenv(EnvCompressionLevel)
	c, err := ParseCompression(v)
	if err != nil {
		return c, fmt.Errorf("%s=%s (from the environment): %v", EnvCompressionLevel, v, err)
	}
	return c, nil
}

// zstdLevel returns the zstd level c writes at.
func (c Compression) zstdLevel() int {
	if c.Level == 0 {
		return DefaultCompressionLevel
	}
	return c.Level
}

// encoderLevel returns klauspost's encoder for c's level.
func (c Compression) encoderLevel() zstd.EncoderLevel {
	return zstd.EncoderLevelFromZstd(c.zstdLevel())
}

// String says what c does: "off", or "zstd level 1 (fastest)".
func (c Compression) String() string {
	if c.Off {
		return "off"
	}
	return fmt.Sprintf("zstd level %d (%s)", c.zstdLevel(), c.encoderLevel())
}

// zstdMagic starts every zstd frame (RFC 8878).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// isZstd reports whether data starts like a zstd frame.
func isZstd(data []byte) bool { return bytes.HasPrefix(data, zstdMagic) }

const (
	// frameSize is the most bytes of a blob one frame holds: a blob is
	// compressed a frame at a time, so that a large one is never whole
	// in memory.
	frameSize = 4 << 20
	// maxFrameWindow is the largest window a decoder accepts: twice the
	// largest frame, the most an honest encoder of frameSize bytes uses
	// (offcc's use less: see largeWindow).
	maxFrameWindow = 2 * frameSize
)

// MaxStoredSize is the most bytes a blob of size bytes may take
// compressed: zstd's worst case (raw blocks, a frame header per frame)
// with room to spare. More is a damaged or hostile blob.
func MaxStoredSize(size int64) int64 { return size + size>>7 + 4096 }

// frameWindow is the largest window a frame of a blob of size bytes
// needs: klauspost's encoder takes the next power of two above the
// frame's size (at least 1 KiB), or its own window when smaller.
func frameWindow(size int64) uint64 {
	return uint64(min(max(2*size, zstd.MinWindowSize), maxFrameWindow))
}

// Codec compresses and decompresses a store's blobs: its encoder (made
// on first use, per level) and its decoders (pooled). The zero value is
// ready; a Codec must not be copied after first use.
type Codec struct {
	mu       sync.Mutex
	encoders map[encoderKind][]*zstd.Encoder // idle ones
	decoders sync.Pool
	buffers  sync.Pool
}

// encoderKind is an encoder's level, and whether it is for small inputs.
type encoderKind struct {
	level zstd.EncoderLevel
	small bool
}

// Encoders' windows. An encoder allocates its window's worth of history
// (and more) when made: with the 4-8 MiB klauspost takes by default, the
// first blob a process compressed cost it 9 MiB of fresh memory and more
// CPU than the compression itself. Offcc's processes are short-lived and
// most blobs small, so an input of at most smallWindow bytes gets an
// encoder of that window (one frame, the window its size), and larger
// ones an encoder of largeWindow.
const (
	smallWindow = 256 << 10
	largeWindow = 1 << 20
)

// encoder returns an idle encoder of level l for an input of n bytes, or
// a new one (synchronous: concurrent puts each get their own); give it
// back with putEncoder.
func (c *Codec) encoder(l zstd.EncoderLevel, n int) (*zstd.Encoder, encoderKind, error) {
	k := encoderKind{l, n <= smallWindow}
	c.mu.Lock()
	if idle := c.encoders[k]; len(idle) > 0 {
		enc := idle[len(idle)-1]
		c.encoders[k] = idle[:len(idle)-1]
		c.mu.Unlock()
		return enc, k, nil
	}
	c.mu.Unlock()
	window := largeWindow
	if k.small {
		window = smallWindow
	}
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(l),
		zstd.WithEncoderCRC(false), // the SHA-256 is checked
		zstd.WithWindowSize(window),
		zstd.WithEncoderConcurrency(1),
		// Less memory made up front, for small inputs; 8% faster
		// encoding, for large ones.
		zstd.WithLowerEncoderMem(k.small),
		zstd.WithZeroFrames(true))
	return enc, k, err
}

// putEncoder makes an encoder got from encoder idle again.
func (c *Codec) putEncoder(enc *zstd.Encoder, k encoderKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.encoders == nil {
		c.encoders = map[encoderKind][]*zstd.Encoder{}
	}
	c.encoders[k] = append(c.encoders[k], enc)
}

// encodeAll compresses src as one or more frames appended to dst.
func (c *Codec) encodeAll(l zstd.EncoderLevel, src, dst []byte) ([]byte, error) {
	enc, k, err := c.encoder(l, len(src))
	if err != nil {
		return nil, err
	}
	dst = enc.EncodeAll(src, dst)
	c.putEncoder(enc, k)
	return dst, nil
}

// buffer returns a buffer of n bytes' capacity at least, for putBuffer.
func (c *Codec) buffer(n int) []byte {
	if b, ok := c.buffers.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:0]
	}
	return make([]byte, 0, n)
}

// putBuffer returns a buffer for reuse.
func (c *Codec) putBuffer(b []byte) {
	if cap(b) > 0 && cap(b) <= 2*frameSize {
		c.buffers.Put(&b)
	}
}

// Encode reads exactly size bytes from src and gives them to emit, in
// pieces: compressed at comp's level, or as they are when comp is off or
// when compressing does not make them smaller (then the bytes do not
// start with the zstd magic, which is compressed whatever comp says, so
// that a stored blob says itself what it is). It returns whether what it
// emitted is compressed, and how many bytes it emitted. A source shorter
// or longer than size is an error.
func (c *Codec) Encode(src io.Reader, size int64, comp Compression, emit func([]byte) error) (compressed bool, stored int64, err error) {
	if size < 0 {
		return false, 0, fmt.Errorf("negative size %d", size)
	}
	in := c.buffer(int(min(size, frameSize)) + 1)
	defer func() { c.putBuffer(in) }()
	var out []byte
	defer func() { c.putBuffer(out) }()
	left := size
	for first := true; first || left > 0; first = false {
		n := min(left, frameSize)
		// One byte more than is left, on the last piece, to see the end.
		want := n
		if n == left {
			want++
		}
		in = in[:want]
		got, rerr := io.ReadFull(src, in)
		switch {
		case int64(got) > n:
			return compressed, stored, fmt.Errorf("more than %d bytes", size)
		case int64(got) < n:
			if rerr == nil || rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
				rerr = fmt.Errorf("%d bytes, not %d", size-left+int64(got), size)
			}
			return compressed, stored, rerr
		case rerr != nil && rerr != io.EOF && rerr != io.ErrUnexpectedEOF:
			return compressed, stored, rerr
		}
		in = in[:n]
		left -= n
		if first {
			// Decided on the first piece, for the whole blob.
			compressed = n > 0 && (!comp.Off || isZstd(in))
		}
		piece := in
		if compressed {
			l := comp.encoderLevel()
			if comp.Off {
				l = zstd.SpeedFastest
			}
			if out == nil {
				out = c.buffer(int(n))
			}
			var err error
			if out, err = c.encodeAll(l, in, out[:0]); err != nil {
				return compressed, stored, err
			}
			piece = out
			if first && left == 0 && len(out) >= len(in) && !isZstd(in) {
				piece, compressed = in, false // not worth it
			}
		}
		if err := emit(piece); err != nil {
			return compressed, stored, err
		}
		stored += int64(len(piece))
	}
	return compressed, stored, nil
}

// decoder returns a pooled decoder, or a new one.
func (c *Codec) decoder() (*zstd.Decoder, error) {
	if d, ok := c.decoders.Get().(*zstd.Decoder); ok {
		return d, nil
	}
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1), // synchronous: no goroutines
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(maxFrameWindow))
}

// NewReader returns a reader of the bytes of a blob of size bytes (b's
// recorded size) stored compressed in src, to be wrapped in a Verifier:
// it reads at most MaxStoredSize(size) bytes of src, accepts no window
// beyond what a frame of the blob needs, and reports a frame that does not
// decode as ErrCorrupt (src's own errors pass as they are). Closing it
// closes src.
func (c *Codec) NewReader(src io.ReadCloser, size int64) (io.ReadCloser, error) {
	d, err := c.decoder()
	if err != nil {
		src.Close()
		return nil, err
	}
	in := &boundedSource{r: src, left: MaxStoredSize(size)}
	if err := d.ResetWithOptions(in, zstd.WithDecoderMaxWindow(frameWindow(size))); err != nil {
		src.Close()
		c.releaseDecoder(d)
		return nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	return &decodingReader{c: c, d: d, src: src, in: in}, nil
}

// releaseDecoder returns a decoder to the pool, holding no reader.
func (c *Codec) releaseDecoder(d *zstd.Decoder) {
	d.Reset(nil)
	c.decoders.Put(d)
}

// errTooLong is a compressed blob longer than its size allows.
var errTooLong = errors.New("compressed bytes longer than the blob's size allows")

// boundedSource reads at most left bytes of r, and keeps r's error.
type boundedSource struct {
	r    io.Reader
	left int64
	err  error // r's error other than io.EOF, or errTooLong
}

func (s *boundedSource) Read(p []byte) (int, error) {
	if s.left <= 0 {
		// At the limit: more is too long, the end is fine.
		var one [1]byte
		n, err := s.r.Read(one[:])
		if n > 0 {
			s.err = errTooLong
			return 0, errTooLong
		}
		if err != nil && err != io.EOF {
			s.err = err
		}
		return 0, err
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// decodingReader is a blob's decompressed bytes.
type decodingReader struct {
	c   *Codec
	d   *zstd.Decoder
	src io.Closer
	in  *boundedSource
}

func (r *decodingReader) Read(p []byte) (int, error) {
	if r.d == nil {
		return 0, errors.New("cache: read of a closed blob")
	}
	n, err := r.d.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	if r.in.err != nil && r.in.err != errTooLong {
		return n, r.in.err // the store's own failure
	}
	if errors.Is(err, ErrCorrupt) {
		return n, err
	}
	return n, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
}

// Close closes the source and returns the decoder to the pool.
func (r *decodingReader) Close() error {
	if r.d == nil {
		return nil
	}
	err := r.src.Close()
	r.c.releaseDecoder(r.d)
	r.d = nil
	return err
}

// Index files (and Redis entries) of more than indexCompressMin bytes are
// stored compressed when that makes them smaller: a compile's manifest
// lists every header it read, hundreds of paths and digests, and
// manifests are most of a cache's bytes when objects are small. The
// canonical index (EncodeIndex: what its checksum, a signature and an
// archive cover) is the same either way.
const indexCompressMin = 1 << 10

// CompressIndex returns an entry's index (EncodeIndex's bytes) as a store
// keeps it: zstd-compressed at comp's level when it is large enough and
// that makes it smaller, else as it is (an index starts with "offcc-cache",
// never with the zstd magic).
func (c *Codec) CompressIndex(index []byte, comp Compression) []byte {
	if comp.Off || len(index) < indexCompressMin {
		return index
	}
	out, err := c.encodeAll(comp.encoderLevel(), index, make([]byte, 0, len(index)/4))
	if err != nil || len(out) >= len(index) {
		return index
	}
	return out
}

// ExpandIndex returns the index a store kept as data (CompressIndex):
// data itself, or data decompressed, at most limit bytes of it. A
// compressed index that does not decode, or decodes to more than limit
// bytes, is an error (a damaged entry: a miss).
func (c *Codec) ExpandIndex(data []byte, limit int64) ([]byte, error) {
	if !isZstd(data) {
		return data, nil
	}
	// A frame that says its size (the encoder writes it) and says more
	// than limit is refused before anything is decoded; one that says
	// less is read into a buffer of that size. What it says is only a
	// hint: the decoder stops at limit whatever the header claims.
	var h zstd.Header
	size := int64(0)
	if h.Decode(data) == nil && h.HasFCS {
		if h.FrameContentSize > uint64(limit) {
			return nil, fmt.Errorf("%w: a compressed index of %d bytes, more than %d", ErrCorrupt, h.FrameContentSize, limit)
		}
		size = int64(h.FrameContentSize)
	}
	r, err := c.NewReader(io.NopCloser(bytes.NewReader(data)), limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var buf bytes.Buffer
	buf.Grow(int(min(size, limit)) + 1)
	_, err = buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	out := buf.Bytes()
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("%w: a compressed index of more than %d bytes", ErrCorrupt, limit)
	}
	return out, nil
}
