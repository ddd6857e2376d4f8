package ccob

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// testData returns n bytes of bundle-like data: text-ish runs mixed with
// pseudo-random bytes, so it compresses but not trivially.
func testData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, 0, n)
	words := []string{"__CLANG_OFFLOAD_BUNDLE__", "hipv4-amdgcn-amd-amdhsa--gfx90a", "BC\xc0\xde", "kernel", "\x00\x00\x00\x00"}
	for len(b) < n {
		if r.IntN(3) == 0 {
			b = append(b, byte(r.Uint32()))
		} else {
			b = append(b, words[r.IntN(len(words))]...)
		}
	}
	return b[:n]
}

// randomBytes returns n incompressible bytes.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, v := range []uint16{2, 3} {
		for _, m := range []Method{Zlib, Zstd} {
			for _, size := range []int{0, 1, 1 << 20} {
				data := testData(size, uint64(size))
				env, err := Compress(data, Options{Version: v, Method: m})
				if err != nil {
					t.Fatalf("v%d %s %d: Compress: %v", v, m, size, err)
				}
				h, err := ParseHeader(env)
				if err != nil {
					t.Fatalf("v%d %s %d: ParseHeader: %v", v, m, size, err)
				}
				want := Header{Version: v, Method: m, TotalSize: uint64(len(env)), UncompressedSize: uint64(size), Hash: Hash(data), Size: headerSize(v)}
				if h != want {
					t.Errorf("v%d %s %d: header %+v, want %+v", v, m, size, h, want)
				}
				got, h2, err := Decompress(env)
				if err != nil {
					t.Fatalf("v%d %s %d: Decompress: %v", v, m, size, err)
				}
				if h2 != h || !bytes.Equal(got, data) {
					t.Errorf("v%d %s %d: round trip differs (header %+v)", v, m, size, h2)
				}
				// Bytes after TotalSize belong to someone else.
				if got, _, err := Decompress(append(env[:len(env):len(env)], "CCOBtrailing"...)); err != nil || !bytes.Equal(got, data) {
					t.Errorf("v%d %s %d: with trailing bytes: %v", v, m, size, err)
				}
			}
		}
	}
}

func TestCompressDefaults(t *testing.T) {
	data := testData(5000, 1)
	env, err := Compress(data, Options{Method: Zstd})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ParseHeader(env)
	if h.Version != 3 || h.Size != 32 {
		t.Errorf("default version %d size %d, want 3 and 32", h.Version, h.Size)
	}
	payload := env[h.Size:]
	if !bytes.HasPrefix(payload, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Fatalf("payload is not a zstd frame: % x", payload[:8])
	}
	fhd := payload[4]
	if fhd&0x04 != 0 {
		t.Errorf("zstd frame has a checksum (FHD %#x)", fhd)
	}
	if fhd&0x20 == 0 && fhd>>6 == 0 {
		t.Errorf("zstd frame has no content size (FHD %#x)", fhd)
	}
	if n, ok := zstdFrameLen(payload); !ok || n != len(payload) {
		t.Errorf("zstdFrameLen = %d, %v; want %d", n, ok, len(payload))
	}

	env, err = Compress(data, Options{Method: Zlib})
	if err != nil {
		t.Fatal(err)
	}
	// zlib header: CMF 0x78, FLEVEL 2 (default) in bits 6-7 of FLG.
	if env[32] != 0x78 || env[33]>>6 != 2 {
		t.Errorf("zlib header % x, want 78 9c (default level)", env[32:34])
	}
}

func TestCompressLevels(t *testing.T) {
	data := testData(200000, 2)
	for _, m := range []Method{Zlib, Zstd} {
		levels := []int{1, 3, 6, 9}
		if m == Zstd {
			levels = append(levels, -5, 12, 19, 22)
		}
		for _, l := range levels {
			env, err := Compress(data, Options{Method: m, Level: l})
			if err != nil {
				t.Fatalf("%s level %d: %v", m, l, err)
			}
			if got, _, err := Decompress(env); err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s level %d: round trip: %v", m, l, err)
			}
		}
	}
}

func TestCompressErrors(t *testing.T) {
	for _, o := range []Options{
		{Version: 1, Method: Zstd},
		{Version: 4, Method: Zstd},
		{Method: 2},
		{Method: Zlib, Level: 10},
		{Method: Zlib, Level: -1},
		{Method: Zstd, Level: 23},
	} {
		_, err := Compress([]byte("x"), o)
		var e *Error
		if !errors.As(err, &e) || e.Offset != -1 {
			t.Errorf("Compress(%+v) = %v, want *Error without offset", o, err)
		} else if !strings.HasPrefix(err.Error(), "compressed bundle: ") {
			t.Errorf("message %q", err)
		}
	}
}

