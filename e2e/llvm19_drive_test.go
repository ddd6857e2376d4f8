package e2e

// offcc driving Debian's LLVM 19 (issue 37), against clang 19 itself (see
// llvm19_test.go for the reference commands and the privately unpacked
// OpenMP runtime). offcc plans none of LLVM 19's jobs yet
// (toolchain.Profile.Plans): every command line it would plan is run by
// clang 19's driver whole, so that its outputs are clang 19's bytes. The
// tests check those bytes, the programs' runs, that the plan says so (one
// fallback action and its reason), that -### is clang 19's, and that a
// cache holding LLVM 22's results of the same command never answers LLVM
// 19's.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// llvm19Dir is offcc's option that makes it drive LLVM 19.
const llvm19Dir = "--llvm-dir=" + llvm19Bin

// llvm19Whole is the reason offcc gives for running a command line of LLVM
// 19 by its clang whole.
const llvm19Whole = "offcc plans no LLVM 19 jobs: clang 19 runs the command line whole"

// sameAsClang19 builds out (a path relative to dir) with clang 19's
// driver ref and then with offcc under env, with the same arguments in
// the same directory (a HIP or CUDA compile hashes its arguments and
// output into its compile unit ID), and fails unless the two outputs are
// the same bytes. It returns offcc's output's bytes.
func sameAsClang19(t *testing.T, c compiler, ref, dir string, env []string, out string, buildArgs []string) []byte {
	t.Helper()
	a := args(buildArgs, "-o", out)
	cmdSpec{dir: dir, env: env, name: ref, args: a}.mustRun(t)
	want, err := os.ReadFile(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, out))
	name := c.cc
	if strings.HasSuffix(ref, "++") {
		name = c.cxx
	}
	cmdSpec{dir: dir, env: env, name: name, args: args(llvm19Dir, a)}.mustRun(t)
	got, err := os.ReadFile(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("offcc %s %s: %s differs from clang 19's (%d bytes, clang 19's %d)", llvm19Dir, shellJoin(a), out, len(got), len(want))
	}
	return got
}

// fallbackGraph checks offcc's --print-job-graph=json of buildArgs with
// LLVM 19: one action, clang 19's driver with the whole command line,
// and the reason.
func fallbackGraph(t *testing.T, c compiler, name, dir string, env []string, buildArgs []string) {
	t.Helper()
	r := cmdSpec{dir: dir, env: env, name: name, args: args(llvm19Dir, "--print-job-graph=json", buildArgs)}.mustRun(t)
	var g struct {
		Actions []struct {
			Kind     string   `json:"kind"`
			Command  []string `json:"command"`
			Fallback string   `json:"fallback"`
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatalf("job graph: %v\n%s", err, r)
	}
	if len(g.Actions) != 1 || g.Actions[0].Kind != "fallback" || g.Actions[0].Fallback != llvm19Whole ||
		len(g.Actions[0].Command) == 0 || !strings.HasPrefix(g.Actions[0].Command[0], llvm19Bin+"/clang") {
		t.Errorf("the job graph of LLVM 19 is not clang 19's driver whole (%q):\n%s", llvm19Whole, r.stdout)
	}
}

// traceJobs returns the job lines of OFFCC_TRACE's output.
func traceJobs(stderr string) []string {
	var jobs []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "job ") {
			jobs = append(jobs, l)
		}
	}
	return jobs
}

