package e2e

// The tests of this file compile real HIP: testdata/hip-rocm includes
// ROCm's <hip/hip_runtime.h> and links with its libamdhip64, as Debian 12's
// ROCm 5.2 (libamdhip64-dev, rocm-device-libs: make deps) installs them,
// with the flags clang 22 needs for that ROCm (llvmtest.ROCmHIPFlags).
// Without those packages they skip, or fail under OFFCC_REQUIRE_LLVM=1.
// No GPU is needed: nothing runs.
//
// Each compares offcc with clang 22 on the same command lines, which name
// no -cuid: clang derives the compile unit ID from its arguments (-o
// included), so both compilers build in a directory of the same path, with
// the same relative names, one after the other (the directory renamed in
// between). offcc's job traces come through OFFCC_JOB_TRACE, which leaves
// the command line as clang's.

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
)

// rocmCompare starts a test comparing offcc with clang on Debian's ROCm:
// the compiler under test, the environment of clang's runs (a private
// TMPDIR), a directory of the test's, and offcc's environment (that TMPDIR
// and a cache of its own).
func rocmCompare(t *testing.T) (c compiler, tmp, root string, env []string) {
	t.Helper()
	t.Parallel()
	c = offccOnly(t, "compares offcc with clang")
	llvmtest.ROCm(t)
	_, tmp = tmpEnv(t)
	root = t.TempDir()
	return c, tmp, root, cacheEnvFor(tmp, filepath.Join(root, "cache"))
}

// rocmSources are the translation units of testdata/hip-rocm, in the
// Makefile's order (options and report have no kernel).
var (
	rocmSources = []string{"main", "vec_add", "reduce", "waves", "options", "report"}
	// rocmArchs are the devices of llvmtest.ROCmHIPFlags.
	rocmArchs = strings.Split(llvmtest.ROCmArchs, ",")
)

// rocmProject returns the path of a file of testdata/hip-rocm.
func rocmProject(t testing.TB, name string) string {
	t.Helper()
	return repoPath(t, filepath.Join("testdata", "hip-rocm", name))
}

// copyROCmProject copies testdata/hip-rocm's sources, its header and
// Makefile into dir.
func copyROCmProject(t testing.TB, dir string) {
	t.Helper()
	files := []string{"common.h", "Makefile"}
	for _, src := range rocmSources {
		files = append(files, src+".hip")
	}
	for _, f := range files {
		copyFile(t, rocmProject(t, f), filepath.Join(dir, f))
	}
	sameTimes(t, dir)
}

// sourceTime is the modification time sameTimes gives sources: long ago,
// so that the cache takes them as settled.
var sourceTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// sameTimes sets the modification time of the files under dir to
// sourceTime: the debug information of CUDA's PTX records the source's
// (.file "k.cu", TIME, SIZE), so that clang's and offcc's builds, each of
// its own copy, need the same one.
func sameTimes(t testing.TB, dir string) {
	t.Helper()
	for _, f := range treeFiles(t, dir) {
		if err := os.Chtimes(filepath.Join(dir, f), sourceTime, sourceTime); err != nil {
			t.Fatal(err)
		}
	}
}

// runTwoAtATime runs the commands, at most two at once (as make -j2 runs a
// project's compiles), and fails the test unless every one exits 0.
func runTwoAtATime(t *testing.T, specs []cmdSpec) []result {
	t.Helper()
	results := make([]result, len(specs))
	errs := make([]error, len(specs))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = s.exec()
		}()
	}
	wg.Wait()
	for i := range specs {
		if errs[i] != nil {
			t.Fatalf("running %s: %v", shellJoin(specs[i].args), errs[i])
		}
		if results[i].code != 0 {
			t.Fatalf("command failed:\n%s", results[i])
		}
	}
	return results
}

