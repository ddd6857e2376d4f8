package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The -MMD tests: hand-written Makefiles compile with -MMD -MP. offcc
// caches those compiles (the dependency file leaves out system headers;
// offcc has clang write an include graph beside it that names them), and
// the dependency file is clang's own, byte for byte, cold and warm.

// mmdFiles are a C++ source reading the C++ library, a #pragma once
// header included twice, a system header (-isystem sys) that
// #include_nexts another (sys2), and a header that #pragma GCC
// system_header makes a system header, with the header it includes; an
// OpenMP and a HIP source (which needs no HIP headers) read the first two.
// -MMD lists neither system header.
var mmdFiles = map[string]string{
	"main.cpp": `#include "once.h"
#include "once.h"
#include <sys.h>
#include "quiet.h"
#include <vector>
int values[] = {ONCE, SYS1, SYS2, QUIET};
int main() {
  std::vector<int> v{ONCE, SYS1, SYS2, QUIET};
  return (int)v.size() - 4;
}
`,
	"k.c": `#include "once.h"
#include <sys.h>
int main(void) {
  int x = 0;
#pragma omp target map(from : x)
  x = ONCE + SYS2;
  return x - ONCE - SYS2;
}
`,
	"k.hip": `#include <stddef.h>
#include "once.h"
#include <sys.h>
struct dim3 { unsigned x, y, z; __attribute__((host,device)) dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {} };
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shmem, hipStream_t stream);
__attribute__((global)) void k(int *p) { *p = ONCE + SYS1 + SYS2; }
`,
	"inc/once.h":       "#pragma once\n#define ONCE 1\n",
	"inc/quiet.h":      "#pragma GCC system_header\n#include \"quiet_impl.h\"\n",
	"inc/quiet_impl.h": "#define QUIET 4\n",
	"sys/sys.h":        "#include_next <sys.h>\n#define SYS1 2\n",
	"sys2/sys.h":       "#define SYS2 3\n",
}

// mmdFlags are the search flags of the -MMD tests.
var mmdFlags = []string{"-O1", "-Iinc", "-isystem", "sys", "-isystem", "sys2"}