// TestLLVM19Drive: offcc with --llvm-dir of LLVM 19 gives clang 19's
// objects byte for byte (OpenMP to the host device, HIP against Debian's
// ROCm, CUDA with Debian's toolkit), and OpenMP programs that run as
// clang 19's do; each command line is run by clang 19 whole, as its plan
// and -v say.
func TestLLVM19Drive(t *testing.T) {
	t.Parallel()
	t.Run("openmp", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clang := llvm19Tool(t, "clang")
		llvm19OpenMP(t)
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
		src := filepath.Join(dir, "basic.c")
		copyFile(t, srcPath(t, "basic.c"), src)
		compile := args(openmpHost19, "-c", "basic.c")
		sameAsClang19(t, c, clang, dir, env, "basic.o", compile)
		// The link, and the program's run.
		cmdSpec{dir: dir, env: env, name: clang, args: args(openmpHost19, "basic.o", "-o", "ref")}.mustRun(t)
		cmdSpec{dir: dir, env: env, name: c.cc, args: args(llvm19Dir, openmpHost19, "basic.o", "-o", "prog")}.mustRun(t)
		want := cmdSpec{dir: dir, env: offloadEnv19, name: filepath.Join(dir, "ref")}.mustRun(t)
		got := cmdSpec{dir: dir, env: offloadEnv19, name: filepath.Join(dir, "prog")}.mustRun(t)
		if got.stdout != want.stdout || !strings.Contains(got.stdout, "on device: yes") {
			t.Errorf("offcc's LLVM 19 program printed %q, clang 19's %q", got.stdout, want.stdout)
		}
		// Compile and link in one step.
		cmdSpec{dir: dir, env: env, name: c.cc, args: args(llvm19Dir, openmpHost19, "basic.c", "-o", "prog1")}.mustRun(t)
		if got := (cmdSpec{dir: dir, env: offloadEnv19, name: filepath.Join(dir, "prog1")}.mustRun(t)); got.stdout != want.stdout {
			t.Errorf("offcc's one-step LLVM 19 program printed %q, clang 19's %q", got.stdout, want.stdout)
		}
		fallbackGraph(t, c, c.cc, dir, env, args(compile, "-o", "basic.o"))
		// -### is clang 19's: its packager, from its directory.
		r := cmdSpec{dir: dir, env: env, name: c.cc, args: args(llvm19Dir, "-###", compile, "-o", "basic.o")}.mustRun(t)
		if !strings.Contains(r.stderr, `"`+llvm19Bin+`/clang-offload-packager"`) || strings.Contains(r.stderr, "llvm-offload-binary") {
			t.Errorf("offcc's -### with LLVM 19 does not run clang 19's clang-offload-packager:\n%s", r)
		}
		// -v names the profile, the inode names and why clang runs it.
		r = cmdSpec{dir: dir, env: env, name: c.cc, args: args(llvm19Dir, "-v", compile, "-o", "basic.o")}.mustRun(t)
		for _, line := range []string{
			"offcc: note: LLVM 19 profile (" + llvm19Bin + ")\n",
			"offcc: note: LLVM 19 names OpenMP kernels after the source files' inodes (no stable names)\n",
			"offcc: note: handing the command line to clang: " + llvm19Whole + "\n",
		} {
			if strings.Count(r.stderr, line) != 1 {
				t.Errorf("offcc -v with LLVM 19 does not say %q once:\n%s", line, r)
			}
		}
		// The job trace: one job, clang 19's driver, uncached.
		trace := filepath.Join(dir, "trace.json")
		r = cmdSpec{dir: dir, env: append(env, "OFFCC_TRACE=1", "OFFCC_JOB_TRACE="+trace), name: c.cc,
			args: args(llvm19Dir, compile, "-o", "traced.o")}.mustRun(t)
		if jobs := traceJobs(r.stderr); len(jobs) != 1 || !strings.HasPrefix(jobs[0], "job clang kind=fallback ") {
			t.Errorf("OFFCC_TRACE with LLVM 19: not one fallback job:\n%s", r)
		}
	})
	t.Run("cache", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's build cache")
		clang := llvm19Tool(t, "clang")
		llvm19OpenMP(t)
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
		copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "basic.c"))
		// The same source and output compiled with LLVM 22 twice (the
		// second from the cache), then with LLVM 19: clang 19's bytes,
		// not 22's cached ones, and nothing of 19's is a hit.
		compile22 := args(openmpHost, "-c", "basic.c", "-o", "basic.o")
		for i := 0; i < 2; i++ {
			cmdSpec{dir: dir, env: env, name: c.cc, args: compile22}.mustRun(t)
		}
		b22, err := os.ReadFile(filepath.Join(dir, "basic.o"))
		if err != nil {
			t.Fatal(err)
		}
		trace := append(env, "OFFCC_TRACE=1", "OFFCC_JOB_TRACE="+filepath.Join(dir, "trace.json"))
		for i := 0; i < 2; i++ {
			r := cmdSpec{dir: dir, env: trace, name: c.cc, args: args(llvm19Dir, openmpHost19, "-c", "basic.c", "-o", "basic.o")}.mustRun(t)
			if jobs := traceJobs(r.stderr); len(jobs) != 1 || !strings.HasPrefix(jobs[0], "job clang kind=fallback ") || strings.Contains(jobs[0], "cache=hit") {
				t.Errorf("LLVM 19 build %d after LLVM 22's: a cache hit, or not clang 19's driver:\n%s", i+1, r)
			}
		}
		b19, err := os.ReadFile(filepath.Join(dir, "basic.o"))
		if err != nil {
			t.Fatal(err)
		}
		cmdSpec{dir: dir, env: env, name: clang, args: args(openmpHost19, "-c", "basic.c", "-o", "ref.o")}.mustRun(t)
		ref, err := os.ReadFile(filepath.Join(dir, "ref.o"))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(b19, b22) || !bytes.Equal(b19, ref) {
			t.Errorf("LLVM 19's object after LLVM 22's in one cache: same as 22's %v, as clang 19's %v", bytes.Equal(b19, b22), bytes.Equal(b19, ref))
		}
		r := cmdSpec{dir: dir, env: env, name: c.cc, args: args("cache", "stats")}.mustRun(t)
		if !strings.Contains(r.stdout, "run by clang's driver: "+llvm19Whole) {
			t.Errorf("offcc cache stats does not count LLVM 19's builds as run by clang 19:\n%s", r)
		}
	})
	t.Run("hip", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clangXX := llvm19Tool(t, "clang++")
		if err := llvmtest.ROCmMissing(); err != nil {
			llvmtest.Missing(t, "%v", err)
		}
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
		compile := args(hipROCmFlags19, "-c", rocmProject(t, "vec_add.hip"))
		obj := sameAsClang19(t, c, clangXX, dir, env, "vec_add.o", compile)
		if !bytes.Contains(obj, []byte("hipv4-amdgcn-amd-amdhsa--gfx906")) {
			t.Errorf("offcc's LLVM 19 HIP object has no gfx906 code object")
		}
		fallbackGraph(t, c, c.cxx, dir, env, args(compile, "-o", "vec_add.o"))
	})
	t.Run("cuda", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clangXX := llvm19Tool(t, "clang++")
		llvmtest.CUDA(t)
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
		compile := args("-x", "cuda", "--offload-arch=sm_70", "-c", cudaToolkitSrc(t, "kernels.cu"))
		sameAsClang19(t, c, clangXX, dir, env, "kernels.o", compile)
		fallbackGraph(t, c, c.cxx, dir, env, args(compile, "-o", "kernels.o"))
	})
}
