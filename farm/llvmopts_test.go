package farm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// The LLVM options of llvmAllowed, run: each with the real clang -cc1 and
// ld.lld, in an empty directory, leaves nothing there but the output.

// llvmKernelCU and llvmKernelC are the kernels the options are run on: a
// loop to unroll and vectorize, a call to inline, a division.
const (
	llvmKernelCU = `static __attribute__((device)) int sq(int x) { return x * x; }
extern "C" __attribute__((global)) void k(int *p, float *f, int n) {
  for (int i = 0; i < n; i++)
    p[i] = sq(p[i]) + i;
  for (int i = 0; i < 64; i++)
    f[i] = f[i] * 2.0f + f[i + 1];
  if (p[0] > 3)
    p[1] = p[2] / p[3];
}
`
	llvmKernelC = `static int sq(int x) { return x * x; }
int k(int *p, float *f, int n) {
  for (int i = 0; i < n; i++)
    p[i] = sq(p[i]) + i;
  for (int i = 0; i < 64; i++)
    f[i] = f[i] * 2.0f + f[i + 1];
  return p[0] > 3 ? p[2] / p[3] : 0;
}
`
)

// llvmTarget is a device compile (cc1) or an LTO device link (lld) the
// options run in: the command's arguments but the option and -o, and the
// output's name.
type llvmTarget struct {
	name string
	args []string
	out  string
}

// llvmHarness runs commands in empty directories.
type llvmHarness struct {
	clang, lld string
	cc1, links []llvmTarget
	// strace, when found, traces the files each run names.
	strace string
	// base are the files a run without any LLVM option names, by the
	// target's name (with strace only).
	base map[string]map[string]bool
}

