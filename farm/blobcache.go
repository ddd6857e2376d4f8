package farm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
// It also keeps the file system it is on from filling: before a blob is
// stored, the free space left after it must stay above minFree, else the
// cache is emptied first, and the blob is refused (errLowDisk) when that
// is not enough. Outputs the worker copies out of its jobs ask it for
// room the same way (room).
//
// Jobs get hard links to the cached copies, which are read-only files of
// the worker's: a job running as another user (the sandbox's, when the
// worker is root) cannot write them, and bubblewrap mounts a job's inputs
// read-only whoever it runs as. Where neither holds (verify), a cached
// copy is checked against its digest before each reuse, so that a job
// that rewrote its input in place cannot change what later jobs compile.
type blobCache struct {
	store   cache.Store
	dir     string
	max     int64
	minFree int64
	verify  bool
	fetch   singleflight.Group
	// free returns the bytes an unprivileged user may still write on
	// the file system of dir (freeSpace; tests replace it).
	free func(dir string) (int64, error)

	mu   sync.Mutex
	size int64
}

// errLowDisk is the error of a blob or output that would leave less than
// the floor free.
var errLowDisk = errors.New("low disk")

func newBlobCache(store cache.Store, dir string, max, minFree int64) *blobCache {
	return &blobCache{store: store, dir: dir, max: max, minFree: minFree, free: freeSpace}
}

// place puts blob b at dst (a hard link to the cached copy, else a copy),
// fetching and verifying it first when the cache lacks it. A fetch stops
// between chunks when ctx ends.
func (c *blobCache) place(ctx context.Context, b cache.Blob, dst string) error {
	src := filepath.Join(c.dir, b.Sum.String())
	for !c.holds(src, b) {
		_, err, _ := c.fetch.Do(b.Sum.String(), func() (any, error) {
			return nil, c.download(ctx, b, src)
		})
		if err == nil {
			break
		}
		// A fetch shared with a job that ran out of time fails with
		// that job's context: fetch again under this one.
		if ctx.Err() != nil || !(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
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

// download fetches b from the store into the cache at src, once there is
// room for it.
func (c *blobCache) download(ctx context.Context, b cache.Blob, src string) error {
	if c.holds(src, b) {
		return nil
	}
	os.Remove(src)
	c.trim(b.Size)
	if err := c.room(b.Size); err != nil {
		return err
	}
	tmp := src + ".tmp"
	os.Remove(tmp)
	if err := writeBlob(ctx, c.store, b, tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o444); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, src); err != nil {
		os.Remove(tmp)
		return err
	}
	c.mu.Lock()
	c.size += b.Size
	c.mu.Unlock()
	return nil
}

// writeBlob is cache.WriteBlob that stops between reads when ctx ends.
func writeBlob(ctx context.Context, s cache.Store, b cache.Blob, name string) error {
	r, err := s.OpenBlob(b)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, ctxReader{ctx, r})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ctxReader is a reader that fails once its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// room returns nil when n more bytes leave at least minFree free on the
// cache's file system, emptying the cache first if that makes the
// difference; else an error wrapping errLowDisk.
func (c *blobCache) room(n int64) error {
	if c.minFree <= 0 {
		return nil
	}
	free, err := c.free(c.dir)
	if err != nil {
		return fmt.Errorf("cannot tell the free space of %s: %v", c.dir, err)
	}
	if free-n >= c.minFree {
		return nil
	}
	c.empty()
	if free, err = c.free(c.dir); err != nil {
		return fmt.Errorf("cannot tell the free space of %s: %v", c.dir, err)
	}
	if free-n < c.minFree {
		return fmt.Errorf("%w: %s free on the worker's disk (%s), %s wanted, and %s must stay free (--min-free)",
			errLowDisk, humanSize(free), filepath.Dir(c.dir), humanSize(n), humanSize(c.minFree))
	}
	return nil
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
	over := c.size+n > c.max
	c.mu.Unlock()
	if over {
		c.empty()
	}
}

// empty removes every cached copy (jobs keep their hard links), but not
// the downloads under way (NAME.tmp).
func (c *blobCache) empty() {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tmp") {
			os.Remove(filepath.Join(c.dir, e.Name()))
		}
	}
	c.size = 0
}

// humanSize writes n bytes with a binary unit: 512 B, 3.0 KiB, 1.5 GiB.
func humanSize(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit || m <= -unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
