package nvfatbin

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrNotDecompressible is returned by Decompress for payloads compressed
// with a method this package does not decode (ZSTD, the legacy flag).
var ErrNotDecompressible = errors.New("compression method not supported")

// maxReserve bounds what Decompress allocates up front, whatever the
// header claims; the output grows past it only as real data is decoded.
const maxReserve = 64 << 20

// Decompress returns the entry's payload uncompressed: Data itself when
// the entry is not compressed, the decoded LZ4 block when FlagLZ4 is set.
// The result must be exactly UncompressedSize bytes. Other methods give an
// error wrapping ErrNotDecompressible.
func (e *Entry) Decompress() ([]byte, error) {
	switch c := e.Compression(); c {
	case CompressionNone:
		return e.Data, nil
	case CompressionLZ4:
		if most := lz4MaxOutput(len(e.Data)); e.UncompressedSize > most {
			return nil, fmt.Errorf("lz4: uncompressed size %d is more than %d compressed bytes can expand to", e.UncompressedSize, len(e.Data))
		}
		out, err := DecodeLZ4Block(e.Data, e.UncompressedSize)
		if err != nil {
			return nil, err
		}
		if uint64(len(out)) != e.UncompressedSize {
			return nil, fmt.Errorf("lz4: decoded %d bytes, header says %d", len(out), e.UncompressedSize)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: %s", ErrNotDecompressible, c)
	}
}

// DecodeLZ4Block decodes one LZ4 block (the block format of the LZ4
// specification, without the frame) of at most limit bytes of output, as
// fat binaries store compressed payloads (FlagLZ4). The block may end after
// a match as well as after literals: NVIDIA's encoder has not been seen to
// end on a match, but other readers of fat binaries accept it. Memory use
// is bounded by what src can expand to, whatever limit says.
func DecodeLZ4Block(src []byte, limit uint64) ([]byte, error) {
	limit = min(limit, lz4MaxOutput(len(src)))
	out := make([]byte, 0, min(limit, maxReserve))
	i := 0
	for i < len(src) {
		token := src[i]
		i++
		lit, err := lz4Length(src, &i, uint64(token>>4), limit)
		if err != nil {
			return nil, err
		}
		if lit > uint64(len(src)-i) {
			return nil, fmt.Errorf("lz4: %d literal bytes at input offset %#x run past the end of the input (%d bytes left)", lit, i, len(src)-i)
		}
		if uint64(len(out))+lit > limit {
			return nil, fmt.Errorf("lz4: output exceeds %d bytes at input offset %#x", limit, i)
		}
		out = append(out, src[i:i+int(lit)]...)
		i += int(lit)
		if i == len(src) {
			break // the last sequence has literals only
		}
		if len(src)-i < 2 {
			return nil, fmt.Errorf("lz4: truncated match offset at input offset %#x", i)
		}
		dist := int(binary.LittleEndian.Uint16(src[i:]))
		if dist == 0 || dist > len(out) {
			return nil, fmt.Errorf("lz4: match offset %d at input offset %#x reaches before the start of the output (%d bytes)", dist, i, len(out))
		}
		i += 2
		ml, err := lz4Length(src, &i, uint64(token&15), limit)
		if err != nil {
			return nil, err
		}
		ml += 4
		if uint64(len(out))+ml > limit {
			return nil, fmt.Errorf("lz4: output exceeds %d bytes at input offset %#x", limit, i)
		}
		start := len(out) - dist
		if uint64(dist) >= ml {
			out = append(out, out[start:start+int(ml)]...)
			continue
		}
		// The match overlaps what it writes (it repeats the last dist
		// bytes): copy byte by byte.
		for k := 0; k < int(ml); k++ {
			out = append(out, out[start+k])
		}
	}
	return out, nil
}

// lz4MaxOutput bounds what n bytes of LZ4 block decode to: every input
// byte yields at most 255 output bytes (a length extension byte), plus a
// little for the token it belongs to.
func lz4MaxOutput(n int) uint64 { return uint64(n)*255 + 64 }

// lz4Length completes a 4-bit length n from the token with extension bytes
// (while n is 15: add bytes until one is not 255), advancing *i.
func lz4Length(src []byte, i *int, n, limit uint64) (uint64, error) {
	if n != 15 {
		return n, nil
	}
	for {
		if *i >= len(src) {
			return 0, fmt.Errorf("lz4: truncated length at input offset %#x", *i)
		}
		b := src[*i]
		*i++
		n += uint64(b)
		if n > limit+15 {
			return 0, fmt.Errorf("lz4: length %d at input offset %#x exceeds the output size %d", n, *i-1, limit)
		}
		if b != 255 {
			return n, nil
		}
	}
}
