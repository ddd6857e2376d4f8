package e2e

// offcc driving Debian's LLVM 19 (issue 37), against clang 19 itself (see
// llvm19_test.go for the reference commands and the privately unpacked
// OpenMP runtime). offcc plans only some of LLVM 19's builds
// (toolchain.Profile.Shapes: plain compiles, OpenMP compiles to the host
// device, CUDA compiles and HIP compiles, with or without -fgpu-rdc);
// every other command line it
// would plan is run by clang 19's driver whole, so that its outputs are
// clang 19's bytes. The tests
// check those bytes, the programs' runs, the jobs and their cache hits,
// what the plan says (clang 19's tools; one fallback action and its
// reason), and that a cache holding LLVM 22's results of the same source
// never answers LLVM 19's.

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

// printGraph returns offcc's --print-job-graph=json of buildArgs with
// LLVM 19, run as name.
func printGraph(t *testing.T, name, dir string, env []string, buildArgs []string) jobGraph {
	t.Helper()
	r := cmdSpec{dir: dir, env: env, name: name, args: args(llvm19Dir, "--print-job-graph=json", buildArgs)}.mustRun(t)
	var g jobGraph
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatalf("job graph: %v\n%s", err, r)
	}
	return g
}

// fallbackGraph checks offcc's --print-job-graph=json of buildArgs with
// LLVM 19: one action, clang 19's driver with the whole command line,
// and the reason.
func fallbackGraph(t *testing.T, name, dir string, env []string, buildArgs []string) {
	t.Helper()
	g := printGraph(t, name, dir, env, buildArgs)
	if len(g.Actions) != 1 || g.Actions[0].Kind != "fallback" || !strings.HasSuffix(g.Actions[0].Fallback, ": clang 19 runs the command line whole") ||
		len(g.Actions[0].Command) == 0 || !strings.HasPrefix(g.Actions[0].Command[0], llvm19Bin+"/clang") {
		t.Errorf("the job graph of LLVM 19 is not clang 19's driver whole: %+v", g)
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

// jobGraph is the part of --print-job-graph=json the tests read.
type jobGraph struct {
	Actions []struct {
		Kind     string   `json:"kind"`
		Command  []string `json:"command"`
		Fallback string   `json:"fallback"`
	} `json:"actions"`
}

// TestLLVM19Drive: offcc with --llvm-dir of LLVM 19 gives clang 19's
// objects byte for byte (OpenMP to the host device, HIP against Debian's
// ROCm, CUDA with Debian's toolkit), and OpenMP programs that run as
// clang 19's do. OpenMP compiles to the host device, CUDA compiles and
// HIP compiles (with or without -fgpu-rdc) are planned: their device jobs
// run as jobs of their own, with clang 19's tools, and a second build
// comes from the cache; OpenMP links and HIP -fgpu-rdc links are run by
// clang 19 whole, as their plan and -v say.
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
		traced := append(env[:len(env):len(env)], "OFFCC_TRACE=1")
		copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "basic.c"))
		compile := args(openmpHost19, "-c", "basic.c")
		sameAsClang19(t, c, clang, dir, traced, "basic.o", compile)
		// Planned: the device compile, the packager and the embedding
		// are jobs of their own; built again (to another output), every
		// job is a hit.
		for i, want := range []string{"cache=hit"} {
			r := cmdSpec{dir: dir, env: traced, name: c.cc, args: args(llvm19Dir, compile, "-o", "again.o")}.mustRun(t)
			jobs := strings.Join(traceJobs(r.stderr), "\n")
			for _, kind := range []string{"kind=host-frontend", "kind=device-compile", "kind=package", "kind=embed", "kind=backend"} {
				if !strings.Contains(jobs, kind) {
					t.Errorf("build %d with LLVM 19 ran no %s job:\n%s", i+1, kind, r)
				}
			}
			for _, j := range traceJobs(r.stderr) {
				if !strings.Contains(j, want) || strings.Contains(j, "kind=fallback") {
					t.Errorf("build %d with LLVM 19: job %q, want %s", i+1, j, want)
				}
			}
		}
		again, _ := os.ReadFile(filepath.Join(dir, "again.o"))
		if ref, _ := os.ReadFile(filepath.Join(dir, "basic.o")); !bytes.Equal(again, ref) {
			t.Errorf("the cached LLVM 19 object is not clang 19's")
		}
		// The plan runs clang 19's own cc1 jobs.
		g := printGraph(t, c.cc, dir, env, args(compile, "-o", "basic.o"))
		clangs := plannedBy19(t, g, "OpenMP")
		if clangs != 3 {
			t.Errorf("LLVM 19's OpenMP compile plans %d clang -cc1 jobs, want 3 (host front end, device, backend)", clangs)
		}
		r := cmdSpec{dir: dir, env: env, name: c.cc, args: args(llvm19Dir, "-###", compile, "-o", "basic.o")}.mustRun(t)
		if !strings.Contains(r.stderr, `"`+llvm19Bin+`/clang" "-cc1"`) || strings.Contains(r.stderr, "llvm-22") {
			t.Errorf("offcc's -### with LLVM 19 does not run clang 19's jobs:\n%s", r)
		}
		// -v names the profile and the inode names, once each.
		r = cmdSpec{dir: dir, env: env, name: c.cc, args: args(llvm19Dir, "-v", compile, "-o", "verbose.o")}.mustRun(t)
		for _, line := range []string{
			"offcc: note: LLVM 19 profile (" + llvm19Bin + ")\n",
			"offcc: note: OpenMP kernels keep clang's names (after the source files' inodes): clang 19 names kernels only after inodes",
		} {
			if strings.Count(r.stderr, line) != 1 {
				t.Errorf("offcc -v with LLVM 19 does not say %q once:\n%s", line, r)
			}
		}
		// The link is clang 19's whole (its clang-linker-wrapper), and the
		// program runs as clang 19's.
		cmdSpec{dir: dir, env: env, name: clang, args: args(openmpHost19, "basic.o", "-o", "ref")}.mustRun(t)
		r = cmdSpec{dir: dir, env: traced, name: c.cc, args: args(llvm19Dir, openmpHost19, "basic.o", "-o", "prog")}.mustRun(t)
		if jobs := traceJobs(r.stderr); len(jobs) != 0 {
			t.Errorf("LLVM 19's link ran offcc's jobs:\n%s", r)
		}
		link := printGraph(t, c.cc, dir, env, args(openmpHost19, "basic.o", "-o", "prog"))
		if len(link.Actions) != 1 || link.Actions[0].Kind != "fallback" || !strings.HasPrefix(link.Actions[0].Command[0], llvm19Bin+"/clang") ||
			!strings.Contains(link.Actions[0].Fallback, "offcc plans only LLVM 19's plain compiles, OpenMP compiles (-c) offloading to the host device, CUDA compiles (-c), HIP compiles (-c), CUDA -fgpu-rdc compiles (-c) and HIP -fgpu-rdc compiles (-c): clang 19 runs the command line whole") {
			t.Errorf("LLVM 19's link is not clang 19's driver whole: %+v", link)
		}
		want := cmdSpec{dir: dir, env: offloadEnv19, name: filepath.Join(dir, "ref")}.mustRun(t)
		got := cmdSpec{dir: dir, env: offloadEnv19, name: filepath.Join(dir, "prog")}.mustRun(t)
		if got.stdout != want.stdout || !strings.Contains(got.stdout, "on device: yes") {
			t.Errorf("offcc's LLVM 19 program printed %q, clang 19's %q", got.stdout, want.stdout)
		}
		// Compile and link in one step: clang 19 whole.
		cmdSpec{dir: dir, env: env, name: c.cc, args: args(llvm19Dir, openmpHost19, "basic.c", "-o", "prog1")}.mustRun(t)
		if got := (cmdSpec{dir: dir, env: offloadEnv19, name: filepath.Join(dir, "prog1")}.mustRun(t)); got.stdout != want.stdout {
			t.Errorf("offcc's one-step LLVM 19 program printed %q, clang 19's %q", got.stdout, want.stdout)
		}
		// A device offcc does not recognise in LLVM 19 (amdgcn) is clang
		// 19's whole.
		amd := printGraph(t, c.cc, dir, env, args("-fopenmp", "--offload-arch=gfx906", "-nogpulib", "-c", "basic.c", "-o", "amd.o"))
		if len(amd.Actions) != 1 || amd.Actions[0].Kind != "fallback" || !strings.Contains(amd.Actions[0].Fallback, "offcc does not recognise LLVM 19's job clang in OpenMP compiles (-c) offloading to the host device (a compile for amdgcn-amd-amdhsa)") {
			t.Errorf("LLVM 19's OpenMP compile for gfx906 is not clang 19's whole: %+v", amd)
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
		traced := append(env[:len(env):len(env)], "OFFCC_TRACE=1")
		copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "basic.c"))
		// The same source compiled with LLVM 22 twice (the second from
		// the cache), then with LLVM 19: every job a miss (the keys carry
		// the toolchain), and clang 19's bytes, not 22's.
		for i := 0; i < 2; i++ {
			cmdSpec{dir: dir, env: env, name: c.cc, args: args(openmpHost, "-c", "basic.c", "-o", "basic.o")}.mustRun(t)
		}
		b22, err := os.ReadFile(filepath.Join(dir, "basic.o"))
		if err != nil {
			t.Fatal(err)
		}
		r := cmdSpec{dir: dir, env: traced, name: c.cc, args: args(llvm19Dir, openmpHost19, "-c", "basic.c", "-o", "basic.o")}.mustRun(t)
		jobs := traceJobs(r.stderr)
		if len(jobs) < 5 {
			t.Errorf("LLVM 19's compile ran %d jobs:\n%s", len(jobs), r)
		}
		for _, j := range jobs {
			if !strings.Contains(j, "cache=miss") {
				t.Errorf("LLVM 19's first build after LLVM 22's: %s", j)
			}
		}
		b19, err := os.ReadFile(filepath.Join(dir, "basic.o"))
		if err != nil {
			t.Fatal(err)
		}
		cmdSpec{dir: dir, env: env, name: clang, args: args(openmpHost19, "-c", "basic.c", "-o", "basic.o")}.mustRun(t)
		ref, err := os.ReadFile(filepath.Join(dir, "basic.o"))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(b19, b22) || !bytes.Equal(b19, ref) {
			t.Errorf("LLVM 19's object after LLVM 22's in one cache: same as 22's %v, as clang 19's %v", bytes.Equal(b19, b22), bytes.Equal(b19, ref))
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
		traced := append(env[:len(env):len(env)], "OFFCC_TRACE=1")
		// Two GPUs, as one comma list (one value of --offload-arch= in
		// 19): 19's bundler IDs (host-x86_64-unknown-linux--) in the fat
		// binary, written by offcc's bundler.
		flags := args(hipROCmFlags19[:len(hipROCmFlags19)-1], "--offload-arch=gfx906,gfx90a")
		compile := args(flags, "-c", rocmProject(t, "vec_add.hip"))
		obj := sameAsClang19(t, c, clangXX, dir, env, "vec_add.o", compile)
		for _, id := range []string{"host-x86_64-unknown-linux--", "hipv4-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx90a"} {
			if !bytes.Contains(obj, []byte(id)) {
				t.Errorf("offcc's LLVM 19 HIP object has no bundle entry %s", id)
			}
		}
		// Planned: a device compile and an lld link per GPU, then the
		// bundler, each a job of its own; built again, every job is a hit.
		r := cmdSpec{dir: dir, env: traced, name: c.cxx, args: args(llvm19Dir, compile, "-o", "vec_add.o")}.mustRun(t)
		jobs := traceJobs(r.stderr)
		all := strings.Join(jobs, "\n")
		for _, want := range []string{"kind=device-compile offload=device-hip target=amdgcn-amd-amdhsa arch=gfx906", "kind=device-compile offload=device-hip target=amdgcn-amd-amdhsa arch=gfx90a",
			"kind=device-link offload=device-hip target=amdgcn-amd-amdhsa arch=gfx906", "kind=device-link offload=device-hip target=amdgcn-amd-amdhsa arch=gfx90a", "kind=fatbinary"} {
			if !strings.Contains(all, want) {
				t.Errorf("the second build of HIP with LLVM 19 has no job %s:\n%s", want, r)
			}
		}
		for _, j := range jobs {
			// (The embedding into the host object is not cached.)
			if strings.Contains(j, "fallback") || (strings.Contains(j, " cache=") && !strings.Contains(j, "cache=hit")) {
				t.Errorf("the second build of HIP with LLVM 19: job %q, want a cache hit", j)
			}
		}
		if got, err := os.ReadFile(filepath.Join(dir, "vec_add.o")); err != nil || !bytes.Equal(got, obj) {
			t.Errorf("the cached build of HIP with LLVM 19 is not clang 19's object (%v)", err)
		}
		g := printGraph(t, c.cxx, dir, env, args(compile, "-o", "vec_add.o"))
		plannedBy19(t, g, "HIP")
	})
	t.Run("hip-rdc", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clangXX := llvm19Tool(t, "clang++")
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
		traced := append(env[:len(env):len(env)], "OFFCC_TRACE=1")
		// A kernel that calls a device function of another translation
		// unit (relocatable device code), without ROCm. (No template
		// kernels: clang 19 orders -fgpu-rdc's __clang_gpu_used_external
		// of two of them differently from run to run.)
		src := "#include \"hip_min.h\"\n\nextern __device__ int helper(int);\n__device__ int hits;\n\n" +
			"__global__ void bump(int *p) { *p = helper(*p) + hits; }\n\nint launch(int *p) {\n  bump<<<1, 1>>>(p);\n  return 0;\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "rdc.hip"), []byte(src), 0o666); err != nil {
			t.Fatal(err)
		}
		// Two GPUs: the object bundles each one's bitcode and the host
		// object with 19's IDs (hip-amdgcn-amd-amdhsa-gfx906).
		flags := []string{"-x", "hip", "--offload-arch=gfx906,gfx90a", "-nogpuinc", "-nogpulib", "-I" + srcPath(t, "../hip"), "-fgpu-rdc"}
		compile := args(flags, "-c", "rdc.hip")
		obj := sameAsClang19(t, c, clangXX, dir, env, "rdc.o", compile)
		// Planned: a device compile per GPU and the host compile, then
		// clang 19's bundler, each a job of its own; built again, every
		// job is a hit.
		r := cmdSpec{dir: dir, env: traced, name: c.cxx, args: args(llvm19Dir, compile, "-o", "rdc.o")}.mustRun(t)
		jobs := traceJobs(r.stderr)
		all := strings.Join(jobs, "\n")
		for _, want := range []string{"kind=device-compile offload=device-hip target=amdgcn-amd-amdhsa arch=gfx906", "kind=device-compile offload=device-hip target=amdgcn-amd-amdhsa arch=gfx90a",
			"kind=compile offload=host-hip", "job clang-offload-bundler kind=fatbinary"} {
			if !strings.Contains(all, want) {
				t.Errorf("the second build of HIP -fgpu-rdc with LLVM 19 has no job %s:\n%s", want, r)
			}
		}
		for _, j := range jobs {
			if strings.Contains(j, "fallback") || !strings.Contains(j, "cache=hit") {
				t.Errorf("the second build of HIP -fgpu-rdc with LLVM 19: job %q, want a cache hit", j)
			}
		}
		if got, err := os.ReadFile(filepath.Join(dir, "rdc.o")); err != nil || !bytes.Equal(got, obj) {
			t.Errorf("the cached build of HIP -fgpu-rdc with LLVM 19 is not clang 19's object (%v)", err)
		}
		g := printGraph(t, c.cxx, dir, env, args(compile, "-o", "rdc.o"))
		if cc1 := plannedBy19(t, g, "HIP -fgpu-rdc"); cc1 != 3 {
			t.Errorf("LLVM 19's HIP -fgpu-rdc compile plans %d clang -cc1 jobs, want 3 (two GPUs, the host)", cc1)
		}
		// The -fgpu-rdc link (lld per GPU, 19's llvm-mc) is clang 19's
		// whole.
		fallbackGraph(t, c.cxx, dir, env, args(flags, "rdc.o", "-o", "prog"))
	})
	t.Run("cuda", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clangXX := llvm19Tool(t, "clang++")
		llvmtest.CUDA(t)
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
		traced := append(env[:len(env):len(env)], "OFFCC_TRACE=1")
		// Two GPUs: 19's fatbinary embeds each one's cubin and PTX.
		compile := args("-x", "cuda", "--offload-arch=sm_70", "--offload-arch=sm_80", "-c", cudaToolkitSrc(t, "kernels.cu"))
		sameAsClang19(t, c, clangXX, dir, env, "kernels.o", compile)
		// Planned: a device compile and ptxas per GPU, then fatbinary,
		// each a job of its own; built again, every job is a hit.
		for i, want := range []string{"cache=hit"} {
			r := cmdSpec{dir: dir, env: traced, name: c.cxx, args: args(llvm19Dir, compile, "-o", "kernels.o")}.mustRun(t)
			jobs := traceJobs(r.stderr)
			all := strings.Join(jobs, "\n")
			if strings.Count(all, "kind=device-compile") != 2 || strings.Count(all, "kind=device-assemble") != 2 || !strings.Contains(all, "kind=fatbinary") {
				t.Errorf("build %d of CUDA with LLVM 19 did not run each GPU's jobs:\n%s", i+2, r)
			}
			for _, j := range jobs {
				// (The embedding into the host object is not cached.)
				if strings.Contains(j, " cache=") && !strings.Contains(j, want) {
					t.Errorf("build %d of CUDA with LLVM 19: job %q, want %s", i+2, j, want)
				}
			}
		}
		g := printGraph(t, c.cxx, dir, env, args(compile, "-o", "kernels.o"))
		plannedBy19(t, g, "CUDA")
	})
	t.Run("cuda-rdc", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clangXX := llvm19Tool(t, "clang++")
		llvmtest.CUDA(t)
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
		traced := append(env[:len(env):len(env)], "OFFCC_TRACE=1")
		// Two GPUs: ptxas -c per GPU, and 19's fatbinary (relocatable
		// cubins and PTX) in the host object's __nv_relfatbin. (Not
		// kernels.cu: clang 19 orders -fgpu-rdc's
		// __clang_gpu_used_external of two template kernels differently
		// from run to run.)
		compile := args("-x", "cuda", "--offload-arch=sm_70", "--offload-arch=sm_80", "-fgpu-rdc", "-c", cudaToolkitSrc(t, "rdc_dev.cu"))
		obj := sameAsClang19(t, c, clangXX, dir, env, "rdc_dev.o", compile)
		// Planned: a device compile and ptxas per GPU, then fatbinary,
		// each a job of its own; built again, every job is a hit.
		r := cmdSpec{dir: dir, env: traced, name: c.cxx, args: args(llvm19Dir, compile, "-o", "rdc_dev.o")}.mustRun(t)
		jobs := traceJobs(r.stderr)
		all := strings.Join(jobs, "\n")
		if strings.Count(all, "kind=device-compile") != 2 || strings.Count(all, "kind=device-assemble") != 2 || !strings.Contains(all, "kind=fatbinary") {
			t.Errorf("the second build of CUDA -fgpu-rdc with LLVM 19 did not run each GPU's jobs:\n%s", r)
		}
		for _, j := range jobs {
			// (The embedding into the host object is not cached.)
			if strings.Contains(j, "fallback") || (strings.Contains(j, " cache=") && !strings.Contains(j, "cache=hit")) {
				t.Errorf("the second build of CUDA -fgpu-rdc with LLVM 19: job %q, want a cache hit", j)
			}
		}
		if got, err := os.ReadFile(filepath.Join(dir, "rdc_dev.o")); err != nil || !bytes.Equal(got, obj) {
			t.Errorf("the cached build of CUDA -fgpu-rdc with LLVM 19 is not clang 19's object (%v)", err)
		}
		g := printGraph(t, c.cxx, dir, env, args(compile, "-o", "rdc_dev.o"))
		plannedBy19(t, g, "CUDA -fgpu-rdc")
		// The new driver's -fgpu-rdc (clang-offload-packager in 19) is
		// clang 19's whole.
		fallbackGraph(t, c.cxx, dir, env, args(compile, "--offload-new-driver", "-o", "rdc_dev.o"))
	})
}

// plannedBy19 checks that the job graph g of a model's compile with LLVM
// 19 is planned (no action falls back to clang's driver) and that each of
// its clang -cc1 jobs runs clang 19; it returns how many there are.
func plannedBy19(t *testing.T, g jobGraph, model string) (cc1 int) {
	t.Helper()
	for _, a := range g.Actions {
		if a.Kind == "fallback" {
			t.Errorf("LLVM 19's %s compile falls back: %s", model, a.Fallback)
		}
		if len(a.Command) > 1 && a.Command[1] == "-cc1" {
			cc1++
			if a.Command[0] != llvm19Bin+"/clang" {
				t.Errorf("LLVM 19's %s plan runs %s", model, a.Command[0])
			}
		}
	}
	return cc1
}