// clangOutputs runs clang 22 with flags in w's directory and returns the
// bytes of the files it wrote that names, removing them.
func clangOutputs(t *testing.T, w *cacheWork, flags []string, names ...string) [][]byte {
	t.Helper()
	cmdSpec{dir: w.dir, env: w.env, name: refClang, args: flags}.mustRun(t)
	var out [][]byte
	for _, n := range names {
		out = append(out, mustReadTB(t, w.path(n)))
		if err := os.Remove(w.path(n)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// writingJob returns the job of evs that writes the file name.
func writingJob(t *testing.T, evs []jobEvent, name string) jobEvent {
	t.Helper()
	found := selectEvents(evs, func(e jobEvent) bool {
		return slices.ContainsFunc(e.Outputs, func(o string) bool { return filepath.Base(o) == name })
	})
	if len(found) != 1 {
		t.Fatalf("want one job writing %s, got %v; all jobs:\n%s", name, found, listEvents(evs))
	}
	return found[0]
}

// TestMMDLikeClang builds with -MMD, -MMD -MP and -MMD -MF x.d -MT custom
// (and a second -MF name and a second object name for the same source,
// which the cache must not answer with the first file's bytes), plain C++,
// OpenMP offload and HIP: the compile that writes the dependency file is
// cached, the file is clang 22's for the same command cold and warm, and
// the warm rebuild, with the outputs removed, starts no compiler.
func TestMMDLikeClang(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, mmdFiles)
	for _, tc := range []struct {
		name     string
		flags    []string
		dep, obj string
		sameObj  bool // the object is clang's byte for byte
	}{
		{"MMD", args(mmdFlags, "-c", "main.cpp", "-o", "a.o", "-MMD"), "a.d", "a.o", true},
		{"MMD-MP", args(mmdFlags, "-c", "main.cpp", "-o", "b.o", "-MMD", "-MP"), "b.d", "b.o", true},
		{"MF-MT", args(mmdFlags, "-c", "main.cpp", "-o", "c.o", "-MMD", "-MF", "x.d", "-MT", "custom"), "x.d", "c.o", true},
		{"MF-renamed", args(mmdFlags, "-c", "main.cpp", "-o", "a.o", "-MMD", "-MF", "y.d"), "y.d", "a.o", true},
		{"other-object", args(mmdFlags, "-c", "main.cpp", "-o", "a2.o", "-MMD", "-MP"), "a2.d", "a2.o", true},
		{"openmp", args(amdFlags("gfx906"), mmdFlags, "-c", "k.c", "-o", "k.o", "-MMD", "-MP"), "k.d", "k.o", false},
		{"hip", args("-x", "hip", "--offload-arch=gfx906", "-nogpuinc", "-nogpulib", mmdFlags, "-c", "k.hip", "-o", "h.o", "-MMD", "-MP"), "h.d", "h.o", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := clangOutputs(t, w, tc.flags, tc.dep, tc.obj)
			wantDep := want[0]
			if bytes.Contains(wantDep, []byte("sys2/sys.h")) || bytes.Contains(wantDep, []byte("quiet_impl.h")) || !bytes.Contains(wantDep, []byte("once.h")) {
				t.Fatalf("clang's %s is not an -MMD file of the test's headers:\n%s", tc.dep, wantDep)
			}

			_, evs := w.build(t, tc.flags...)
			if e := writingJob(t, evs, tc.dep); !e.cacheable() {
				t.Errorf("cold build: the job writing %s is %s, want it cached", tc.dep, e)
			}
			sameBytes(t, "cold build", w.path(tc.dep), wantDep)
			if tc.sameObj {
				sameBytes(t, "cold build", w.path(tc.obj), want[1])
			}
			cold := mustReadTB(t, w.path(tc.obj))

			for _, f := range []string{tc.dep, tc.obj} {
				if err := os.Remove(w.path(f)); err != nil {
					t.Fatal(err)
				}
			}
			_, evs = w.build(t, tc.flags...)
			checkNothingRan(t, "warm rebuild", evs)
			sameBytes(t, "warm rebuild", w.path(tc.dep), wantDep)
			sameBytes(t, "warm rebuild", w.path(tc.obj), cold)
		})
	}
}

// TestMMDSystemHeaderEdits edits, after a warm -MMD build, headers its
// dependency file leaves out: the #include_next'ed system header and the
// header a #pragma GCC system_header header includes. Each edit reruns
// the compile, whose object and dependency file are clang's.
func TestMMDSystemHeaderEdits(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, mmdFiles)
	flags := args(mmdFlags, "-c", "main.cpp", "-o", "m.o", "-MMD", "-MP")
	w.build(t, flags...)
	_, evs := w.build(t, flags...)
	checkNothingRan(t, "warm build", evs)

	for _, edit := range []struct{ file, old, new string }{
		{"sys2/sys.h", "SYS2 3", "SYS2 5"},
		{"inc/quiet_impl.h", "QUIET 4", "QUIET 6"},
	} {
		w.edit(t, edit.file, edit.old, edit.new)
		want := clangOutputs(t, w, flags, "m.d", "m.o")
		_, evs := w.build(t, flags...)
		if e := writingJob(t, evs, "m.d"); e.Cache != "miss" {
			t.Errorf("%s edited: the compile is %s, want a miss", edit.file, e)
		}
		sameBytes(t, edit.file+" edited", w.path("m.d"), want[0])
		sameBytes(t, edit.file+" edited", w.path("m.o"), want[1])
		_, evs = w.build(t, flags...)
		checkNothingRan(t, "rebuild after the "+edit.file+" edit", evs)
	}
}
