package cache

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeBlob feeds the blob decoder (a store's compressed blob, as a
// directory store reads it and, chunk by chunk, the Redis store) arbitrary
// stored bytes for a blob of a known size and digest: it must not panic,
// must not give out much more than the blob's size, and must give the
// blob's bytes or fail with ErrCorrupt; never other bytes. sizeDelta
// changes the size the index records.
func FuzzDecodeBlob(f *testing.F) {
	var c Codec
	want := compressible(400) // small: the fuzzer minimizes faster
	for _, comp := range []Compression{{}, {Level: 19}, {Off: true}} {
		stored, _ := encodeBytes(f, &c, want, comp)
		f.Add(stored, int8(0))
		f.Add(stored, int8(-1))
		f.Add(stored[:len(stored)/2], int8(0))
	}
	magic, _ := encodeBytes(f, &c, append(append([]byte(nil), zstdMagic...), want[4:]...), Compression{Off: true})
	f.Add(magic, int8(0))
	f.Add(append(zstdFrameHeader(0, 4<<30), 0x01, 0x00, 0x00), int8(0))
	f.Add(append(zstdFrameHeader(20<<3, -1), 0x01, 0x00, 0x00), int8(0))
	f.Add(skippable(100), int8(0))
	f.Add([]byte{}, int8(0))
	f.Fuzz(func(t *testing.T, stored []byte, sizeDelta int8) {
		size := int64(len(want)) + int64(sizeDelta)
		b := Blob{Size: size, Sum: SumBytes(want)}
		got, err := decodeBytes(&c, stored, b)
		if int64(len(got)) > 2*size+512 {
			t.Fatalf("%d bytes out for a blob of %d", len(got), size)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v, not ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("decoded %d other bytes without an error", len(got))
		}
	})
}

// FuzzExpandIndex feeds ExpandIndex, which reads the index files and
// Redis entries a store keeps (compressed or not), arbitrary bytes: it must
// not panic, nor give more than its limit; what it gives goes to
// DecodeIndex, which must not panic either.
func FuzzExpandIndex(f *testing.F) {
	var c Codec
	index := EncodeIndex(&Entry{Kind: KindManifest, Record: compressible(2000)})
	f.Add(c.CompressIndex(index, Compression{}))
	f.Add(index)
	f.Add(append(zstdFrameHeader(0, 4<<30), 0x01, 0x00, 0x00))
	f.Add([]byte{})
	const limit = 4 << 10
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := c.ExpandIndex(data, limit)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v, not ErrCorrupt", err)
			}
			return
		}
		if len(out) > limit && isZstd(data) {
			t.Fatalf("%d bytes out, over the limit of %d", len(out), limit)
		}
		DecodeIndex(out)
	})
}
