package farm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/cache/redisstore/redistest"
)

// TestBlobCache: a blob is downloaded once for any number of jobs, placed
// whole, and the cache empties itself past its limit.
func TestBlobCache(t *testing.T) {
	srv := redistest.Start(t)
	store, err := redisstore.Open(srv.URL, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	src := filepath.Join(t.TempDir(), "h.h")
	data := bytes.Repeat([]byte("#define X 1\n"), 1000)
	os.WriteFile(src, data, 0o644)
	b, err := blobOf(src, "f0")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(cache.SumBytes([]byte("k")), &cache.Entry{Kind: kindJob, Blobs: []cache.Blob{b}}); err != nil {
		t.Fatal(err)
	}
	c := newBlobCache(store, t.TempDir(), int64(len(data))*2)
	jobs := t.TempDir()
	_, down0 := store.Transferred()
	for i := 0; i < 3; i++ {
		dst := filepath.Join(jobs, "h"+string(rune('0'+i)))
		if err := c.place(b, dst); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
			t.Fatalf("placed copy %d differs", i)
		}
	}
	if _, down := store.Transferred(); down-down0 != int64(len(data)) {
		t.Errorf("downloaded %d bytes for three placements of a %d-byte blob", down-down0, len(data))
	}
	// A second blob fits; a third passes the limit and empties the cache.
	for i := 0; i < 2; i++ {
		other := filepath.Join(t.TempDir(), "o.h")
		os.WriteFile(other, append(data, byte('a'+i)), 0o644)
		ob, _ := blobOf(other, "f0")
		store.Put(cache.SumBytes([]byte{byte(i)}), &cache.Entry{Kind: kindJob, Blobs: []cache.Blob{ob}})
		if err := c.place(ob, filepath.Join(jobs, "o"+string(rune('0'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(c.dir)
	if len(entries) != 1 {
		t.Errorf("the cache holds %d blobs after passing its limit, want 1 (emptied, then the last)", len(entries))
	}
	// Jobs' hard links survive the trim.
	if got, _ := os.ReadFile(filepath.Join(jobs, "h0")); !bytes.Equal(got, data) {
		t.Error("a job's copy went with the trim")
	}
}
