package e2e

// offcc driving Debian's LLVM 19 (issue 37), against clang 19 itself (see
// llvm19_test.go for the reference commands and the privately unpacked
// OpenMP runtime). offcc plans only some of LLVM 19's builds
// (toolchain.Profile.Shapes: plain compiles, OpenMP compiles to the host
// device and to AMD and NVIDIA GPUs, OpenMP links to the host device, CUDA
// compiles and HIP compiles, with or without -fgpu-rdc); every other
// command line it would plan is run by clang 19's driver whole, so that
// its outputs are clang 19's bytes. The tests
// check those bytes, the programs' runs, the jobs and their cache hits,
// what the plan says (clang 19's tools; one fallback action and its
// reason), and that a cache holding LLVM 22's results of the same source
// never answers LLVM 19's.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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

// llvm19Work returns a subtest's working directory, the environment of
// its builds (a build cache of its own) and that environment with
// OFFCC_TRACE=1.
func llvm19Work(t *testing.T) (dir string, env, traced []string) {
	t.Helper()
	_, tmp := tmpEnv(t)
	env = cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
	return t.TempDir(), env, append(env[:len(env):len(env)], "OFFCC_TRACE=1")
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
		ID       int      `json:"id"`
		Kind     string   `json:"kind"`
		Arch     string   `json:"arch"`
		Command  []string `json:"command"`
		Deps     []int    `json:"deps"`
		Fallback string   `json:"fallback"`
	} `json:"actions"`
}