func TestCheckV2(t *testing.T) {
	ok := Header{Version: 2, TotalSize: math.MaxUint32, UncompressedSize: math.MaxUint32}
	if err := checkV2(ok); err != nil {
		t.Errorf("checkV2(max) = %v", err)
	}
	for _, h := range []Header{
		{Version: 2, TotalSize: 100, UncompressedSize: math.MaxUint32 + 1},
		{Version: 2, TotalSize: math.MaxUint32 + 1, UncompressedSize: 100},
	} {
		if err := checkV2(h); !errors.Is(err, ErrTooLarge) {
			t.Errorf("checkV2(%+v) = %v, want ErrTooLarge", h, err)
		}
		h.Version = 3
		if err := checkV2(h); err != nil {
			t.Errorf("checkV2(%+v) = %v", h, err)
		}
	}
}

func TestHash(t *testing.T) {
	data := []byte("hello, bundle")
	sum := md5.Sum(data)
	env, err := Compress(data, Options{Method: Zstd})
	if err != nil {
		t.Fatal(err)
	}
	// On disk the 8 hash bytes are md5[0:8].
	if !bytes.Equal(env[24:32], sum[:8]) {
		t.Errorf("hash bytes % x, want % x", env[24:32], sum[:8])
	}
	if Hash(data) != binary.LittleEndian.Uint64(sum[:8]) {
		t.Errorf("Hash = %#x", Hash(data))
	}
}

// TestToolFiles decodes envelopes written by LLVM 22's clang-offload-bundler
// (kept in testdata; made from the tool's uncompressed tool-bundle.bin).
func TestToolFiles(t *testing.T) {
	plain, err := os.ReadFile("testdata/tool-bundle.bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file    string
		version uint16
	}{{"tool-v3-zstd.ccob", 3}, {"tool-v2-zstd-level9.ccob", 2}} {
		env, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		data, h, err := Decompress(env)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if h.Version != c.version || h.Method != Zstd || h.TotalSize != uint64(len(env)) {
			t.Errorf("%s: header %+v", c.file, h)
		}
		if !bytes.Equal(data, plain) {
			t.Errorf("%s: decompressed bundle differs from the tool's uncompressed one", c.file)
		}
	}
}

func TestIsCompressed(t *testing.T) {
	for in, want := range map[string]bool{"": false, "CCO": false, "CCOB": true, "CCOBx": true, "__CLANG_OFFLOAD_BUNDLE__": false} {
		if IsCompressed([]byte(in)) != want {
			t.Errorf("IsCompressed(%q) != %v", in, want)
		}
	}
}

func TestMethodString(t *testing.T) {
	if Zlib.String() != "zlib" || Zstd.String() != "zstd" || Method(7).String() != "method(7)" {
		t.Errorf("Method.String: %s %s %s", Zlib, Zstd, Method(7))
	}
}

// v3Header builds a raw version 3 header.
func v3Header(method uint16, total, size, hash uint64) []byte {
	return appendHeader(nil, Header{Version: 3, Method: Method(method), TotalSize: total, UncompressedSize: size, Hash: hash})
}