// treeFiles returns the regular files under dir, by path relative to it.
func treeFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// sameTrees fails the test unless the directories hold the same files
// with the same bytes, each of want among them.
func sameTrees(t testing.TB, what, clangDir, offccDir string, want ...string) {
	t.Helper()
	theirs, ours := treeFiles(t, clangDir), treeFiles(t, offccDir)
	if !slices.Equal(theirs, ours) {
		t.Errorf("%s: clang wrote %v, offcc %v", what, theirs, ours)
	}
	for _, f := range want {
		if !slices.Contains(ours, f) {
			t.Errorf("%s: offcc wrote no %s", what, f)
		}
	}
	for _, f := range theirs {
		a, _ := os.ReadFile(filepath.Join(clangDir, f))
		b, err := os.ReadFile(filepath.Join(offccDir, f))
		if err == nil && !bytes.Equal(a, b) {
			t.Errorf("%s: offcc's %s (%d bytes) differs from clang's (%d bytes)", what, f, len(b), len(a))
		}
	}
}

// inWork runs build in dir/work (made when missing) and then renames
// dir/work to dir/name, so that each compiler builds under the same path.
func inWork(t testing.TB, dir, name string, build func(work string)) string {
	t.Helper()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	build(work)
	to := filepath.Join(dir, name)
	if err := os.Rename(work, to); err != nil {
		t.Fatal(err)
	}
	return to
}

// traceEnv returns the environment entry that makes offcc write its job
// trace to path.
func traceEnv(path string) string { return "OFFCC_JOB_TRACE=" + path }

// checkPlanned fails the test unless offcc planned the compile of the
// trace (no "fallback" job: the command line handed to clang whole), with
// one host compile and one device compile for each of archs, or, without
// archs, with no device compile at all.
func checkPlanned(t testing.TB, what string, evs []jobEvent, archs ...string) {
	t.Helper()
	if fb := selectEvents(evs, func(e jobEvent) bool { return e.Kind == "fallback" }); len(fb) > 0 || len(evs) == 0 {
		t.Errorf("%s: not planned: offcc handed the command line to clang whole; jobs:\n%s", what, listEvents(evs))
		return
	}
	if hosts := selectEvents(evs, func(e jobEvent) bool { return e.Kind == "compile" }); len(hosts) != 1 {
		t.Errorf("%s: want one host compile job, got %d; jobs:\n%s", what, len(hosts), listEvents(evs))
	}
	devices := selectEvents(evs, func(e jobEvent) bool { return e.Kind == "device-compile" })
	var got []string
	for _, e := range devices {
		got = append(got, e.Arch)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(archs))
	switch {
	case slices.Equal(got, want):
	case len(want) == 0:
		t.Errorf("%s: want no device compile job (clang's object embeds no device code), got them for %v; jobs:\n%s", what, got, listEvents(evs))
	default:
		t.Errorf("%s: want one device compile job for each of %v, got them for %v; jobs:\n%s", what, want, got, listEvents(evs))
	}
}

// checkNothingRan fails the test unless every job of a warm build's trace
// that runs a program (the compilers, lld, the bundler) hit the cache:
// only offcc's in-process steps may run.
func checkNothingRan(t testing.TB, what string, evs []jobEvent) {
	t.Helper()
	checkAllHits(t, what, evs)
	ran := selectEvents(evs, func(e jobEvent) bool {
		return e.Cache != "hit" && !strings.HasPrefix(e.Tool, "Offload::") && e.Tool != "offcc"
	})
	if len(ran) > 0 {
		t.Errorf("%s: want no tool to run, but these did:\n%s", what, listEvents(ran))
	}
}

// rocmModes are the ways testdata/hip-rocm is built: clang's default (old)
// offload driver, the new one, and the new one with relocatable device code
// (offcc's link stage). The old driver's -fgpu-rdc compile is among
// TestRealCommandLines' lines.
var rocmModes = []struct {
	name  string
	flags []string
}{
	{"old-driver", nil},
	{"new-driver", []string{"--offload-new-driver"}},
	{"new-driver-rdc", []string{"--offload-new-driver", "-fgpu-rdc"}},
}

