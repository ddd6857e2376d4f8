package e2e

// TestRealCommandLines compiles a HIP file against Debian's ROCm and a CUDA
// file against Debian's CUDA toolkit with command lines written as real
// projects (and their build systems) write them, and checks, line by line,
// that offcc plans the compile (no command line handed to clang whole)
// and writes what clang 22 writes, byte for byte.

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// realLinesPrelude is the start of both sources: each macro a line may
// define (or include from a header) has a say in the device code, and the
// lines that -U a macro fail if it is still defined.
const realLinesPrelude = `#include <cstdio>
#ifdef WITH_HEADERS
#include "inc_a.h"
#include "inc_b.h"
#include <sys_c.h>
#include <sys_d.h>
#else
#define FROM_HEADERS 0
#endif
#ifdef WITH_RSP
#include "rsp.h"
#else
#define FROM_RSP 0
#endif
#if defined(BAR) || defined(BAR2)
#error "-U did not undefine BAR and BAR2"
#endif
#if defined(FOO) && !defined(FOO2)
#error "-D FOO2=1 was not seen"
#endif
#ifndef FOO2
#define FOO2 0
#endif
#ifndef X
#define X 0
#endif
#ifndef GREETING
#define GREETING "hello"
#endif

__global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = sinf(a[i]) * s + X + FOO2 + FROM_HEADERS + FROM_RSP;
}
`

const realLinesHIP = "#include <hip/hip_runtime.h>\n" + realLinesPrelude + `
int main() {
  float *d;
  if (hipMalloc(&d, 256 * sizeof(float)) != hipSuccess)
    return 1;
  hipLaunchKernelGGL(scale, dim3(4), dim3(64), 0, 0, d, 2.0f, 256);
  std::printf("%s\n", GREETING);
  return 0;
}
`

const realLinesCUDA = realLinesPrelude + `
int main() {
  float *d;
  if (cudaMalloc(&d, 256 * sizeof(float)) != cudaSuccess)
    return 1;
  scale<<<4, 64>>>(d, 2.0f, 256);
  std::printf("%s\n", GREETING);
  return 0;
}
`

// realLinesFiles are the files besides the source that the lines read.
var realLinesFiles = map[string]string{
	"inc/inc_a.h":   "#define A_VALUE 1\n",
	"inc2/inc_b.h":  "#define B_VALUE 2\n",
	"sys/sys_c.h":   "#define C_VALUE 3\n",
	"sys2/sys_d.h":  "#define FROM_HEADERS (A_VALUE + B_VALUE + C_VALUE + 4)\n",
	"inc dir/rsp.h": "#define FROM_RSP SPACED\n",
	"defines.rsp":   "-DGREETING=\"\\\"hello, world\\\"\" '-DSPACED=(1 + 2)'\n-I \"inc dir\" -DWITH_RSP\n",
	"k.hip":         realLinesHIP,
	"k.cu":          realLinesCUDA,
}