func newLLVMHarness(t *testing.T, clang, lld string, spirv bool) *llvmHarness {
	t.Helper()
	h := &llvmHarness{clang: clang, lld: lld, base: map[string]map[string]bool{}}
	src := t.TempDir()
	cu, c := filepath.Join(src, "k.cu"), filepath.Join(src, "k.c")
	for p, text := range map[string]string{cu: llvmKernelCU, c: llvmKernelC} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.cc1 = []llvmTarget{
		// HIP's and OpenMP's AMDGPU device compiles.
		{"amdgcn", []string{"-triple", "amdgcn-amd-amdhsa", "-target-cpu", "gfx906", "-emit-obj", "-x", "hip", "-fcuda-is-device", cu}, "out.o"},
		// CUDA's and OpenMP's NVPTX device compiles (PTX: no ptxas).
		{"nvptx64", []string{"-triple", "nvptx64-nvidia-cuda", "-target-cpu", "sm_80", "-S", "-x", "cuda", "-fcuda-is-device", cu}, "out.s"},
		// SPIR-V device compiles (HIP --offload=spirv64, SYCL), to
		// an object through LLVM's SPIR-V backend.
		{"spirv64", []string{"-triple", "spirv64", "-emit-obj", "-x", "hip", "-fcuda-is-device", cu}, "out.spv"},
		// OpenMP's x86_64 host device, and the host side of every
		// offload compile (the driver's -mllvm goes to both sides).
		{"x86_64", []string{"-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-x", "c", c}, "out.o"},
	}
	if !spirv {
		h.cc1 = slices.DeleteFunc(h.cc1, func(tg llvmTarget) bool { return tg.name == "spirv64" })
	}
	for i := range h.cc1 {
		h.cc1[i].args = append([]string{h.clang, "-cc1", "-O2"}, h.cc1[i].args...)
	}
	// LTO device links: AMDGPU's (in partitions, as the new offload
	// driver links them) and x86_64's.
	amd, x86 := filepath.Join(src, "amdgcn.bc"), filepath.Join(src, "x86_64.bc")
	for _, b := range [][]string{
		{"-triple", "amdgcn-amd-amdhsa", "-target-cpu", "gfx906", "-x", "hip", "-fcuda-is-device", "-o", amd, cu},
		{"-triple", "x86_64-pc-linux-gnu", "-x", "c", "-o", x86, c},
	} {
		cmd := exec.Command(h.clang, append([]string{"-cc1", "-O2", "-emit-llvm-bc", "-flto=full"}, b...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
	h.links = []llvmTarget{
		{"amdgcn", []string{h.lld, "-m", "elf64_amdgpu", "--no-undefined", "-shared", "--lto-partitions=2", "-plugin-opt=mcpu=gfx906", "-plugin-opt=O3", amd}, "out"},
		{"x86_64", []string{h.lld, "-m", "elf_x86_64", "-shared", "-plugin-opt=O2", x86}, "out"},
	}
	if p, err := exec.LookPath("strace"); err == nil {
		h.strace = p
		for _, tg := range h.cc1 {
			h.base["cc1/"+tg.name], _ = h.run(t, tg, nil)
		}
		for _, tg := range h.links {
			h.base["lld/"+tg.name], _ = h.run(t, tg, nil)
		}
	}
	return h
}

// run runs tg with extra arguments in an empty directory (its working
// directory and TMPDIR) and returns the files it named, if traced, and
// the names left in the directory, its output first when it is there; it
// fails the test where the command fails.
func (h *llvmHarness) run(t *testing.T, tg llvmTarget, extra []string) (named map[string]bool, left []string) {
	t.Helper()
	dir := t.TempDir()
	argv := slices.Concat(tg.args, extra, []string{"-o", tg.out})
	trace := filepath.Join(t.TempDir(), "trace")
	if h.strace != "" {
		argv = append([]string{h.strace, "-f", "-qq", "-e", "trace=%file", "-o", trace}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + dir, "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == tg.out {
			left = append([]string{e.Name()}, left...)
		} else {
			left = append(left, e.Name())
		}
	}
	if h.strace != "" {
		named = tracedFiles(t, trace, dir)
	}
	return named, left
}

// tracedPath is the first quoted string of a line of strace: the path of
// a file system call.
var tracedPath = regexp.MustCompile(`^\d+\s+\w+\((?:AT_FDCWD, )?"((?:[^"\\]|\\.)*)"`)

// tracedTemp is the random part of a temporary output's name, which
// changes run to run: clang's out-XXXXXXXX.o.tmp, lld's out.tmpXXXXXXX.
var tracedTemp = regexp.MustCompile(`(-[0-9a-f]{8}(\.[a-z]+)?\.tmp|\.tmp[0-9a-f]+)$`)

// tracedSystem are files the C library reads in some runs and not in
// others, whatever the options: malloc reads overcommit_memory when it
// first trims its heap.
var tracedSystem = map[string]bool{"/proc/sys/vm/overcommit_memory": true}

// tracedFiles returns the paths the trace names, the run's directory
// written DIR, the command's own arguments (its execve) left out.
func tracedFiles(t *testing.T, trace, dir string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		m := tracedPath.FindStringSubmatch(line)
		if m == nil || strings.Contains(line, " execve(") {
			continue
		}
		p := strings.ReplaceAll(m[1], dir, "DIR")
		if tracedSystem[p] {
			continue
		}
		named[tracedTemp.ReplaceAllString(p, ".tmp")] = true
	}
	return named
}

// llvmExamples are the values of the LLVM option name that the test runs
// for target, each spelled as -mllvm takes it.
func llvmExamples(name string, o llvmOption, target string) []string {
	var vs []string
	if o.values&llvmNone != 0 {
		vs = append(vs, "-"+name)
	}
	if o.values&llvmBool != 0 {
		vs = append(vs, "-"+name+"=true", "-"+name+"=false")
	}
	if o.values&llvmNumber != 0 {
		nums := map[string][]string{
			"amdhsa-code-object-version": {"4", "5", "6"},
			"nvptx-prec-divf32":          {"0", "2"},
		}[name]
		if nums == nil {
			nums = []string{"0", "1000"}
		}
		for _, n := range nums {
			vs = append(vs, "-"+name+"="+n)
		}
	}
	if o.values&llvmWord != 0 {
		words := map[string]map[string][]string{
			"mattr": {"amdgcn": {"+xnack,-tgsplit", "+wavefrontsize64"}, "x86_64": {"+avx2,-sse4a"}},
		}[name][target]
		for _, w := range words {
			vs = append(vs, "-"+name+"="+w)
		}
	}
	return vs
}

// llvmExtra are arguments a cc1 target needs with an option, by the
// option as -mllvm takes it and the target (clang passes -mllvm
// -nvptx-short-ptr with -fcuda-short-ptr, whose data layout it must
// match).
var llvmExtra = map[string][]string{
	"-nvptx-short-ptr/nvptx64":      {"-fcuda-short-ptr"},
	"-nvptx-short-ptr=true/nvptx64": {"-fcuda-short-ptr"},
}

// TestLLVMOptionsOpenNoFile: every option of llvmAllowed, with each shape
// of value it takes, run by the real clang -cc1 (for amdgcn, nvptx64,
// spirv64 and x86_64) and the real ld.lld (AMDGPU and x86_64 LTO links,
// as -plugin-opt=-X and as -mllvm X), in an empty directory, leaves
// nothing there but the output; where strace is installed, each run also
// names no file that the same run without the option does not. The
// options that write files of the security review are the controls: the
// same runs find their files. It runs with LLVM 22 and, as workers of
// LLVM 19 pass the same options, with LLVM 19 (skipped without it: see
// llvmtest.Missing19), on the targets offcc sends LLVM 19's jobs of
// (not SPIR-V).
func TestLLVMOptionsOpenNoFile(t *testing.T) {
	t.Run("LLVM22", func(t *testing.T) {
		t.Parallel()
		llvmOptionsOpenNoFile(t, newLLVMHarness(t, llvmtest.Clang(t), llvmtest.Tool(t, "ld.lld"), true), true)
	})
	t.Run("LLVM19", func(t *testing.T) {
		t.Parallel()
		// (clang 19 has no SPIR-V backend.)
		llvmOptionsOpenNoFile(t, newLLVMHarness(t, llvmtest.Tool19(t, "clang"), llvmtest.Tool19(t, "ld.lld"), false), false)
	})
}

// llvmOptionsOpenNoFile is TestLLVMOptionsOpenNoFile with the LLVM of h;
// controls runs the controls too (their options are LLVM 22's).
func llvmOptionsOpenNoFile(t *testing.T, h *llvmHarness, controls bool) {
	if h.strace == "" {
		t.Log("strace is not installed: the runs are not traced")
	}
	names := make([]string, 0, len(llvmAllowed))
	for name := range llvmAllowed {
		names = append(names, name)
	}
	slices.Sort(names)
	check := func(t *testing.T, kind string, tg llvmTarget, extra []string) {
		t.Helper()
		named, left := h.run(t, tg, extra)
		if len(left) != 1 || left[0] != tg.out {
			t.Errorf("%s left %q in its directory, want only %s", strings.Join(extra, " "), left, tg.out)
		}
		for p := range named {
			if !h.base[kind+"/"+tg.name][p] {
				t.Errorf("%s names %s, which the run without it does not", strings.Join(extra, " "), p)
			}
		}
	}
	for _, name := range names {
		o := llvmAllowed[name]
		if o.from == "" {
			t.Errorf("LLVM option %s is allowed without saying why", name)
		}
		ran := false
		if o.tools&llvmCC1 != 0 {
			for _, tg := range h.cc1 {
				for _, v := range llvmExamples(name, o, tg.name) {
					ran = true
					t.Run("cc1/"+tg.name+"/"+v, func(t *testing.T) {
						t.Parallel()
						check(t, "cc1", tg, append(slices.Clone(llvmExtra[v+"/"+tg.name]), "-mllvm", v))
					})
				}
			}
		}
		if o.tools&llvmLLD != 0 {
			for _, tg := range h.links {
				for i, v := range llvmExamples(name, o, tg.name) {
					ran = true
					t.Run("lld/"+tg.name+"/"+v, func(t *testing.T) {
						t.Parallel()
						check(t, "lld", tg, []string{"-plugin-opt=" + v})
						if i == 0 {
							check(t, "lld", tg, []string{"-mllvm", v})
						}
					})
				}
			}
		}
		if !ran {
			t.Errorf("LLVM option %s is allowed but runs in no test", name)
		}
	}

	// The controls: the review's options, which the check refuses, do
	// leave files in the same runs.
	if !controls {
		return
	}
	x86 := h.cc1[3]
	for _, c := range []struct {
		kind  string
		tg    llvmTarget
		extra []string
		file  string
	}{
		{"cc1", x86, []string{"-target-feature", "+lvi-load-hardening", "-mllvm", "-x86-lvi-load-dot-only"}, "lvi.k.dot"},
		{"lld", h.links[0], []string{"-plugin-opt=-amdgpu-module-splitting-print-partition-summaries=F"}, "F"},
		{"lld", h.links[0], []string{"-mllvm", "-amdgpu-module-splitting-print-module-dotcfg=F"}, "F"},
	} {
		t.Run("control/"+c.kind+"/"+c.tg.name+"/"+c.extra[len(c.extra)-1], func(t *testing.T) {
			t.Parallel()
			_, left := h.run(t, c.tg, c.extra)
			if !slices.Contains(left, c.file) {
				t.Errorf("%s left %q, want %s among them: the test does not see what the option writes", strings.Join(c.extra, " "), left, c.file)
			}
		})
	}
}

// TestLLVMOptionsOfClang: every LLVM option clang 22's drivers pass to the
// device compiles and links of HIP (AMDGPU, SPIR-V), CUDA, OpenMP offload
// (AMDGPU, NVPTX, x86_64) and SYCL is one a worker passes on, and their
// ld.lld device links (their "-flavor gnu" left out, as offcc's client
// leaves it out) pass check; with -flavor they do not.
func TestLLVMOptionsOfClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	for name, text := range map[string]string{"k.hip": llvmKernelCU, "k.cu": llvmKernelCU, "o.c": "int main(void) {\n  int x = 0;\n#pragma omp target map(tofrom : x)\n  x = 1;\n  return x;\n}\n", "k.cpp": "int main() { return 0; }\n", "a.o": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cuda := []string{"-nocudalib", "-nocudainc"}
	if _, err := os.Stat("/usr/lib/cuda/bin/ptxas"); err == nil {
		cuda = []string{"--cuda-path=/usr/lib/cuda"}
	}
	hip := []string{"-x", "hip", "-nogpulib", "-nogpuinc"}
	modes := [][]string{
		args(hip, "--offload-arch=gfx906", "-c", "k.hip"),
		args(hip, "--offload-arch=gfx906,gfx90a:xnack+", "k.hip", "-o", "k"),
		args(hip, "--offload-arch=gfx1030", "-mwavefrontsize64", "-mcode-object-version=6", "k.hip", "-o", "k"),
		args(hip, "--offload-arch=gfx90a", "-mno-tgsplit", "-mcode-object-version=4", "-fgpu-rdc", "k.hip", "-o", "k"),
		args(hip, "--offload-arch=gfx906", "--no-offload-new-driver", "-fgpu-rdc", "k.hip", "-o", "k"),
		args(hip, "--offload-arch=gfx906", "--offload-new-driver", "-fgpu-rdc", "k.hip", "-o", "k"),
		args(hip, "--offload=spirv64", "k.hip", "-o", "k"),
		args(hip, "--offload-arch=amdgcnspirv", "k.hip", "-o", "k"),
		args("-x", "cuda", "--offload-arch=sm_80", cuda, "k.cu", "-o", "k"),
		args("-x", "cuda", "--offload-arch=sm_80", cuda, "-fcuda-short-ptr", "-fgpu-rdc", "k.cu", "-o", "k"),
		args("-fopenmp", "--offload-arch=gfx906", "-nogpulib", "o.c", "-o", "o"),
		args("-fopenmp", "--offload-arch=sm_80", "-nogpulib", cuda, "o.c", "-o", "o"),
		args("-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "o.c", "-o", "o"),
		args("-fsycl", "k.cpp", "-o", "k"),
		// The device links the linker wrapper (clang's, and offcc's)
		// runs for the new driver: clang for the device, with LTO.
		args("--target=amdgcn-amd-amdhsa", "-mcpu=gfx90a:xnack+", "-flto", "-Wl,--no-undefined", "-O3", "-flto-partitions=8", "a.o", "-o", "a.img"),
	}
	seen := map[string]int{} // LLVM options and device links checked
	for _, m := range modes {
		for _, o := range []string{"-O0", "-O3"} {
			cmd := exec.Command(clang, append([]string{"-###", o}, m...)...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				words := quotedWords(line)
				if len(words) < 2 {
					continue
				}
				switch {
				case words[1] == "-cc1":
					for i, w := range words {
						if w == "-mllvm" && i+1 < len(words) {
							seen[words[i+1]]++
							if why := llvmOptionRefused(words[i+1], llvmCC1); why != "" {
								t.Errorf("clang %q passes -mllvm %s to clang -cc1: %s", m, words[i+1], why)
							}
						}
					}
				case (filepath.Base(words[0]) == "ld.lld" || filepath.Base(words[0]) == "lld") && (slices.Contains(words, "elf64_amdgpu") || slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, "-plugin-opt=mcpu=") })):
					seen["ld.lld"]++
					if words[1] == "-flavor" {
						seen["-flavor "+words[2]]++
					}
					for _, w := range words {
						if v, ok := strings.CutPrefix(w, "-plugin-opt=-"); ok {
							seen["-"+v]++
						}
					}
					lldLineChecks(t, m, words[1:])
				}
			}
		}
	}
	t.Logf("checked: %v", seen)
	for _, want := range []string{"ld.lld", "-flavor gnu", "-amdgpu-internalize-symbols", "-enable-memcpyopt-without-libcalls", "-vectorize-loops=false", "-mattr=+xnack"} {
		if seen[want] == 0 {
			t.Errorf("clang's command lines have no %s: the modes are not what they were", want)
		}
	}
}

