package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The build cache's end-to-end tests: real LLVM 22 tools, real files, each
// test with a cache directory of its own (OFFCC_CACHE_DIR in the
// environment of the commands it runs). Whether an action hit is read from
// the "cache" argument of --job-trace's events.

// jobEvent is one job of a --job-trace trace, as the cache and farm tests
// read it. The farm's figures are nil for a job that ran here.
type jobEvent struct {
	Name    string   `json:"-"`
	Kind    string   `json:"kind"`
	Tool    string   `json:"tool"`
	Arch    string   `json:"arch"`
	Cache   string   `json:"cache"`
	Outputs []string `json:"outputs"`
	Worker  string   `json:"worker"`

	BytesUp    *int64 `json:"bytes_up"`
	BytesDown  *int64 `json:"bytes_down"`
	TransferMS *int64 `json:"transfer_ms"`
	QueueMS    *int64 `json:"queue_ms"`
	RunMS      *int64 `json:"run_ms"`
}

func (e jobEvent) String() string {
	where := ""
	if e.Worker != "" {
		where = " on worker " + e.Worker
	}
	return fmt.Sprintf("%s [%s %s]: %s%s", e.Name, e.Kind, e.Tool, e.Cache, where)
}

// cacheable reports whether the cache looked the job up ("hit" or "miss").
func (e jobEvent) cacheable() bool { return e.Cache == "hit" || e.Cache == "miss" }

