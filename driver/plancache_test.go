package driver

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/internal/llvmtest"
)

// These tests use only the plan cache itself (no Planner, no helpers from
// other test files). Helpers are prefixed pc to keep clear of other test
// files in the package. The plan key is tested with its code, in package
// cache (toolchain_test.go); the store's trimming and damage handling in
// cache's dirstore_test.go. The plans kept without their places (working
// directory, base directory, output name) are checked against the real
// clang's -### output where there is one.

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
	// The exact key is the SHA-256 of cache.PlanKeyText, usable as a
	// store key; the key without places differs from it.
	dir := t.TempDir()
	t.Chdir(dir)
	clang := filepath.Join(dir, "clang")
	if err := os.WriteFile(clang, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"-c", "m.c", "-o", "m.o", "-###"}
	q, ok := (&planCache{}).query(clang, "offcc", args, []string{"A=1"}, dir, "")
	text, tok := cache.PlanKeyText(clang, "offcc", args, []string{"A=1"})
	if !ok || !tok || q.exact != cache.SumBytes([]byte(text)).String() {
		t.Errorf("exact key = %q, %v; want the SHA-256 of the key text", q.exact, ok)
	}
	for _, key := range []string{q.exact, q.moved} {
		if _, err := cache.ParseSum(key); err != nil {
			t.Errorf("key %q is not a store key: %v", key, err)
		}
	}
	if q.moved == q.exact {
		t.Error("the key without places is the exact key")
	}
	if _, ok := (&planCache{}).query(filepath.Join(dir, "no-clang"), "offcc", args, nil, dir, ""); ok {
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

// pcTree is one checkout for the location tests: ROOT/src with sources,
// ROOT/include, and a build directory with objects to link.
type pcTree struct{ root, build string }

func newPCTree(t *testing.T, root, build string) pcTree {
	t.Helper()
	w := pcTree{root: root, build: filepath.Join(root, build)}
	files := map[string]string{
		"src/k.c":          "int main(void) {\n#pragma omp target\n  { }\n  return 0;\n}\n",
		"src/h.hip":        "__attribute__((global)) void k(void) {}\n",
		"src/s.cpp":        "int f() { return 1; }\n",
		"src/t.s":          ".text\nnop\n",
		"include/k.h":      "",
		build + "/x.o":     "",
		build + "/y.o":     "",
		build + "/gen/g.h": "",
	}
	for name, data := range files {
		name = filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// pcHashHashHash runs clang -### as clangJobs does, in dir with its
// temporaries in tmp, and returns its output.
func pcHashHashHash(t *testing.T, clang, dir, tmp string, args []string) string {
	t.Helper()
	cmd := exec.Command(clang, args...)
	cmd.Args[0] = "clang"
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clang %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// pcNormal masks what differs between two runs of clang -### of one
// command: the random part of temporary files' names, and the compile
// unit ID, which hashes -o among the arguments and which the planner
// replaces by the one of clang's own build (setCUID).
func pcNormal(out, tmp string) string {
	out = regexp.MustCompile(regexp.QuoteMeta(tmp)+`(/[^"]*)-[0-9a-f]{6}`).ReplaceAllString(out, "TMP$1-XXXXXX")
	return regexp.MustCompile(`-cuid=[0-9a-f]+`).ReplaceAllString(out, "-cuid=X")
}

// TestPlanCacheMovedRealClang stores clang's jobs for a command in one
// checkout and build directory, then looks them up for the command in
// another, under another -o: a hit must give exactly the jobs clang
// prints for the second command, and commands whose jobs name the places
// in a way offcc does not template must miss.
func TestPlanCacheMovedRealClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	omp := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"}
	hip := []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpuinc", "-nogpulib"}
	cat := func(lists ...[]string) []string {
		var all []string
		for _, l := range lists {
			all = append(all, l...)
		}
		return all
	}
	tests := []struct {
		name string
		// args returns the command line in the checkout w, writing out.
		args     func(w pcTree, out string) []string
		out1     string // the first command's -o; the second's is out2
		out2     string
		base     bool // OFFCC_BASE_DIR is the checkout
		hit      bool
		stemMiss bool // -o's stem in the key: only the same -o hits
	}{
		{name: "relative source", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-c", "../src/k.c", "-o", out})
		}},
		{name: "output in a directory", out1: "obj/k.o", out2: "obj/m.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-O2", "-c", "../src/k.c", "-o", out})
		}},
		// Its shape (planshape.go) takes the output's relative directory
		// for a placeholder too.
		{name: "output in another directory", out1: "obj/a.o", out2: "lib/a.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-c", "../src/k.c", "-o", out})
		}},
		{name: "output named after the source", out1: "k.o", out2: "kk.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-c", "../src/k.c", "-o", out})
		}},
		{name: "debug information", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-g", "-c", "../src/k.c", "-o", out})
		}},
		{name: "-MD without -MF", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-MD", "-c", "../src/k.c", "-o", out})
		}},
		{name: "-MMD -MF -MT", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return []string{"-MMD", "-MT", "k.o", "-MF", "k.d", "-c", "../src/k.c", "-o", out}
		}},
		{name: "-gsplit-dwarf", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return []string{"-g", "-gsplit-dwarf", "-c", "../src/k.c", "-o", out}
		}},
		{name: "-c without -o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-c", "../src/k.c"})
		}},
		{name: "two sources without -o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-c", "../src/k.c", "../src/s.cpp"})
		}},
		{name: "compile and link with -MD", out1: "prog", out2: "app", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-MD", "../src/k.c", "x.o", "-o", out})
		}},
		{name: "assembly with -g", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return []string{"-g", "-c", "../src/t.s", "-o", out}
		}},
		{name: "OpenMP link", out1: "prog", out2: "app", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"x.o", "y.o", "-o", out})
		}},
		{name: "compile and link", out1: "prog", out2: "app", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-g", "-gsplit-dwarf", "../src/k.c", "x.o", "-o", out})
		}},
		{name: "HIP", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(hip, []string{"-c", "../src/h.hip", "-o", out})
		}},
		{name: "HIP new driver -fgpu-rdc", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(hip, []string{"--offload-new-driver", "-fgpu-rdc", "-MD", "-c", "../src/h.hip", "-o", out})
		}},
		{name: "SYCL", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return []string{"-fsycl", "-c", "../src/s.cpp", "-o", out}
		}},
		{name: "CUDA", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return []string{"-x", "cuda", "--cuda-path=/usr/lib/cuda", "--offload-arch=sm_80,sm_90", "-nocudainc", "-MD", "-c", "../src/h.hip", "-o", out}
		}},
		{name: "CUDA new driver -fgpu-rdc link", out1: "prog", out2: "app", hit: true, args: func(w pcTree, out string) []string {
			return []string{"--cuda-path=/usr/lib/cuda", "--offload-new-driver", "-fgpu-rdc", "--offload-arch=sm_80", "x.o", "y.o", "-o", out}
		}},
		{name: "HIP link", out1: "prog", out2: "app", hit: true, args: func(w pcTree, out string) []string {
			return []string{"--hip-link", "--offload-arch=gfx90a", "-nogpulib", "x.o", "y.o", "-o", out}
		}},
		{name: "SYCL link", out1: "prog", out2: "app", hit: true, args: func(w pcTree, out string) []string {
			return []string{"-fsycl", "x.o", "-o", out}
		}},
		{name: "prefix maps", out1: "a.o", out2: "b.o", base: true, hit: true, args: func(w pcTree, out string) []string {
			return []string{"-g", "-ffile-prefix-map=" + w.build + "=.", "-fdebug-prefix-map=" + w.root + "/src=/src", "-c", "../src/k.c", "-o", out}
		}},
		{name: "absolute paths under the base", out1: "CMakeFiles/x.dir/k.c.o", out2: "CMakeFiles/x.dir/m.c.o", base: true, hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-I" + w.root + "/include", "-isystem", w.build + "/gen", "-MD", "-MT", out, "-MF", out + ".d", "-c", w.root + "/src/k.c", "-o", out})
		}},
		{name: "absolute output under the base", out1: "a.o", out2: "b.o", base: true, hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-g", "-MD", "-c", w.root + "/src/k.c", "-o", w.build + "/" + out})
		}},
		// The source's absolute directory is its shape's placeholder.
		{name: "absolute paths without a base", out1: "a.o", out2: "b.o", hit: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-c", w.root + "/src/k.c", "-o", out})
		}},

		// Misses: names derived from -o that offcc does not template,
		// directories the driver searches.
		{name: "--coverage", out1: "a.o", out2: "b.o", args: func(w pcTree, out string) []string {
			return []string{"--coverage", "-c", "../src/k.c", "-o", out}
		}},
		{name: "-ftime-trace", out1: "a.o", out2: "b.o", args: func(w pcTree, out string) []string {
			return []string{"-ftime-trace", "-c", "../src/k.c", "-o", out}
		}},
		{name: "-fsave-optimization-record", out1: "a.o", out2: "b.o", args: func(w pcTree, out string) []string {
			return []string{"-fsave-optimization-record", "-c", "../src/k.c", "-o", out}
		}},
		{name: "-save-temps", out1: "a.o", out2: "b.o", stemMiss: true, args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-save-temps", "-c", "../src/k.c", "-o", out})
		}},
		{name: "-MD with -o named like -MT", out1: "a.o", out2: "b.o", stemMiss: true, args: func(w pcTree, out string) []string {
			return []string{"-MD", "-MT", "a.o", "-c", "../src/k.c", "-o", out}
		}},
		{name: "relative library directory", out1: "a.o", out2: "a.o", args: func(w pcTree, out string) []string {
			return cat(omp, []string{"-L../lib", "-c", "../src/k.c", "-o", out})
		}},
		{name: "-include", out1: "a.o", out2: "a.o", args: func(w pcTree, out string) []string {
			return []string{"-include", "../include/k.h", "-c", "../src/k.c", "-o", out}
		}},
		{name: "output in a parent directory", out1: "../a.o", out2: "../b.o", args: func(w pcTree, out string) []string {
			return []string{"-g", "-c", "../src/t.s", "-o", out}
		}},
		{name: "link searching -L.", out1: "prog", out2: "prog", args: func(w pcTree, out string) []string {
			return cat(omp, []string{"x.o", "-L.", "-o", out})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := pcNew(filepath.Join(t.TempDir(), "cache"))
			one := newPCTree(t, filepath.Join(t.TempDir(), "one"), "build")
			two := newPCTree(t, filepath.Join(t.TempDir(), "two", "deeper"), "out")
			run := func(w pcTree, out string, store bool) (got, want string, hit bool) {
				t.Chdir(w.build)
				args := append(tt.args(w, out), "-###")
				env := []string{"A=1"}
				base := ""
				if tt.base {
					base = w.root
					env = append(env, "OFFCC_BASE_DIR="+base)
				}
				q, ok := c.query(clang, "clang", args, env, w.build, base)
				if !ok {
					t.Fatal("no key")
				}
				tmp := t.TempDir()
				got, hit = c.lookup(q, tmp)
				want = pcHashHashHash(t, clang, w.build, tmp, args)
				if store {
					c.save(q, tmp, want)
				}
				return pcNormal(got, tmp), pcNormal(want, tmp), hit
			}
			if _, _, hit := run(one, tt.out1, true); hit {
				t.Fatal("hit in an empty cache")
			}
			// The same command where it ran hits, whatever was stored.
			if got, want, hit := run(one, tt.out1, false); !hit || got != want {
				t.Errorf("the same command: hit %v, jobs\n%s\nwant\n%s", hit, got, want)
			}
			got, want, hit := run(two, tt.out2, false)
			switch {
			case hit && got != want:
				t.Errorf("wrong plan from the cache:\n%s\nclang prints\n%s", got, want)
			case hit && !tt.hit:
				t.Errorf("hit, want a miss")
			case !hit && tt.hit:
				t.Errorf("miss, want a hit")
			}
			if tt.stemMiss || tt.hit {
				// Under another -o where it ran: a hit unless the stem
				// is keyed.
				got, want, hit := run(one, tt.out2, false)
				if hit == tt.stemMiss || hit && got != want {
					t.Errorf("another -o in the same place: hit %v (want %v), jobs\n%s\nwant\n%s", hit, !tt.stemMiss, got, want)
				}
			}
		})
	}
}

