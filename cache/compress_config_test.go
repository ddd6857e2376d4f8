package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestCompressionSetting: OFFCC_CACHE_COMPRESSION_LEVEL reaches the store
// a cache opens with: blobs are zstd frames by default and at a level,
// stored as they are with "off", and read back alike; a bad value is an
// error that names the variable.
func TestCompressionSetting(t *testing.T) {
	data := bytes.Repeat([]byte("int kernel(void) { return 42; }\n"), 512)
	src := filepath.Join(t.TempDir(), "out.o")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value      string
		compressed bool
	}{{"", true}, {"3", true}, {"off", false}} {
		dir := t.TempDir()
		env := map[string]string{"OFFCC_CACHE_DIR": dir, EnvCompressionLevel: tc.value}
		cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("%q: %v", tc.value, err)
		}
		c := Open(cfg)
		key := SumBytes([]byte("key " + tc.value))
		b := Blob{Name: "out0", Size: int64(len(data)), Sum: SumBytes(data), Path: src}
		if err := c.Store.Put(key, &Entry{Kind: KindResult, Record: []byte("{}"), Blobs: []Blob{b}}); err != nil {
			t.Fatalf("%q: put: %v", tc.value, err)
		}
		stored, err := os.ReadFile(filepath.Join(c.Store.EntryDir(key), "out0"))
		if err != nil {
			t.Fatal(err)
		}
		if isZstd(stored) != tc.compressed || tc.compressed && len(stored) >= len(data) {
			t.Errorf("%s=%q: stored blob of %d bytes (zstd %v), want compressed %v", EnvCompressionLevel, tc.value, len(stored), isZstd(stored), tc.compressed)
		}
		e, err := c.Store.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Store.OpenBlob(e.Blobs[0])
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		_, err = got.ReadFrom(r)
		r.Close()
		if err != nil || !bytes.Equal(got.Bytes(), data) {
			t.Errorf("%q: read back %d bytes (%v), want the %d written", tc.value, got.Len(), err, len(data))
		}
	}
	env := map[string]string{EnvCompressionLevel: "fast"}
	if _, err := ConfigFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), EnvCompressionLevel) {
		t.Errorf("%s=fast: error %v, want one naming the variable", EnvCompressionLevel, err)
	}
}

// TestExpandIndexSaysSize: a compressed index carries its size in its
// frame header, and one that says more than the reader's limit is
// refused from the header (a farm worker bounds a job's entry so, before
// decoding megabytes of it); within the limit it decodes.
func TestExpandIndexSaysSize(t *testing.T) {
	var c Codec
	index := bytes.Repeat([]byte(`{"name":"in12345","size":35,"sha256":"0123456789abcdef"},`), 20000)
	data := c.CompressIndex(index, Compression{})
	var h zstd.Header
	if err := h.Decode(data); err != nil || !h.HasFCS || h.FrameContentSize != uint64(len(index)) {
		t.Fatalf("the compressed index's header: %v, size %v %d, want %d", err, h.HasFCS, h.FrameContentSize, len(index))
	}
	if _, err := c.ExpandIndex(data, int64(len(index))-1); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("ExpandIndex below the index's size: %v, want refused", err)
	}
	if out, err := c.ExpandIndex(data, int64(len(index))); err != nil || !bytes.Equal(out, index) {
		t.Errorf("ExpandIndex at the index's size: %v", err)
	}
}
