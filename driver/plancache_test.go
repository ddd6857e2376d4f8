package driver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/cache"
)

// These tests use only the plan cache itself (no Planner, no helpers from
// other test files). Helpers are prefixed pc to keep clear of other test
// files in the package. The plan key is tested with its code, in package
// cache (toolchain_test.go); the store's trimming and damage handling in
// cache's dirstore_test.go.

// pcNew returns a plan cache on a fresh build cache in dir.
func pcNew(dir string) *planCache {
	return &planCache{c: cache.Open(cache.Config{Dir: dir, MaxSize: cache.DefaultMaxSize})}
}

// pcIndex returns the index file of key's entry.
func pcIndex(t *testing.T, c *planCache, key string) string {
	t.Helper()
	sum, err := cache.ParseSum(key)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(c.c.Store.EntryDir(sum), "index")
}

func TestPlanCacheKey(t *testing.T) {
	// The key is the SHA-256 of cache.PlanKeyText, usable as a store key.
	dir := t.TempDir()
	clang := filepath.Join(dir, "clang")
	if err := os.WriteFile(clang, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"-c", "m.c", "-###"}
	key, ok := (&planCache{}).key(clang, "offcc", args, []string{"A=1"})
	text, tok := cache.PlanKeyText(clang, "offcc", args, []string{"A=1"})
	if !ok || !tok || key != cache.SumBytes([]byte(text)).String() {
		t.Errorf("key = %q, %v; want the SHA-256 of the key text", key, ok)
	}
	if _, err := cache.ParseSum(key); err != nil {
		t.Errorf("key %q is not a store key: %v", key, err)
	}
	if _, ok := (&planCache{}).key(filepath.Join(dir, "no-clang"), "offcc", args, nil); ok {
		t.Error("a missing clang got a key")
	}
}

func TestPlanCacheRoundTrip(t *testing.T) {
	c := pcNew(filepath.Join(t.TempDir(), "cache"))
	key := strings.Repeat("ab", 32)
	tmp1, tmp2 := "/tmp/offcc-111", "/tmp/offcc-222"
	out := "clang version 22\n \"/usr/bin/clang\" \"-cc1\" \"-o\" \"" + tmp1 + "/m-gfx90a.bc\" \"m.c\"\n"
	c.store(key, tmp1, out)
	e, err := c.c.Store.Get(mustSum(t, key))
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != cache.KindPlan || len(e.Blobs) != 0 {
		t.Errorf("stored a %s entry with %d blobs, want a plan", e.Kind, len(e.Blobs))
	}
	if strings.Contains(string(e.Record), tmp1) || !strings.Contains(string(e.Record), tempPlaceholder) {
		t.Errorf("stored entry has the temporary directory, not the placeholder:\n%q", e.Record)
	}
	got, ok := c.load(key, tmp2)
	if want := strings.ReplaceAll(out, tmp1, tmp2); !ok || got != want {
		t.Errorf("load = %q, %v; want %q, true", got, ok, want)
	}
	if _, ok := c.load(strings.Repeat("cd", 32), tmp2); ok {
		t.Error("load of a key never stored hit")
	}
	// A key that is not a digest is a miss, and stores nothing.
	c.store("not a key", tmp1, out)
	if _, ok := c.load("not a key", tmp2); ok {
		t.Error("load of a malformed key hit")
	}
	// Nothing to store: an empty output.
	empty := strings.Repeat("ef", 32)
	c.store(empty, tmp1, "")
	if _, ok := c.load(empty, tmp2); ok {
		t.Error("an empty plan was stored")
	}
	// Paths that are not UTF-8 (a Latin-1 directory) come back unchanged.
	latin := strings.Repeat("01", 32)
	raw := " \"/usr/bin/clang\" \"-cc1\" \"-o\" \"/home/r\xe9sultat/m.o\" \"" + tmp1 + "/x\xff.c\"\n"
	c.store(latin, tmp1, raw)
	if got, ok := c.load(latin, tmp2); !ok || got != strings.ReplaceAll(raw, tmp1, tmp2) {
		t.Errorf("plan with bytes that are not UTF-8: load = %q, %v", got, ok)
	}
}

