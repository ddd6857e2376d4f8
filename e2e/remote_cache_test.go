package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/trust"
)

// The shared cache (OFFCC_REMOTE_CACHE) against a real redis-server the
// tests start on a loopback port.

// cacheKeys writes a signing key pair for the shared cache and returns
// the environment of the machine that writes it (CI: signs with the key
// and trusts it) and of one that only reads it (trusts the key).
func cacheKeys(t *testing.T) (writer, reader []string) {
	t.Helper()
	k, err := trust.Generate("ci")
	if err != nil {
		t.Fatal(err)
	}
	keyFile, pubFile, err := trust.WriteKeyPair(filepath.Join(t.TempDir(), "ci"), k)
	if err != nil {
		t.Fatal(err)
	}
	reader = []string{"OFFCC_TRUSTED_CACHE_KEYS=" + pubFile, "OFFCC_SIGNING_KEY=", "OFFCC_REMOTE_CACHE_INSECURE="}
	writer = append(slices.Clone(reader), "OFFCC_SIGNING_KEY="+keyFile)
	return writer, reader
}

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
	writer, reader := cacheKeys(t)
	remote := append([]string{"OFFCC_REMOTE_CACHE=" + srv.URL}, writer...)
	build := args(amdFlags("gfx906,gfx90a"), "-O2", "-c", w.path("k.c"), "-o", w.path("k.o"))
	w.run(t, remote, build...)
	first := mustReadTB(t, w.path("k.o"))
	if len(remoteKeys(t, srv, "offcc:e:*")) == 0 {
		t.Fatal("nothing was stored in the shared cache")
	}

	// The second machine only verifies: it has no signing key.
	second := append([]string{"OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache"), "OFFCC_REMOTE_CACHE=" + srv.URL}, reader...)
	r, evs := w.run(t, second, build...)
	checkAllHits(t, "the second machine's build", evs)
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("warnings:\n%s", r.stderr)
	}
	sameBytes(t, "the second machine's object", w.path("k.o"), first)
	var st struct {
		Remote struct {
			Hits, Misses, Errors, Untrusted int64
			BytesDown                       int64 `json:"bytes_down"`
		} `json:"remote"`
		Shared struct{ State string } `json:"shared"`
	}
	out := w.cacheCLI(t, second, "stats", "--json").stdout
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if st.Remote.Hits == 0 || st.Remote.Errors != 0 || st.Remote.Untrusted != 0 || st.Remote.BytesDown == 0 || st.Shared.State != "verify-only" {
		t.Errorf("the second machine's shared-cache counters: %+v, %+v", st.Remote, st.Shared)
	}
}

// TestRemoteCacheReadOnly: a read-only shared cache is read and never
// written.
func TestRemoteCacheReadOnly(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newCacheWork(t)
	w.write(t, map[string]string{"p.c": "int p(int x) { return x + 1; }\n"})
	writer, _ := cacheKeys(t)
	w.run(t, append([]string{"OFFCC_REMOTE_CACHE=" + srv.URL + "|readonly"}, writer...), "-O2", "-c", w.path("p.c"), "-o", w.path("p.o"))
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
	writer, reader := cacheKeys(t)
	remote := append([]string{"OFFCC_REMOTE_CACHE=" + srv.URL}, writer...)
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
	second := append([]string{"OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache"), "OFFCC_REMOTE_CACHE=" + srv.URL}, reader...)
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
	writer, _ := cacheKeys(t)
	remote := append([]string{"OFFCC_REMOTE_CACHE=" + srv.URL}, writer...)
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

// TestRemoteCacheSigned: entries no trusted key signed (written by an
// insecure machine, or planted) are misses for a machine that verifies,
// counted as untrusted, and the build's object is right; a signing CI
// build replaces them, and then they hit. With no trusted keys the shared
// cache is not used, with one warning.
func TestRemoteCacheSigned(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newCacheWork(t)
	w.write(t, map[string]string{"k.c": kernelsSrc})
	writer, reader := cacheKeys(t)
	url := "OFFCC_REMOTE_CACHE=" + srv.URL
	build := args(amdFlags("gfx906"), "-O2", "-c", w.path("k.c"), "-o", w.path("k.o"))
	machine := func(env ...string) []string {
		return append([]string{"OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache"), url}, env...)
	}

	// An insecure machine fills the shared cache with unsigned entries.
	w.run(t, machine("OFFCC_REMOTE_CACHE_INSECURE=1", "OFFCC_SIGNING_KEY=", "OFFCC_TRUSTED_CACHE_KEYS="), build...)
	want := mustReadTB(t, w.path("k.o"))
	if len(remoteKeys(t, srv, "offcc:e:*")) == 0 {
		t.Fatal("the insecure machine stored nothing")
	}

	// A verifying machine: every job misses, nothing is written.
	dev := machine(reader...)
	before := len(remoteKeys(t, srv, "*"))
	r, evs := w.run(t, dev, build...)
	if hits := countStatus(evs, "hit"); hits != 0 || len(misses(evs)) == 0 {
		t.Errorf("unsigned shared entries were hits:\n%s", listEvents(evs))
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("warnings:\n%s", r.stderr)
	}
	sameBytes(t, "the object built over unsigned entries", w.path("k.o"), want)
	if after := len(remoteKeys(t, srv, "*")); after != before {
		t.Errorf("a machine without a signing key wrote to the shared cache: %d keys, was %d", after, before)
	}
	var st struct {
		Remote struct{ Hits, Untrusted int64 } `json:"remote"`
	}
	out := w.cacheCLI(t, dev, "stats", "--json").stdout
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if st.Remote.Untrusted == 0 || st.Remote.Hits != 0 {
		t.Errorf("counters %+v, want untrusted entries and no hits", st.Remote)
	}
	if text := w.cacheCLI(t, dev, "stats").stdout; !strings.Contains(text, "untrusted") || !strings.Contains(text, "trusting 1 key (ci)") {
		t.Errorf("stats:\n%s", text)
	}

	// CI (signing, fresh cache) replaces them; then a verifying machine
	// hits.
	w.run(t, machine(writer...), build...)
	_, evs = w.run(t, machine(reader...), build...)
	checkAllHits(t, "after CI signed the entries", evs)
	sameBytes(t, "the object restored from signed entries", w.path("k.o"), want)

	// No trusted keys: one warning, the local cache only.
	r, evs = w.run(t, machine("OFFCC_TRUSTED_CACHE_KEYS=", "OFFCC_SIGNING_KEY=", "OFFCC_REMOTE_CACHE_INSECURE="), build...)
	if n := strings.Count(r.stderr, "warning: shared cache "+srv.URL+": no trusted keys (OFFCC_TRUSTED_CACHE_KEYS)"); n != 1 {
		t.Errorf("%d warnings about the trusted keys, want one:\n%s", n, r.stderr)
	}
	if countStatus(evs, "hit") != 0 {
		t.Errorf("hits without trusted keys:\n%s", listEvents(evs))
	}
	sameBytes(t, "the object built without trusted keys", w.path("k.o"), want)
}