func TestDecompressErrors(t *testing.T) {
	data := testData(10000, 3)
	good, err := Compress(data, Options{Method: Zstd})
	if err != nil {
		t.Fatal(err)
	}
	goodZlib, err := Compress(data, Options{Method: Zlib})
	if err != nil {
		t.Fatal(err)
	}
	payload := good[32:]
	with := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	cases := []struct {
		name string
		in   []byte
		kind error
		msg  string
	}{
		{"empty", nil, ErrTruncated, ""},
		{"short magic", []byte("CC"), ErrTruncated, ""},
		{"not compressed", []byte("__CLANG_OFFLOAD_BUNDLE__"), ErrNotCompressed, ""},
		{"magic only", []byte("CCOB"), ErrTruncated, ""},
		{"truncated header", good[:20], ErrTruncated, "header needs 32 bytes"},
		{"truncated v2 header", []byte("CCOB\x02\x00\x01\x00\x00\x00"), ErrTruncated, ""},
		{"unknown version", with(func(b []byte) { b[4] = 4 }), ErrVersion, "version 4"},
		{"version 0", with(func(b []byte) { b[4] = 0 }), ErrVersion, ""},
		{"unknown method", with(func(b []byte) { b[6] = 2 }), ErrMethod, "method 2"},
		{"total smaller than header", with(func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 31) }), ErrTotalSize, ""},
		{"total past end", good[:len(good)-1], ErrTruncated, "runs past the end"},
		{"total huge", with(func(b []byte) { binary.LittleEndian.PutUint64(b[8:], math.MaxUint64) }), ErrTruncated, ""},
		{"size too small", with(func(b []byte) { binary.LittleEndian.PutUint64(b[16:], 9999) }), ErrSizeMismatch, "exceeds the header's 9999 bytes"},
		{"size too small zlib", func() []byte {
			b := bytes.Clone(goodZlib)
			binary.LittleEndian.PutUint64(b[16:], 9999)
			return b
		}(), ErrSizeMismatch, ""},
		{"size too large", with(func(b []byte) { binary.LittleEndian.PutUint64(b[16:], 10001) }), ErrSizeMismatch, ""},
		{"size huge", with(func(b []byte) { binary.LittleEndian.PutUint64(b[16:], 1<<62) }), ErrSizeMismatch, "more than"},
		{"hash", with(func(b []byte) { b[24] ^= 1 }), ErrHashMismatch, "hash mismatch (header 0x"},
		{"corrupt payload", with(func(b []byte) { copy(b[40:], "garbage garbage garbage") }), ErrCorrupt, ""},
		{"zlib as zstd", with(func(b []byte) { b[6] = 0 }), ErrCorrupt, "zlib"},
		{"no payload", append(v3Header(1, 32, 5, 0), payload...)[:32], ErrSizeMismatch, ""},
		{"empty zlib payload", v3Header(0, 32, 0, Hash(nil)), ErrCorrupt, ""},
		{"trailing frame garbage", func() []byte {
			b := append(bytes.Clone(good), "junk"...)
			binary.LittleEndian.PutUint64(b[8:], uint64(len(b)))
			return b
		}(), ErrCorrupt, ""},
	}
	for _, c := range cases {
		_, _, err := Decompress(c.in)
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.kind)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Offset != 0 {
			t.Errorf("%s: %v is not an *Error at offset 0", c.name, err)
		}
		if !strings.HasPrefix(err.Error(), "compressed bundle at offset 0x0: ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: message %q lacks %q", c.name, err, c.msg)
		}
	}

	// A base offset shows in the message.
	_, _, err = DecompressWith(with(func(b []byte) { b[24] ^= 1 }), DecompressOptions{Base: 0x1000})
	if err == nil || !strings.HasPrefix(err.Error(), "compressed bundle at offset 0x1000: hash mismatch (header 0x") {
		t.Errorf("error with base: %v", err)
	}
}

// TestLyingSizes checks that a header cannot make the reader allocate much:
// a few dozen bytes claiming gigabytes are rejected before any decoding, and
// a zstd frame whose content size lies is rejected from its header.
func TestLyingSizes(t *testing.T) {
	for _, m := range []Method{Zlib, Zstd} {
		env := append(v3Header(uint16(m), 0, 1<<40, 0), bytes.Repeat([]byte{0}, 40)...)
		binary.LittleEndian.PutUint64(env[8:], uint64(len(env)))
		allocs := testing.AllocsPerRun(1, func() { _, _, _ = Decompress(env) })
		_, _, err := Decompress(env)
		if !errors.Is(err, ErrSizeMismatch) {
			t.Errorf("%s: %v", m, err)
		}
		if allocs > 20 {
			t.Errorf("%s: %v allocations for a rejected header", m, allocs)
		}
	}

	// A real 2 MiB zero run compresses to a few dozen bytes; claiming
	// 1 byte less must stop decoding at the limit.
	zeros := make([]byte, 2<<20)
	env, err := Compress(zeros, Options{Method: Zstd})
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(env[16:], 1000)
	if _, _, err := Decompress(env); !errors.Is(err, ErrSizeMismatch) {
		t.Errorf("zstd frame content size above the header's: %v", err)
	}
	env, err = Compress(zeros, Options{Method: Zlib})
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(env[16:], 1000)
	if _, _, err := Decompress(env); !errors.Is(err, ErrSizeMismatch) {
		t.Errorf("zlib stream longer than the header's size: %v", err)
	}
}

