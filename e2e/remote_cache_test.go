package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/offcc/offcc/cache/redisstore/redistest"
)

// The shared cache (OFFCC_REMOTE_CACHE) against a real redis-server the
// tests start on a loopback port.

// remoteKeys returns the keys of the server matching pattern.
func remoteKeys(t *testing.T, srv *redistest.Server, pattern string) []string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	keys, err := c.Keys(context.Background(), pattern).Result()
	if err != nil {
		t.Fatalf("KEYS %s: %v", pattern, err)
	}
	return keys
}

// TestRemoteCacheSecondMachine: a build on a second machine (another cache
// directory) with the same shared cache restores every job from it, and
// its object is the first one's.
func TestRemoteCacheSecondMachine(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newCacheWork(t)
	w.write(t, map[string]string{"k.c": kernelsSrc})
	remote := []string{"OFFCC_REMOTE_CACHE=" + srv.URL}
	build := args(amdFlags("gfx906,gfx90a"), "-O2", "-c", w.path("k.c"), "-o", w.path("k.o"))
	w.run(t, remote, build...)
	first := mustReadTB(t, w.path("k.o"))
	if len(remoteKeys(t, srv, "offcc:e:*")) == 0 {
		t.Fatal("nothing was stored in the shared cache")
	}

	second := append([]string{"OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache")}, remote...)
	r, evs := w.run(t, second, build...)
	checkAllHits(t, "the second machine's build", evs)
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("warnings:\n%s", r.stderr)
	}
	sameBytes(t, "the second machine's object", w.path("k.o"), first)
	var st struct {
		Remote struct {
			Hits, Misses, Errors int64
			BytesDown            int64 `json:"bytes_down"`
		} `json:"remote"`
	}
	out := w.cacheCLI(t, second, "stats", "--json").stdout
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if st.Remote.Hits == 0 || st.Remote.Errors != 0 || st.Remote.BytesDown == 0 {
		t.Errorf("the second machine's shared-cache counters: %+v", st.Remote)
	}
}

// TestRemoteCacheReadOnly: a read-only shared cache is read and never
// written.
func TestRemoteCacheReadOnly(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newCacheWork(t)
	w.write(t, map[string]string{"p.c": "int p(int x) { return x + 1; }\n"})
	w.run(t, []string{"OFFCC_REMOTE_CACHE=" + srv.URL + "|readonly"}, "-O2", "-c", w.path("p.c"), "-o", w.path("p.o"))
	if keys := remoteKeys(t, srv, "*"); len(keys) != 0 {
		t.Errorf("a read-only shared cache was written: %q", keys)
	}
}

// TestRemoteCacheTampered: blobs changed in Redis are misses, and the
// build's object is right.
func TestRemoteCacheTampered(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newCacheWork(t)
	w.write(t, map[string]string{"k.c": kernelsSrc})
	remote := []string{"OFFCC_REMOTE_CACHE=" + srv.URL}
	build := args(amdFlags("gfx906"), "-O2", "-c", w.path("k.c"), "-o", w.path("k.o"))
	w.run(t, remote, build...)
	want := mustReadTB(t, w.path("k.o"))

	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	blobs := remoteKeys(t, srv, "offcc:b:*")
	if len(blobs) == 0 {
		t.Fatal("no blobs in the shared cache")
	}
	for _, k := range blobs {
		chunk, err := c.HGet(ctx, k, "0").Bytes()
		if err != nil || len(chunk) == 0 {
			continue // an empty blob
		}
		chunk[len(chunk)/2] ^= 0xff
		if err := c.HSet(ctx, k, "0", chunk).Err(); err != nil {
			t.Fatal(err)
		}
	}
	second := append([]string{"OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache")}, remote...)
	r, evs := w.run(t, second, build...)
	if len(misses(evs)) == 0 {
		t.Errorf("tampered shared entries were hits:\n%s", listEvents(evs))
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("a tampered entry is a miss, not a failure of the shared cache:\n%s", r.stderr)
	}
	sameBytes(t, "the object built from a tampered shared cache", w.path("k.o"), want)
}

// TestRemoteCacheServerGone: a shared cache that is down, or goes down in
// the middle of a build, costs one warning; the build finishes locally.
func TestRemoteCacheServerGone(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newCacheWork(t)
	w.write(t, map[string]string{"k.c": kernelsSrc})
	remote := []string{"OFFCC_REMOTE_CACHE=" + srv.URL}
	build := args(amdFlags("gfx906,gfx908,gfx90a,gfx1030"), "-O2", "-c", w.path("k.c"), "-o", w.path("k.o"))

	// Killed while the build runs: its later stores fail.
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(150 * time.Millisecond)
		srv.Kill()
	}()
	r, _ := w.run(t, remote, build...)
	<-done
	want := mustReadTB(t, w.path("k.o"))
	if n := strings.Count(r.stderr, "warning: shared cache"); n > 1 {
		t.Errorf("%d warnings, want at most one:\n%s", n, r.stderr)
	}

	// Down from the start, in a fresh cache: one warning, a good object.
	fresh := append([]string{"OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache")}, remote...)
	start := time.Now()
	r, _ = w.run(t, fresh, build...)
	if n := strings.Count(r.stderr, "warning: shared cache "+srv.URL); n != 1 {
		t.Errorf("%d warnings naming the shared cache, want one:\n%s", n, r.stderr)
	}
	sameBytes(t, "the object built with the shared cache down", w.path("k.o"), want)
	t.Logf("build with the shared cache down: %v", time.Since(start))
}