// rspQuote quotes an argument for a response file (GNU quoting).
func rspQuote(a string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range a {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// realLinesSetup writes the files of realLinesFiles into work, and
// all.rsp, which holds base, one quoted argument a line, and makes
// cuda-home, a symbolic link to the CUDA installation.
func realLinesSetup(t testing.TB, work string, base []string) {
	t.Helper()
	files := maps.Clone(realLinesFiles)
	var rsp strings.Builder
	for _, a := range base {
		rsp.WriteString(rspQuote(a) + "\n")
	}
	files["all.rsp"] = rsp.String()
	for name, text := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(cudaHome, filepath.Join(work, "cuda-home")); err != nil {
		t.Fatal(err)
	}
	sameTimes(t, work)
}

// cudaHome is where Debian's nvidia-cuda-toolkit puts the CUDA
// installation that clang looks for.
const cudaHome = "/usr/lib/cuda"

// realLine is one command line of TestRealCommandLines: the compile is
// line(base) -c SRC -o k.o; with link set, the link that follows is
// link -o prog.
type realLine struct {
	name string
	line func(base []string) []string
	link []string
	// offloadLink says that offcc plans the link: one host-link job (an
	// offload link, --hip-link). CUDA's link of k.o is a plain C++ one.
	offloadLink bool
	// outputs are the files the command writes (k.o unless said).
	outputs []string
}

// plus returns the line function that appends extra to the base line.
func plus(extra ...string) func([]string) []string {
	return func(base []string) []string { return args(base, extra) }
}

// without returns the base line less the arguments for which drop is true,
// and then extra.
func without(drop func(string) bool, extra ...string) func([]string) []string {
	return func(base []string) []string {
		var out []string
		for _, a := range base {
			if !drop(a) {
				out = append(out, a)
			}
		}
		return args(out, extra)
	}
}

// realLinesCommon are the lines both languages are compiled with. Each
// line puts together options of one kind (each line is two real compiles
// of a real HIP or CUDA TU, so there are few of them).
var realLinesCommon = []realLine{
	{name: "target-flags", line: plus("-march=native", "-mtune=generic", "-Xclang", "-fno-autolink", "-fPIC")},
	{name: "defines-includes-std", line: plus("-DBAR", "-DBAR2", "-DFOO", "-D", "FOO2=1", "-UBAR", "-U", "BAR2",
		"-DWITH_HEADERS", "-Iinc", "-I", "inc2", "-isystem", "sys", "-isystemsys2", "-std=c++17")},
	{name: "response-file", line: plus("@defines.rsp", "-std=gnu++14")},
	{name: "response-file-whole-line", line: func([]string) []string { return []string{"@all.rsp"} }},
	{name: "rdc", line: plus("-fgpu-rdc")},
	{name: "rdc-cuid", line: plus("-fgpu-rdc", "-cuid=abc")},
	{name: "O2-g-MD-MF", line: plus("-O2", "-g", "-DNDEBUG", "-MD", "-MF", "dep.d"), outputs: []string{"k.o", "dep.d"}},
}

// TestRealCommandLines: for each line of realLinesCommon and the
// language's own (-Xarch_, the CUDA installation's path, a link with
// -Wl,--as-needed), in HIP (Debian's ROCm, llvmtest.ROCmHIPFlags, -O2)
// and CUDA (Debian's CUDA 11.8, --cuda-path=/usr/lib/cuda --offload-arch=
// sm_80 -O2), offcc plans the compile (its job trace has no "fallback"
// job, one host compile and a device compile for each arch), plans HIP's
// link (one host-link job), and writes clang's outputs byte for byte, both
// compilers building in a directory of the same path.
func TestRealCommandLines(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	_, tmp := tmpEnv(t)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	for _, lang := range []struct {
		name  string
		src   string
		base  []string
		archs []string
		have  func(t *testing.T)
		own   []realLine
	}{
		{
			// Debian's ROCm line less one of its archs (a device compile
			// less per line, and --no-offload-arch= on every line).
			name: "hip", src: "k.hip", base: args(llvmtest.ROCmHIPFlags(), "--no-offload-arch=gfx1030", "-O2"), archs: []string{"gfx90a"},
			have: func(t *testing.T) { llvmtest.ROCm(t) },
			own: []realLine{
				{name: "Xarch", line: plus("-Xarch_gfx90a", "-DX=1")},
				{name: "link-as-needed", line: plus(), link: args(llvmtest.ROCmLinkFlags(), "-O2", "-Wl,--as-needed", "k.o", "-lamdhip64"),
					offloadLink: true, outputs: []string{"k.o", "prog"}},
			},
		},
		{
			name: "cuda", src: "k.cu", base: []string{"-x", "cuda", "--cuda-path=" + cudaHome, "--offload-arch=sm_80", "-O2"}, archs: []string{"sm_80"},
			have: func(t *testing.T) {
				llvmtest.CUDA(t)
				if _, err := os.Stat(filepath.Join(cudaHome, "include", "cuda.h")); err != nil {
					if os.Getenv(llvmtest.EnvRequireCUDA) == "1" {
						t.Fatalf("no CUDA installation in %s (make deps-cuda) and %s=1", cudaHome, llvmtest.EnvRequireCUDA)
					}
					t.Skipf("no CUDA installation in %s (make deps-cuda)", cudaHome)
				}
			},
			own: []realLine{
				// -DX=1 would break CUDA's curand headers, which use X.
				{name: "Xarch", line: plus("-Xarch_sm_80", "-DFOO2=2")},
				{name: "cuda-path-relative", line: without(func(a string) bool { return a == "--cuda-path="+cudaHome }, "--cuda-path=cuda-home")},
				{name: "cuda-path-found", line: without(func(a string) bool { return a == "--cuda-path="+cudaHome })},
				{name: "link-as-needed", line: plus(), link: args("-Wl,--as-needed", "k.o", "-lcudart"), outputs: []string{"k.o", "prog"}},
			},
		},
	} {
		for _, l := range append(slices.Clone(realLinesCommon), lang.own...) {
			t.Run(lang.name+"/"+l.name, func(t *testing.T) {
				t.Parallel()
				lang.have(t)
				root := t.TempDir()
				compile := args(l.line(lang.base), "-c", lang.src, "-o", "k.o")
				var link []string
				if l.link != nil {
					link = args(l.link, "-o", "prog")
				}
				env := cacheEnvFor(tmp, cacheDir)
				clangDir := inWork(t, root, "clang", func(work string) {
					realLinesSetup(t, work, lang.base)
					cmdSpec{dir: work, env: []string{tmp}, name: refClangXX, args: compile}.mustRun(t)
					if link != nil {
						cmdSpec{dir: work, env: []string{tmp}, name: refClangXX, args: link}.mustRun(t)
					}
				})
				offccDir := inWork(t, root, "offcc", func(work string) {
					realLinesSetup(t, work, lang.base)
					cmdSpec{dir: work, env: append(slices.Clone(env), traceEnv(filepath.Join(root, "compile.json"))), name: c.cxx, args: compile}.mustRun(t)
					if link != nil {
						cmdSpec{dir: work, env: append(slices.Clone(env), traceEnv(filepath.Join(root, "link.json"))), name: c.cxx, args: link}.mustRun(t)
					}
				})
				// The part of the line that is the case's, for messages.
				what := "the base line"
				if own := l.line(nil); len(own) > 0 {
					what = shellJoin(own)
				}
				checkPlanned(t, what, readJobTrace(t, filepath.Join(root, "compile.json")), lang.archs...)
				if l.offloadLink {
					evs := readJobTrace(t, filepath.Join(root, "link.json"))
					links := selectEvents(evs, func(e jobEvent) bool { return e.Kind == "host-link" })
					if fb := selectEvents(evs, func(e jobEvent) bool { return e.Kind == "fallback" }); len(fb) > 0 || len(links) != 1 {
						t.Errorf("%s: want the link planned, one host-link job; jobs:\n%s", shellJoin(link), listEvents(evs))
					}
				}
				outputs := l.outputs
				if outputs == nil {
					outputs = []string{"k.o"}
				}
				sameTrees(t, what, clangDir, offccDir, outputs...)
			})
		}
	}
}