// TestZstdWithoutContentSize decodes frames that do not announce their
// size (as a streaming zstd writer makes them), in both decoding paths.
func TestZstdWithoutContentSize(t *testing.T) {
	for _, size := range []int{100000, 3 << 20} {
		data := testData(size, 6)
		var buf bytes.Buffer
		zw, err := zstd.NewWriter(&buf, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(data)
		zw.Close()
		if h, ok := firstZstdHeader(buf.Bytes()); !ok || h.HasFCS {
			t.Fatalf("frame header %+v, %v", h, ok)
		}
		env, _, err := wrap(3, Zstd, data, buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := Decompress(env); err != nil || !bytes.Equal(got, data) {
			t.Errorf("size %d: %v", size, err)
		}
		binary.LittleEndian.PutUint64(env[16:], uint64(size-1))
		if _, _, err := Decompress(env); !errors.Is(err, ErrSizeMismatch) {
			t.Errorf("size %d, header one less: %v", size, err)
		}
	}
}

// v1Envelope hand-builds a version 1 envelope around an encoded payload.
func v1Envelope(m Method, data, payload []byte) []byte {
	b := appendHeader(nil, Header{Version: 1, Method: m, UncompressedSize: uint64(len(data)), Hash: Hash(data)})
	return append(b, payload...)
}

func zstdPayload(t testing.TB, data []byte) []byte {
	t.Helper()
	env, err := Compress(data, Options{Method: Zstd})
	if err != nil {
		t.Fatal(err)
	}
	return env[32:]
}

func zlibPayload(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	p, err := zlibCompress(data, level)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestV1(t *testing.T) {
	data := testData(70000, 4)
	for _, env := range [][]byte{
		v1Envelope(Zlib, data, zlibPayload(t, data, 6)),
		v1Envelope(Zstd, data, zstdPayload(t, data)),
	} {
		if len(env) < HeaderSizeV1 || binary.LittleEndian.Uint16(env[4:]) != 1 {
			t.Fatal("bad v1 envelope")
		}
		got, h, err := Decompress(env)
		if err != nil {
			t.Fatalf("v1 %s: %v", Method(env[6]), err)
		}
		if h.Version != 1 || h.Size != 20 || h.TotalSize != 0 || !bytes.Equal(got, data) {
			t.Errorf("v1 %s: header %+v", h.Method, h)
		}
		// A following envelope does not disturb a version 1 envelope.
		next, _ := Compress([]byte("next"), Options{Method: Zstd})
		if got, _, err := Decompress(append(bytes.Clone(env), next...)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("v1 %s followed by another envelope: %v", h.Method, err)
		}
		bad := bytes.Clone(env)
		bad[12] ^= 0xff
		if _, _, err := Decompress(bad); !errors.Is(err, ErrHashMismatch) {
			t.Errorf("v1 %s bad hash: %v", h.Method, err)
		}
	}
}

// trickyData is incompressible data with the magics in it, so that stored
// zlib blocks and raw zstd blocks carry "CCOB" and
// "__CLANG_OFFLOAD_BUNDLE__" verbatim in the compressed payload.
func trickyData(seed uint64) []byte {
	b := randomBytes(9000, seed)
	copy(b[100:], "CCOB\x03\x00\x01\x00")
	copy(b[3000:], "__CLANG_OFFLOAD_BUNDLE__")
	copy(b[6000:], "CCOB\x02\x00\x00\x00")
	return b
}

// fatbin lays out envelopes 4096-aligned with zero padding, like a
// .hip_fatbin section, and returns the section and each envelope's offset.
func fatbin(envs [][]byte) ([]byte, []int) {
	var sec []byte
	var offs []int
	for _, e := range envs {
		for len(sec)%4096 != 0 {
			sec = append(sec, 0)
		}
		offs = append(offs, len(sec))
		sec = append(sec, e...)
	}
	for len(sec)%4096 != 0 {
		sec = append(sec, 0)
	}
	return sec, offs
}

func TestSplitConcatenated(t *testing.T) {
	var envs, datas [][]byte
	add := func(data, env []byte) {
		datas = append(datas, data)
		envs = append(envs, env)
	}
	for i, o := range []Options{{Method: Zstd}, {Method: Zlib}, {Version: 2, Method: Zstd}, {Version: 2, Method: Zlib}} {
		data := testData(5000+3000*i, uint64(10+i))
		env, err := Compress(data, o)
		if err != nil {
			t.Fatal(err)
		}
		add(data, env)
	}
	// Stored zlib blocks and raw zstd blocks carrying both magics.
	tricky := trickyData(20)
	storedEnv, _, err := wrap(3, Zlib, tricky, zlibPayload(t, tricky, zlib.NoCompression))
	if err != nil {
		t.Fatal(err)
	}
	add(tricky, storedEnv)
	tricky2 := trickyData(21)
	rawEnv, err := Compress(tricky2, Options{Version: 2, Method: Zstd})
	if err != nil {
		t.Fatal(err)
	}
	add(tricky2, rawEnv)
	for _, e := range [][]byte{storedEnv, rawEnv} {
		if !bytes.Contains(e[HeaderSizeV2:], []byte("CCOB")) || !bytes.Contains(e[HeaderSizeV2:], []byte("__CLANG_OFFLOAD_BUNDLE__")) {
			t.Fatal("crafted payload does not contain the magics")
		}
	}
	// Back to back, no padding, too.
	add(datas[0], envs[0])

	sec, offs := fatbin(envs[:len(envs)-1])
	sec = append(sec, envs[len(envs)-1]...)
	offs = append(offs, len(sec)-len(envs[len(envs)-1]))

	got, err := Split(sec)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(envs) {
		t.Fatalf("Split found %d envelopes, want %d", len(got), len(envs))
	}
	for i, g := range got {
		if !bytes.Equal(g, envs[i]) || &g[0] != &sec[offs[i]] {
			t.Errorf("envelope %d: got %d bytes, want %d bytes at offset %#x", i, len(g), len(envs[i]), offs[i])
		}
		data, _, err := DecompressWith(g, DecompressOptions{Base: int64(offs[i])})
		if err != nil || !bytes.Equal(data, datas[i]) {
			t.Errorf("envelope %d: %v", i, err)
		}
	}

	// Nothing, or only padding.
	for _, in := range [][]byte{nil, make([]byte, 4096)} {
		if got, err := Split(in); err != nil || len(got) != 0 {
			t.Errorf("Split(%d zero bytes) = %d, %v", len(in), len(got), err)
		}
	}
}

func TestSplitV1(t *testing.T) {
	// Version 1 envelopes whose payload contains "CCOB": the stream end,
	// not the magic, bounds them.
	tricky := trickyData(30)
	envs := [][]byte{
		v1Envelope(Zlib, tricky, zlibPayload(t, tricky, zlib.NoCompression)),
		v1Envelope(Zstd, tricky, zstdPayload(t, tricky)),
		v1Envelope(Zlib, []byte("small"), zlibPayload(t, []byte("small"), 6)),
	}
	sec, offs := fatbin(envs)
	// And one with a trailing v3 envelope right after, unpadded.
	v3, _ := Compress([]byte("v3"), Options{Method: Zstd})
	sec = append(sec, v1Envelope(Zstd, []byte("x"), zstdPayload(t, []byte("x")))...)
	sec = append(sec, v3...)
	got, err := Split(sec)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("Split found %d envelopes, want 5", len(got))
	}
	for i, e := range envs {
		if !bytes.Equal(got[i], e) || &got[i][0] != &sec[offs[i]] {
			t.Errorf("v1 envelope %d: %d bytes, want %d", i, len(got[i]), len(e))
		}
	}
	if !bytes.Equal(got[4], v3) {
		t.Errorf("last envelope % x, want % x", got[4], v3)
	}

	// A v1 envelope whose stream cannot be walked ends at the next "CCOB".
	broken := append(v1Envelope(Zlib, []byte("abc"), []byte("not zlib at all")), v3...)
	got, err = Split(broken)
	if err != nil || len(got) != 2 || len(got[0]) != 20+len("not zlib at all") {
		t.Errorf("broken v1: %d envelopes, %v", len(got), err)
	}
}

func TestSplitErrors(t *testing.T) {
	env, _ := Compress([]byte("hello"), Options{Method: Zstd})
	cases := []struct {
		name string
		in   []byte
		off  int64
		kind error
		good int // envelopes before the error
	}{
		{"garbage", []byte("garbage!"), 0, ErrNotCompressed, 0},
		{"garbage after", append(bytes.Clone(env), "\x00\x00junk"...), int64(len(env) + 2), ErrNotCompressed, 1},
		{"short tail", append(bytes.Clone(env), "CC"...), int64(len(env)), ErrTruncated, 1},
		{"truncated", append(make([]byte, 4096), env[:len(env)-1]...), 4096, ErrTruncated, 0},
		{"bad version", append(append(bytes.Clone(env), make([]byte, 3)...), "CCOB\x09\x00\x01\x00"...), int64(len(env) + 3), ErrVersion, 1},
	}
	for _, c := range cases {
		got, err := Split(c.in)
		var e *Error
		if !errors.Is(err, c.kind) || !errors.As(err, &e) || e.Offset != c.off {
			t.Errorf("%s: %v, want %v at %#x", c.name, err, c.kind, c.off)
		}
		if len(got) != c.good {
			t.Errorf("%s: %d envelopes before the error, want %d", c.name, len(got), c.good)
		}
	}
}

func TestVerboseFormat(t *testing.T) {
	data := testData(1234567, 5)
	var w strings.Builder
	env, err := Compress(data, Options{Method: Zstd, Verbose: &w})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	want := []string{
		"Compressed bundle format version: 3",
		"Total file size (including headers): " + commas(uint64(len(env))) + " bytes",
		"Compression method used: zstd",
		"Compression level: 3",
		"Binary size before compression: 1,234,567 bytes",
		"Binary size after compression: " + commas(uint64(len(env)-32)) + " bytes",
		"Compression rate: ",
		"Compression ratio: ",
		"Compression speed: ",
		"Truncated MD5 hash: " + hex16(Hash(data)),
	}
	checkLines(t, lines, want)

	w.Reset()
	if _, _, err := DecompressWith(env, DecompressOptions{Verbose: &w}); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	want = []string{
		"Compressed bundle format version: 3",
		"Total file size (from header): " + commas(uint64(len(env))) + " bytes",
		"Decompression method: zstd",
		"Size before decompression: " + commas(uint64(len(env)-32)) + " bytes",
		"Size after decompression: 1,234,567 bytes",
		"Compression rate: ",
		"Compression ratio: ",
		"Decompression speed: ",
		"Stored hash: " + hex16(Hash(data)),
		"Recalculated hash: " + hex16(Hash(data)),
		"Hashes match: Yes",
	}
	checkLines(t, lines, want)

	// A hash mismatch is reported in the verbose output too.
	env[24] ^= 1
	w.Reset()
	if _, _, err := DecompressWith(env, DecompressOptions{Verbose: &w}); !errors.Is(err, ErrHashMismatch) {
		t.Fatal(err)
	}
	if !strings.HasSuffix(w.String(), "Hashes match: No\n") {
		t.Errorf("verbose output on mismatch:\n%s", w.String())
	}
}

// checkLines compares lines with want; a want ending in ": " only fixes the label.
func checkLines(t *testing.T, lines, want []string) {
	t.Helper()
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i := range want {
		if strings.HasSuffix(want[i], ": ") {
			if !strings.HasPrefix(lines[i], want[i]) {
				t.Errorf("line %d = %q, want prefix %q", i, lines[i], want[i])
			}
		} else if lines[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, lines[i], want[i])
		}
	}
}

func TestFormatHelpers(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 12: "12", 123: "123", 1234: "1,234", 123456: "123,456", 1234567: "1,234,567", math.MaxUint64: "18,446,744,073,709,551,615"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
	if got := hex16(0xf451139c8e8fc964); got != "0xf451139c8e8fc964" {
		t.Errorf("hex16 = %q", got)
	}
	if got := hex16(0x1234); got != "0x00000000001234" {
		t.Errorf("hex16 = %q", got)
	}
	if cfloat(math.Inf(1)) != "inf" || cfloat(math.NaN()) != "nan" || cfloat(1.155) != "1.16" && cfloat(1.155) != "1.15" {
		t.Errorf("cfloat")
	}
}

func TestZstdFrameLen(t *testing.T) {
	for _, size := range []int{0, 1, 100, 5000, 300000} {
		p := zstdPayload(t, testData(size, uint64(size)))
		if n, ok := zstdFrameLen(append(bytes.Clone(p), "tail"...)); !ok || n != len(p) {
			t.Errorf("size %d: zstdFrameLen = %d, %v; want %d", size, n, ok, len(p))
		}
		for cut := range len(p) {
			if n, ok := zstdFrameLen(p[:cut]); ok {
				t.Errorf("size %d cut %d: zstdFrameLen = %d on a truncated frame", size, cut, n)
				break
			}
		}
	}
	skip := []byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c', 'd'}
	if n, ok := zstdFrameLen(skip); !ok || n != 11 {
		t.Errorf("skippable frame: %d, %v", n, ok)
	}
}
