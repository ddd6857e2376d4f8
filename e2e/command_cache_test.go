package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/cache"
)

// Command entries: a compile the cache holds whole is answered before it is
// planned. These tests run offcc without --job-trace (a traced build plans
// and keys its jobs, and stores no command entry) and tell a whole hit by
// what OFFCC_CACHE_DEBUG prints.

// settle waits until files written now count as settled: a command entry
// lists only files last changed trustStatAge (2 s) before the build.
func settle() { time.Sleep(2100 * time.Millisecond) }

// wholeBuild runs offcc with OFFCC_CACHE_DEBUG=1 in dir and reports
// whether the cache answered the command whole, and whether it stored a
// command entry.
func (w *cacheWork) wholeBuild(t *testing.T, dir string, a ...string) (hit, stored bool, r result) {
	t.Helper()
	r = cmdSpec{dir: dir, env: append(slices.Clone(w.env), "OFFCC_CACHE_DEBUG=1"), name: w.c.cc, args: a}.mustRun(t)
	return strings.Contains(r.stderr, "command: hit"), strings.Contains(r.stderr, "command: stored"), r
}

// TestCommandCacheWarmHit: a cold build stores no command entry (its jobs
// ran: a cold build costs no more than their entries), the second build
// of a settled compile stores it (its jobs all hit), the third is answered
// whole with the same bytes; a header edited to the same size with its modification
// time put back (only its ctime tells) is a miss that rebuilds clang's
// object; and a header that shadows one the compile read is a miss too.
func TestCommandCacheWarmHit(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"k.c":     kernelsSrc + "#include \"v.h\"\nint value(void) { return V; }\n",
		"inc/v.h": "#define V 3\n",
	})
	if err := os.Mkdir(w.path("inc0"), 0o755); err != nil {
		t.Fatal(err)
	}
	settle()
	flags := args(openmpHost, "-O2", "-c", "-I"+w.path("inc0"), "-I"+w.path("inc"), w.path("k.c"))
	build := func() (bool, bool, result) { return w.wholeBuild(t, w.dir, args(flags, "-o", "k.o")...) }
	if hit, stored, r := build(); hit || stored {
		t.Fatalf("cold build: whole hit %v, command entry stored %v (want neither):\n%s", hit, stored, r.stderr)
	}
	cold := mustReadTB(t, w.path("k.o"))
	if hit, stored, r := build(); hit || !stored {
		t.Fatalf("second build: whole hit %v, command entry stored %v (want a store):\n%s", hit, stored, r.stderr)
	}
	if err := os.Remove(w.path("k.o")); err != nil {
		t.Fatal(err)
	}
	if hit, _, r := build(); !hit {
		t.Fatalf("warm build: not answered whole:\n%s", r.stderr)
	} else if strings.Contains(r.stderr, "compile") || strings.Contains(r.stderr, "front") {
		t.Errorf("a whole hit looked its jobs up:\n%s", r.stderr)
	}
	sameBytes(t, "whole hit", w.path("k.o"), cold)
	var stats struct {
		Kinds map[string]struct {
			Hits        int64 `json:"hits"`
			SavedMillis int64 `json:"saved_ms"`
		} `json:"kinds"`
	}
	if err := json.Unmarshal([]byte(w.cacheCLI(t, nil, "stats", "--json").stdout), &stats); err != nil {
		t.Fatal(err)
	}
	if k := stats.Kinds["command"]; k.Hits != 1 || k.SavedMillis <= 0 {
		t.Errorf("cache stats after a whole hit: command hits %d, time saved %d ms; want 1 and the jobs' time", k.Hits, k.SavedMillis)
	}

	// Same size, same inode, the old modification time: the stat still
	// differs (ctime), so the entry does not answer, and the jobs'
	// entries rehash the header.
	st, err := os.Stat(w.path("inc/v.h"))
	if err != nil {
		t.Fatal(err)
	}
	w.edit(t, "inc/v.h", "V 3", "V 4")
	if err := os.Chtimes(w.path("inc/v.h"), st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // (as write does: an edit within the build's first moments is not stored)
	if hit, _, r := build(); hit {
		t.Fatalf("build after an edit of v.h: answered whole:\n%s", r.stderr)
	}
	sameBytes(t, "v.h edited", w.path("k.o"), w.reference(t, "v4.o", flags...))

	settle()
	if _, stored, r := build(); !stored {
		t.Fatalf("build after the edit settled: no command entry stored:\n%s", r.stderr)
	}
	if hit, _, r := build(); !hit {
		t.Fatalf("rebuild: not answered whole:\n%s", r.stderr)
	}
	w.write(t, map[string]string{"inc0/v.h": "#define V 6\n"})
	if hit, _, r := build(); hit {
		t.Fatalf("build after a header appeared earlier on the path: answered whole:\n%s", r.stderr)
	}
	sameBytes(t, "inc0/v.h shadows inc/v.h", w.path("k.o"), w.reference(t, "v6.o", flags...))
}