// readJobTrace reads the jobs of a build's --job-trace file.
func readJobTrace(t testing.TB, path string) []jobEvent {
	t.Helper()
	var doc struct {
		TraceEvents []struct {
			Name string   `json:"name"`
			Ph   string   `json:"ph"`
			Args jobEvent `json:"args"`
		} `json:"traceEvents"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	var evs []jobEvent
	for _, ev := range doc.TraceEvents {
		if ev.Ph == "X" {
			ev.Args.Name = ev.Name
			evs = append(evs, ev.Args)
		}
	}
	return evs
}

// listEvents formats a trace's jobs for failure messages.
func listEvents(evs []jobEvent) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	return b.String()
}

// selectEvents returns the events for which keep is true.
func selectEvents(evs []jobEvent, keep func(jobEvent) bool) []jobEvent {
	var out []jobEvent
	for _, e := range evs {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// clangMisses returns the compiler jobs (tool clang) that missed.
func clangMisses(evs []jobEvent) []jobEvent {
	return selectEvents(evs, func(e jobEvent) bool { return e.Tool == "clang" && e.Cache == "miss" })
}

// misses returns every job that missed.
func misses(evs []jobEvent) []jobEvent {
	return selectEvents(evs, func(e jobEvent) bool { return e.Cache == "miss" })
}

// checkAllHits checks that every cacheable job of a build hit, and that
// there was one at least.
func checkAllHits(t testing.TB, what string, evs []jobEvent) {
	t.Helper()
	hits := 0
	bad := false
	for _, e := range evs {
		switch {
		case e.Cache == "hit":
			hits++
		case e.cacheable():
			bad = true
		}
	}
	if bad || hits == 0 {
		t.Errorf("%s: want every cacheable job to hit (%d hit):\n%s", what, hits, listEvents(evs))
	}
}

// checkEvent checks the cache status of the one job of kind (and arch,
// when not "") in evs.
func checkEvent(t testing.TB, what string, evs []jobEvent, kind, arch, want string) {
	t.Helper()
	found := selectEvents(evs, func(e jobEvent) bool { return e.Kind == kind && (arch == "" || e.Arch == arch) })
	if len(found) != 1 || found[0].Cache != want {
		t.Errorf("%s: want the %s %s job to be %q, got %v; all jobs:\n%s", what, kind, arch, want, found, listEvents(evs))
	}
}

// cacheEnvFor returns the environment additions that give a command the
// cache directory dir and none of the cache settings of the caller's
// environment. A race-instrumented offcc gets GORACE atexit_sleep_ms=0
// unless GORACE sets it (as buildEnv does): these tests run it often.
func cacheEnvFor(tmp, dir string) []string {
	env := []string{tmp, "OFFCC_CACHE_DIR=" + dir, "OFFCC_CACHE=", "OFFCC_CACHE_SIZE=",
		"OFFCC_CACHE_DEBUG=", "OFFCC_TRACE=", "OFFCC_JOB_TRACE=", "OFFCC_PLAN_CACHE="}
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		env = append(env, strings.TrimSpace("GORACE="+g+" atexit_sleep_ms=0"))
	}
	return env
}

// cacheWork is a test's working directory and cache directory.
type cacheWork struct {
	c        compiler
	dir      string // working directory of the builds
	cacheDir string
	env      []string

	mu     sync.Mutex
	traces int
}

func newCacheWork(t *testing.T) *cacheWork {
	t.Helper()
	c := offccOnly(t, "the build cache is offcc's")
	root := t.TempDir()
	w := &cacheWork{c: c, dir: filepath.Join(root, "work"), cacheDir: filepath.Join(root, "cache")}
	if err := os.Mkdir(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, tmp := tmpEnv(t)
	w.env = cacheEnvFor(tmp, w.cacheDir)
	return w
}

// path returns the path of name in the working directory.
func (w *cacheWork) path(name string) string { return filepath.Join(w.dir, name) }

// write writes files (name to contents) into the working directory, then
// waits a little: the cache does not store the results of a compile whose
// inputs changed just before (or while) it ran, and a real edit is not
// followed by a build within milliseconds.
func (w *cacheWork) write(t testing.TB, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := w.path(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
}

// edit rewrites an existing file in place (same inode), replacing old by
// new, and waits as write does.
func (w *cacheWork) edit(t testing.TB, name, old, new string) {
	t.Helper()
	p := w.path(name)
	data := string(mustReadTB(t, p))
	if !strings.Contains(data, old) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(strings.Replace(data, old, new, 1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
}

func mustReadTB(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// traceFile returns a new trace file name.
func (w *cacheWork) traceFile() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.traces++
	return filepath.Join(filepath.Dir(w.dir), fmt.Sprintf("trace%d.json", w.traces))
}

// run runs offcc (or offcc++ when cxx) in the working directory with the
// extra environment env and --job-trace, fails the test unless it
// succeeds, and returns its result and trace.
func (w *cacheWork) run(t testing.TB, env []string, a ...string) (result, []jobEvent) {
	t.Helper()
	trace := w.traceFile()
	r := cmdSpec{dir: w.dir, env: append(slices.Clone(w.env), env...), name: w.c.cc,
		args: append(slices.Clone(a), "--job-trace="+trace)}.mustRun(t)
	return r, readJobTrace(t, trace)
}

// build is run without extra environment.
func (w *cacheWork) build(t testing.TB, a ...string) (result, []jobEvent) {
	t.Helper()
	return w.run(t, nil, a...)
}

// reference builds with --no-cache, in a directory of its own, the output
// that args (which must not name one) give for sources named by absolute
// paths, and returns its bytes.
func (w *cacheWork) reference(t testing.TB, out string, a ...string) []byte {
	t.Helper()
	dir := filepath.Join(filepath.Dir(w.dir), "ref-"+strings.ReplaceAll(out, "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(out))
	cmdSpec{dir: dir, env: w.env, name: w.c.cc, args: args("--no-cache", a, "-o", p)}.mustRun(t)
	return mustReadTB(t, p)
}

// sameBytes fails the test unless the file got holds want.
func sameBytes(t testing.TB, what, got string, want []byte) {
	t.Helper()
	data := mustReadTB(t, got)
	if len(data) == 0 || !bytes.Equal(data, want) {
		t.Errorf("%s: %s (%d bytes) differs from the expected output (%d bytes)", what, got, len(data), len(want))
	}
}

// cacheFiles lists the files under the cache directory (for checking that
// a build left it alone).
func (w *cacheWork) cacheFiles(t testing.TB) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(w.cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// resultEntries returns the entry directories of the cache that hold
// outputs (a blob named out0), sorted.
func (w *cacheWork) resultEntries(t testing.TB) []string {
	t.Helper()
	var dirs []string
	for _, f := range w.cacheFiles(t) {
		if filepath.Base(f) == "out0" {
			dirs = append(dirs, filepath.Dir(f))
		}
	}
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Fatalf("no entry with outputs (out0) under %s", w.cacheDir)
	}
	return dirs
}

// cacheCLI runs "offcc cache ARGS..." with the work's environment (plus
// env) and fails the test, saying so, when the subcommand is missing or
// fails.
func (w *cacheWork) cacheCLI(t testing.TB, env []string, a ...string) result {
	t.Helper()
	r := cmdSpec{dir: w.dir, env: append(slices.Clone(w.env), env...), name: w.c.cc, args: args("cache", a)}.run(t)
	if r.code != 0 {
		if strings.Contains(r.stderr, "'cache'") || strings.Contains(r.stderr, "no input files") {
			t.Fatalf("offcc has no cache subcommand (offcc cache %s was taken as a compile):\n%s", strings.Join(a, " "), r)
		}
		t.Fatalf("offcc cache %s failed:\n%s", strings.Join(a, " "), r)
	}
	return r
}

// The AMD flags of the tests (no device libraries: none are installed).
func amdFlags(archs string) []string {
	return []string{"-fopenmp", "--offload-arch=" + archs, "-nogpulib"}
}

const fourArchs = "gfx906,gfx908,gfx90a,gfx1030"

// kernelsSrc is a translation unit with a few target regions.
const kernelsSrc = `#include <stdio.h>
#define N 256
static float a[N], b[N];

#pragma omp declare target
static float twice(float x) { return 2.0f * x; }
#pragma omp end declare target

void scale(float s) {
#pragma omp target teams distribute parallel for map(tofrom : a) map(to : b)
  for (int i = 0; i < N; i++)
    a[i] = twice(b[i]) * s;
}

float total(void) {
  float sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(to : a)
  for (int i = 0; i < N; i++)
    sum += a[i];
  return sum;
}

int main(void) {
  for (int i = 0; i < N; i++)
    b[i] = i;
  scale(0.5f);
  int dev = 0;
#pragma omp target map(from : dev)
  dev = 1;
  printf("total %.1f dev %d\n", total(), dev);
  return 0;
}
`

// TestCacheIdenticalRebuild builds a four-architecture AMD OpenMP object
// cold and warm: the warm build is all hits and its object is the cold
// one's, which is also what --no-cache builds (leaving the cache alone).
func TestCacheIdenticalRebuild(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{"k.c": kernelsSrc})
	src := w.path("k.c")
	flags := args(amdFlags(fourArchs), "-O2", "-c", src)

	_, cold := w.build(t, args(flags, "-o", "k.o")...)
	if n := len(selectEvents(cold, func(e jobEvent) bool { return e.Kind == "device-compile" && e.Cache == "miss" })); n != 4 {
		t.Errorf("cold build: %d device compiles missed, want 4:\n%s", n, listEvents(cold))
	}
	if hits := selectEvents(cold, func(e jobEvent) bool { return e.Cache == "hit" }); len(hits) != 0 {
		t.Errorf("cold build into an empty cache hit:\n%s", listEvents(cold))
	}
	coldObj := mustReadTB(t, w.path("k.o"))
	if err := os.Remove(w.path("k.o")); err != nil {
		t.Fatal(err)
	}

	r, warm := w.run(t, []string{"OFFCC_TRACE=1"}, args(flags, "-o", "k.o")...)
	checkAllHits(t, "warm build", warm)
	sameBytes(t, "warm build", w.path("k.o"), coldObj)
	// OFFCC_TRACE=1 prints the same statuses.
	var jobLines []traceLine
	for _, l := range parseTraceLines(r.stderr) {
		if l.tool == "clang" {
			jobLines = append(jobLines, l)
		}
	}
	if len(jobLines) < 6 {
		t.Errorf("OFFCC_TRACE=1: %d 'job clang' lines, want 6 (host front end, four device compiles, backend):\n%s", len(jobLines), r.stderr)
	}
	for _, l := range jobLines {
		if l.get("cache") != "hit" {
			t.Errorf("OFFCC_TRACE=1 line of the warm build is not a hit: %q", l.line)
		}
	}

	before := w.cacheFiles(t)
	ref := w.reference(t, "k.o", flags...)
	if !bytes.Equal(ref, coldObj) {
		t.Errorf("the --no-cache object (%d bytes) differs from the cached build's (%d bytes)", len(ref), len(coldObj))
	}
	if after := w.cacheFiles(t); !slices.Equal(before, after) {
		t.Errorf("--no-cache changed the cache directory: %d files before, %d after", len(before), len(after))
	}
}

// TestCacheWarmHostOffloadProgram compiles and links an OpenMP program
// offloading to the host, cold and then fully warm (a third build, every
// cacheable job a hit), and runs both programs.
func TestCacheWarmHostOffloadProgram(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	copyFile(t, srcPath(t, "basic.c"), w.path("basic.c"))
	time.Sleep(50 * time.Millisecond)
	flags := args(openmpHost, "-O2", w.path("basic.c"), "-o", "prog")
	w.build(t, flags...)
	coldOut := runOffloadProgram(t, w.path("prog")).stdout
	if err := os.Remove(w.path("prog")); err != nil {
		t.Fatal(err)
	}
	w.build(t, flags...)
	_, warm := w.build(t, flags...)
	checkAllHits(t, "third build of the program", warm)
	if got := runOffloadProgram(t, w.path("prog")).stdout; got != coldOut {
		t.Errorf("the warm-built program prints %q, the cold-built one %q", got, coldOut)
	}
}

// TestCacheAddRemoveArch adds a fifth architecture to a warm four-arch
// build (one compiler job runs: its device compile) and then drops two
// (no compiler job runs), with LLVM 22 and with LLVM 19 (whose objects
// are clang 19's own).
func TestCacheAddRemoveArch(t *testing.T) {
	t.Parallel()
	for _, release := range []string{"22", "19"} {
		t.Run("llvm"+release, func(t *testing.T) {
			t.Parallel()
			w := newCacheWork(t)
			var llvm []string
			reference := w.reference
			if release == "19" {
				clang := llvm19Tool(t, "clang")
				llvm = []string{llvm19Dir}
				// clang 19 itself, in a directory of its own.
				reference = func(t testing.TB, out string, a ...string) []byte {
					dir := filepath.Join(filepath.Dir(w.dir), "clang19")
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					cmdSpec{dir: dir, env: w.env, name: clang, args: args(a, "-o", out)}.mustRun(t)
					return mustReadTB(t, filepath.Join(dir, out))
				}
			}
			w.write(t, map[string]string{"k.c": kernelsSrc})
			src := w.path("k.c")
			w.build(t, args(llvm, amdFlags(fourArchs), "-O2", "-c", src, "-o", "four.o")...)

			five := args(amdFlags(fourArchs+",gfx942"), "-O2", "-c", src)
			_, evs := w.build(t, args(llvm, five, "-o", "five.o")...)
			if m := clangMisses(evs); len(m) != 1 || m[0].Kind != "device-compile" || m[0].Arch != "gfx942" {
				t.Errorf("adding gfx942: compiler jobs that ran %v, want only the gfx942 device compile; all jobs:\n%s", m, listEvents(evs))
			}
			sameBytes(t, "five archs", w.path("five.o"), reference(t, "five.o", five...))

			_, evs = w.build(t, args(llvm, amdFlags("gfx906,gfx90a,gfx1030"), "-O2", "-c", src, "-o", "three.o")...)
			if m := clangMisses(evs); len(m) != 0 {
				t.Errorf("dropping two archs: compiler jobs ran %v, want none; all jobs:\n%s", m, listEvents(evs))
			}
		})
	}
}

// headerSrc includes dev.h, whose function a target region calls, and,
// in the host compile only, host_only.h.
const headerSrc = `#include <stdio.h>
#include "dev.h"
#ifndef __AMDGCN__
#include "host_only.h"
#else
static inline int host_value(void) { return 0; }
#endif

int main(void) {
  int x = 0;
#pragma omp target map(from : x)
  x = dev_value(5);
  printf("%d %d\n", x, host_value());
  return 0;
}
`

// TestCacheHeaderEdits edits a header the device code uses (front ends
// and device compile rerun) and one only the host compile reads (the host
// front end and backend rerun; the device compile, keyed by the host IR's
// offload entries, not its bytes, hits). Each object is --no-cache's.
func TestCacheHeaderEdits(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"src.c":       headerSrc,
		"dev.h":       "#pragma omp declare target\nstatic inline int dev_value(int i) { return i * 3; }\n#pragma omp end declare target\n",
		"host_only.h": "static inline int host_value(void) { return 7; }\n",
	})
	flags := args(amdFlags("gfx906"), "-O2", "-c", w.path("src.c"))
	build := func() []jobEvent {
		_, evs := w.build(t, args(flags, "-o", "src.o")...)
		return evs
	}
	build()
	checkAllHits(t, "warm build", build())

	// Same size, same inode: only the bytes tell the edit.
	w.edit(t, "dev.h", "i * 3", "i * 4")
	evs := build()
	checkEvent(t, "dev.h edited", evs, "host-frontend", "", "miss")
	checkEvent(t, "dev.h edited", evs, "device-compile", "gfx906", "miss")
	sameBytes(t, "dev.h edited", w.path("src.o"), w.reference(t, "dev.o", flags...))
	checkAllHits(t, "rebuild after the dev.h edit", build())

	w.edit(t, "host_only.h", "return 7", "return 8")
	evs = build()
	var ran []string
	for _, e := range clangMisses(evs) {
		ran = append(ran, e.Kind)
	}
	sort.Strings(ran)
	if !slices.Equal(ran, []string{"backend", "host-frontend"}) {
		t.Errorf("host_only.h edited: compiler jobs that ran %q, want the host front end and backend only; all jobs:\n%s", ran, listEvents(evs))
	}
	checkEvent(t, "host_only.h edited", evs, "device-compile", "gfx906", "hit")
	sameBytes(t, "host_only.h edited", w.path("src.o"), w.reference(t, "host.o", flags...))
	checkAllHits(t, "rebuild after the host_only.h edit", build())
}

// TestCacheShadowingHeader creates a header that shadows, on the include
// path, one a compile read: the compiles that read it miss, and the object
// is --no-cache's.
func TestCacheShadowingHeader(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"src.c":   "#include <s.h>\nint main(void) {\n  int x = 0;\n#pragma omp target map(from : x)\n  x = S_VALUE;\n  return x - S_VALUE;\n}\n",
		"inc/s.h": "#define S_VALUE 1\n",
	})
	if err := os.Mkdir(w.path("inc2"), 0o755); err != nil {
		t.Fatal(err)
	}
	flags := args(amdFlags("gfx906"), "-c", "-I"+w.path("inc2"), "-I"+w.path("inc"), w.path("src.c"))
	w.build(t, args(flags, "-o", "src.o")...)
	_, evs := w.build(t, args(flags, "-o", "src.o")...)
	checkAllHits(t, "warm build", evs)

	w.write(t, map[string]string{"inc2/s.h": "#define S_VALUE 2\n"})
	_, evs = w.build(t, args(flags, "-o", "src.o")...)
	checkEvent(t, "inc2/s.h created", evs, "host-frontend", "", "miss")
	checkEvent(t, "inc2/s.h created", evs, "device-compile", "gfx906", "miss")
	sameBytes(t, "inc2/s.h created", w.path("src.o"), w.reference(t, "src.o", flags...))
	_, evs = w.build(t, args(flags, "-o", "src.o")...)
	checkAllHits(t, "rebuild with inc2/s.h", evs)
}

// cacheJob is one of the concurrency test's builds.
type cacheJob struct {
	src, out string
	want     []byte
}

// TestCacheConcurrentBuilds runs eight builds at once into one empty
// cache (four of one translation unit, four of others), then the eight
// again (all hits), then again while the cache is trimmed to nothing in a
// loop: every build succeeds with --no-cache's object.
func TestCacheConcurrentBuilds(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	files := map[string]string{}
	for i := 0; i < 5; i++ {
		files[fmt.Sprintf("tu%d.c", i)] = fmt.Sprintf("int tu%d(int *p) {\n  int r = 0;\n#pragma omp target map(from : r) map(to : p[0:4])\n  r = p[%d] * %d;\n  return r;\n}\n", i, i%4, i+2)
	}
	w.write(t, files)
	flags := args(amdFlags("gfx906"), "-O2", "-c")
	var jobs []cacheJob
	wants := map[string][]byte{}
	for i := 0; i < 5; i++ {
		src := w.path(fmt.Sprintf("tu%d.c", i))
		wants[src] = w.reference(t, filepath.Base(src)+".o", args(flags, src)...)
	}
	for i := 0; i < 4; i++ {
		same := w.path("tu0.c")
		jobs = append(jobs, cacheJob{same, fmt.Sprintf("same%d.o", i), wants[same]})
		other := w.path(fmt.Sprintf("tu%d.c", i+1))
		jobs = append(jobs, cacheJob{other, fmt.Sprintf("other%d.o", i), wants[other]})
	}

	// round runs the eight builds at once, then checks them.
	round := func(t *testing.T, name string, env []string, allHits bool) {
		results := make([]result, len(jobs))
		traces := make([]string, len(jobs))
		var wg sync.WaitGroup
		for i, j := range jobs {
			traces[i] = w.traceFile()
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = cmdSpec{dir: w.dir, env: append(slices.Clone(w.env), env...), name: w.c.cc,
					args: args(flags, j.src, "-o", j.out, "--job-trace="+traces[i])}.run(t)
			}()
		}
		wg.Wait()
		for i, j := range jobs {
			if results[i].code != 0 {
				t.Errorf("%s: build of %s failed:\n%s", name, j.out, results[i])
				continue
			}
			sameBytes(t, name+": "+j.out, w.path(j.out), j.want)
			if allHits {
				checkAllHits(t, name+": "+j.out, readJobTrace(t, traces[i]))
			}
		}
	}
	round(t, "first round", nil, false)
	round(t, "second round", nil, true)

	t.Run("while trimming", func(t *testing.T) {
		w.cacheCLI(t, nil, "trim", "--size", "1")
		stop := make(chan struct{})
		trims := make(chan int)
		go func() {
			n := 0
			defer func() { trims <- n }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := cmdSpec{dir: w.dir, env: w.env, name: w.c.cc, args: []string{"cache", "trim", "--size", "1"}}.run(t)
				if r.code != 0 {
					t.Errorf("offcc cache trim during builds failed:\n%s", r)
					return
				}
				n++
			}
		}()
		for _, j := range jobs {
			os.Remove(w.path(j.out))
		}
		round(t, "third round (trimming)", []string{"OFFCC_CACHE_SIZE=1K"}, false)
		close(stop)
		t.Logf("%d trims ran during the builds", <-trims)
	})
}

// TestCacheDamagedEntries damages the cache after a warm build: a flipped
// byte in a stored output, a truncated one, a deleted entry, a truncated
// index (of a result and of a manifest). Each time the build succeeds with
// the right object, and the build after it hits everywhere again.
func TestCacheDamagedEntries(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"src.c":   "#include \"val.h\"\nint main(void) {\n  int x = 0;\n#pragma omp target map(from : x)\n  x = VAL;\n  return x - VAL;\n}\n",
		"val.h":   "#define VAL 3\n",
		"other.h": "\n",
	})
	flags := args(amdFlags("gfx906"), "-c", w.path("src.c"), "-o", "src.o")
	w.build(t, flags...)
	want := mustReadTB(t, w.path("src.o"))
	_, evs := w.build(t, flags...)
	checkAllHits(t, "warm build", evs)

	manifestIndex := func(t *testing.T) string {
		for _, f := range w.cacheFiles(t) {
			if filepath.Base(f) == "index" && bytes.Contains(mustReadTB(t, f), []byte(`candidates`)) {
				return f
			}
		}
		t.Fatalf("no manifest (an index mentioning candidates) under %s", w.cacheDir)
		return ""
	}
	truncate := func(t *testing.T, p string) {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, info.Size()/2); err != nil {
			t.Fatal(err)
		}
	}
	for i, tc := range []struct {
		name   string
		damage func(t *testing.T, entry string)
	}{
		{"flipped byte", func(t *testing.T, entry string) {
			p := filepath.Join(entry, "out0")
			data := mustReadTB(t, p)
			data[len(data)/2] ^= 0x40
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated blob", func(t *testing.T, entry string) { truncate(t, filepath.Join(entry, "out0")) }},
		{"deleted entry", func(t *testing.T, entry string) {
			if err := os.RemoveAll(entry); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated result index", func(t *testing.T, entry string) { truncate(t, filepath.Join(entry, "index")) }},
		{"truncated manifest index", func(t *testing.T, _ string) { truncate(t, manifestIndex(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries := w.resultEntries(t)
			entry := entries[i%len(entries)]
			tc.damage(t, entry)
			if err := os.Remove(w.path("src.o")); err != nil {
				t.Fatal(err)
			}
			_, evs := w.build(t, flags...)
			sameBytes(t, "build after the damage", w.path("src.o"), want)
			if m := misses(evs); len(m) != 1 {
				t.Errorf("want one job to miss (the damaged entry's), got %d:\n%s", len(m), listEvents(evs))
			}
			_, evs = w.build(t, flags...)
			checkAllHits(t, "the build after that", evs)
			sameBytes(t, "the build after that", w.path("src.o"), want)
		})
	}
}

// TestCacheUncacheable checks that -save-temps and -ftime-trace make the
// jobs they change uncacheable, not errors, and that output to standard
// output is never cached: each is built twice and does its work both
// times.
func TestCacheUncacheable(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{"k.c": kernelsSrc, "plain.c": "int plain(int x) { return x * 7; }\n"})
	src := w.path("k.c")

	t.Run("save-temps", func(t *testing.T) {
		for n := 1; n <= 2; n++ {
			_, evs := w.build(t, args(amdFlags("gfx906"), "-save-temps", "-c", src, "-o", "st.o")...)
			compiles := selectEvents(evs, func(e jobEvent) bool { return e.Tool == "clang" })
			if len(compiles) == 0 {
				t.Fatalf("build %d: no clang job in the trace:\n%s", n, listEvents(evs))
			}
			for _, e := range compiles {
				if e.Cache != "uncacheable: -save-temps" {
					t.Errorf("build %d: %s, want uncacheable: -save-temps", n, e)
				}
			}
			for _, f := range []string{"k-host-x86_64-pc-linux-gnu.i", "k-openmp-amdgcn-amd-amdhsa-gfx906.i", "st.o"} {
				if err := os.Remove(w.path(f)); err != nil {
					t.Errorf("build %d: -save-temps file: %v", n, err)
				}
			}
		}
	})
	t.Run("ftime-trace", func(t *testing.T) {
		for n := 1; n <= 2; n++ {
			_, evs := w.build(t, args(amdFlags("gfx906"), "-ftime-trace", "-c", src, "-o", "tt.o")...)
			checkEvent(t, fmt.Sprintf("build %d", n), evs, "backend", "", "uncacheable: -ftime-trace")
			if err := os.Remove(w.path("tt.json")); err != nil {
				t.Errorf("build %d: the time trace: %v", n, err)
			}
		}
	})
	t.Run("MMD", func(t *testing.T) {
		// -MMD's file leaves out system headers; offcc's own include
		// graph lists them, so it is cached as -MD is (see mmd_test.go).
		for n := 1; n <= 2; n++ {
			_, evs := w.build(t, "-O2", "-c", w.path("plain.c"), "-o", w.path("mmd.o"), "-MMD", "-MF", w.path("mmd.d"))
			checkEvent(t, fmt.Sprintf("-MMD build %d", n), evs, "compile", "", map[int]string{1: "miss", 2: "hit"}[n])
			_, evs = w.build(t, "-O2", "-c", w.path("plain.c"), "-o", w.path("md.o"), "-MD", "-MF", w.path("md.d"))
			// plain.c includes no header: its header set is empty, and
			// the result must survive its manifest (same first key).
			checkEvent(t, fmt.Sprintf("-MD build %d", n), evs, "compile", "", map[int]string{1: "miss", 2: "hit"}[n])
		}
	})
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"stdout offload", args(amdFlags("gfx906"), "-S", "-o", "-", src)},
		{"stdout plain", args("-O2", "-S", "-o", "-", w.path("plain.c"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var outs []string
			for n := 1; n <= 2; n++ {
				r, evs := w.build(t, tc.flags...)
				if !strings.Contains(r.stdout, ".text") {
					t.Errorf("build %d: no assembly on stdout:\n%s", n, r)
				}
				outs = append(outs, r.stdout)
				toStdout := selectEvents(evs, func(e jobEvent) bool { return slices.Contains(e.Outputs, "-") })
				if len(toStdout) != 1 || toStdout[0].Cache != "uncacheable: output to standard output" {
					t.Errorf("build %d: the job writing stdout: %v, want one, uncacheable: output to standard output; all jobs:\n%s", n, toStdout, listEvents(evs))
				}
			}
			if outs[0] != outs[1] {
				t.Errorf("the two builds printed different assembly")
			}
		})
	}
}

// TestCacheDiagnosticsReplay checks that a hit prints the warnings the
// compile printed.
func TestCacheDiagnosticsReplay(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{"warn.c": "int main(void) {\n  int unused_host = 1;\n  int r = 0;\n#pragma omp target map(from : r)\n  {\n    int unused_dev = 2;\n    r = 1;\n  }\n  return r - 1;\n}\n"})
	flags := args(amdFlags("gfx906"), "-Wall", "-c", w.path("warn.c"), "-o", "warn.o")
	cold, _ := w.build(t, flags...)
	for _, v := range []string{"unused_host", "unused_dev"} {
		if !strings.Contains(cold.stderr, "unused variable '"+v+"'") {
			t.Errorf("cold build: no warning about %s:\n%s", v, cold.stderr)
		}
	}
	warm, evs := w.build(t, flags...)
	checkAllHits(t, "warm build", evs)
	if warm.stderr != cold.stderr {
		t.Errorf("the warm build's diagnostics differ from the cold one's\n--- cold:\n%s--- warm:\n%s", cold.stderr, warm.stderr)
	}
}

// TestCacheDepFile checks that an OpenMP compile's -MD -MF file is restored
// on a hit, byte for byte.
func TestCacheDepFile(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"src.c": "#include \"val.h\"\nint main(void) {\n  int x = 0;\n#pragma omp target map(from : x)\n  x = VAL;\n  return x - VAL;\n}\n",
		"val.h": "#define VAL 3\n",
	})
	flags := args(amdFlags("gfx906"), "-MD", "-MF", "x.d", "-c", w.path("src.c"), "-o", "src.o")
	w.build(t, flags...)
	dep := mustReadTB(t, w.path("x.d"))
	obj := mustReadTB(t, w.path("src.o"))
	if !bytes.Contains(dep, []byte("val.h")) {
		t.Fatalf("x.d does not name val.h:\n%s", dep)
	}
	for _, f := range []string{"x.d", "src.o"} {
		if err := os.Remove(w.path(f)); err != nil {
			t.Fatal(err)
		}
	}
	_, evs := w.build(t, flags...)
	checkAllHits(t, "warm build", evs)
	sameBytes(t, "depfile of the warm build", w.path("x.d"), dep)
	sameBytes(t, "object of the warm build", w.path("src.o"), obj)
}

// cacheStatsCounts returns the hits and misses of "offcc cache stats
// --json" output: its top-level (or "total") hits and misses, else the
// sum over its per-kind counts.
func cacheStatsCounts(t testing.TB, out string) (hits, misses int64) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("offcc cache stats --json: not JSON: %v\n%s", err, out)
	}
	num := func(m map[string]any, k string) (int64, bool) {
		f, ok := m[k].(float64)
		return int64(f), ok
	}
	var find func(m map[string]any) (int64, int64, bool)
	find = func(m map[string]any) (int64, int64, bool) {
		h, ok1 := num(m, "hits")
		ms, ok2 := num(m, "misses")
		if ok1 && ok2 {
			return h, ms, true
		}
		for _, k := range []string{"total", "totals", "stats"} {
			if sub, ok := m[k].(map[string]any); ok {
				if h, ms, ok := find(sub); ok {
					return h, ms, true
				}
			}
		}
		if kinds, ok := m["kinds"].(map[string]any); ok {
			for _, kv := range kinds {
				if km, ok := kv.(map[string]any); ok {
					h, _ := num(km, "hits")
					ms, _ := num(km, "misses")
					hits += h
					misses += ms
				}
			}
			return hits, misses, true
		}
		return 0, 0, false
	}
	h, m, ok := find(v)
	if !ok {
		t.Fatalf("offcc cache stats --json: no hits and misses found:\n%s", out)
	}
	return h, m
}

// countStatus counts the jobs of a trace with the status.
func countStatus(evs []jobEvent, status string) int64 {
	return int64(len(selectEvents(evs, func(e jobEvent) bool { return e.Cache == status })))
}

// TestCacheCLI checks offcc cache stats, export, import and clear.
func TestCacheCLI(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"src.c": "#include \"val.h\"\nint main(void) {\n  int x = 0;\n#pragma omp target map(from : x)\n  x = VAL;\n  return x - VAL;\n}\n",
		"val.h": "#define VAL 3\n",
	})
	flags := args(amdFlags("gfx906"), "-c", w.path("src.c"), "-o", "src.o")

	stats := func() (int64, int64) {
		return cacheStatsCounts(t, w.cacheCLI(t, nil, "stats", "--json").stdout)
	}
	_, cold := w.build(t, flags...)
	if h, m := stats(); h != 0 || m != countStatus(cold, "miss") {
		t.Errorf("stats after a cold build: %d hits, %d misses; want 0 and %d (the trace's misses)", h, m, countStatus(cold, "miss"))
	}
	_, warm := w.build(t, flags...)
	checkAllHits(t, "warm build", warm)
	if h, m := stats(); h != countStatus(warm, "hit") || m != countStatus(cold, "miss") {
		t.Errorf("stats after a warm build: %d hits, %d misses; want %d and %d", h, m, countStatus(warm, "hit"), countStatus(cold, "miss"))
	}

	bundle := filepath.Join(filepath.Dir(w.dir), "x.poclbin")
	writer, reader := cacheKeys(t)
	w.cacheCLI(t, writer, "export", "--all", "-o", bundle)
	if info, err := os.Stat(bundle); err != nil || info.Size() == 0 {
		t.Fatalf("offcc cache export wrote no bundle: %v", err)
	}
	fresh := []string{"OFFCC_CACHE_DIR=" + filepath.Join(filepath.Dir(w.dir), "cache2")}
	w.cacheCLI(t, append(slices.Clone(fresh), reader...), "import", bundle)
	_, evs := w.run(t, fresh, flags...)
	checkAllHits(t, "build in the imported cache", evs)

	w.cacheCLI(t, nil, "clear")
	_, evs = w.build(t, flags...)
	if h := countStatus(evs, "hit"); h != 0 || countStatus(evs, "miss") == 0 {
		t.Errorf("build after offcc cache clear: want every cacheable job to miss:\n%s", listEvents(evs))
	}
}

// TestCacheOutputDirMissing: a hit whose output cannot be written (its
// directory does not exist) fails as the compile would, and keeps the
// entry: once the directory exists, the build is a hit.
func TestCacheOutputDirMissing(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{"plain.c": "int plain(int x) { return x * 7; }\n"})
	src := w.path("plain.c")
	w.build(t, "-O2", "-c", src, "-o", w.path("p.o"))
	out := w.path(filepath.Join("nodir", "p.o"))
	r := cmdSpec{dir: w.dir, env: w.env, name: w.c.cc, args: []string{"-O2", "-c", src, "-o", out}}.run(t)
	if r.code == 0 || !strings.Contains(r.stderr, "unable to open output file") {
		t.Fatalf("compile into a missing directory: want clang's error:\n%s", r)
	}
	if err := os.Mkdir(w.path("nodir"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, evs := w.build(t, "-O2", "-c", src, "-o", out)
	checkEvent(t, "once the directory exists", evs, "compile", "", "hit")
}

// TestCacheUnwritable: a cache directory that cannot be written costs a
// warning, once, and never the build.
func TestCacheUnwritable(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{"plain.c": "int plain(int x) { return x * 7; }\n", "k.c": kernelsSrc, "notadir": "x"})
	env := []string{"OFFCC_CACHE_DIR=" + w.path("notadir")} // after w.env's
	for _, a := range [][]string{
		{"-O2", "-c", w.path("plain.c"), "-o", w.path("p.o")},
		args(amdFlags("gfx906,gfx90a"), "-c", w.path("k.c"), "-o", w.path("k.o")),
	} {
		r, _ := w.run(t, env, a...)
		if n := strings.Count(r.stderr, "warning: build cache: cannot write"); n != 1 {
			t.Errorf("want one warning about the cache, got %d:\n%s", n, r)
		}
	}
}
