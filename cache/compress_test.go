package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func TestParseCompression(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Compression
		bad  bool
	}{
		{"", Compression{}, false},
		{"0", Compression{}, false},
		{"1", Compression{Level: 1}, false},
		{" 19 ", Compression{Level: 19}, false},
		{"22", Compression{Level: 22}, false},
		{"-5", Compression{Level: -5}, false},
		{"+3", Compression{Level: 3}, false},
		{"off", Compression{Off: true}, false},
		{"OFF", Compression{Off: true}, false},
		{"none", Compression{Off: true}, false},
		{"23", Compression{}, true},
		{"fast", Compression{}, true},
		{"1.5", Compression{}, true},
		{"-200000", Compression{}, true},
	} {
		got, err := ParseCompression(tt.in)
		if (err != nil) != tt.bad || !tt.bad && got != tt.want {
			t.Errorf("ParseCompression(%q) = %+v, %v; want %+v, bad %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
	for _, tt := range []struct {
		c    Compression
		want string
	}{
		{Compression{}, "zstd level 1 (fastest)"},
		{Compression{Level: -3}, "zstd level -3 (fastest)"},
		{Compression{Level: 3}, "zstd level 3 (default)"},
		{Compression{Level: 19}, "zstd level 19 (best)"},
		{Compression{Off: true}, "off"},
	} {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.c, got, tt.want)
		}
	}
	getenv := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvCompressionLevel {
				return v
			}
			return ""
		}
	}
	if c, err := CompressionFromEnv(getenv("off")); err != nil || !c.Off {
		t.Errorf("CompressionFromEnv(off) = %+v, %v", c, err)
	}
	if _, err := CompressionFromEnv(getenv("fast")); err == nil || !strings.Contains(err.Error(), EnvCompressionLevel+"=fast") {
		t.Errorf("CompressionFromEnv(fast): %v", err)
	}
}