// lldLineChecks checks the arguments of an ld.lld device link of clang's:
// without its leading "-flavor gnu" it passes check, with it (or another
// -flavor) it does not.
func lldLineChecks(t *testing.T, mode, argv []string) {
	t.Helper()
	if len(argv) >= 2 && argv[0] == "-flavor" {
		argv = argv[2:]
	}
	j := &Job{Version: JobVersion, Tool: "lld", Dir: "/src", Args: argv}
	for i, a := range argv {
		switch {
		case i > 0 && argv[i-1] == "-o":
			j.Outputs = append(j.Outputs, a)
		case !strings.HasPrefix(a, "-") && (i == 0 || argv[i-1] != "-m"):
			if filepath.IsAbs(a) {
				j.Files = append(j.Files, File{Path: a})
			} else {
				j.Files = append(j.Files, File{Path: filepath.Join("/src", a), Arg: a})
			}
		}
	}
	if _, why := check22(j); why != "" {
		t.Errorf("clang %q's device link %q is refused: %s", mode, argv, why)
	}
	for _, f := range []string{"gnu", "link"} {
		j.Args = append([]string{"-flavor", f}, argv...)
		if _, why := check22(j); !strings.Contains(why, "-flavor") {
			t.Errorf("with -flavor %s, clang %q's device link: check = %q, want a refusal of -flavor", f, mode, why)
		}
	}
}

// quotedWords returns the quoted words of a line of clang -###.
func quotedWords(line string) []string {
	var words []string
	for _, m := range regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(line, -1) {
		words = append(words, strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[1]))
	}
	return words
}

// args flattens strings and string slices into one slice.
func args(parts ...any) []string {
	var a []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			a = append(a, p)
		case []string:
			a = append(a, p...)
		default:
			panic(fmt.Sprintf("args: %T", p))
		}
	}
	return a
}
