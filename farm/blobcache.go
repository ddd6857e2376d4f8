package farm

import (
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/offcc/offcc/cache"
	"golang.org/x/sync/singleflight"
)

// blobCache is a worker's copies of the blobs it fetched, by digest, so
// that the headers every job of a project ships are downloaded once per
// worker, not once per job. Blobs are verified when fetched; the
// directory is the worker's own and goes with it. Past max bytes it is
// emptied (jobs hold hard links, not the cache's names).
//
// Jobs get hard links to the cached copies, which are read-only files of
// the worker's: a job running as another user (the sandbox's, when the
// worker is root) cannot write them, and bubblewrap mounts a job's inputs
// read-only whoever it runs as. Where neither holds (verify), a cached
// copy is checked against its digest before each reuse, so that a job
// that rewrote its input in place cannot change what later jobs compile.
type blobCache struct {
	store  cache.Store
	dir    string
	max    int64
	verify bool
	fetch  singleflight.Group

	mu   sync.Mutex
	size int64
}

func newBlobCache(store cache.Store, dir string, max int64) *blobCache {
	return &blobCache{store: store, dir: dir, max: max}
}

// place puts blob b at dst (a hard link to the cached copy, else a copy),
// fetching and verifying it first when the cache lacks it.
func (c *blobCache) place(b cache.Blob, dst string) error {
	src := filepath.Join(c.dir, b.Sum.String())
	if !c.holds(src, b) {
		_, err, _ := c.fetch.Do(b.Sum.String(), func() (any, error) {
			if c.holds(src, b) {
				return nil, nil
			}
			os.Remove(src)
			c.trim(b.Size)
			tmp := src + ".tmp"
			os.Remove(tmp)
			if err := cache.WriteBlob(c.store, b, tmp); err != nil {
				os.Remove(tmp)
				return nil, err
			}
			if err := os.Chmod(tmp, 0o444); err != nil {
				os.Remove(tmp)
				return nil, err
			}
			if err := os.Rename(tmp, src); err != nil {
				os.Remove(tmp)
				return nil, err
			}
			c.mu.Lock()
			c.size += b.Size
			c.mu.Unlock()
			return nil, nil
		})
		if err != nil {
			return err
		}
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	// Another file system: a verified copy.
	cb := b
	cb.Path = src
	return cache.CopyBlob(dst, cb)
}

// holds reports whether the cached copy at src is b: of b's size and,
// when the cache verifies, of b's digest.
func (c *blobCache) holds(src string, b cache.Blob) bool {
	fi, err := os.Lstat(src)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != b.Size {
		return false
	}
	if !c.verify {
		return true
	}
	f, err := os.Open(src)
	if err != nil {
		return false
	}
	defer f.Close()
	h := newHash()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	var sum cache.Sum
	h.Sum(sum[:0])
	return sum == b.Sum
}

// trim empties the cache when adding n bytes would pass its limit.
func (c *blobCache) trim(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size+n <= c.max {
		return
	}
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		os.Remove(filepath.Join(c.dir, e.Name()))
	}
	c.size = 0
}
