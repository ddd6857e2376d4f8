package linkerwrapper

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/toolchain"
)

var llvmBin = llvmtest.Bin

const hostTarget = "-fopenmp-targets=x86_64-pc-linux-gnu"

// requireLLVM skips the test when LLVM 22's clang and clang-linker-wrapper
// are not installed.
func requireLLVM(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"clang", "clang-linker-wrapper", "llvm-objdump", "llvm-ar"} {
		llvmtest.Tool(t, tool)
	}
}

// clang runs clang in dir and returns its combined output.
func clang(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(llvmBin, "clang"), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o666); err != nil {
		t.Fatal(err)
	}
}

// wrapperArgs returns clang's own clang-linker-wrapper argument list for a
// link with args: the last job line of -###, without the executable.
func wrapperArgs(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	out := clang(t, dir, append(args, "-###")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	argv, err := actions.SplitHash(last)
	if err != nil {
		t.Fatalf("parsing %q: %v", last, err)
	}
	if !strings.HasSuffix(argv[0], "clang-linker-wrapper") {
		t.Fatalf("last job is not clang-linker-wrapper: %q", last)
	}
	return argv[1:]
}

// runMain calls Main and returns its status, stdout and stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	rc := Main(context.Background(), Config{Clang: filepath.Join(llvmBin, "clang"), Jobs: 4, Stdout: &stdout, Stderr: &stderr}, args)
	return rc, stdout.String(), stderr.String()
}

// runOffload runs an OpenMP program with mandatory offloading.
func runOffload(t *testing.T, exe string) string {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "OMP_TARGET_OFFLOAD=MANDATORY", "LD_LIBRARY_PATH=/usr/lib/llvm-22/lib")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, out)
	}
	return string(out)
}

const mainSrc = `#include <stdio.h>
#include <omp.h>
int main(void) {
  int initial = -1, v = 0;
#pragma omp target map(from: initial, v)
  { initial = omp_is_initial_device(); v = 42; }
  printf("initial=%d v=%d\n", initial, v);
  return 0;
}
`

func TestLinkAndRunOffloaded(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.c"), mainSrc)
	clang(t, dir, "-fopenmp", hostTarget, "-c", "m.c", "-o", "m.o")
	exe := filepath.Join(dir, "m")
	args := wrapperArgs(t, dir, "-fopenmp", hostTarget, filepath.Join(dir, "m.o"), "-o", exe)
	rc, _, stderr := runMain(t, args...)
	if rc != 0 {
		t.Fatalf("Main = %d\n%s", rc, stderr)
	}
	if got := runOffload(t, exe); !strings.Contains(got, "initial=0 v=42") {
		t.Fatalf("program printed %q, want the region to run on the device", got)
	}

	// llvm-objdump lists the registered image.
	out, err := exec.Command(filepath.Join(llvmBin, "llvm-objdump"), "--offloading", exe).CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-objdump: %v\n%s", err, out)
	}
	for _, want := range []string{"OFFLOADING IMAGE [0]", "kind            elf", "triple          x86_64-pc-linux-gnu", "producer        openmp"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("llvm-objdump --offloading lacks %q:\n%s", want, out)
		}
	}
	// No leftovers next to the output.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".offcc-") {
			t.Errorf("temporary %s left in the output directory", e.Name())
		}
	}
}