// buildROCmProject compiles testdata/hip-rocm's sources (copied into work)
// with cxx as its Makefile does with HIPFLAGS="-O2 MODE" (two at a time),
// and links them when link is set. With traces set, offcc writes each
// compile's job trace to traces/SOURCE.json.
func buildROCmProject(t *testing.T, work, cxx string, env, mode []string, traces string, link bool) {
	t.Helper()
	hipflags := args("-O2", mode)
	var specs []cmdSpec
	for _, src := range rocmSources {
		e := slices.Clone(env)
		if traces != "" {
			e = append(e, traceEnv(filepath.Join(traces, src+".json")))
		}
		specs = append(specs, cmdSpec{dir: work, env: e, name: cxx,
			args: args(llvmtest.ROCmHIPFlags(), hipflags, "-c", src+".hip", "-o", src+".o")})
	}
	runTwoAtATime(t, specs)
	var objs []string
	for _, src := range rocmSources {
		objs = append(objs, src+".o")
	}
	if link {
		cmdSpec{dir: work, env: env, name: cxx,
			args: args(llvmtest.ROCmLinkFlags(), hipflags, objs, "-lamdhip64", "-o", "hip-rocm")}.mustRun(t)
	}
}

// removeObjects removes the objects of a build of testdata/hip-rocm.
func removeObjects(t testing.TB, dir string) {
	t.Helper()
	for _, src := range rocmSources {
		if err := os.Remove(filepath.Join(dir, src+".o")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHIPROCmProjectLikeClang builds testdata/hip-rocm (real ROCm headers,
// device libraries and runtime; four sources with kernels, two without)
// with clang 22 and with offcc in each of rocmModes (the old offload
// driver, the new one, the new one with -fgpu-rdc). offcc plans every compile (no command line
// handed to clang whole): one device compile per arch and one host compile,
// also for a file without kernels (clang compiles its device side too,
// and prints that side's diagnostics). The objects and the linked
// program are clang's byte for byte. A rebuild of the objects, removed,
// with the cache kept runs no compiler: every job hits, and the objects
// are clang's again.
func TestHIPROCmProjectLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	llvmtest.ROCm(t)
	_, tmp := tmpEnv(t)
	for _, mode := range rocmModes {
		t.Run(mode.name, func(t *testing.T) {
			root := t.TempDir()
			env := cacheEnvFor(tmp, filepath.Join(root, "cache"))
			cold, warm := filepath.Join(root, "cold"), filepath.Join(root, "warm")
			for _, d := range []string{cold, warm} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			clangDir := inWork(t, root, "clang", func(work string) {
				copyROCmProject(t, work)
				buildROCmProject(t, work, refClangXX, []string{tmp}, mode.flags, "", true)
			})
			outputs := []string{"hip-rocm"}
			for _, src := range rocmSources {
				outputs = append(outputs, src+".o")
			}
			offccDir := inWork(t, root, "offcc", func(work string) {
				copyROCmProject(t, work)
				buildROCmProject(t, work, c.cxx, env, mode.flags, cold, true)
			})
			sameTrees(t, mode.name, clangDir, offccDir, outputs...)
			for _, src := range rocmSources {
				evs := readJobTrace(t, filepath.Join(cold, src+".json"))
				what := mode.name + ": " + src + ".hip"
				checkPlanned(t, what, evs, rocmArchs...)
			}
			// The warm rebuild, in the same directory, of the objects
			// (the program, linked from the same objects, is kept).
			if err := os.Rename(offccDir, filepath.Join(root, "work")); err != nil {
				t.Fatal(err)
			}
			removeObjects(t, filepath.Join(root, "work"))
			rebuilt := inWork(t, root, "offcc-warm", func(work string) {
				buildROCmProject(t, work, c.cxx, env, mode.flags, warm, false)
			})
			sameTrees(t, mode.name+", warm rebuild", clangDir, rebuilt, outputs...)
			for _, src := range rocmSources {
				checkNothingRan(t, mode.name+": warm rebuild of "+src+".hip", readJobTrace(t, filepath.Join(warm, src+".json")))
			}
		})
	}
}

// TestHIPROCmNoKernels: a HIP file without kernels (report.hip: host code
// only, with an unused variable) compiles, in a whole-program build, to an
// object that embeds no device code and registers nothing. offcc compiles
// it once for the host (it used to compile it again when the fat binary
// had no section to go in, printing the host's warning twice, uncached),
// prints what clang prints (the warning for each device compile, then for
// the host), and the object is clang's byte for byte. Rebuilt with the
// cache kept, no compiler runs and the diagnostics are replayed as clang
// prints them.
func TestHIPROCmNoKernels(t *testing.T) {
	c, tmp, root, env := rocmCompare(t)
	compile := args(llvmtest.ROCmHIPFlags(), "-O2", "-Wall", "-c", "report.hip", "-o", "report.o")
	var theirs result
	clangDir := inWork(t, root, "clang", func(work string) {
		copyROCmProject(t, work)
		theirs = cmdSpec{dir: work, env: []string{tmp}, name: refClangXX, args: compile}.mustRun(t)
	})
	if !strings.Contains(theirs.stderr, "unused variable 'unused_count'") {
		t.Fatalf("clang did not warn about the unused variable:\n%s", theirs.stderr)
	}
	var cold result
	offccDir := inWork(t, root, "offcc", func(work string) {
		copyROCmProject(t, work)
		cold = cmdSpec{dir: work, env: append(slices.Clone(env), traceEnv(filepath.Join(root, "cold.json"))), name: c.cxx, args: compile}.mustRun(t)
	})
	sameTrees(t, "report.hip", clangDir, offccDir, "report.o")
	checkPlanned(t, "report.hip", readJobTrace(t, filepath.Join(root, "cold.json")), rocmArchs...)
	sameDiagnostics(t, "cold compile of report.hip", theirs.stderr, cold.stderr)
	// The rebuild, in the same directory.
	if err := os.Rename(offccDir, filepath.Join(root, "work")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "work", "report.o"))
	var warm result
	rebuilt := inWork(t, root, "offcc-warm", func(work string) {
		warm = cmdSpec{dir: work, env: append(slices.Clone(env), traceEnv(filepath.Join(root, "warm.json"))), name: c.cxx, args: compile}.mustRun(t)
	})
	checkNothingRan(t, "warm rebuild of report.hip", readJobTrace(t, filepath.Join(root, "warm.json")))
	sameTrees(t, "warm rebuild of report.hip", clangDir, rebuilt, "report.o")
	sameDiagnostics(t, "warm rebuild of report.hip", theirs.stderr, warm.stderr)
}

// TestHIPROCmCUFileAsHIP: -x hip before a .cu file compiles it as HIP
// (device compiles for the gfx archs, not CUDA's), planned by offcc, into
// clang's object byte for byte.
func TestHIPROCmCUFileAsHIP(t *testing.T) {
	c, tmp, root, env := rocmCompare(t)
	env = append(env, traceEnv(filepath.Join(root, "trace.json")))
	compile := args(llvmtest.ROCmHIPFlags(), "-O2", "-c", "k.cu", "-o", "k.o")
	setup := func(work string) {
		copyFile(t, rocmProject(t, "common.h"), filepath.Join(work, "common.h"))
		copyFile(t, rocmProject(t, "vec_add.hip"), filepath.Join(work, "k.cu"))
		sameTimes(t, work)
	}
	clangDir := inWork(t, root, "clang", func(work string) {
		setup(work)
		cmdSpec{dir: work, env: []string{tmp}, name: refClangXX, args: compile}.mustRun(t)
	})
	offccDir := inWork(t, root, "offcc", func(work string) {
		setup(work)
		cmdSpec{dir: work, env: env, name: c.cxx, args: compile}.mustRun(t)
	})
	sameTrees(t, "-x hip k.cu", clangDir, offccDir, "k.o")
	checkPlanned(t, "-x hip k.cu", readJobTrace(t, filepath.Join(root, "trace.json")), rocmArchs...)
}

// rocmDiagSrc warns (under -Wall) in device code only and in host code
// only.
const rocmDiagSrc = `#include <hip/hip_runtime.h>

__global__ void kern(float *a) {
#if defined(__HIP_DEVICE_COMPILE__)
  int unused_in_device_code = 1;
#endif
  a[threadIdx.x] = sinf(a[threadIdx.x]);
}

void launch(float *a) {
#if !defined(__HIP_DEVICE_COMPILE__)
  int unused_in_host_code = 2;
#endif
  hipLaunchKernelGGL(kern, dim3(1), dim3(64), 0, 0, a);
}
`

// sameDiagnostics fails the test unless offcc's stderr is clang's line for
// line, the program's name (at the start of a driver's line) aside.
func sameDiagnostics(t testing.TB, what, theirs, ours string) {
	t.Helper()
	norm := func(s string) []string {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			for _, prog := range []string{"clang++: ", "clang: ", "offcc++: ", "offcc: "} {
				if rest, ok := strings.CutPrefix(l, prog); ok {
					l = "COMPILER: " + rest
				}
			}
			lines = append(lines, l)
		}
		return lines
	}
	a, b := norm(theirs), norm(ours)
	if slices.Equal(a, b) {
		return
	}
	var diff strings.Builder
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		mark := " "
		if x != y {
			mark = "!"
		}
		fmt.Fprintf(&diff, "%s clang: %s\n%s offcc: %s\n", mark, x, mark, y)
	}
	t.Errorf("%s: offcc's diagnostics differ from clang's:\n%s", what, diff.String())
}

