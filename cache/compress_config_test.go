package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