func mustSum(t *testing.T, key string) cache.Sum {
	t.Helper()
	sum, err := cache.ParseSum(key)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestPlanCacheCorruptEntry damages a stored plan's index: every damage is
// a miss, never a plan with other jobs.
func TestPlanCacheCorruptEntry(t *testing.T) {
	const out = "clang version 22\n \"/usr/bin/clang\" \"-cc1\" \"m.c\"\n"
	key := strings.Repeat("ef", 32)
	tests := []struct {
		name   string
		damage func(t *testing.T, c *planCache, index string)
	}{
		{"index emptied", func(t *testing.T, c *planCache, index string) { pcEdit(t, index, func(b []byte) []byte { return nil }) }},
		{"index truncated", func(t *testing.T, c *planCache, index string) {
			pcEdit(t, index, func(b []byte) []byte { return b[:len(b)-5] })
		}},
		{"index header only", func(t *testing.T, c *planCache, index string) {
			pcEdit(t, index, func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')+1] })
		}},
		{"index without header", func(t *testing.T, c *planCache, index string) {
			pcEdit(t, index, func(b []byte) []byte { return b[bytes.IndexByte(b, '\n')+1:] })
		}},
		{"job edited", func(t *testing.T, c *planCache, index string) {
			pcEdit(t, index, func(b []byte) []byte { return bytes.Replace(b, []byte("m.c"), []byte("n.c"), 1) })
		}},
		{"checksum edited", func(t *testing.T, c *planCache, index string) {
			pcEdit(t, index, func(b []byte) []byte {
				i := bytes.IndexByte(b, '\n') - 1 // the checksum's last digit
				if b[i] == '0' {
					b[i] = '1'
				} else {
					b[i] = '0'
				}
				return b
			})
		}},
		{"index of another version", func(t *testing.T, c *planCache, index string) {
			pcEdit(t, index, func(b []byte) []byte { return bytes.Replace(b, []byte("offcc-cache v1"), []byte("offcc-cache v0"), 1) })
		}},
		{"index deleted", func(t *testing.T, c *planCache, index string) {
			if err := os.Remove(index); err != nil {
				t.Fatal(err)
			}
		}},
		{"entry of another kind", func(t *testing.T, c *planCache, index string) {
			if err := c.c.Store.Replace(mustSum(t, key), &cache.Entry{Kind: cache.KindTool, Record: []byte(out)}); err != nil {
				t.Fatal(err)
			}
		}},
		{"empty plan", func(t *testing.T, c *planCache, index string) {
			if err := c.c.Store.Replace(mustSum(t, key), &cache.Entry{Kind: cache.KindPlan}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := pcNew(t.TempDir())
			c.store(key, "/tmp/x", out)
			if got, ok := c.load(key, "/tmp/x"); !ok || got != out {
				t.Fatalf("intact entry: load = %q, %v", got, ok)
			}
			tt.damage(t, c, pcIndex(t, c, key))
			if got, ok := c.load(key, "/tmp/x"); ok {
				t.Errorf("damaged entry hit: %q", got)
			}
			// A store after the damage gives a sound entry again (an
			// entry that is sound but of no use, the last two cases,
			// cannot come from a store and stays).
			if strings.Contains(tt.name, "kind") || strings.Contains(tt.name, "empty plan") {
				return
			}
			c.store(key, "/tmp/x", out)
			if got, ok := c.load(key, "/tmp/x"); !ok || got != out {
				t.Errorf("after a new store: load = %q, %v", got, ok)
			}
		})
	}
}

func pcEdit(t *testing.T, name string, f func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, f(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPlanCacheConcurrent has stores, loads, removals and trims race, as
// the offcc processes of a parallel build do: every load is a miss or the
// right plan, and no temporary is left behind.
func TestPlanCacheConcurrent(t *testing.T) {
	c := pcNew(filepath.Join(t.TempDir(), "cache"))
	const keys = 8
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				k := (g + i) % keys
				key := fmt.Sprintf("%064x", k)
				want := fmt.Sprintf("jobs for %d in /tmp/t%d\n", k, g)
				switch i % 4 {
				case 0:
					c.store(key, fmt.Sprintf("/tmp/s%d", g), fmt.Sprintf("jobs for %d in /tmp/s%d\n", k, g))
				case 3:
					// What a trim does to an entry under the others.
					c.c.Store.Remove(mustSum(t, key))
				default:
					if got, ok := c.load(key, fmt.Sprintf("/tmp/t%d", g)); ok && got != want {
						t.Errorf("load %d = %q, want %q", k, got, want)
					}
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			c.c.Store.Trim(0, time.Now()) // removes everything
		}
	}()
	wg.Wait()
	shards, _ := os.ReadDir(c.c.Dir)
	for _, sh := range shards {
		names, _ := os.ReadDir(filepath.Join(c.c.Dir, sh.Name()))
		for _, n := range names {
			if strings.HasPrefix(n.Name(), ".") {
				t.Errorf("temporary %s/%s left behind", sh.Name(), n.Name())
			}
		}
	}
}

func TestNewPlanCache(t *testing.T) {
	env := func(vars ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	// openPlans opens the plan cache as a build does: the build cache of
	// the environment (nil for a bad setting), then the plan cache in it.
	openPlans := func(getenv func(string) string) *planCache {
		cfg, err := cache.ConfigFromEnv(getenv)
		if err != nil {
			return nil
		}
		return newPlanCache(cache.Open(cfg), getenv)
	}
	root := t.TempDir()
	for _, off := range []string{"0", "off", "no", "false"} {
		if openPlans(env("OFFCC_PLAN_CACHE", off, "OFFCC_CACHE_DIR", root)) != nil {
			t.Errorf("OFFCC_PLAN_CACHE=%s did not disable the plan cache", off)
		}
		if openPlans(env("OFFCC_CACHE", off, "OFFCC_CACHE_DIR", root)) != nil {
			t.Errorf("OFFCC_CACHE=%s did not disable the plan cache", off)
		}
	}
	if openPlans(env("OFFCC_CACHE", "garbage", "OFFCC_CACHE_DIR", root)) != nil {
		t.Error("OFFCC_CACHE=garbage: a plan cache, want none (the setting is an error)")
	}
	c := openPlans(env("OFFCC_CACHE_DIR", root))
	if c == nil || c.c.Dir != root || c.c.Store.Dir != root || !c.c.Writable() {
		t.Fatalf("OFFCC_CACHE_DIR=%s: cache %+v, want a writable cache in %s", root, c, root)
	}
	if c := openPlans(env("XDG_CACHE_HOME", root)); c == nil || c.c.Dir != filepath.Join(root, "offcc") {
		t.Errorf("XDG_CACHE_HOME=%s: cache %+v, want one in %s", root, c, filepath.Join(root, "offcc"))
	}

	// Read-only: loads what is there, stores nothing.
	key, other := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	c.store(key, "/tmp/a", "jobs in /tmp/a\n")
	ro := openPlans(env("OFFCC_CACHE", "readonly", "OFFCC_CACHE_DIR", root))
	if ro == nil || ro.c.Writable() {
		t.Fatalf("OFFCC_CACHE=readonly: cache %+v, want a read-only one", ro)
	}
	if got, ok := ro.load(key, "/tmp/b"); !ok || got != "jobs in /tmp/b\n" {
		t.Errorf("read-only load = %q, %v", got, ok)
	}
	ro.store(other, "/tmp/b", "other jobs\n")
	if _, ok := ro.load(other, "/tmp/b"); ok {
		t.Error("a read-only plan cache stored a plan")
	}
	if _, err := os.Stat(pcIndex(t, ro, other)); err == nil {
		t.Error("a read-only plan cache wrote an entry")
	}
}
