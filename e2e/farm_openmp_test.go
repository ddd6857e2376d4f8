package e2e

// End-to-end tests of OpenMP front ends on the build farm: offcc's stable
// kernel names (clang hashes the relative names of the files of target
// regions) make a worker's host front end and device compiles name the
// kernels as the client does, so that they can go remote; a kernel named
// after a file's inode (a file named by an absolute path) keeps its front
// ends on the client.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/cache/redisstore/redistest"
)

// farmOMPMain and farmOMPHeader are an OpenMP program with a target region
// in the main file and one in a header it includes with quotes: it prints
// 39 + 3 = 42 when both ran.
const (
	farmOMPMain = `#include <stdio.h>
#include <omp.h>
#include "k.h"
int main(void) {
  int v = 0, dev = 0;
#pragma omp target map(from: v, dev)
  {
    v = 39;
    dev = !omp_is_initial_device();
  }
  printf("%d on device: %s\n", v + hdr_kernel(1), dev ? "yes" : "no");
  return 0;
}
`
	farmOMPHeader = `static inline int hdr_kernel(int x) {
  int r = 0;
#pragma omp target map(from: r)
  r = x * 3;
  return r;
}
`
)

// farmOMPHostFlags offload to the host device only: a program built with
// them links and runs here.
var farmOMPHostFlags = []string{"-fopenmp", "-fopenmp-targets=" + offloadHost, "-O2"}

// farmOMPFlags add an amdgcn target (compiled, never run: no device
// runtime is installed here) to the host one.
var farmOMPFlags = []string{"-fopenmp", "-fopenmp-targets=" + offloadHost + ",amdgcn-amd-amdhsa",
	"-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib", "-O2"}