// TestCommandCacheMoved: a compile from a fresh build directory to a new
// -o is answered whole from another directory's entry when its object
// does not depend on the directory; with -g (the working directory in its
// debug information) it is not, and each directory gets clang's object.
func TestCommandCacheMoved(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{"src/k.c": kernelsSrc})
	for _, d := range []string{"b1", "b2", "b3", "b4"} {
		if err := os.MkdirAll(w.path(d+"/obj"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	settle()
	src := w.path("src/k.c")
	for _, debug := range []bool{false, true} {
		flags := args(openmpHost, "-O2", "-c", src)
		dirs := []string{"b1", "b2"}
		if debug {
			flags = append(flags, "-g")
			dirs = []string{"b3", "b4"}
		}
		w.wholeBuild(t, w.path(dirs[0]), args(flags, "-o", "obj/a.o")...)
		w.wholeBuild(t, w.path(dirs[0]), args(flags, "-o", "obj/a.o")...) // stores the command entry
		hit, _, r := w.wholeBuild(t, w.path(dirs[1]), args(flags, "-o", "obj/b.o")...)
		if hit == debug {
			t.Errorf("-g %v: a build in another directory answered whole: %v, want %v:\n%s", debug, hit, !debug, r.stderr)
		}
		ref := t.TempDir()
		cmdSpec{dir: w.path(dirs[1]), env: w.env, name: w.c.cc, args: args("--no-cache", flags, "-o", filepath.Join(ref, "b.o"))}.mustRun(t)
		sameBytes(t, "-g "+map[bool]string{false: "off", true: "on"}[debug], w.path(dirs[1]+"/obj/b.o"), mustReadTB(t, filepath.Join(ref, "b.o")))
	}
}

// TestCommandCacheNotWhole: a compile whose run prints a warning is never
// answered whole (a hit would not print it), and one with a dependency
// file restores both files in its own directory only.
func TestCommandCacheNotWhole(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"warn.c": "int f(int x) { int unused; return x; }\n",
		"dep.c":  "#include \"dep.h\"\nint g(void) { return D; }\n",
		"dep.h":  "#define D 1\n",
	})
	if err := os.Mkdir(w.path("other"), 0o755); err != nil {
		t.Fatal(err)
	}
	settle()
	for i := 0; i < 3; i++ {
		hit, stored, r := w.wholeBuild(t, w.dir, "-Wall", "-c", "warn.c", "-o", "warn.o")
		if hit || stored || !strings.Contains(r.stderr, "unused variable 'unused'") {
			t.Fatalf("build %d of a file with a warning: whole hit %v, stored %v, stderr:\n%s", i+1, hit, stored, r.stderr)
		}
	}
	dep := args("-c", w.path("dep.c"), "-MD", "-MF", "dep.d", "-o", "dep.o")
	w.wholeBuild(t, w.dir, dep...)
	w.wholeBuild(t, w.dir, dep...)
	wantD := mustReadTB(t, w.path("dep.d"))
	for _, f := range []string{"dep.o", "dep.d"} {
		if err := os.Remove(w.path(f)); err != nil {
			t.Fatal(err)
		}
	}
	if hit, _, r := w.wholeBuild(t, w.dir, dep...); !hit {
		t.Fatalf("a compile with -MD: not answered whole in its own directory:\n%s", r.stderr)
	}
	sameBytes(t, "dep.d restored", w.path("dep.d"), wantD)
	if _, err := os.Stat(w.path("dep.o")); err != nil {
		t.Errorf("dep.o not restored: %v", err)
	}
	if hit, _, r := w.wholeBuild(t, w.path("other"), dep...); hit {
		t.Errorf("a compile with -MD answered whole in another directory (its .d names the object):\n%s", r.stderr)
	}
}