// encodeBytes encodes data as a store would, and says whether it came out
// compressed.
func encodeBytes(t testing.TB, c *Codec, data []byte, comp Compression) ([]byte, bool) {
	t.Helper()
	var out bytes.Buffer
	compressed, stored, err := c.Encode(bytes.NewReader(data), int64(len(data)), comp, func(p []byte) error {
		out.Write(p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if stored != int64(out.Len()) {
		t.Fatalf("Encode says %d bytes stored, emitted %d", stored, out.Len())
	}
	if compressed != isZstd(out.Bytes()) {
		t.Fatalf("Encode says compressed = %v of bytes starting %x", compressed, out.Bytes()[:min(4, out.Len())])
	}
	return out.Bytes(), compressed
}

// decodeBytes reads stored bytes as a store would: decompressed if they
// start with the zstd magic, verified against b.
func decodeBytes(c *Codec, stored []byte, b Blob) ([]byte, error) {
	var r io.ReadCloser = io.NopCloser(bytes.NewReader(stored))
	if b.Size >= 4 && isZstd(stored) {
		var err error
		if r, err = c.NewReader(r, b.Size); err != nil {
			return nil, err
		}
	}
	v := NewVerifier(r, b)
	defer v.Close()
	return io.ReadAll(v)
}

func compressible(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d of a compressible blob\n", i%1000)
	}
	return b.Bytes()[:n]
}

func TestCodecRoundTrip(t *testing.T) {
	var c Codec
	sizes := []int{0, 1, 3, 4, 100, 1023, 1024, 1025, 200 << 10, frameSize - 1, frameSize, frameSize + 1, 2*frameSize + 17}
	for _, comp := range []Compression{{}, {Off: true}, {Level: 3}, {Level: 7}, {Level: 19}, {Level: -2}} {
		for _, n := range sizes {
			for _, kind := range []string{"compressible", "random", "magic"} {
				var data []byte
				switch kind {
				case "compressible":
					data = compressible(n)
				case "random":
					data = []byte(incompressible(n, int64(n)))
				case "magic":
					if n < 4 {
						continue
					}
					data = append(append([]byte(nil), zstdMagic...), compressible(n-4)...)
				}
				name := fmt.Sprintf("%v/%d/%s", comp, n, kind)
				stored, compressed := encodeBytes(t, &c, data, comp)
				switch {
				case kind == "magic" && !compressed:
					t.Errorf("%s: a blob starting with the zstd magic was stored as it is", name)
				case comp.Off && kind != "magic" && compressed:
					t.Errorf("%s: compressed with compression off", name)
				case !comp.Off && kind == "compressible" && n >= 100 && !compressed:
					t.Errorf("%s: not compressed", name)
				case !compressed && !bytes.Equal(stored, data):
					t.Errorf("%s: stored as it is, but changed", name)
				case kind == "random" && n <= frameSize && len(stored) > n:
					t.Errorf("%s: %d bytes stored for %d incompressible ones", name, len(stored), n)
				case int64(len(stored)) > MaxStoredSize(int64(n)):
					t.Errorf("%s: %d bytes stored, more than MaxStoredSize", name, len(stored))
				}
				got, err := decodeBytes(&c, stored, Blob{Size: int64(n), Sum: SumBytes(data)})
				if err != nil || !bytes.Equal(got, data) {
					t.Errorf("%s: decoded %d bytes, %v", name, len(got), err)
				}
			}
		}
	}
}

func TestCodecEncodeSize(t *testing.T) {
	var c Codec
	for _, n := range []int{0, 10, frameSize + 10} {
		data := compressible(n)
		for _, size := range []int64{int64(n) - 1, int64(n) + 1} {
			if size < 0 {
				continue
			}
			_, _, err := c.Encode(bytes.NewReader(data), size, Compression{}, func([]byte) error { return nil })
			if err == nil {
				t.Errorf("Encode of %d bytes as %d: no error", n, size)
			}
		}
	}
	fail := errors.New("emit failed")
	if _, _, err := c.Encode(bytes.NewReader([]byte("abc")), 3, Compression{}, func([]byte) error { return fail }); !errors.Is(err, fail) {
		t.Errorf("Encode with a failing emit: %v", err)
	}
}

// zstdFrameHeader returns a frame header (no checksum, no dictionary) with
// the window descriptor wd and, when fcs >= 0, an 8-byte content size.
func zstdFrameHeader(wd byte, fcs int64) []byte {
	h := append([]byte(nil), zstdMagic...)
	if fcs >= 0 {
		h = append(h, 3<<6, wd) // FCS flag 3: 8 bytes
		return binary.LittleEndian.AppendUint64(h, uint64(fcs))
	}
	return append(h, 0, wd)
}

// TestCodecHostile: whatever the stored bytes, decoding is a miss
// (ErrCorrupt), never a panic, another blob's bytes or unbounded memory.
func TestCodecHostile(t *testing.T) {
	var c Codec
	want := compressible(10000)
	b := Blob{Size: int64(len(want)), Sum: SumBytes(want)}
	good, _ := encodeBytes(t, &c, want, Compression{})
	other, _ := encodeBytes(t, &c, compressible(10001)[1:], Compression{})

	// A bomb: a few KiB of frames that decode to 256 MiB of zeros.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	var bomb []byte
	zeros := make([]byte, 1<<20)
	for i := 0; i < 256; i++ {
		bomb = enc.EncodeAll(zeros, bomb)
	}
	if len(bomb) > 64<<10 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	// The same with a 1 GiB window.
	bigWindow := append(zstdFrameHeader(20<<3, -1), bomb[10:]...)
	// A frame that claims 4 GiB of content in one segment.
	claims := append(zstdFrameHeader(0, 4<<30), 0x01, 0x00, 0x00)

	tests := map[string][]byte{
		"truncated":              good[:len(good)/2],
		"header only":            good[:6],
		"other bytes":            other,
		"trailing garbage":       append(append([]byte(nil), good...), 1, 2, 3, 4, 5),
		"two copies":             append(append([]byte(nil), good...), good...),
		"flipped byte":           flip(good, len(good)/2),
		"bomb":                   bomb,
		"bomb, tiny blob":        bomb,
		"bomb, large blob":       bomb,
		"big window":             bigWindow,
		"claims 4 GiB":           claims,
		"magic only":             zstdMagic,
		"skippable padding":      append(append([]byte(nil), good...), skippable(int(MaxStoredSize(b.Size)))...),
		"reserved window":        append(zstdFrameHeader(0xff, -1), 0x01, 0x00, 0x00),
		"bad block":              append(zstdFrameHeader(0, 5), 0xff, 0xff, 0xff, 0xff),
		"empty frame, not empty": append(zstdFrameHeader(0, 0), 0x01, 0x00, 0x00),
	}
	for name, stored := range tests {
		t.Run(name, func(t *testing.T) {
			blob := b
			switch name {
			case "bomb, tiny blob":
				blob = Blob{Size: 10, Sum: SumBytes(make([]byte, 10))}
			case "bomb, large blob":
				// Its window fits the size: the bytes beyond it
				// are the end.
				blob = Blob{Size: 4 << 20, Sum: SumBytes(make([]byte, 4<<20))}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			got, err := decodeBytes(&c, stored, blob)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("decoded %d bytes, %v; want ErrCorrupt", len(got), err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
				t.Errorf("decoding allocated %d MiB", alloc>>20)
			}
		})
	}
	// The good one still decodes (the pooled decoders survived).
	if got, err := decodeBytes(&c, good, b); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the good blob: %d bytes, %v", len(got), err)
	}
}

func flip(data []byte, i int) []byte {
	out := append([]byte(nil), data...)
	out[i] ^= 0x10
	return out
}

// skippable returns a zstd skippable frame of n bytes of payload.
func skippable(n int) []byte {
	f := binary.LittleEndian.AppendUint32(nil, 0x184D2A50)
	f = binary.LittleEndian.AppendUint32(f, uint32(n))
	return append(f, make([]byte, n)...)
}

// TestCodecSourceError: a failure of the store's own reads passes as it
// is (not ErrCorrupt: the shared cache's caller tells a dead server from a
// damaged blob).
func TestCodecSourceError(t *testing.T) {
	var c Codec
	data := compressible(100000)
	stored, _ := encodeBytes(t, &c, data, Compression{})
	fail := errors.New("connection reset")
	src := io.NopCloser(io.MultiReader(bytes.NewReader(stored[:len(stored)/2]), errReader{fail}))
	r, err := c.NewReader(src, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.ReadAll(r); !errors.Is(err, fail) || errors.Is(err, ErrCorrupt) {
		t.Errorf("read with a failing source: %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestDirStoreCompression: blobs are stored compressed when that pays,
// as they are otherwise or when compression is off, and every entry reads
// whatever the level it was written at and the level of the reader.
func TestDirStoreCompression(t *testing.T) {
	dir := t.TempDir()
	src := t.TempDir()
	data := map[string][]byte{
		"text":   compressible(300 << 10),
		"random": []byte(incompressible(5000, 1)),
		"magic":  append(append([]byte(nil), zstdMagic...), []byte(incompressible(100, 2))...),
		"empty":  {},
		"large":  compressible(frameSize*2 + 5),
	}
	names := []string{"text", "random", "magic", "empty", "large"}
	var levels = []Compression{{}, {Off: true}, {Level: 19}, {Level: 3}}
	for i, comp := range levels {
		s := NewDirStore(dir)
		s.Compression = comp
		e := &Entry{Kind: KindResult, Record: []byte("{}")}
		for _, n := range names {
			e.Blobs = append(e.Blobs, blobFile(t, src, n, data[n]))
		}
		key := testKey(fmt.Sprint("compression ", i))
		if err := s.Put(key, e); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			file, err := os.ReadFile(filepath.Join(s.EntryDir(key), n))
			if err != nil {
				t.Fatal(err)
			}
			wantZstd := n == "magic" || !comp.Off && (n == "text" || n == "large")
			if isZstd(file) != wantZstd {
				t.Errorf("%v: blob %s stored compressed = %v, want %v", comp, n, isZstd(file), wantZstd)
			}
			if !isZstd(file) && !bytes.Equal(file, data[n]) {
				t.Errorf("%v: blob %s stored as it is, but changed", comp, n)
			}
		}
	}
	// Every reader reads every entry.
	for _, comp := range levels {
		s := NewDirStore(dir)
		s.Compression = comp
		for i := range levels {
			e, err := s.Get(testKey(fmt.Sprint("compression ", i)))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range e.Blobs {
				if got, err := readBlob(s, b); err != nil || !bytes.Equal(got, data[b.Name]) {
					t.Errorf("reader %v, entry %d, blob %s: %d bytes, %v", comp, i, b.Name, len(got), err)
				}
			}
		}
	}
	// Sizes: on disk the text is a fraction of its size.
	c := &Cache{Config: Config{Dir: dir}, Store: NewDirStore(dir)}
	u, err := c.UsageByKind()
	if err != nil {
		t.Fatal(err)
	}
	r := u[KindResult]
	if r.Entries != int64(len(levels)) || r.Bytes >= r.Uncompressed/2 || r.Bytes <= 0 {
		t.Errorf("usage %+v: want %d entries, on disk less than half of uncompressed", r, len(levels))
	}
}

// TestDirStoreOldBlobs: an entry written before compression (blobs as they
// are) still reads; one whose blob is damaged, or was written as it is but
// starts with the zstd magic, is a miss, never an error to the build.
func TestDirStoreOldBlobs(t *testing.T) {
	s := NewDirStore(t.TempDir())
	s.Compression = Compression{Off: true}
	text := compressible(50000)
	magic := append(append([]byte(nil), zstdMagic...), text...)
	putEntry(t, s, testKey("old"), "{}", string(text))
	e, _ := s.Get(testKey("old"))
	// Written as the old store wrote it: the bytes as they are.
	if file, _ := os.ReadFile(e.Blobs[0].Path); !bytes.Equal(file, text) {
		t.Fatal("not stored as it is")
	}
	s.Compression = Compression{}
	if got, err := readBlob(s, e.Blobs[0]); err != nil || !bytes.Equal(got, text) {
		t.Errorf("old blob: %d bytes, %v", len(got), err)
	}
	// An old blob that starts with the magic: a miss.
	putEntry(t, s, testKey("old magic"), "{}", string(magic))
	e, _ = s.Get(testKey("old magic"))
	if err := os.WriteFile(e.Blobs[0].Path, magic, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readBlob(s, e.Blobs[0]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("an old blob starting with the zstd magic: %v, want ErrCorrupt", err)
	}
}

// TestDirStorePutAgain: an entry got from a store and put again (another
// key, or replaced with a signature) keeps its blobs as they are stored.
func TestDirStorePutAgain(t *testing.T) {
	s := NewDirStore(t.TempDir())
	text := compressible(100000)
	putEntry(t, s, testKey("a"), "{}", string(text))
	e, _ := s.Get(testKey("a"))
	if err := s.Put(testKey("b"), e); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(testKey("a"), e); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		e, err := s.Get(testKey(k))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := readBlob(s, e.Blobs[0]); err != nil || !bytes.Equal(got, text) {
			t.Errorf("%s: %d bytes, %v", k, len(got), err)
		}
	}
}

// TestDirStoreIndexCompression: a large index (a manifest) is stored
// compressed, a small one as it is; both read, and so does a large one
// stored as it is (before compression); a compressed index that does not
// decode, or decodes to more than an index may hold, is a miss.
func TestDirStoreIndexCompression(t *testing.T) {
	s := NewDirStore(t.TempDir())
	big := compressible(100 << 10)
	s.Replace(testKey("big"), &Entry{Kind: KindManifest, Record: big})
	s.Replace(testKey("small"), &Entry{Kind: KindManifest, Record: []byte("{}")})
	s.Compression = Compression{Off: true}
	s.Replace(testKey("big, as it is"), &Entry{Kind: KindManifest, Record: big})
	s.Compression = Compression{}
	for _, tc := range []struct {
		key        string
		compressed bool
	}{{"big", true}, {"small", false}, {"big, as it is", false}} {
		file, err := os.ReadFile(filepath.Join(s.EntryDir(testKey(tc.key)), indexName))
		if err != nil {
			t.Fatal(err)
		}
		if isZstd(file) != tc.compressed {
			t.Errorf("%s: index stored compressed = %v", tc.key, isZstd(file))
		}
		e, err := s.Get(testKey(tc.key))
		if err != nil || e.Kind != KindManifest || len(e.Record) < 2 {
			t.Errorf("%s: Get = %v", tc.key, err)
		}
	}
	c := &Cache{Config: Config{Dir: s.Dir}, Store: s}
	u, _ := c.UsageByKind()
	if m := u[KindManifest]; m.Entries != 3 || m.Uncompressed < 2*int64(len(big)) || m.Bytes > m.Uncompressed*2/3 {
		t.Errorf("manifests: %+v", m)
	}
	// Damaged and hostile compressed indexes.
	var codec Codec
	index := EncodeIndex(&Entry{Kind: KindManifest, Record: big})
	stored := codec.CompressIndex(index, Compression{})
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	bomb := enc.EncodeAll(make([]byte, maxIndexSize+1), nil)
	for name, data := range map[string][]byte{
		"truncated":    stored[:len(stored)-3],
		"flipped byte": flip(stored, len(stored)/2),
		"bomb":         bomb,
	} {
		p := filepath.Join(s.EntryDir(testKey("big")), indexName)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(testKey("big")); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Get = %v, want ErrNotFound", name, err)
		}
		// (A changed byte may decode, to an index failing its checksum.)
		if _, err := codec.ExpandIndex(data, maxIndexSize); name != "flipped byte" && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: ExpandIndex: %v, want ErrCorrupt", name, err)
		}
	}
}

// benchBlobs returns a device object and a host object of realistic
// sizes (200 KB and 2 MB): the files OFFCC_BENCH_BLOBS names (two,
// ':'-separated), else slices of this test binary, which is machine code
// and data as objects are.
func benchBlobs(b *testing.B) [][]byte {
	var names []string
	if v := os.Getenv("OFFCC_BENCH_BLOBS"); v != "" {
		names = strings.Split(v, ":")
	}
	if len(names) == 2 {
		var out [][]byte
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, data)
		}
		return out
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		b.Fatal(err)
	}
	if len(exe) < 3<<20 {
		b.Skipf("%s is too small", self)
	}
	return [][]byte{exe[1<<20 : 1<<20+200<<10], exe[len(exe)-2<<20:]}
}

// benchName names a compression in benchmarks: off, zstd1, zstd3, ...
func benchName(c Compression) string {
	if c.Off {
		return "off"
	}
	return fmt.Sprint("zstd", c.zstdLevel())
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start (user and
// system, the whole process's: robust to a machine busy with others, as
// wall time is not).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkDirStorePut: the cost of storing a result of a device object
// (200 KB) and a host object (2 MB), compression off and at levels; what
// a cold build adds per compile. Besides time, it reports the bytes on
// disk per byte stored. The parts: Encode alone (compression), and the
// manifest's Replace (an index only).
func BenchmarkDirStorePut(b *testing.B) {
	blobs := benchBlobs(b)
	src := b.TempDir()
	var files []Blob
	var total int64
	for i, data := range blobs {
		p := filepath.Join(src, fmt.Sprint("out", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, Blob{Name: fmt.Sprint("out", i), Size: int64(len(data)), Sum: SumBytes(data), Mode: 0o644, Path: p})
		total += int64(len(data))
	}
	for _, comp := range []Compression{{Off: true}, {}, {Level: 3}, {Level: 19}} {
		b.Run("put/"+benchName(comp), func(b *testing.B) {
			s := NewDirStore(b.TempDir())
			s.Compression = comp
			b.SetBytes(total)
			b.ResetTimer()
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				// Eight entries, each removed before it is put
				// again: the cache stays the size of a build's, not
				// gigabytes that the kernel must write back.
				key := SumBytes([]byte(fmt.Sprint(i % 8)))
				if i >= 8 {
					b.StopTimer()
					s.Remove(key)
					b.StartTimer()
				}
				e := &Entry{Kind: KindResult, Record: []byte(`{"kind":"compile","stdout":"","stderr":"","ms":1000}`), Blobs: files}
				start := cpuTime()
				if err := s.Put(key, e); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - start
			}
			b.StopTimer()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			c := &Cache{Config: Config{Dir: s.Dir}, Store: s}
			u, _ := c.UsageByKind()
			r := u[KindResult]
			b.ReportMetric(float64(r.Bytes)/float64(r.Uncompressed), "disk/raw")
		})
		b.Run("first-put/"+benchName(comp), func(b *testing.B) {
			// A new store each time: what a short-lived offcc
			// process pays for its first put, encoder included.
			dir := b.TempDir()
			b.SetBytes(total)
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				s := NewDirStore(dir)
				s.Compression = comp
				key := SumBytes([]byte(fmt.Sprint(i % 8)))
				if i >= 8 {
					s.Remove(key)
				}
				e := &Entry{Kind: KindResult, Record: []byte("{}"), Blobs: files}
				start := cpuTime()
				if err := s.Put(key, e); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - start
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
		if comp.Off {
			continue
		}
		b.Run("encode/"+benchName(comp), func(b *testing.B) {
			var c Codec
			b.SetBytes(total)
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				for _, data := range blobs {
					if _, _, err := c.Encode(bytes.NewReader(data), int64(len(data)), comp, func([]byte) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportCPU(b, start)
		})
	}
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(total)
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			for _, data := range blobs {
				SumBytes(data)
			}
		}
		reportCPU(b, start)
	})
	b.Run("manifest-replace", func(b *testing.B) {
		s := NewDirStore(b.TempDir())
		rec := bytes.Repeat([]byte(`{"path":"/usr/include/some/header.h","sha256":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},`), 60)
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			if err := s.Replace(testKey(fmt.Sprint(i%16)), &Entry{Kind: KindManifest, Record: rec}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start)
	})
	b.Run("read/default", func(b *testing.B) {
		s := NewDirStore(b.TempDir())
		key := testKey("read")
		if err := s.Put(key, &Entry{Kind: KindResult, Record: []byte("{}"), Blobs: files}); err != nil {
			b.Fatal(err)
		}
		e, _ := s.Get(key)
		b.SetBytes(total)
		b.ResetTimer()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			for _, bl := range e.Blobs {
				r, err := s.OpenBlob(bl)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
		}
		reportCPU(b, start)
	})
}