func TestTwoObjectsSharedDeclareTarget(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.c"), `#pragma omp declare target
int scale = 5;
int twice(int x) { return 2 * x; }
#pragma omp end declare target
int run_a(int x) {
  int r = 0;
#pragma omp target map(from: r)
  r = twice(x) + scale;
  return r;
}
`)
	writeFile(t, filepath.Join(dir, "b.c"), `#include <stdio.h>
#include <omp.h>
#pragma omp declare target
extern int scale;
int twice(int x);
#pragma omp end declare target
int run_a(int);
int main(void) {
  int r = 0, initial = -1;
#pragma omp target map(from: r, initial)
  { r = twice(scale); initial = omp_is_initial_device(); }
  printf("a=%d b=%d initial=%d\n", run_a(10), r, initial);
  return 0;
}
`)
	clang(t, dir, "-fopenmp", hostTarget, "-c", "a.c", "b.c")
	exe := filepath.Join(dir, "ab")
	args := wrapperArgs(t, dir, "-fopenmp", hostTarget, filepath.Join(dir, "a.o"), filepath.Join(dir, "b.o"), "-o", exe)
	if rc, _, stderr := runMain(t, args...); rc != 0 {
		t.Fatalf("Main = %d\n%s", rc, stderr)
	}
	if got := runOffload(t, exe); !strings.Contains(got, "a=25 b=10 initial=0") {
		t.Fatalf("program printed %q", got)
	}
}

func TestStaticArchive(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "k.c"), `#pragma omp declare target
int kfun(int x) { return x * 3; }
#pragma omp end declare target
int krun(int x) {
  int r = 0;
#pragma omp target map(from: r)
  r = kfun(x);
  return r;
}
`)
	writeFile(t, filepath.Join(dir, "u.c"), `int unused(int x) {
  int r = 0;
#pragma omp target map(from: r)
  r = x + 1;
  return r;
}
`)
	writeFile(t, filepath.Join(dir, "mk.c"), `#include <stdio.h>
int krun(int);
int main(void) { printf("k=%d\n", krun(14)); return 0; }
`)
	clang(t, dir, "-fopenmp", hostTarget, "-c", "k.c", "u.c", "mk.c")
	ar := exec.Command(filepath.Join(llvmBin, "llvm-ar"), "rcs", "libk.a", "k.o", "u.o")
	ar.Dir = dir
	if out, err := ar.CombinedOutput(); err != nil {
		t.Fatalf("llvm-ar: %v\n%s", err, out)
	}
	exe := filepath.Join(dir, "mk")
	args := wrapperArgs(t, dir, "-fopenmp", hostTarget, filepath.Join(dir, "mk.o"), "-L"+dir, "-lk", "-o", exe)

	rc, _, stderr := runMain(t, append(args, "--dry-run")...)
	if rc != 0 {
		t.Fatalf("Main --dry-run = %d\n%s", rc, stderr)
	}
	devLink := firstLine(stderr, "--target=x86_64-pc-linux-gnu")
	if !strings.Contains(devLink, "/mk-x86_64-pc-linux-gnu-generic-") || !strings.Contains(devLink, "/k-x86_64-pc-linux-gnu-generic-") {
		t.Errorf("device link lacks the images of mk.o and libk.a(k.o):\n%s", devLink)
	}
	// clang-linker-wrapper 22 takes u.o's image too, although the host
	// needs nothing of u.o: its device code defines a new global symbol
	// (the kernel), which offload code extracts. offcc does as it does.
	if !strings.Contains(devLink, "/u-x86_64") {
		t.Errorf("archive member u.o, whose device code defines a kernel, contributed no image:\n%s", devLink)
	}
	sameDryRun(t, dir, append(args, "--dry-run"), stderr)
	if _, err := os.Stat(exe); err == nil {
		t.Errorf("--dry-run wrote %s", exe)
	}

	if rc, _, stderr := runMain(t, args...); rc != 0 {
		t.Fatalf("Main = %d\n%s", rc, stderr)
	}
	if got := runOffload(t, exe); !strings.Contains(got, "k=42") {
		t.Fatalf("program printed %q", got)
	}
}

// firstLine returns the first line of text containing sub.
func firstLine(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// tempPath matches a temporary file name with its directory and random part.
var tempPath = regexp.MustCompile(`\S*/([^/\s]+)-[0-9a-f]{6}\.(o|img|fatbin)\b`)

// normalizeDryRun keeps the device and host link lines of a --dry-run output
// with temporary names reduced to "<prefix>.<ext>".
func normalizeDryRun(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		lines = append(lines, tempPath.ReplaceAllString(l, "$1.$2"))
	}
	return lines
}

func TestDryRunAMDGPUMatchesClang(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.c"), mainSrc)
	clang(t, dir, "-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-c", "m.c", "-o", "mg.o")
	args := wrapperArgs(t, dir, "-fopenmp", "--offload-arch=gfx90a", "-nogpulib", filepath.Join(dir, "mg.o"), "-o", filepath.Join(dir, "mg"))
	extra := []string{"--dry-run", "--device-linker=-lfoo", "--device-linker=nvptx64-nvidia-cuda=-lbar", "--device-compiler=amdgcn-amd-amdhsa=-g", "-mllvm", "-inline-threshold=1"}
	args = append(args, extra...)

	rc, _, stderr := runMain(t, args...)
	if rc != 0 {
		t.Fatalf("Main = %d\n%s", rc, stderr)
	}
	want := "--target=amdgcn-amd-amdhsa -mcpu=gfx90a -flto -Xlinker --plugin-opt=-inline-threshold=1 -Wl,--no-undefined "
	if dev := firstLine(stderr, "--target=amdgcn"); !strings.Contains(dev, want) || !strings.Contains(dev, "-Xlinker -lfoo -g") || strings.Contains(dev, "-lbar") {
		t.Errorf("device link %q lacks %q or the pass-through options", dev, want)
	}
	if host := firstLine(stderr, "/usr/bin/ld"); !strings.Contains(host, ".openmp.image.wrapper-") {
		t.Errorf("host link %q lacks the wrapper object", host)
	}

	sameDryRun(t, dir, args, stderr)
}

func TestDeviceLinkFailure(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.c"), mainSrc)
	clang(t, dir, "-fopenmp", hostTarget, "-c", "m.c", "-o", "m.o")
	exe := filepath.Join(dir, "m")
	args := wrapperArgs(t, dir, "-fopenmp", hostTarget, filepath.Join(dir, "m.o"), "-o", exe)

	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	rc, _, stderr := runMain(t, append(args, "--device-linker=-lnonexistent_offcc_lib")...)
	if rc == 0 {
		t.Fatal("Main succeeded with a failing device link")
	}
	if !strings.Contains(stderr, "offcc: error: linking device code for x86_64-pc-linux-gnu failed with exit code 1") {
		t.Errorf("missing offcc's error line:\n%s", stderr)
	}
	if !strings.Contains(stderr, "nonexistent_offcc_lib") {
		t.Errorf("the device linker's diagnostics are not shown:\n%s", stderr)
	}
	if _, err := os.Stat(exe); err == nil {
		t.Error("output file exists after a failed link")
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left in TMPDIR: %v", ents)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".offcc-") {
			t.Errorf("temporary %s left in the output directory", e.Name())
		}
	}
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs(toolchain.Wrapper22, []string{"--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld",
		"-o", "out", "-Lx", "-L", "y", "--library-path=z", "-lfoo", "-l", "bar", "-mllvm", "-a",
		"--offload-opt=-b", "--device-linker=-lq", "--device-linker=amdgcn-amd-amdhsa=-lr",
		"--wrapper-jobs=3", "--dry-run", "--should-extract=gfx90a", "m.o", "--as-needed", "-rpath", "/rp"})
	if err != nil {
		t.Fatal(err)
	}
	wantHost := []string{"-o", "out", "-L", "x", "-L", "y", "-L", "z", "-l", "foo", "-l", "bar", "m.o", "--as-needed", "-rpath", "/rp"}
	if strings.Join(o.hostArgs, " ") != strings.Join(wantHost, " ") {
		t.Errorf("host args %q, want %q", o.hostArgs, wantHost)
	}
	if o.output != "out" || o.hostArgs[o.outIndex] != "out" || o.wrapperJobs != 3 || !o.dryRun || !o.shouldExtract["gfx90a"] {
		t.Errorf("parsed %+v", o)
	}
	if strings.Join(o.pluginOpts, " ") != "-a -b" || strings.Join(o.mllvm, " ") != "-a" {
		t.Errorf("plugin opts %q, mllvm %q", o.pluginOpts, o.mllvm)
	}
	if o.deviceLinker[0] != (tripleValue{"", "-lq"}) || o.deviceLinker[1] != (tripleValue{"amdgcn-amd-amdhsa", "-lr"}) {
		t.Errorf("device linker %q", o.deviceLinker)
	}
	for _, bad := range [][]string{{"--wrapper-foo"}, {"--wrapper-jobs=x"}, {"-o"}} {
		if _, err := parseArgs(toolchain.Wrapper22, bad); err == nil {
			t.Errorf("parseArgs(%q) succeeded", bad)
		}
	}
	if rc, _, stderr := runMain(t, "--linker-path=/bin/true", "--wrapper-foo"); rc == 0 || !strings.Contains(stderr, "offcc: error: unknown argument: '--wrapper-foo'") {
		t.Errorf("unknown wrapper option: rc %d, %q", rc, stderr)
	}
	if rc, _, stderr := runMain(t, "--linker-path=/bin/true", "-r", "-o", "x"); rc == 0 || !strings.Contains(stderr, "not supported yet") {
		t.Errorf("-r: rc %d, %q", rc, stderr)
	}
	if _, err := searchLibrary("surely_not_there", "", []string{t.TempDir()}); err == nil || err.Error() != "unable to find library -lsurely_not_there" {
		t.Errorf("searchLibrary: %v", err)
	}
}

// TestGroupImages checks the grouping clang-linker-wrapper 22 was observed
// to do for images in this order: nvptx generic, gfx90a, x86_64 generic,
// sm_80, sm_70, gfx90a:xnack+.
func TestGroupImages(t *testing.T) {
	mk := func(triple, arch string) deviceImage {
		return deviceImage{triple: triple, arch: arch, stem: arch, image: packager.Image{}}
	}
	const nv, amd, x86 = "nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa", "x86_64-pc-linux-gnu"
	groups := groupImages([]deviceImage{mk(nv, "generic"), mk(amd, "gfx90a"), mk(x86, "generic"), mk(nv, "sm_80"), mk(nv, "sm_70"), mk(amd, "gfx90a:xnack+")})
	var got []string
	for _, g := range groups {
		var archs []string
		for _, im := range g.images {
			archs = append(archs, im.arch)
		}
		got = append(got, g.id.Arch+"="+strings.Join(archs, ","))
	}
	want := "generic=generic,sm_80,sm_70 gfx90a=gfx90a,gfx90a:xnack+ generic=generic sm_80=sm_80 sm_70=sm_70 gfx90a:xnack+=gfx90a:xnack+"
	if strings.Join(got, " ") != want {
		t.Errorf("groups %q\nwant   %q", strings.Join(got, " "), want)
	}
}

// TestWrapperObjectTwoImages compiles a registration module for two images
// and checks that the object's .llvm.offloading section lists both.
func TestWrapperObjectTwoImages(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	var imgs []wrappedImage
	for i, arch := range []string{"gfx90a", "gfx1030"} {
		data := bytes.Repeat([]byte{byte('A' + i)}, 13+i)
		blob, off := packImage("amdgcn-amd-amdhsa", arch, data)
		p := filepath.Join(dir, arch+" blob.bin") // a space, to exercise quoting
		writeFile(t, p, string(blob))
		imgs = append(imgs, wrappedImage{blob: blob, imageOffset: off, imageSize: uint64(len(data))})
	}
	writeFile(t, filepath.Join(dir, "w.ll"), openMPWrapperIR("x86_64-pc-linux-gnu", toolchain.Preferred(), imgs))
	clang(t, dir, "--no-default-config", "-c", "-x", "ir", "--target=x86_64-pc-linux-gnu", "-O2", "-fPIC", "-o", "w.o", "w.ll")
	out, err := exec.Command(filepath.Join(llvmBin, "llvm-objdump"), "--offloading", filepath.Join(dir, "w.o")).CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-objdump: %v\n%s", err, out)
	}
	for _, want := range []string{"OFFLOADING IMAGE [1]", "arch            gfx90a", "arch            gfx1030", "producer        openmp"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("llvm-objdump --offloading lacks %q:\n%s", want, out)
		}
	}
}

// TestDryRunSYCLMatchesClang: for a SYCL link, offcc's --dry-run prints
// the device link (clang --sycl-link with clang-sycl-linker's -triple and
// -arch) and the host link (with the SYCL wrapper object first) that
// clang-linker-wrapper 22 prints.
func TestDryRunSYCLMatchesClang(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "k.cpp"), `template <typename N, typename F>
[[clang::sycl_kernel_entry_point(N)]] void single_task(F f) { f(); }
struct K;
void run(int *p) { single_task<K>([=]() { p[0] = 1; }); }
int main() { return 0; }
`)
	clang(t, dir, "-fsycl", "-c", "k.cpp", "-o", "k.o")
	args := wrapperArgs(t, dir, "-fsycl", filepath.Join(dir, "k.o"), "-o", filepath.Join(dir, "k"))
	args = append(args, "--dry-run", "--device-compiler=spirv64-unknown-unknown=-g")
	rc, _, stderr := runMain(t, args...)
	if rc != 0 {
		t.Fatalf("Main = %d\n%s", rc, stderr)
	}
	want := "--target=spirv64-unknown-unknown " + filepath.Join(dir, "k") + " --sycl-link -Xlinker -triple=spirv64-unknown-unknown -Xlinker -arch= -g"
	dev := firstLine(stderr, "--sycl-link")
	if !strings.Contains(tempPath.ReplaceAllString(dev, "$1.$2"), "--target=spirv64-unknown-unknown ") || !strings.HasSuffix(dev, "--sycl-link -Xlinker -triple=spirv64-unknown-unknown -Xlinker -arch= -g") {
		t.Errorf("device link %q, want one like %q", dev, want)
	}
	if host := firstLine(stderr, "/usr/bin/ld"); !strings.Contains(host, ".sycl.image.wrapper-") {
		t.Errorf("host link %q lacks the SYCL wrapper object", host)
	}
	sameDryRun(t, dir, args, stderr)
}

// TestDryRunCUDAMatchesClang: for a CUDA link (RDC, bitcode images for two
// sm archs) offcc's --dry-run prints the device links, NVIDIA's fatbinary
// over both images and the host link that clang-linker-wrapper 22 prints.
// Without the CUDA toolkit a real link stops at once, naming fatbinary.
func TestDryRunCUDAMatchesClang(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	// cuda_min.h declares what clang needs of a CUDA runtime where it
	// finds a toolkit (cudaLaunchKernel) and where it does not.
	writeFile(t, filepath.Join(dir, "k.cu"), "#include \"cuda_min.h\"\n__global__ void k(int *p) { *p = 1; }\n")
	inc, _ := filepath.Abs("../testdata/cuda")
	clang(t, dir, "-x", "cuda", "--offload-arch=sm_80,sm_90", "-nocudainc", "-nocudalib", "--cuda-feature=+ptx80",
		"-I"+inc, "--offload-new-driver", "-fgpu-rdc", "-foffload-lto", "-c", "k.cu", "-o", "k.o")
	args := wrapperArgs(t, dir, "--offload-new-driver", "-fgpu-rdc", "--offload-arch=sm_80,sm_90", filepath.Join(dir, "k.o"), "-o", filepath.Join(dir, "k"))
	rc, _, stderr := runMain(t, append(args, "--dry-run")...)
	if rc != 0 {
		t.Fatalf("Main = %d\n%s", rc, stderr)
	}
	if fb := firstLine(stderr, "--create"); !strings.Contains(fb, "--image3=kind=elf,sm=90,file=") || !strings.Contains(fb, "--image3=kind=elf,sm=80,file=") {
		t.Errorf("fatbinary line %q", fb)
	}
	if host := firstLine(stderr, "/usr/bin/ld"); !strings.Contains(host, ".cuda.image.wrapper-") {
		t.Errorf("host link %q lacks the CUDA wrapper object", host)
	}
	sameDryRun(t, dir, append(args, "--dry-run"), stderr)
	if _, err := exec.LookPath("fatbinary"); err == nil {
		return
	}
	rc, _, stderr = runMain(t, args...)
	if rc != 1 || !strings.Contains(stderr, "cannot find 'fatbinary'") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("link without the CUDA toolkit: exit %d\n%s", rc, stderr)
	}
}

// sameDryRun runs clang-linker-wrapper 22 with args (which include
// --dry-run) in dir and checks that it prints the device and host link
// lines that ours (offcc's --dry-run output) has.
func sameDryRun(t *testing.T, dir string, args []string, ours string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(llvmBin, "clang-linker-wrapper"), args...)
	cmd.Dir = dir
	theirs, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clang-linker-wrapper: %v\n%s", err, theirs)
	}
	if got, want := strings.Join(normalizeDryRun(ours), "\n"), strings.Join(normalizeDryRun(string(theirs)), "\n"); got != want {
		t.Errorf("dry run differs from clang-linker-wrapper's\nours:\n%s\ntheirs:\n%s", got, want)
	}
}

// TestLLCBesideTheWrapper: the registration module's llc is the one of
// clang-linker-wrapper's LLVM, version suffix included: /usr/bin/llc may
// be another LLVM's.
func TestLLCBesideTheWrapper(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{LinkerWrapper: "/usr/bin/clang-linker-wrapper-22"}, "/usr/bin/llc-22"},
		{Config{Clang: "/usr/lib/llvm-22/bin/clang"}, "/usr/lib/llvm-22/bin/llc"},
		{Config{LinkerWrapper: "/opt/llvm/bin/clang-linker-wrapper"}, "/opt/llvm/bin/llc"},
	} {
		if got := tc.cfg.llc(); got != tc.want {
			t.Errorf("%+v: llc %s, want %s", tc.cfg, got, tc.want)
		}
	}
}

// TestRelease19: LLVM 19's clang-linker-wrapper command line is read with
// its options (--opt-level= and --device-debug are the wrapper's, not the
// host linker's; --ptxas-arg= is one offcc has no effect of), and a link
// whose inputs hold anything but OpenMP objects for the host device (19
// links GPU images, LLVM IR, with its own LTO) is handed to 19's
// clang-linker-wrapper whole, with a note.
func TestRelease19(t *testing.T) {
	p19 := toolchain.ProfileOf(19)
	line := []string{"--opt-level=O3", "--host-triple=x86_64-pc-linux-gnu", "--device-debug", "--linker-path=/usr/bin/ld", "-o", "prog", "a.o"}
	cl, err := ParseReleaseCommandLine(p19, line)
	if err != nil {
		t.Fatal(err)
	}
	if o := cl.o; o.optLevel != "O3" || !o.deviceDebug || strings.Join(o.hostArgs, " ") != "-o prog a.o" || cl.Foreign() != "" {
		t.Errorf("LLVM 19: opt level %q, debug %v, host args %q, foreign %q", o.optLevel, o.deviceDebug, o.hostArgs, cl.Foreign())
	}
	if cl22, err := ParseCommandLine(line); err != nil || !slices.Contains(cl22.o.hostArgs, "--opt-level=O3") {
		t.Errorf("LLVM 22 (no --opt-level=): %v", err)
	}
	cl, err = ParseReleaseCommandLine(p19, append(line, "--ptxas-arg=-v", "--linker-arg=-z"))
	if want := "offcc does not link as LLVM 19's clang-linker-wrapper does with --ptxas-arg=, --linker-arg="; err != nil || cl.Foreign() != want {
		t.Errorf("foreign options: %v, %q, want %q", err, cl.Foreign(), want)
	}

	dir := t.TempDir()
	img := filepath.Join(dir, "amd.out")
	blob := packager.Marshal([]packager.Image{{Kind: packager.ImageBitcode, Offload: packager.OffloadOpenMP,
		Strings: []packager.KeyValue{{Key: "triple", Value: "amdgcn-amd-amdhsa"}, {Key: "arch", Value: "gfx906"}}, Data: []byte("BC\xc0\xde")}})
	writeFile(t, img, string(blob))
	cl, err = ParseReleaseCommandLine(p19, []string{"--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld", "-o", "prog", img})
	if err != nil {
		t.Fatal(err)
	}
	var notes bytes.Buffer
	acts, err := Plan(Config{LinkerWrapper: "/l19/clang-linker-wrapper", Verbose: true}, cl, nil, &notes)
	if err != nil || len(acts) != 1 || acts[0].Command[0] != "/l19/clang-linker-wrapper" ||
		!strings.Contains(notes.String(), "offcc links only LLVM 19's OpenMP objects for the host device, not "+img+"'s llvm ir image for amdgcn-amd-amdhsa") {
		t.Errorf("LLVM 19's GPU image: %v, %d actions, notes %q", err, len(acts), notes.String())
	}
}

// TestDryRun19MatchesClang: offcc's --dry-run of LLVM 19's OpenMP link to
// the host device prints the device link (-march=native, -O<n>, no
// -dumpdir; -g, -save-temps and -v) and host link that LLVM 19's
// clang-linker-wrapper prints for objects clang 19 made.
func TestDryRun19MatchesClang(t *testing.T) {
	clang19 := llvmtest.Tool19(t, "clang")
	wrapper19 := llvmtest.Tool19(t, "clang-linker-wrapper")
	llvmtest.OpenMP19(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.c"), "int main(void) { int v = 0;\n#pragma omp target map(from: v)\n v = 42;\n return v != 42; }\n")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	flags := []string{"-fopenmp", hostTarget, "-L" + llvmtest.OMPLib19}
	run(clang19, append(flags, "-c", "m.c", "-o", "m.o")...)
	// (Absolute paths: Main reads the object from the test's directory.)
	lines := strings.Split(strings.TrimSpace(run(clang19, append(flags, filepath.Join(dir, "m.o"), "-O1", "-g", "-o", filepath.Join(dir, "m"), "-###")...)), "\n")
	argv, err := actions.SplitHash(lines[len(lines)-1])
	if err != nil || !strings.HasSuffix(argv[0], "clang-linker-wrapper") {
		t.Fatalf("clang 19's link job %q: %v", lines[len(lines)-1], err)
	}
	args := append(argv[1:], "--dry-run", "--save-temps", "--wrapper-verbose")
	var stdout, stderr bytes.Buffer
	cfg := Config{Clang: clang19, LinkerWrapper: wrapper19, Release: toolchain.ProfileOf(19), Stdout: &stdout, Stderr: &stderr}
	if rc := Main(context.Background(), cfg, args); rc != 0 {
		t.Fatalf("Main = %d\n%s", rc, stderr.String())
	}
	ours := stderr.String()
	if dev := firstLine(ours, "--target=x86_64"); !strings.Contains(dev, " --target=x86_64-pc-linux-gnu -march=native -O1 -Wl,--no-undefined ") {
		t.Errorf("LLVM 19's device link %q", dev)
	}
	cmd := exec.Command(wrapper19, args...)
	cmd.Dir = dir
	theirs, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clang-linker-wrapper 19: %v\n%s", err, theirs)
	}
	if got, want := strings.Join(normalizeDryRun(ours), "\n"), strings.Join(normalizeDryRun(string(theirs)), "\n"); got != want {
		t.Errorf("dry run differs from clang-linker-wrapper 19's\nours:\n%s\ntheirs:\n%s", got, want)
	}
}