// ompFarmBuild returns a build (see newFarmBuild) of args with the files
// of srcs (name -> text, under the build's directory) written first.
func ompFarmBuild(t *testing.T, c compiler, url string, env []string, srcs map[string]string, a ...string) *farmBuild {
	t.Helper()
	b := newFarmBuild(t, c, url, env, a...)
	for name, text := range srcs {
		p := filepath.Join(b.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// ompEvent is a job of a --job-trace trace, with why the farm gave it
// back (args.given_back).
type ompEvent struct {
	jobEvent
	GivenBack string `json:"given_back"`
}

// readOMPTrace reads the jobs of a build's --job-trace file.
func readOMPTrace(t testing.TB, path string) []ompEvent {
	t.Helper()
	var doc struct {
		TraceEvents []struct {
			Name string          `json:"name"`
			Ph   string          `json:"ph"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(mustReadTB(t, path), &doc); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	var evs []ompEvent
	for _, ev := range doc.TraceEvents {
		if ev.Ph != "X" {
			continue
		}
		var e ompEvent
		if err := json.Unmarshal(ev.Args, &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		e.Name = ev.Name
		evs = append(evs, e)
	}
	return evs
}

// listOMPEvents formats a trace's jobs for failure messages.
func listOMPEvents(evs []ompEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("  " + e.String())
		if e.GivenBack != "" {
			b.WriteString(" (given back: " + e.GivenBack + ")")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// frontEnds returns the trace's OpenMP front ends: its host front ends
// and device compiles.
func frontEnds(evs []ompEvent) (host, dev []ompEvent) {
	for _, e := range evs {
		switch e.Kind {
		case "host-frontend":
			host = append(host, e)
		case "device-compile":
			dev = append(dev, e)
		}
	}
	return host, dev
}

// ompKernelRE matches the kernel entries llvm-nm lists in an OpenMP host
// object: .offloading.entry.__omp_offloading_<dev>_<file>_<fn>_l<line>.
var ompKernelRE = regexp.MustCompile(`\.offloading\.entry\.__omp_offloading_([0-9a-f]+)_[0-9a-f]+_(\w+)_l(\d+)`)

// ompKernels returns the kernel entries of an object as llvm-nm lists
// them: "<device> <function> l<line>", sorted.
func ompKernels(t testing.TB, obj string) []string {
	t.Helper()
	r := cmdSpec{name: filepath.Join(llvmBin, "llvm-nm"), args: []string{obj}}.run(t)
	if r.code != 0 {
		t.Fatalf("llvm-nm %s:\n%s", obj, r)
	}
	var out []string
	for _, m := range ompKernelRE.FindAllStringSubmatch(r.stdout, -1) {
		out = append(out, m[1]+" "+m[2]+" l"+m[3])
	}
	slices.Sort(out)
	return out
}

// linkAndRun links obj (built with farmOMPHostFlags) with offcc, here,
// runs the program with offloading mandatory and checks that it prints
// 42 from the device.
func linkAndRun(t *testing.T, c compiler, b *farmBuild) {
	t.Helper()
	prog := filepath.Join(b.dir, "prog")
	cmdSpec{dir: b.dir, env: farmEnv(t, ""), name: c.cc, args: args(farmOMPHostFlags, b.obj(), "-o", prog)}.mustRun(t)
	r := runOffloadProgram(t, prog)
	if !strings.HasPrefix(r.stdout, "42 on device: yes") {
		t.Errorf("the program printed %q, want \"42 on device: yes\"", r.stdout)
	}
}

// TestFarmOpenMP: OpenMP compiles through a farm of three workers give the
// objects of local builds, byte for byte, with the same kernel names (as
// llvm-nm lists them, hashed: device deadf17e); the job trace shows the
// host front end and every device compile on the workers; and the program
// (host offload) runs offloaded. Also with OFFCC_BASE_DIR, the sources
// named by absolute paths and the build run outside the base directory:
// the object is the one a local build of another copy of the sources gives.
func TestFarmOpenMP(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	// Three slots: the device compiles and the host backend are ready
	// at once (see the trace of the amdgcn build).
	for _, n := range []string{"o1", "o2", "o3"} {
		startWorker(t, c, srv.URL, n)
	}
	waitWorkers(t, c, srv.URL, "o1", "o2", "o3")
	srcs := map[string]string{"main.c": farmOMPMain, "k.h": farmOMPHeader}

	check := func(t *testing.T, name string, local, farm *farmBuild, ndev int) {
		t.Helper()
		want := mustReadTB(t, local.obj())
		sameBytes(t, name+": the object built through the farm", farm.obj(), want)
		lk, fk := ompKernels(t, local.obj()), ompKernels(t, farm.obj())
		if len(lk) != 2 || !slices.Equal(lk, fk) {
			t.Errorf("%s: kernels of the local object %q, of the farm's %q; want the same two", name, lk, fk)
		}
		for _, k := range fk {
			if !strings.HasPrefix(k, "deadf17e ") {
				t.Errorf("%s: kernel %q is named after an inode, not hashed (device deadf17e)", name, k)
			}
		}
		evs := readOMPTrace(t, farm.trace)
		host, dev := frontEnds(evs)
		if len(host) != 1 || host[0].Worker == "" {
			t.Errorf("%s: want the host front end on a worker:\n%s", name, listOMPEvents(evs))
		}
		remote := 0
		for _, e := range dev {
			if e.Worker != "" {
				remote++
			}
		}
		if len(dev) != ndev || remote != ndev {
			t.Errorf("%s: %d device compiles, %d on workers; want %d, all on workers:\n%s", name, len(dev), remote, ndev, listOMPEvents(evs))
		}
		for _, e := range append(host, dev...) {
			if e.Worker != "" && (e.BytesDown == nil || *e.BytesDown == 0) {
				t.Errorf("%s: remote front end %s received no bytes", name, e)
			}
		}
	}

	t.Run("host-and-amdgcn", func(t *testing.T) {
		a := args(farmOMPFlags, "-c", "main.c", "-o", "k.o")
		local := ompFarmBuild(t, c, "", nil, srcs, a...)
		local.mustRun(t, c)
		farm := ompFarmBuild(t, c, srv.URL, nil, srcs, a...)
		r := farm.mustRun(t, c)
		check(t, "host and amdgcn", local, farm, 2)
		if strings.Contains(r.stderr, "warning") {
			t.Errorf("warnings:\n%s", r.stderr)
		}
	})
	t.Run("host-runs", func(t *testing.T) {
		a := args(farmOMPHostFlags, "-c", "main.c", "-o", "k.o")
		local := ompFarmBuild(t, c, "", nil, srcs, a...)
		local.mustRun(t, c)
		farm := ompFarmBuild(t, c, srv.URL, nil, srcs, a...)
		farm.mustRun(t, c)
		check(t, "host offload", local, farm, 1)
		linkAndRun(t, c, farm)
	})
	t.Run("base-dir", func(t *testing.T) {
		// The sources under proj/ (src/main.c, inc/k.h), named by
		// absolute paths; the build runs in the directory above, so
		// clang's working directory (the base) is not offcc's.
		based := map[string]string{"proj/src/main.c": farmOMPMain, "proj/inc/k.h": farmOMPHeader}
		build := func(url string) *farmBuild {
			b := ompFarmBuild(t, c, url, nil, based)
			proj := filepath.Join(b.dir, "proj")
			b.env = append(b.env, "OFFCC_BASE_DIR="+proj)
			b.args = append(args(farmOMPHostFlags, "-I"+filepath.Join(proj, "inc"), "-c", filepath.Join(proj, "src", "main.c"), "-o", "k.o"), b.args...)
			return b
		}
		local, farm := build(""), build(srv.URL)
		local.mustRun(t, c)
		farm.mustRun(t, c)
		check(t, "OFFCC_BASE_DIR", local, farm, 1)
		linkAndRun(t, c, farm)
	})
}

// TestFarmOpenMPInodeNames: a target region in a header found through an
// absolute include directory outside the build's (clang names its kernel
// after the header's inode, which a worker's copy does not have): the
// host front end that ran on a worker is given back and runs locally, the
// device compile, whose host IR holds that name, is never sent; the
// object is the local build's and the program runs offloaded.
func TestFarmOpenMPInodeNames(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	startWorker(t, c, srv.URL, "i1")
	startWorker(t, c, srv.URL, "i2")
	waitWorkers(t, c, srv.URL, "i1", "i2")
	inc := filepath.Join(t.TempDir(), "inc")
	if err := os.Mkdir(inc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inc, "k.h"), []byte(farmOMPHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	a := args(farmOMPHostFlags, "-I"+inc, "-c", "main.c", "-o", "k.o")
	srcs := map[string]string{"main.c": farmOMPMain}
	local := ompFarmBuild(t, c, "", nil, srcs, a...)
	local.mustRun(t, c)
	farm := ompFarmBuild(t, c, srv.URL, nil, srcs, a...)
	r := farm.mustRun(t, c)
	sameBytes(t, "the object built through the farm", farm.obj(), mustReadTB(t, local.obj()))
	kernels := ompKernels(t, farm.obj())
	inode := 0
	for _, k := range kernels {
		if !strings.HasPrefix(k, "deadf17e ") {
			inode++
		}
	}
	if len(kernels) != 2 || inode != 1 {
		t.Errorf("kernels %q: want two, the header's named after its inode", kernels)
	}
	evs := readOMPTrace(t, farm.trace)
	host, dev := frontEnds(evs)
	if len(host) != 1 || host[0].Worker != "" || !strings.Contains(host[0].GivenBack, "inode") {
		t.Errorf("want the host front end given back by the farm (inode names) and run here:\n%s", listOMPEvents(evs))
	}
	if len(dev) != 1 || dev[0].Worker != "" || !strings.Contains(dev[0].GivenBack, "host IR") {
		t.Errorf("want the device compile kept here for its host IR:\n%s", listOMPEvents(evs))
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("warnings:\n%s", r.stderr)
	}
	linkAndRun(t, c, farm)
}
