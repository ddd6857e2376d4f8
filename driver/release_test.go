package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/toolchain"
)

// TestParseRelease: a command line is read as the clang of the release it
// is parsed for reads it: LLVM 19's -nogpulib and -fopenmp-targets= are
// options of their own (22's are aliases of --no-offloadlib and
// --offload-targets=), and its --offload= names offload targets.
func TestParseRelease(t *testing.T) {
	t19, err := options.ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	line := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-nogpulib", "-c", "x.c"}
	o22, err := Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	o19, err := ParseRelease(line, t19)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(o *Options) []string {
		var out []string
		for _, a := range o.Args {
			out = append(out, a.Option.ID)
		}
		return out
	}
	if o22.Tables.Major != 22 || o19.Tables.Major != 19 {
		t.Errorf("tables: %d, %d", o22.Tables.Major, o19.Tables.Major)
	}
	if got := ids(o19); !slices.Contains(got, "nogpulib") || !slices.Contains(got, "fopenmp_targets_EQ") {
		t.Errorf("LLVM 19's IDs %v", got)
	}
	if got := ids(o22); slices.Contains(got, "nogpulib") {
		t.Errorf("LLVM 22's IDs %v", got)
	}
	for _, o := range []*Options{o19, o22} {
		if o.OffloadKind() != actions.OpenMP || !slices.Equal(o.ClangArgs, line) {
			t.Errorf("LLVM %d: kind %v, clang args %q", o.Tables.Major, o.OffloadKind(), o.ClangArgs)
		}
	}
	hip, err := ParseRelease([]string{"--offload=spirv64", "-x", "hip", "-c", "x.hip"}, t19)
	if err != nil || !hip.OffloadTargets {
		t.Errorf("LLVM 19's --offload=: %+v, %v", hip, err)
	}
}

// TestForRelease: Main parses again, with the found release's tables, a
// command line it parsed with the newest release's, and keeps it when
// they are the same tables.
func TestForRelease(t *testing.T) {
	line := []string{"-nogpulib", "-fopenmp", "--offload-arch=gfx90a", "-c", "x.c"}
	inv := &Invocation{Args: line, Stderr: &bytes.Buffer{}}
	opts, err := Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	same, err := inv.forRelease(opts, toolchain.ProfileOf(22))
	if err != nil || same != opts {
		t.Errorf("LLVM 22: %p, %v; want the same options %p", same, err, opts)
	}
	again, err := inv.forRelease(opts, toolchain.ProfileOf(19))
	if err != nil || again == opts || again.Tables.Major != 19 || again.Args[0].Option.ID != "nogpulib" {
		t.Fatalf("LLVM 19: %+v, %v", again, err)
	}
	if !slices.Equal(again.ClangArgs, opts.ClangArgs) || again.OffloadKind() != opts.OffloadKind() {
		t.Errorf("LLVM 19 reads %q (%v), 22 %q (%v)", again.ClangArgs, again.OffloadKind(), opts.ClangArgs, opts.OffloadKind())
	}
}