// TestCommandCacheForgedOutputs: a command entry rewritten to name other
// files than the command writes (the source, a file beside the build) is
// not restored: the build goes through its jobs, the files named are left
// alone, and the object is clang's.
func TestCommandCacheForgedOutputs(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{"k.c": "int k(int x) { return x + 1; }\n"})
	settle()
	flags := args("-O2", "-c", "k.c", "-MD", "-o", "k.o")
	w.wholeBuild(t, w.dir, flags...)
	if _, stored, r := w.wholeBuild(t, w.dir, flags...); !stored {
		t.Fatalf("no command entry stored:\n%s", r.stderr)
	}
	src := mustReadTB(t, w.path("k.c"))
	store := cache.NewDirStore(w.cacheDir)
	forged := 0
	err := store.Walk(func(key cache.Sum, e *cache.Entry) error {
		if e.Kind != cache.KindCommand {
			return nil
		}
		var rec struct {
			Outputs []string `json:"outputs"`
		}
		if err := json.Unmarshal(e.Record, &rec); err != nil || len(rec.Outputs) != 2 {
			t.Fatalf("command entry %s: record %q", key, e.Record)
		}
		// The object's bytes to the source, the .d file's beside the
		// build directory.
		rec.Outputs = []string{"k.c", filepath.Join(filepath.Dir(w.dir), "planted.d")}
		e.Record, _ = json.Marshal(rec)
		forged++
		return store.Replace(key, e)
	})
	if err != nil || forged != 1 {
		t.Fatalf("forging the command entry: %v (%d entries)", err, forged)
	}
	if hit, _, r := w.wholeBuild(t, w.dir, flags...); hit || !strings.Contains(r.stderr, "which the command does not write") {
		t.Errorf("a forged command entry: whole hit %v, want it refused:\n%s", hit, r.stderr)
	}
	if got := mustReadTB(t, w.path("k.c")); !bytes.Equal(got, src) {
		t.Errorf("the source was overwritten by a forged command entry")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(w.dir), "planted.d")); err == nil {
		t.Errorf("a forged command entry wrote outside the build directory")
	}
	sameBytes(t, "forged entry refused", w.path("k.o"), w.reference(t, "k.o", "-O2", "-c", w.path("k.c")))
}

// TestCommandCacheNewOffcc: a command entry holds for the offcc that
// stored it: another offcc binary at the same path (an upgrade, which may
// plan the same command into other jobs) is a miss.
func TestCommandCacheNewOffcc(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	bin := filepath.Join(filepath.Dir(w.dir), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExe := func() {
		t.Helper()
		data := mustReadTB(t, w.c.cc)
		if err := os.WriteFile(filepath.Join(bin, "offcc.new"), data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(bin, "offcc.new"), filepath.Join(bin, "offcc")); err != nil {
			t.Fatal(err)
		}
	}
	copyExe()
	w.write(t, map[string]string{"k.c": "int k(int x) { return x * 5; }\n"})
	settle()
	w.c.cc = filepath.Join(bin, "offcc")
	flags := args("-O2", "-c", "k.c", "-o", "k.o")
	w.wholeBuild(t, w.dir, flags...)
	w.wholeBuild(t, w.dir, flags...)
	if hit, _, r := w.wholeBuild(t, w.dir, flags...); !hit {
		t.Fatalf("third build: not answered whole:\n%s", r.stderr)
	}
	copyExe()
	settle()
	if hit, _, r := w.wholeBuild(t, w.dir, flags...); hit {
		t.Errorf("another offcc at the same path answered from the old one's command entry:\n%s", r.stderr)
	}
}

// TestCommandCacheOffccOptions: offcc's own options that change its jobs
// are part of a command entry's key (clang's line, which the plan key
// holds, does not have them): a build with --no-offload-stable-names is
// not answered from the entry of one without, and gets the object that
// option gives.
func TestCommandCacheOffccOptions(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{"k.c": kernelsSrc})
	settle()
	flags := args(openmpHost, "-O2", "-c", w.path("k.c"))
	w.wholeBuild(t, w.dir, args(flags, "-o", "k.o")...)
	w.wholeBuild(t, w.dir, args(flags, "-o", "k.o")...)
	if hit, _, r := w.wholeBuild(t, w.dir, args(flags, "-o", "k.o")...); !hit {
		t.Fatalf("third build: not answered whole:\n%s", r.stderr)
	}
	if hit, _, r := w.wholeBuild(t, w.dir, args("--no-offload-stable-names", flags, "-o", "k.o")...); hit {
		t.Fatalf("--no-offload-stable-names: answered from the entry of a build without it:\n%s", r.stderr)
	}
	sameBytes(t, "--no-offload-stable-names", w.path("k.o"), w.reference(t, "clang-names.o", args("--no-offload-stable-names", flags)...))
}