// TestPlanPlacesTemplateLoc checks where the working and base directories
// are taken for placeholders: only where a path begins, and only whole
// directory names.
func TestPlanPlacesTemplateLoc(t *testing.T) {
	const cwd, base = cwdPlaceholder, basePlaceholder
	both := &planPlaces{cwd: "/a/b", base: "/a"}
	for in, want := range map[string]string{
		"/a/b":                         cwd,
		"/a/b/k.o":                     cwd + "/k.o",
		"/a/bc":                        base + "/bc", // not the working directory
		"/a/b/a/b":                     cwd + "/a/b",
		"/ab/c":                        "/ab/c",
		"/x/a/b":                       "/x/a/b", // inside another path
		"rel/a/b":                      "rel/a/b",
		"-I/a/b/inc":                   "-I" + cwd + "/inc",
		"-isystem/a/inc":               "-isystem" + base + "/inc",
		"-Wl,-rpath,/a/b/lib:/a/lib":   "-Wl,-rpath," + cwd + "/lib:" + base + "/lib",
		"-fdebug-prefix-map=/a/b=/a/c": "-fdebug-prefix-map=" + cwd + "=" + base + "/c",
		"-fdebug-compilation-dir=/a/b": "-fdebug-compilation-dir=" + cwd,
		"-DX=rel/a/b":                  "-DX=rel/a/b",
		"/usr/lib/llvm-22/bin/clang":   "/usr/lib/llvm-22/bin/clang",
	} {
		if got := both.templateLoc(in); got != want {
			t.Errorf("cwd /a/b, base /a: %q became %q, want %q", in, got, want)
		}
	}
	// The base under the working directory goes first, being longer.
	inner := &planPlaces{cwd: "/a", base: "/a/src"}
	if got, want := inner.templateLoc("/a/src/k.c:/a/k.c"), base+"/k.c:"+cwd+"/k.c"; got != want {
		t.Errorf("cwd /a, base /a/src: %q, want %q", got, want)
	}
	// Without a base, a sibling of the working directory stays.
	only := &planPlaces{cwd: "/a/b"}
	if got := only.templateLoc("/a/bc/k.c"); got != "/a/bc/k.c" {
		t.Errorf("cwd /a/b: /a/bc/k.c became %q", got)
	}
}

