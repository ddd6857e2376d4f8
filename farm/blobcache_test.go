package farm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	c := newBlobCache(store, t.TempDir(), int64(len(data))*2, 0)
	jobs := t.TempDir()
	_, down0 := store.Transferred()
	for i := 0; i < 3; i++ {
		dst := filepath.Join(jobs, "h"+string(rune('0'+i)))
		if err := c.place(context.Background(), b, dst); err != nil {
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
		if err := c.place(context.Background(), ob, filepath.Join(jobs, "o"+string(rune('0'+i)))); err != nil {
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

// blobCacheStore returns a store on a new Redis server holding n distinct
// blobs of size bytes, and their descriptions.
func blobCacheStore(t *testing.T, n, size int) (*redisstore.Store, []cache.Blob) {
	t.Helper()
	srv := redistest.Start(t)
	store, err := redisstore.Open(srv.URL, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var blobs []cache.Blob
	dir := t.TempDir()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("b%d", i))
		data := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		data = fmt.Appendf(data, "%d", i)
		os.WriteFile(p, data, 0o644)
		b, err := blobOf(p, fmt.Sprintf("f%d", i))
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, b)
	}
	if err := store.Put(cache.SumBytes([]byte("k")), &cache.Entry{Kind: kindJob, Blobs: blobs}); err != nil {
		t.Fatal(err)
	}
	return store, blobs
}

// TestBlobCacheFloor: a blob that would leave less than the floor free
// empties the cache first, and is refused (errLowDisk) when that is not
// enough; outputs ask for room the same way.
func TestBlobCacheFloor(t *testing.T) {
	store, blobs := blobCacheStore(t, 3, 1000)
	c := newBlobCache(store, t.TempDir(), 1<<30, 10_000)
	jobs := t.TempDir()
	// The disk: 12,500 bytes free less what the cache holds.
	c.free = func(string) (int64, error) {
		ents, _ := os.ReadDir(c.dir)
		return 12_500 - int64(len(ents))*1001, nil
	}
	for i, b := range blobs[:2] {
		if err := c.place(context.Background(), b, filepath.Join(jobs, fmt.Sprint(i))); err != nil {
			t.Fatalf("blob %d, above the floor: %v", i, err)
		}
	}
	// The third would leave 12,500 - 3,003 < 10,000: the cache empties,
	// then it fits.
	if err := c.place(context.Background(), blobs[2], filepath.Join(jobs, "2")); err != nil {
		t.Fatalf("the third blob, once the cache emptied: %v", err)
	}
	if ents, _ := os.ReadDir(c.dir); len(ents) != 1 {
		t.Errorf("the cache holds %d blobs, want 1 (emptied for the third)", len(ents))
	}
	// Below the floor whatever the cache holds: refused, cache empty.
	c.free = func(string) (int64, error) { return 10_500, nil }
	err := c.place(context.Background(), blobs[0], filepath.Join(jobs, "again"))
	if !errors.Is(err, errLowDisk) || !strings.Contains(err.Error(), "--min-free") {
		t.Errorf("below the floor: %v, want errLowDisk naming --min-free", err)
	}
	if ents, _ := os.ReadDir(c.dir); len(ents) != 0 {
		t.Errorf("the cache holds %d blobs below the floor, want none", len(ents))
	}
	if _, err := os.Stat(filepath.Join(jobs, "again")); err == nil {
		t.Errorf("a refused blob was placed")
	}
	if err := c.room(400); err != nil {
		t.Errorf("room for 400 bytes with 500 above the floor: %v", err)
	}
	if err := c.room(600); !errors.Is(err, errLowDisk) {
		t.Errorf("room for 600 bytes with 500 above the floor: %v", err)
	}
}

// TestBlobCacheCancel: a fetch stops when its context ends, and leaves
// nothing behind; another job's fetch of the same blob is not failed by it.
func TestBlobCacheCancel(t *testing.T) {
	store, blobs := blobCacheStore(t, 1, 8<<20) // 8 chunks
	c := newBlobCache(store, t.TempDir(), 1<<30, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dst := filepath.Join(t.TempDir(), "x")
	if err := c.place(ctx, blobs[0], dst); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled fetch: %v", err)
	}
	if ents, _ := os.ReadDir(c.dir); len(ents) != 0 {
		t.Errorf("a cancelled fetch left %d files in the cache", len(ents))
	}
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("a cancelled fetch placed its blob")
	}
	if err := c.place(context.Background(), blobs[0], dst); err != nil {
		t.Errorf("the fetch after: %v", err)
	}
}