// TestHIPROCmDiagnosticsLikeClang: a planned compile prints its device
// compiles' diagnostics before the host compile's, as clang does (and in
// the order of clang's device compiles), line for line what clang prints.
func TestHIPROCmDiagnosticsLikeClang(t *testing.T) {
	c, tmp, root, env := rocmCompare(t)
	env = append(env, traceEnv(filepath.Join(root, "trace.json")))
	compile := args(llvmtest.ROCmHIPFlags(), "-O2", "-Wall", "-c", "diag.hip", "-o", "diag.o")
	write := func(work string) {
		if err := os.WriteFile(filepath.Join(work, "diag.hip"), []byte(rocmDiagSrc), 0o644); err != nil {
			t.Fatal(err)
		}
		sameTimes(t, work)
	}
	var theirs, ours result
	clangDir := inWork(t, root, "clang", func(work string) {
		write(work)
		theirs = cmdSpec{dir: work, env: []string{tmp}, name: refClangXX, args: compile}.mustRun(t)
	})
	offccDir := inWork(t, root, "offcc", func(work string) {
		write(work)
		ours = cmdSpec{dir: work, env: env, name: c.cxx, args: compile}.mustRun(t)
	})
	checkPlanned(t, "diag.hip", readJobTrace(t, filepath.Join(root, "trace.json")), rocmArchs...)
	sameTrees(t, "diag.hip", clangDir, offccDir, "diag.o")
	dev, host := strings.Index(ours.stderr, "unused_in_device_code"), strings.Index(ours.stderr, "unused_in_host_code")
	if dev < 0 || host < 0 || dev > host {
		t.Errorf("want the device code's warning, then the host code's:\n%s", ours.stderr)
	}
	if !strings.Contains(theirs.stderr, "unused_in_device_code") {
		t.Fatalf("clang did not warn about the device code's variable:\n%s", theirs.stderr)
	}
	sameDiagnostics(t, "diag.hip", theirs.stderr, ours.stderr)
}