// TestPlanPlacesTemplate templates -### outputs written for the test: what
// is stored, what another place gets back, and the outputs that must be
// stored under the exact key instead.
func TestPlanPlacesTemplate(t *testing.T) {
	job := func(argv ...string) string { return renderHash(argv) + "\n" }
	const header = "clang version 22.1.8\nTarget: x86_64-pc-linux-gnu\n"
	cc1 := func(extra ...string) string {
		return job(append([]string{"/usr/lib/llvm-22/bin/clang", "-cc1", "-main-file-name", "k.c",
			"-fdebug-compilation-dir=/w/one/build", "-o", "\x00OFFCC_TMP\x00/k-123456.o", "-x", "c", "../src/k.c"}, extra...)...)
	}
	tests := []struct {
		name string
		args []string
		cwd  string
		base string
		out  string // clang's -### output, the temporary directory templated
		// For a template, the command elsewhere and what it must get.
		args2 []string
		cwd2  string
		want2 string
		// tool is clang's path when not /usr/lib/llvm-22/bin/clang.
		tool string
	}{
		{name: "relative command", args: []string{"-c", "../src/k.c", "-o", "a.o"}, cwd: "/w/one/build",
			out:   header + cc1("-MT", "a.o", "-dependency-file", "a.d", "-split-dwarf-file", "a.dwo", "--image=file=a.o,kind=x"),
			args2: []string{"-c", "../src/k.c", "-o", "b.o"}, cwd2: "/v/two",
			want2: header + strings.ReplaceAll(cc1("-MT", "b.o", "-dependency-file", "b.d", "-split-dwarf-file", "b.dwo", "--image=file=b.o,kind=x"), "/w/one/build", "/v/two")},
		{name: "absolute output", args: []string{"-c", "../src/k.c", "-o", "/w/one/build/obj/a.o"}, cwd: "/w/one/build",
			out:   header + cc1("-dependency-file", "/w/one/build/obj/a.d", "-object-file-name=/w/one/build/obj/a.o"),
			args2: []string{"-c", "../src/k.c", "-o", "/v/two/obj/b.o"}, cwd2: "/v/two",
			want2: header + strings.ReplaceAll(cc1("-dependency-file", "/v/two/obj/b.d", "-object-file-name=/v/two/obj/b.o"), "/w/one/build", "/v/two")},
		{name: "assembler's object name", args: []string{"-c", "../src/k.c", "-o", "obj/a.o"}, cwd: "/w/one/build",
			out:   header + cc1("-object-file-name=/w/one/build/obj/a.o"),
			args2: []string{"-c", "../src/k.c", "-o", "obj/b.o"}, cwd2: "/v/two",
			want2: header + strings.ReplaceAll(cc1("-object-file-name=/v/two/obj/b.o"), "/w/one/build", "/v/two")},
		{name: "link: -dumpdir and split DWARF named after the output", args: []string{"../src/k.c", "-o", "prog"}, cwd: "/w/one/build",
			out:   header + cc1("-dumpdir", "prog-", "-split-dwarf-file", "prog-k.dwo"),
			args2: []string{"../src/k.c", "-o", "app"}, cwd2: "/w/one/build",
			want2: header + cc1("-dumpdir", "app-", "-split-dwarf-file", "app-k.dwo")},
		{name: "an LLVM beside the working directory", args: []string{"-c", "../src/k.c", "-o", "k.o"}, cwd: "/w/one/build",
			tool:  "/w/one/llvm/bin/clang",
			out:   header + job("/w/one/llvm/bin/clang", "-cc1", "-resource-dir", "/w/one/llvm/lib/clang/22", "-o", "k.o", "-x", "c", "../src/k.c"),
			args2: []string{"-c", "../src/k.c", "-o", "k.o"}, cwd2: "/v/two",
			want2: header + job("/w/one/llvm/bin/clang", "-cc1", "-resource-dir", "/w/one/llvm/lib/clang/22", "-o", "k.o", "-x", "c", "../src/k.c")},
		{name: "the stem in an option's name (main.o, -main-file-name)", args: []string{"-c", "../src/main.c", "-o", "main.o"}, cwd: "/w/one/build",
			out:   header + job("/usr/lib/llvm-22/bin/clang", "-cc1", "-main-file-name", "main.c", "-o", "main.o", "-x", "c", "../src/main.c"),
			args2: []string{"-c", "../src/main.c", "-o", "main.o"}, cwd2: "/v/two",
			want2: header + job("/usr/lib/llvm-22/bin/clang", "-cc1", "-main-file-name", "main.c", "-o", "main.o", "-x", "c", "../src/main.c")},

		// Refusals.
		{name: "a name derived from the stem", args: []string{"-c", "../src/k.c", "-o", "a.o"}, cwd: "/w/one/build",
			out: header + cc1("-coverage-notes-file=/w/one/build/a.gcno")},
		{name: "the stem in another job argument", args: []string{"-c", "../src/k.c", "-o", "a.o"}, cwd: "/w/one/build",
			out: header + cc1("-ftime-trace=a.json")},
		{name: "the output after a directory", args: []string{"-c", "../src/k.c", "-o", "crtbegin.o"}, cwd: "/w/one/build",
			out: header + job("/usr/bin/ld", "/usr/lib/gcc/x86_64-linux-gnu/12/crtbegin.o", "-o", "crtbegin.o")},
		{name: "a tool under the working directory", args: []string{"-c", "k.c"}, cwd: "/home/u",
			out: header + job("/home/u/llvm/bin/clang", "-cc1", "-fdebug-compilation-dir=/home/u", "k.c")},
		{name: "the working directory by another name", args: []string{"-c", "k.c"}, cwd: "/w/link",
			out: header + job("/usr/bin/clang", "-cc1", "-fdebug-compilation-dir=/w/real", "k.c")},
		{name: "the parent made absolute", args: []string{"-c", "../src/k.c"}, cwd: "/w/one/build",
			out: header + job("/usr/bin/clang", "-cc1", "-I", "/w/one/src", "../src/k.c")},
		{name: "the parent made absolute, an LLVM beside the working directory", args: []string{"-c", "../src/k.c"}, cwd: "/w/one/build",
			tool: "/w/one/llvm/bin/clang",
			out:  header + job("/w/one/llvm/bin/clang", "-cc1", "-I", "/w/one/src", "../src/k.c")},
		// (Its paths are keyed by the plan facts.)
		{name: "a warning naming the working directory", args: []string{"-c", "k.c", "-I/w/one/build/inc"}, cwd: "/w/one/build",
			out: header + "clang: warning: argument unused during compilation: '-I/w/one/build/inc'\n" + job("/usr/bin/clang", "-cc1", "k.c")},
		{name: "a header line naming the stem", args: []string{"-c", "k.c", "-o", "posix.o"}, cwd: "/w/one/build",
			out: "Thread model: posix\n" + job("/usr/bin/clang", "-cc1", "-o", "posix.o", "k.c")},
		{name: "a job line clang would not print", args: []string{"-c", "k.c", "-o", "a.o"}, cwd: "/w/one/build",
			out: header + ` "/usr/bin/clang"  "-o" "a.o"` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlanPlaces(newestTables(), append(tt.args, "-###"), tt.cwd, tt.base)
			if tt.tool != "" {
				p.toolRoot = filepath.Dir(filepath.Dir(tt.tool)) + "/"
			}
			if !p.active() {
				t.Fatalf("nothing to template for %q in %s", tt.args, tt.cwd)
			}
			stored, ok := p.template(tt.out)
			if tt.want2 == "" {
				if ok {
					t.Errorf("templated, want a refusal:\n%q", stored)
				}
				return
			}
			if !ok {
				t.Fatalf("refused:\n%s", tt.out)
			}
			if strings.Contains(stored, tt.cwd) || p.fill(stored, "/tmp/t") != strings.ReplaceAll(tt.out, tempPlaceholder, "/tmp/t") {
				t.Errorf("stored %q: names the working directory, or does not give the output back", stored)
			}
			p2 := newPlanPlaces(newestTables(), append(tt.args2, "-###"), tt.cwd2, tt.base)
			if got := p2.fill(stored, tempPlaceholder); got != tt.want2 {
				t.Errorf("elsewhere:\n%q\nwant\n%q", got, tt.want2)
			}
			if !slices.Equal(p.keyArgs, p2.keyArgs) {
				t.Errorf("keyed arguments differ: %q and %q", p.keyArgs, p2.keyArgs)
			}
		})
	}
}