// TestReleaseShapes: with a release offcc does not plan whole (LLVM 19),
// a plain compile and an OpenMP compile (-c) are planned, whose jobs must
// be cc1 jobs for the host x86_64-pc-linux-gnu and OpenMP device compiles
// for the triples of the profile's OpenMPDevices (the host device, amdgcn
// and nvptx64), ptxas after an nvptx64 compile and the release's packager
// with OpenMP images of those triples; an OpenMP link to the host device,
// whose wrapper arguments offcc's link stage reads; and CUDA and HIP
// compiles (-c) with or without -fgpu-rdc, whose jobs must be the
// release's (a HIP -fgpu-rdc object bundled with 19's IDs); anything else
// is clang's whole, with the reason.
func TestReleaseShapes(t *testing.T) {
	p19 := toolchain.ProfileOf(19)
	t19, err := options.ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(line ...string) *Options {
		o, err := ParseRelease(line, t19)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	omp := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"}
	for _, c := range []struct {
		line []string
		want toolchain.Shape
	}{
		{[]string{"-c", "a.c"}, toolchain.ShapePlainCompile},
		{append(omp, "-c", "a.c"), toolchain.ShapeOpenMPCompile},
		{[]string{"-fopenmp", "--offload-arch=gfx906,gfx90a,sm_70", "-nogpulib", "-c", "a.c"}, toolchain.ShapeOpenMPCompile},
		{append(omp, "a.c"), toolchain.ShapeOpenMPHostLink},
		{append(omp, "a.o", "b.o", "-o", "prog"), toolchain.ShapeOpenMPHostLink},
		{append(omp, "-save-temps", "a.o"), ""},
		{append(omp, "-E", "a.c"), ""},
		{append(omp, "-S", "a.c"), ""},
		{append(omp, "-c", "-emit-llvm", "a.c"), ""},
		{append(omp, "-c", "-save-temps", "a.c"), ""},
		{append(omp, "-c", "--offload-device-only", "a.c"), ""},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "-c", "a.hip"}, toolchain.ShapeHIPCompile},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "-fgpu-rdc", "-c", "a.hip"}, toolchain.ShapeHIPRDCCompile},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "-fgpu-rdc", "-fno-gpu-rdc", "-c", "a.hip"}, toolchain.ShapeHIPCompile},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "-fgpu-rdc", "--offload-new-driver", "-c", "a.hip"}, ""},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "-fgpu-rdc", "a.hip"}, ""},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "--offload-new-driver", "-c", "a.hip"}, ""},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "-S", "a.hip"}, ""},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "--offload-device-only", "-c", "a.hip"}, ""},
		{[]string{"-x", "hip", "--offload-arch=gfx906", "a.hip"}, ""},
		{[]string{"-x", "cuda", "--offload-arch=sm_70", "-c", "a.cu"}, toolchain.ShapeCUDACompile},
		{[]string{"-x", "cuda", "--offload-arch=sm_70", "-fgpu-rdc", "-c", "a.cu"}, toolchain.ShapeCUDARDCCompile},
		{[]string{"-x", "cuda", "--offload-arch=sm_70", "-fgpu-rdc", "--offload-new-driver", "-c", "a.cu"}, ""},
		{[]string{"-x", "cuda", "--offload-arch=sm_70", "-fgpu-rdc", "a.cu"}, ""},
		{[]string{"-x", "cuda", "--offload-arch=sm_70", "--offload-new-driver", "-c", "a.cu"}, ""},
		{[]string{"-x", "cuda", "--offload-arch=sm_70", "a.cu"}, ""},
	} {
		o := parse(c.line...)
		got, why := releaseShape(p19, o.OffloadKind(), o)
		if got != c.want || (got == "") != (why != "") {
			t.Errorf("%q: shape %q (%s), want %q", c.line, got, why, c.want)
		}
		if got == "" && why != "offcc plans only LLVM 19's plain compiles, OpenMP compiles (-c), OpenMP links offloading to the host device, CUDA compiles (-c), HIP compiles (-c), CUDA -fgpu-rdc compiles (-c) and HIP -fgpu-rdc compiles (-c): clang 19 runs the command line whole" {
			t.Errorf("%q: reason %q", c.line, why)
		}
	}
	if _, why := releaseShape(toolchain.ProfileOf(22), actions.HIP, parse("-x", "hip", "-c", "a.hip")); why == "" {
		t.Errorf("a profile with no HIP shape plans HIP")
	}
	o := parse(append(omp, "-c", "a.c")...)
	host := []string{"/l/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-o", "a.o", "-x", "c", "a.c"}
	amd := []string{"/l/clang", "-cc1", "-triple", "amdgcn-amd-amdhsa", "-emit-llvm-bc", "-o", "d.bc", "-x", "c", "a.c"}
	device := func(triple string) []string {
		return []string{"/l/clang", "-cc1", "-triple", triple, "-aux-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc", "-fopenmp", "-fopenmp-is-target-device", "-fopenmp-host-ir-file-path", "h.bc", "-o", "d.bc", "-x", "c", "a.c"}
	}
	ptxas := []string{"/usr/bin/ptxas", "-m64", "-O0", "--gpu-name", "sm_70", "--output-file", "d.o", "d.s", "-c"}
	pack := []string{"/l/clang-offload-packager", "-o", "p.out", "--image=file=d.o,triple=x86_64-pc-linux-gnu,arch=,kind=openmp"}
	packGPUs := []string{"/l/clang-offload-packager", "-o", "p.out", "--image=file=d.bc,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp", "--image=file=d.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp"}
	packARM := []string{"/l/clang-offload-packager", "-o", "p.out", "--image=file=d.o,triple=aarch64-unknown-linux-gnu,arch=,kind=openmp"}
	packCUDA := []string{"/l/clang-offload-packager", "-o", "p.out", "--image=file=d.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda"}
	asHost := []string{"/l/clang", "-cc1as", "-triple", "x86_64-pc-linux-gnu", "-filetype", "obj", "-o", "a.o", "a.s"}
	asAMD := []string{"/l/clang", "-cc1as", "-triple", "amdgcn-amd-amdhsa", "-filetype", "obj", "-o", "d.o", "d.s"}
	newPack := []string{"/l/llvm-offload-binary", "-o", "p.out", "--image=file=d.o,triple=x86_64-pc-linux-gnu,arch=generic,kind=openmp"}
	wrapper := []string{"/l/clang-linker-wrapper", "-o", "a.out", "a.o"}
	ompWhy := func(tool, why string) string {
		return "offcc does not recognise LLVM 19's job " + tool + " in OpenMP compiles (-c) (" + why + "): clang 19 runs the command line whole"
	}
	jobs := func(argvs ...[]string) []*clangJob {
		var out []*clangJob
		for _, a := range argvs {
			out = append(out, newClangJob(a))
		}
		return out
	}
	for _, c := range []struct {
		jobs []*clangJob
		want string
	}{
		{jobs(host, device("x86_64-pc-linux-gnu"), pack, host), ""},
		{jobs(host, device("amdgcn-amd-amdhsa"), device("nvptx64-nvidia-cuda"), ptxas, packGPUs, host), ""},
		{jobs(host, asHost), ""},
		{jobs(host, amd), ompWhy("clang", "a compile for amdgcn-amd-amdhsa")},
		{jobs(host, device("aarch64-unknown-linux-gnu")), ompWhy("clang", "a compile for aarch64-unknown-linux-gnu")},
		{jobs(host, device("spirv64")), ompWhy("clang", "a compile for spirv64")},
		{jobs(host, asAMD), ompWhy("clang", "an assembler job for amdgcn-amd-amdhsa")},
		{jobs(host, packARM), ompWhy("clang-offload-packager", "an image not of OpenMP for x86_64-pc-linux-gnu, amdgcn-amd-amdhsa, nvptx64-nvidia-cuda")},
		{jobs(host, packCUDA), ompWhy("clang-offload-packager", "an image not of OpenMP for x86_64-pc-linux-gnu, amdgcn-amd-amdhsa, nvptx64-nvidia-cuda")},
		{jobs(host, newPack), ompWhy("llvm-offload-binary", "a tool of another shape")},
		{jobs(host, wrapper), ompWhy("clang-linker-wrapper", "a tool of another shape")},
		{jobs(host, []string{"/l/llvm-spirv", "d.bc", "-o", "d.o"}), ompWhy("llvm-spirv", "a tool of another shape")},
	} {
		if got := releaseJobsFit(p19, toolchain.ShapeOpenMPCompile, o, c.jobs, nil); got != c.want {
			t.Errorf("jobs %v: %q, want %q", c.jobs[len(c.jobs)-1].argv, got, c.want)
		}
	}
	// ptxas only where the profile lists nvptx64 among OpenMP's devices.
	noNVPTX := *p19
	noNVPTX.OpenMPDevices = []string{"x86_64-pc-linux-gnu", "amdgcn-amd-amdhsa"}
	if got, want := releaseJobsFit(&noNVPTX, toolchain.ShapeOpenMPCompile, o, jobs(host, ptxas), nil), ompWhy("ptxas", "a tool of another shape"); got != want {
		t.Errorf("ptxas without nvptx64: %q, want %q", got, want)
	}
	// An OpenMP link: clang 19's clang-linker-wrapper, read with 19's
	// wrapper options (--opt-level=, --device-debug); one with an option
	// whose effect offcc's link stage lacks (--ptxas-arg=,
	// --device-linker=, -mllvm) or that 19 rejects is clang 19's whole,
	// and so is one compiling for a GPU (19's wrapper links GPU images).
	linkOpts := parse(append(omp, "a.c")...)
	wrap19 := []string{"/l/clang-linker-wrapper", "--opt-level=O3", "--host-triple=x86_64-pc-linux-gnu", "--device-debug", "--linker-path=/usr/bin/ld", "-o", "a.out", "a.o", "-lomptarget.devicertl"}
	linkWhy := func(tool, why string) string {
		return "offcc does not recognise LLVM 19's job " + tool + " in OpenMP links offloading to the host device (" + why + "): clang 19 runs the command line whole"
	}
	for _, c := range []struct {
		jobs []*clangJob
		want string
	}{
		{jobs(host, pack, host, wrap19), ""},
		{jobs(wrap19), ""},
		{jobs(host, amd, wrap19), linkWhy("clang", "a compile for amdgcn-amd-amdhsa")},
		{jobs(host, device("amdgcn-amd-amdhsa"), wrap19), linkWhy("clang", "a compile for amdgcn-amd-amdhsa")},
		{jobs(host, device("nvptx64-nvidia-cuda"), ptxas, wrap19), linkWhy("clang", "a compile for nvptx64-nvidia-cuda")},
		{jobs(host, ptxas, wrap19), linkWhy("ptxas", "a tool of another shape")},
		{jobs(host, packGPUs, host, wrap19), linkWhy("clang-offload-packager", "an image not of OpenMP for x86_64-pc-linux-gnu")},
		{jobs(append(wrap19[:len(wrap19):len(wrap19)], "--ptxas-arg=-v")), linkWhy("clang-linker-wrapper", "offcc does not link as LLVM 19's clang-linker-wrapper does with --ptxas-arg=")},
		{jobs(append(wrap19[:len(wrap19):len(wrap19)], "--device-linker=-z", "-mllvm", "-x")), linkWhy("clang-linker-wrapper", "offcc does not link as LLVM 19's clang-linker-wrapper does with --device-linker=, -mllvm")},
		{jobs(append(wrap19[:len(wrap19):len(wrap19)], "--wrapper-jobs=x")), linkWhy("clang-linker-wrapper", "--wrapper-jobs=x: expected a positive integer or 'jobserver', got 'x'")},
		{jobs(host, pack, host, []string{"/l/ld", "-o", "a.out", "a.o"}), linkWhy("ld", "a tool of another shape")},
	} {
		if got := releaseJobsFit(p19, toolchain.ShapeOpenMPHostLink, linkOpts, c.jobs, nil); got != c.want {
			t.Errorf("link jobs %v: %q, want %q", c.jobs[len(c.jobs)-1].argv, got, c.want)
		}
	}
	if got := releaseJobsFit(p19, toolchain.ShapePlainCompile, parse("-c", "a.c"), jobs(amd), nil); got != "" {
		t.Errorf("a plain compile's cc1 job: %q", got)
	}
	if got := releaseJobsFit(p19, toolchain.ShapePlainCompile, parse("-c", "a.c"), jobs(pack), nil); got == "" {
		t.Errorf("a packager in a plain compile is recognised")
	}

	// HIP: clang 19's jobs for --offload-arch=gfx906,gfx90a -c.
	hipOpts := parse("-x", "hip", "--offload-arch=gfx906,gfx90a", "-c", "a.hip")
	hipDev := []string{"/l/clang", "-cc1", "-triple", "amdgcn-amd-amdhsa", "-emit-obj", "-target-cpu", "gfx906", "-o", "d.o", "-x", "hip", "a.hip"}
	hipHost := []string{"/l/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-fcuda-include-gpubinary", "a.hipfb", "-o", "a.o", "-x", "hip", "a.hip"}
	nvDev := []string{"/l/clang", "-cc1", "-triple", "nvptx64-nvidia-cuda", "-S", "-o", "d.s", "-x", "cuda", "a.cu"}
	lld := []string{"/l/lld", "-flavor", "gnu", "-m", "elf64_amdgpu", "--no-undefined", "-shared", "-plugin-opt=mcpu=gfx906", "--whole-archive", "-o", "d.out", "d.o", "--no-whole-archive"}
	bundle := func(targets string, more ...string) []string {
		return append([]string{"/l/clang-offload-bundler", "-type=o", "-bundle-align=4096", "-targets=" + targets, "-input=/dev/null", "-input=d.out", "-output=a.hipfb"}, more...)
	}
	hipWhy := func(tool, why string) string {
		return "offcc does not recognise LLVM 19's job " + tool + " in HIP compiles (-c) (" + why + "): clang 19 runs the command line whole"
	}
	for _, c := range []struct {
		jobs []*clangJob
		want string
	}{
		{jobs(hipDev, lld, bundle("host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--gfx906"), hipHost), ""},
		// clang -v passes -verbose to the bundler.
		{jobs(hipDev, lld, bundle("host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--gfx906", "-verbose"), hipHost), ""},
		{jobs(nvDev), hipWhy("clang", "a compile for nvptx64-nvidia-cuda")},
		{jobs(bundle("host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx906")), hipWhy("clang-offload-bundler", "a fat binary whose first entry is not the empty host-x86_64-unknown-linux")},
		{jobs(bundle("host-x86_64-unknown-linux,hip-amdgcn-amd-amdhsa-gfx906")), hipWhy("clang-offload-bundler", "the bundle target hip-amdgcn-amd-amdhsa-gfx906")},
		{jobs(bundle("host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--gfx906", "-compress")), hipWhy("clang-offload-bundler", "the bundler argument -compress")},
		{jobs(bundle("host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a")), hipWhy("clang-offload-bundler", "a bundle other than a HIP fat binary")},
		{jobs([]string{"/l/clang", "-cc1as", "-triple", "amdgcn-amd-amdhsa", "-o", "d.o", "d.s"}), hipWhy("clang", "an assembler job")},
		{jobs([]string{"/l/llvm-mc", "-triple", "amdgcn-amd-amdhsa", "-o", "d.o", "d.mcin", "--filetype=obj"}), hipWhy("llvm-mc", "a tool of another shape")},
	} {
		if got := releaseJobsFit(p19, toolchain.ShapeHIPCompile, hipOpts, c.jobs, nil); got != c.want {
			t.Errorf("jobs %v: %q, want %q", c.jobs[len(c.jobs)-1].argv, got, c.want)
		}
	}
	model := func(string) (string, bool) { return "69a4a34cd45431ed", false }
	withCUID := slices.Insert(slices.Clone(hipDev), 4, "-cuid=69a4a34cd45431ed")
	if got := releaseJobsFit(p19, toolchain.ShapeHIPCompile, hipOpts, jobs(withCUID), model); got != "" {
		t.Errorf("the model's CUID: %q", got)
	}
	withCUID[4] = "-cuid=1234"
	if got, want := releaseJobsFit(p19, toolchain.ShapeHIPCompile, hipOpts, jobs(withCUID), model), hipWhy("clang", "its compile unit ID is not the one offcc's model gives a.hip"); got != want {
		t.Errorf("another CUID: %q, want %q", got, want)
	}

	// HIP -fgpu-rdc: clang 19's jobs for --offload-arch=gfx906,gfx90a
	// -fgpu-rdc -c: bitcode per GPU and the host object, bundled into
	// the object with 19's IDs.
	rdcOpts := parse("-x", "hip", "--offload-arch=gfx906,gfx90a", "-fgpu-rdc", "-c", "a.hip")
	rdcDev := []string{"/l/clang", "-cc1", "-triple", "amdgcn-amd-amdhsa", "-emit-llvm-bc", "-target-cpu", "gfx906", "-fgpu-rdc", "-o", "d.bc", "-x", "hip", "a.hip"}
	rdcHost := []string{"/l/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-fgpu-rdc", "-o", "h.o", "-x", "hip", "a.hip"}
	objBundle := func(targets string, more ...string) []string {
		line := []string{"/l/clang-offload-bundler", "-type=o", "-targets=" + targets, "-output=a.o"}
		for range strings.Split(targets, ",") {
			line = append(line, "-input=x")
		}
		return append(line, more...)
	}
	rdcWhy := func(tool, why string) string {
		return "offcc does not recognise LLVM 19's job " + tool + " in HIP -fgpu-rdc compiles (-c) (" + why + "): clang 19 runs the command line whole"
	}
	for _, c := range []struct {
		jobs []*clangJob
		want string
	}{
		{jobs(rdcDev, rdcDev, rdcHost, objBundle("hip-amdgcn-amd-amdhsa-gfx906,hip-amdgcn-amd-amdhsa-gfx90a,host-x86_64-pc-linux-gnu")), ""},
		{jobs(objBundle("hip-amdgcn-amd-amdhsa-gfx90a:xnack+,host-x86_64-pc-linux-gnu", "-verbose")), ""},
		{jobs(objBundle("hip-amdgcn-amd-amdhsa-unknown-gfx906,host-x86_64-pc-linux-gnu")), rdcWhy("clang-offload-bundler", "the bundle target hip-amdgcn-amd-amdhsa-unknown-gfx906")},
		{jobs(objBundle("hipv4-amdgcn-amd-amdhsa--gfx906,host-x86_64-pc-linux-gnu")), rdcWhy("clang-offload-bundler", "the bundle target hipv4-amdgcn-amd-amdhsa--gfx906")},
		{jobs(objBundle("host-x86_64-pc-linux-gnu,hip-amdgcn-amd-amdhsa-gfx906")), rdcWhy("clang-offload-bundler", "an object bundle whose last entry is not host-x86_64-pc-linux-gnu")},
		{jobs(objBundle("hip-amdgcn-amd-amdhsa-gfx906,host-x86_64-pc-linux-gnu", "-compress")), rdcWhy("clang-offload-bundler", "the bundler argument -compress")},
		{jobs(bundle("host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--gfx906")), rdcWhy("clang-offload-bundler", "the bundler argument -bundle-align=4096")},
		{jobs(lld), rdcWhy("lld", "a tool of another shape")},
		{jobs(nvDev), rdcWhy("clang", "a compile for nvptx64-nvidia-cuda")},
	} {
		if got := releaseJobsFit(p19, toolchain.ShapeHIPRDCCompile, rdcOpts, c.jobs, nil); got != c.want {
			t.Errorf("jobs %v: %q, want %q", c.jobs[len(c.jobs)-1].argv, got, c.want)
		}
	}

	// CUDA -fgpu-rdc: a device compile and ptxas -c per GPU, fatbinary,
	// the host compile.
	cudaRDC := parse("-x", "cuda", "--offload-arch=sm_70", "-fgpu-rdc", "-c", "a.cu")
	ptxas = []string{"/usr/bin/ptxas", "-m64", "-O0", "--gpu-name", "sm_70", "--output-file", "d.cubin", "d.s", "-c"}
	fatbin := []string{"/usr/bin/fatbinary", "-64", "--create", "a.fatbin", "--image=profile=sm_70,file=d.cubin", "--image=profile=compute_70,file=d.s"}
	cudaHost := []string{"/l/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-fgpu-rdc", "-fcuda-include-gpubinary", "a.fatbin", "-o", "a.o", "-x", "cuda", "a.cu"}
	if got := releaseJobsFit(p19, toolchain.ShapeCUDARDCCompile, cudaRDC, jobs(nvDev, ptxas, fatbin, cudaHost), nil); got != "" {
		t.Errorf("CUDA -fgpu-rdc's jobs: %q", got)
	}
	if got, want := releaseJobsFit(p19, toolchain.ShapeCUDARDCCompile, cudaRDC, jobs(hipDev), nil), "offcc does not recognise LLVM 19's job clang in CUDA -fgpu-rdc compiles (-c) (a compile for amdgcn-amd-amdhsa): clang 19 runs the command line whole"; got != want {
		t.Errorf("CUDA -fgpu-rdc with an amdgcn compile: %q, want %q", got, want)
	}
}

