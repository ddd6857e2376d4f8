package ccob

import (
	"bytes"
	"compress/zlib"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeeds returns envelopes of every kind: the tool's files from
// testdata, our v2/v3 zlib/zstd output, hand-built v1, stored-block
// payloads carrying the magics, and a few broken ones.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob("testdata/*.ccob")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, data := range [][]byte{nil, []byte("x"), testData(300, 7), testData(3000, 8)} {
		for _, v := range []uint16{2, 3} {
			for _, m := range []Method{Zlib, Zstd} {
				env, err := Compress(data, Options{Version: v, Method: m})
				if err != nil {
					t.Fatal(err)
				}
				seeds = append(seeds, env)
			}
		}
		seeds = append(seeds, v1Envelope(Zlib, data, zlibPayload(t, data, 6)), v1Envelope(Zstd, data, zstdPayload(t, data)))
	}
	tricky := trickyData(40)[:600]
	if env, _, err := wrap(2, Zlib, tricky, zlibPayload(t, tricky, zlib.NoCompression)); err == nil {
		seeds = append(seeds, env)
	}
	seeds = append(seeds,
		[]byte("CCOB"),
		[]byte("CCOB\x03\x00\x01\x00"),
		v3Header(1, 32, 0, Hash(nil)),
		append(v3Header(1, 40, 1<<40, 0), make([]byte, 8)...),
	)
	return seeds
}

func FuzzDecompress(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		data, h, err := Decompress(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset != 0 || e.Kind == nil {
				t.Fatalf("error %v is not an *Error at offset 0", err)
			}
			return
		}
		if h.Version < 1 || h.Version > 3 || h.Size != headerSize(h.Version) {
			t.Fatalf("bad header %+v accepted", h)
		}
		if h.Version >= 2 && (h.TotalSize > uint64(len(b)) || h.TotalSize < uint64(h.Size)) {
			t.Fatalf("total size %d of %d bytes accepted", h.TotalSize, len(b))
		}
		if uint64(len(data)) != h.UncompressedSize || Hash(data) != h.Hash {
			t.Fatalf("size or hash not checked: %+v, %d bytes", h, len(data))
		}
		// What decodes must survive a round trip through our writer.
		env, err := Compress(data, Options{Version: 3, Method: h.Method, Level: 1})
		if err != nil {
			t.Fatal(err)
		}
		again, _, err := Decompress(env)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzSplit(f *testing.F) {
	seeds := fuzzSeeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	// Concatenations, unpadded and with a little zero padding.
	for i := 0; i+2 < len(seeds); i += 3 {
		var cat []byte
		for _, s := range seeds[i : i+3] {
			cat = append(cat, s...)
			cat = append(cat, make([]byte, i%7)...)
		}
		f.Add(cat)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		envs, err := Split(b)
		pos := 0
		for i, e := range envs {
			for pos < len(b) && b[pos] == 0 {
				pos++
			}
			if len(e) < HeaderSizeV1 || pos+len(e) > len(b) || &b[pos] != &e[0] {
				t.Fatalf("envelope %d (%d bytes) is not at the next non-zero byte %d", i, len(e), pos)
			}
			if !IsCompressed(e) {
				t.Fatalf("envelope %d lacks the magic", i)
			}
			h, herr := ParseHeader(e)
			if herr != nil {
				t.Fatalf("envelope %d: %v", i, herr)
			}
			if h.Version >= 2 && h.TotalSize != uint64(len(e)) {
				t.Fatalf("envelope %d: %d bytes, total size %d", i, len(e), h.TotalSize)
			}
			pos += len(e)
			_, _, _ = Decompress(e)
		}
		if err == nil {
			for ; pos < len(b); pos++ {
				if b[pos] != 0 {
					t.Fatalf("non-zero byte at %d after the last envelope", pos)
				}
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.Offset < int64(pos) || e.Offset >= int64(len(b)) {
			t.Fatalf("error %v: not an *Error after the last envelope (%d)", err, pos)
		}
	})
}