// TestPlanPlacesKeyed checks what newPlanPlaces keys as it is: the
// working directory of commands whose jobs depend on what lies there, and
// output names it cannot template.
func TestPlanPlacesKeyed(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		cwd, out bool // templated
	}{
		{[]string{"-c", "k.c", "-o", "k.o"}, true, true},
		{[]string{"-I", "inc", "-isystem", "../gen", "-c", "k.c"}, true, false},
		{[]string{"x.o", "-L.", "-o", "prog"}, false, true},
		{[]string{"x.o", "-L/usr/lib/x", "-o", "prog"}, true, true},
		{[]string{"x.o", "-B/w/b/tools", "-o", "prog"}, false, true},
		{[]string{"-fuse-ld=lld", "x.o"}, true, false},
		{[]string{"-fuse-ld=./ld", "x.o"}, false, false},
		{[]string{"--sysroot=sys", "-c", "k.c"}, false, false},
		{[]string{"-Xarch_host", "-L.", "-c", "k.c"}, false, false},
		{[]string{"-Xarch_host", "-O2", "-c", "k.c"}, true, false},
		{[]string{"-fprofile-use=prof", "-c", "k.c"}, false, false},
		{[]string{"-c", "k.c", "-o", "-"}, true, false},
		{[]string{"-c", "k.c", "-ok.o"}, true, false},
		{[]string{"-c", "k.c", "-o", "a b.o"}, true, false},
		{[]string{"-c", "k.c", "-o", ".o"}, true, false},
		{[]string{"-c", "k.c", "-o", "a.o", "-o", "b.o"}, true, false},
		{[]string{"-save-temps", "-c", "k.c", "-o", "a.o"}, true, false},
		{[]string{"-dumpdir", "d/", "-c", "k.c", "-o", "a.o"}, true, false},
		{[]string{"-MTa.o", "-c", "k.c", "-o", "a.o"}, true, false},
		{[]string{"-MF", "a.d", "-c", "k.c", "-o", "a.o"}, true, true},
		{[]string{"-MFa.d", "-c", "k.c", "-o", "a.o"}, true, false},
	} {
		p := newPlanPlaces(newestTables(), append(tt.args, "-###"), "/w/b", "")
		if (p.cwd != "") != tt.cwd || (p.outWord >= 0) != tt.out {
			t.Errorf("%q: working directory templated %v (want %v), output %v (want %v)", tt.args, p.cwd != "", tt.cwd, p.outWord >= 0, tt.out)
		}
	}
	// A working directory that cannot be matched as a path stays.
	for _, cwd := range []string{"/", "/w/a b", "/w/a:b", "/w/a$b"} {
		if p := newPlanPlaces(newestTables(), []string{"-c", "k.c"}, cwd, ""); p.cwd != "" {
			t.Errorf("working directory %q templated", cwd)
		}
	}
	// OFFCC_BASE_DIR is keyed as the placeholder when the base is used.
	p := newPlanPlaces(newestTables(), []string{"-c", "/w/src/k.c"}, "/w/b", "/w")
	env := p.keyEnv([]string{"A=1", "OFFCC_BASE_DIR=/w"})
	if !slices.Equal(env, []string{"A=1", "OFFCC_BASE_DIR=" + basePlaceholder}) || p.keyArgs[1] != basePlaceholder+"/src/k.c" {
		t.Errorf("base /w: environment %q, arguments %q", env, p.keyArgs)
	}
}