// TestLLVM19Drive: offcc with --llvm-dir of LLVM 19 gives clang 19's
// objects byte for byte (OpenMP to the host device and to gfx906, gfx90a
// and sm_70 without device libraries, HIP against Debian's ROCm, CUDA
// with Debian's toolkit), and OpenMP programs that run as clang 19's do.
// OpenMP compiles, OpenMP links to the host device, CUDA compiles and HIP
// compiles (with or without -fgpu-rdc) are planned: their device jobs run
// as jobs of their own, with clang 19's tools, and a second build comes
// from the cache; OpenMP devices offcc does not list for 19 and CUDA and
// HIP links are run by clang 19 whole, as their plan and -v say.
func TestLLVM19Drive(t *testing.T) {
	t.Parallel()
	t.Run("openmp", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clang := llvm19Tool(t, "clang")
		llvm19OpenMP(t)
		dir, env, traced := llvm19Work(t)
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
		// A link of two objects made by clang 19 (tu_b.c defines a
		// declare target global and function that tu_a.c's target
		// regions use, each object listing its entries in 19's
		// omp_offloading_entries) is planned: offcc's link stage links
		// the device image and registers it as clang 19's
		// clang-linker-wrapper does, to clang 19's program byte for byte;
		// linked again, the device link is a cache hit.
		for _, tu := range []string{"tu_a", "tu_b"} {
			cmdSpec{dir: dir, env: env, name: clang, args: args(openmpHost19, "-c", srcPath(t, "twotu/"+tu+".c"), "-o", tu+".o")}.mustRun(t)
		}
		link := args(openmpHost19, "tu_a.o", "tu_b.o")
		sameAsClang19(t, c, clang, dir, env, "prog", link)
		r = cmdSpec{dir: dir, env: traced, name: c.cc, args: args(llvm19Dir, link, "-o", "prog")}.mustRun(t)
		jobs := strings.Join(traceJobs(r.stderr), "\n")
		if !strings.Contains(jobs, "kind=device-link offload=device-openmp target="+offloadHost) || !strings.Contains(jobs, "kind=host-link") ||
			strings.Contains(jobs, "fallback") || strings.Contains(jobs, "clang-linker-wrapper") {
			t.Errorf("LLVM 19's link is not offcc's link stage:\n%s", r)
		}
		for _, j := range traceJobs(r.stderr) {
			if strings.Contains(j, "kind=device-link") && !strings.Contains(j, "cache=hit") {
				t.Errorf("LLVM 19's device link linked again: %q, want a cache hit", j)
			}
		}
		g = printGraph(t, c.cc, dir, env, args(link, "-o", "prog"))
		plannedBy19(t, g, "OpenMP link")
		if len(g.Actions) != 1 || g.Actions[0].Kind != "link" || len(g.Actions[0].Command) < 3 || !slices.Equal(g.Actions[0].Command[1:3], []string{"linker-wrapper", llvm19Dir}) {
			t.Errorf("LLVM 19's link is not planned as offcc's link stage: %+v", g)
		}
		got := cmdSpec{dir: dir, env: offloadEnv19, name: filepath.Join(dir, "prog")}.mustRun(t)
		if !strings.Contains(got.stdout, "on device: yes") || !strings.Contains(got.stdout, "bad=0") {
			t.Errorf("offcc's LLVM 19 program printed %q", got.stdout)
		}
		// Compile and link in one step: planned too, clang 19's program.
		sameAsClang19(t, c, clang, dir, env, "prog1", args(openmpHost19, "basic.c"))
		if got := (cmdSpec{dir: dir, env: offloadEnv19, name: filepath.Join(dir, "prog1")}.mustRun(t)); !strings.Contains(got.stdout, "on device: yes") {
			t.Errorf("offcc's one-step LLVM 19 program printed %q", got.stdout)
		}
		// A device offcc does not recognise in LLVM 19 (aarch64) is clang
		// 19's whole.
		arm := printGraph(t, c.cc, dir, env, args("-fopenmp", "-fopenmp-targets=aarch64-unknown-linux-gnu", "-c", "basic.c", "-o", "arm.o"))
		if len(arm.Actions) != 1 || arm.Actions[0].Kind != "fallback" || !strings.Contains(arm.Actions[0].Fallback, "offcc does not recognise LLVM 19's job clang in OpenMP compiles (-c) (a compile for aarch64-unknown-linux-gnu)") {
			t.Errorf("LLVM 19's OpenMP compile for aarch64 is not clang 19's whole: %+v", arm)
		}
	})
	t.Run("openmp-gpu", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clang := llvm19Tool(t, "clang")
		llvm19OpenMP(t)
		// Two AMD GPUs (amdgcn bitcode) and, with NVIDIA's ptxas, one
		// NVIDIA GPU (PTX, then ptxas), without device libraries
		// (Debian's LLVM 19 has none). (With -fopenmp-targets= beside
		// --offload-arch=, clang 19 compiles for the listed triples only,
		// so the host device is the "openmp" subtest's.)
		gpus := []string{"gfx906", "gfx90a"}
		if optionalPart(t, "sm_70", llvmtest.CUDAMissing(), os.Getenv(llvmtest.EnvRequireCUDA) == "1") {
			gpus = append(gpus, "sm_70")
		}
		dir, env, traced := llvm19Work(t)
		copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "basic.c"))
		compile := args("-fopenmp", "-isystem", filepath.Join(llvm19OMPLib, "clang", "19", "include"),
			"--offload-arch="+strings.Join(gpus, ","), "-nogpulib", "-c", "basic.c")
		obj := sameAsClang19(t, c, clang, dir, env, "basic.o", compile)
		// Planned: one device compile per GPU, each reading only the
		// host front end's IR (so they run at once), with clang 19.
		g := printGraph(t, c.cc, dir, env, args(compile, "-o", "basic.o"))
		if cc1 := plannedBy19(t, g, "OpenMP GPU"); cc1 != 2+len(gpus) {
			t.Errorf("LLVM 19's OpenMP GPU compile plans %d clang -cc1 jobs, want %d (host front end, each GPU, backend)", cc1, 2+len(gpus))
		}
		kinds := map[int]string{}
		for _, a := range g.Actions {
			kinds[a.ID] = a.Kind
		}
		for _, gpu := range gpus {
			n := 0
			for _, a := range g.Actions {
				if a.Kind != "device-compile" || a.Arch != gpu {
					continue
				}
				n++
				if len(a.Deps) != 1 || kinds[a.Deps[0]] != "host-frontend" {
					t.Errorf("LLVM 19's device compile for %s depends on %v, want the host front end alone", gpu, a.Deps)
				}
			}
			if n != 1 {
				t.Errorf("LLVM 19's OpenMP GPU compile plans %d device compiles for %s, want 1: %+v", n, gpu, g)
			}
		}
		// Built again (to another output), every job is a hit and the
		// object is the same.
		r := cmdSpec{dir: dir, env: traced, name: c.cc, args: args(llvm19Dir, compile, "-o", "again.o")}.mustRun(t)
		jobs := traceJobs(r.stderr)
		ran := func(kind, gpu string) bool {
			return slices.ContainsFunc(jobs, func(j string) bool {
				return strings.Contains(j, " kind="+kind+" offload=device-openmp ") && strings.Contains(j, " arch="+gpu+" ")
			})
		}
		for _, gpu := range gpus {
			if !ran("device-compile", gpu) {
				t.Errorf("the second build with LLVM 19 ran no device compile for %s:\n%s", gpu, r)
			}
		}
		if slices.Contains(gpus, "sm_70") && !ran("device-assemble", "sm_70") {
			t.Errorf("the second build with LLVM 19 ran no ptxas for sm_70:\n%s", r)
		}
		for _, j := range jobs {
			if !strings.Contains(j, "cache=hit") {
				t.Errorf("the second build with LLVM 19: job %q, want a cache hit", j)
			}
		}
		if again, err := os.ReadFile(filepath.Join(dir, "again.o")); err != nil || !bytes.Equal(again, obj) {
			t.Errorf("the cached LLVM 19 OpenMP GPU object is not clang 19's (%v)", err)
		}
	})
	t.Run("cache", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's build cache")
		clang := llvm19Tool(t, "clang")
		llvm19OpenMP(t)
		dir, env, traced := llvm19Work(t)
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
		dir, env, traced := llvm19Work(t)
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
		// Another source of the project with the same flags, while the
		// plan cache holds vec_add.hip's plan: planned as well (its plan
		// read fresh, with its own compile unit ID, not templated from
		// vec_add.hip's), and clang 19's object.
		other := args(flags, "-c", rocmProject(t, "reduce.hip"))
		r = cmdSpec{dir: dir, env: traced, name: c.cxx, args: args(llvm19Dir, other, "-o", "reduce.o")}.mustRun(t)
		if all := strings.Join(traceJobs(r.stderr), "\n"); !strings.Contains(all, "kind=device-compile offload=device-hip") || strings.Contains(all, "fallback") {
			t.Errorf("a second HIP source with LLVM 19 is not planned:\n%s", r)
		}
		sameAsClang19(t, c, clangXX, dir, env, "reduce.o", other)
	})
	t.Run("hip-rdc", func(t *testing.T) {
		t.Parallel()
		c := offccOnly(t, "offcc's LLVM 19 profile")
		clangXX := llvm19Tool(t, "clang++")
		dir, env, traced := llvm19Work(t)
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
		dir, env, traced := llvm19Work(t)
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
		dir, env, traced := llvm19Work(t)
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