// TestCUIDRelease19: LLVM 19's driver hashes --offload-arch= as given (no
// -Xarch_ synthesized) after the input's real path. The vector is clang
// 19.1.7's: `clang++-19 -### -x cuda --offload-arch=sm_70 -c s.cu` in
// /tmp/d19 printed -cuid=eea6a79a91c8dba1.
func TestCUIDRelease19(t *testing.T) {
	t19, err := options.ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := t19.ClangDriver().Parse([]string{"--driver-mode=g++", "-###", "-x", "cuda", "--offload-arch=sm_70", "-c", "s.cu"})
	if err != nil {
		t.Fatal(err)
	}
	cl, ok := readCUIDArgs(parsed, false)
	want := []string{"--driver-mode=g++", "-###", "-x cuda", "--offload-arch=sm_70", "-c"}
	if !ok || !slices.Equal(cl.hashed(), want) {
		t.Fatalf("LLVM 19 hashes %q (%v), want %q", cl.hashed(), ok, want)
	}
	if got := strconv.FormatUint(md5Low("/tmp/d19/s.cu", cl.hashed()), 16); got != "eea6a79a91c8dba1" {
		t.Errorf("CUID %s, clang 19's eea6a79a91c8dba1", got)
	}
	// The ID of a file is that of its real path.
	dir := t.TempDir()
	src := filepath.Join(dir, "k.cu")
	if err := os.WriteFile(src, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.cu")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	parse := func(in string) []*options.Arg {
		p, err := t19.ClangDriver().Parse([]string{"-x", "cuda", "--offload-arch=sm_70,sm_80", "-c", in})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, _ := cuidOfRelease(19, src, parse(src))
	b, _ := cuidOfRelease(19, link, parse(link))
	if a == "" || a != b {
		t.Errorf("LLVM 19's CUIDs of a file and a link to it: %q, %q", a, b)
	}
	if c, _ := cuidOfRelease(22, link, parse(link)); c == b {
		t.Errorf("LLVM 22's CUID is 19's")
	}
}
