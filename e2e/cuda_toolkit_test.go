package e2e

// The tests of this file run NVIDIA's CUDA toolkit (Debian's
// nvidia-cuda-toolkit 11.8: make deps-cuda): ptxas, fatbinary, nvlink and
// cuobjdump. Each compares offcc with clang 22 using the same toolkit. A
// missing toolkit skips them, or fails them under OFFCC_REQUIRE_CUDA=1 (CI).
// No GPU is needed: programs run against testdata/cuda/cudartstub.c, a
// stand-in for libcudart that prints what they register at start-up.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// cudaToolkitSrc returns the path of a file under testdata/cuda/toolkit.
func cudaToolkitSrc(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "cuda", "toolkit", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sameOutputs runs build once with clang++ and once with offcc++, each in a
// fresh directory named dir/work (so that paths recorded in outputs are the
// same), keeps the results in dir/clang and dir/offcc, and fails unless
// both wrote the same files with the same bytes.
func sameOutputs(t *testing.T, dir string, c compiler, env []string, buildArgs []string) {
	t.Helper()
	buildTwice(t, dir, c, func(cxx, work string) {
		cmdSpec{dir: work, env: env, name: cxx, args: buildArgs}.mustRun(t)
	})
	sameFiles(t, dir, func(string) bool { return true })
}

// buildTwice runs build with clang++ and then with offcc++ as cxx, each
// time in a fresh directory dir/work, and keeps what each wrote in
// dir/clang and dir/offcc.
func buildTwice(t *testing.T, dir string, c compiler, build func(cxx, work string)) {
	t.Helper()
	work := filepath.Join(dir, "work")
	for _, b := range []struct{ name, cxx string }{{"clang", refClangXX}, {"offcc", c.cxx}} {
		if err := os.Mkdir(work, 0o755); err != nil {
			t.Fatal(err)
		}
		build(b.cxx, work)
		if err := os.Rename(work, filepath.Join(dir, b.name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCUDAObjectsLikeClang: for each way of compiling CUDA (non-RDC and
// -fgpu-rdc, old and new offload driver, several sm archs, PTX included or
// not, device or host side only, assembly, flush-to-zero, debug info),
// offcc writes the files clang 22 writes, byte for byte, with ptxas and
// fatbinary run for real.
func TestCUDAObjectsLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	llvmtest.CUDA(t)
	src := cudaToolkitSrc(t, "kernels.cu")
	_, tmp := tmpEnv(t)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"non-rdc", []string{"-c", "-o", "k.o"}},
		{"rdc", []string{"-fgpu-rdc", "-c", "-o", "k.o"}},
		{"new-driver", []string{"--offload-new-driver", "-c", "-o", "k.o"}},
		{"new-driver-rdc", []string{"--offload-new-driver", "-fgpu-rdc", "-c", "-o", "k.o"}},
		{"four-archs", []string{"--offload-arch=sm_70,sm_86", "-c", "-o", "k.o"}},
		{"include-ptx", []string{"--cuda-include-ptx=sm_80", "--no-cuda-include-ptx=sm_90", "-c", "-o", "k.o"}},
		{"include-ptx-all", []string{"--cuda-include-ptx=all", "-c", "-o", "k.o"}},
		{"device-only", []string{"--cuda-device-only", "-c"}},
		{"device-only-S", []string{"--cuda-device-only", "-S"}},
		{"new-driver-rdc-device-only", []string{"--offload-new-driver", "-fgpu-rdc", "--cuda-device-only", "-c"}},
		{"host-only", []string{"--cuda-host-only", "-c", "-o", "k.o"}},
		{"S", []string{"-S"}},
		{"ftz", []string{"-fcuda-flush-denormals-to-zero", "-c", "-o", "k.o"}},
		{"debug", []string{"-O0", "-g", "-c", "-o", "k.o"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sameOutputs(t, dir, c, []string{tmp},
				args("-x", "cuda", "--offload-arch=sm_80,sm_90", "-O2", tc.flags, src))
		})
	}
}

// TestCUDAObjectListingsLikeClang: cuobjdump lists the same cubins and PTX
// in offcc's object as in clang's, with the same SASS, and offcc inspect
// lists them as cuobjdump does.
func TestCUDAObjectListingsLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	tk := llvmtest.CUDA(t)
	_, tmp := tmpEnv(t)
	dir := t.TempDir()
	sameOutputs(t, dir, c, []string{tmp}, args("-x", "cuda", "--offload-arch=sm_80,sm_90", "-O2",
		"--cuda-include-ptx=sm_90", "-c", cudaToolkitSrc(t, "kernels.cu"), "-o", "k.o"))
	for _, flag := range []string{"-lelf", "-lptx", "-sass"} {
		outs := map[string]string{}
		for _, who := range []string{"clang", "offcc"} {
			outs[who] = cmdSpec{dir: filepath.Join(dir, who), name: tk.Cuobjdump, args: args(flag, "k.o")}.mustRun(t).stdout
		}
		if outs["clang"] != outs["offcc"] || strings.TrimSpace(outs["offcc"]) == "" {
			t.Errorf("cuobjdump %s: offcc's listing differs from clang's (or is empty):\n%s\nclang's:\n%s", flag, outs["offcc"], outs["clang"])
		}
	}
	obj := filepath.Join(dir, "offcc", "k.o")
	want := cuobjdumpEntries(t, tk, obj)
	if got := inspectEntries(t, c, obj); !slices.Equal(got, want) {
		t.Errorf("offcc inspect lists %v, cuobjdump %v", got, want)
	}
	if !slices.Equal(want, []string{"ELF sm_80", "ELF sm_90", "PTX sm_90"}) {
		t.Errorf("cuobjdump lists %v, want the two cubins and sm_90's PTX", want)
	}
}

// cuobjdumpEntries returns "ELF sm_NN" and "PTX sm_NN" for each cubin and
// PTX file cuobjdump -lelf -lptx lists in file, in its order.
func cuobjdumpEntries(t *testing.T, tk llvmtest.CUDAToolkit, file string) []string {
	t.Helper()
	r := cmdSpec{dir: filepath.Dir(file), name: tk.Cuobjdump, args: args("-lelf", "-lptx", file)}.mustRun(t)
	re := regexp.MustCompile(`(?m)^(ELF|PTX) file +\d+: .*\.(sm_\d+)\.(cubin|ptx)$`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(r.stdout, -1) {
		out = append(out, m[1]+" "+m[2])
	}
	return out
}

// inspectEntries returns what offcc inspect lists of the fat binaries in
// file, in cuobjdumpEntries' form.
func inspectEntries(t *testing.T, c compiler, file string) []string {
	t.Helper()
	r := cmdSpec{dir: filepath.Dir(file), name: c.cc, args: args("inspect", file)}.mustRun(t)
	re := regexp.MustCompile(`fatbin entry (ELF|PTX), arch (sm_\d+)`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(r.stdout, -1) {
		out = append(out, m[1]+" "+m[2])
	}
	return out
}

// cudartStub builds testdata/cuda/cudartstub.c as dir/libcudart.so.11.0,
// with the soname and symbol version of Debian's libcudart, so that a
// program linked with the real one runs against it (LD_LIBRARY_PATH=dir)
// and prints what it registers.
func cudartStub(t *testing.T, dir string) {
	t.Helper()
	cmdSpec{dir: dir, name: refClang, args: args("-shared", "-fPIC", "-Wl,-soname,libcudart.so.11.0",
		"-Wl,--version-script="+cudaToolkitSrc(t, "cudart.map"), "-o", "libcudart.so.11.0",
		filepath.Join(filepath.Dir(cudaToolkitSrc(t, "")), "cudartstub.c"))}.mustRun(t)
}

// TestCUDALinkRDCLikeClang: a relocatable-device-code program over three
// translation units, one in a static library whose member is extracted
// only for its device code, links with the new offload driver into clang's
// executable byte for byte: the same device links (nvlink, one per arch,
// run at once), the same fat binary and the same registration code. The
// program registers the same kernels and variables with the CUDA runtime.
func TestCUDALinkRDCLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	tk := llvmtest.CUDA(t)
	_, tmp := tmpEnv(t)
	root := t.TempDir()
	rdc := []string{"--offload-new-driver", "-fgpu-rdc", "--offload-arch=sm_80,sm_90"}
	for _, b := range []struct{ name, cc string }{{"clang", refClangXX}, {"offcc", c.cxx}} {
		dir := filepath.Join(root, b.name)
		os.Mkdir(dir, 0o755)
		for _, tu := range []string{"rdc_main", "rdc_dev", "rdc_lib", "rdc_shared"} {
			cmdSpec{dir: dir, env: []string{tmp}, name: b.cc,
				args: args("-x", "cuda", rdc, "-O2", "-c", cudaToolkitSrc(t, tu+".cu"), "-o", tu+".o")}.mustRun(t)
		}
		cmdSpec{dir: dir, name: filepath.Join(llvmBin, "llvm-ar"), args: args("rcs", "libdev.a", "rdc_lib.o")}.mustRun(t)
		link := args(rdc, "rdc_main.o", "rdc_dev.o", "rdc_shared.o", "-L.", "-ldev", "-lcudart", "-o", "prog")
		if b.name == "offcc" {
			link = append(link, "--no-cache", "--job-trace=trace.json")
		}
		cmdSpec{dir: dir, env: []string{tmp}, name: b.cc, args: link}.mustRun(t)
	}
	theirs, _ := os.ReadFile(filepath.Join(root, "clang", "prog"))
	ours, _ := os.ReadFile(filepath.Join(root, "offcc", "prog"))
	if len(theirs) == 0 || !bytes.Equal(theirs, ours) {
		t.Errorf("offcc's executable (%d bytes) differs from clang's (%d bytes)", len(ours), len(theirs))
	}
	if st, err := os.Stat(filepath.Join(root, "offcc", "prog")); err != nil || st.Mode().Perm()&0o055 != 0o055 {
		t.Errorf("prog's mode is not a linker's 0755 less the umask: %v %v", st.Mode(), err)
	}
	// The objects' device code (.llvm.offloading) reads whole: the
	// cubins' __shared__ memory sections take no file space.
	for _, tu := range []string{"rdc_main", "rdc_dev", "rdc_lib", "rdc_shared"} {
		r := cmdSpec{dir: root, name: c.cc, args: args("inspect", filepath.Join(root, "offcc", tu+".o"))}.mustRun(t)
		if n := strings.Count(r.stdout, "ELF64 relocatable nvptx"); n != 2 {
			t.Errorf("offcc inspect %s.o lists %d cubins, want 2:\n%s", tu, n, r)
		}
	}
	prog := filepath.Join(root, "offcc", "prog")
	if got := cuobjdumpEntries(t, tk, prog); !slices.Equal(got, []string{"ELF sm_90", "ELF sm_80"}) {
		t.Errorf("cuobjdump lists %v in the executable, want the linked sm_90 and sm_80 cubins", got)
	}
	if got, want := inspectEntries(t, c, prog), cuobjdumpEntries(t, tk, prog); !slices.Equal(got, want) {
		t.Errorf("offcc inspect lists %v, cuobjdump %v", got, want)
	}
	// The library's device function was linked into every cubin.
	sass := cmdSpec{dir: root, name: tk.Cuobjdump, args: args("-sass", prog)}.mustRun(t).stdout
	if n := strings.Count(sass, "Function : _Z4cubef"); n != 2 {
		t.Errorf("cuobjdump -sass shows cube() %d times, want once per arch", n)
	}
	links := spans(t, filepath.Join(root, "offcc", "trace.json"), "device-link")
	if len(links) != 2 || !links[0].overlaps(links[1]) {
		t.Errorf("the two device links (nvlink) did not run at once: %v", links)
	}

	stub := t.TempDir()
	cudartStub(t, stub)
	sameRegistration(t, root, stub, "", "fatbin: magic=0x466243b1 version=1", "kernel: module 0 _Z5applyPfi", "kernel: module 0 _Z5resetv",
		"kernel: module 0 _Z8blocksumPKfi", "var: module 0 hits size=4", "var: module 0 weights size=32",
		"end: module 0", "launched apply", "unregister: module 0")
}

// sameRegistration runs dir/clang/prog and dir/offcc/prog against the
// stand-in CUDA runtime in stub and fails unless both print the same, and
// offcc's prints each of want. what names the build in messages.
func sameRegistration(t *testing.T, dir, stub, what string, want ...string) {
	t.Helper()
	runs := map[string]string{}
	for _, who := range []string{"clang", "offcc"} {
		runs[who] = cmdSpec{dir: dir, env: []string{"LD_LIBRARY_PATH=" + stub}, name: filepath.Join(dir, who, "prog")}.mustRun(t).stdout
	}
	if runs["clang"] != runs["offcc"] {
		t.Errorf("%soffcc's program registers\n%s\nclang's\n%s", what, runs["offcc"], runs["clang"])
	}
	for _, w := range want {
		if !strings.Contains(runs["offcc"], w) {
			t.Errorf("%sthe program's output lacks %q:\n%s", what, w, runs["offcc"])
		}
	}
}

// TestCUDALinkLikeClang: whole-program CUDA (no -fgpu-rdc) with the old and
// the new offload driver links into clang's executable byte for byte, and
// registers the same kernels and variables.
func TestCUDALinkLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	llvmtest.CUDA(t)
	_, tmp := tmpEnv(t)
	stub := t.TempDir()
	cudartStub(t, stub)
	for _, driver := range [][]string{nil, {"--offload-new-driver"}} {
		dir := t.TempDir()
		sameOutputs(t, dir, c, []string{tmp}, args(driver, "--offload-arch=sm_80,sm_90", "-O2",
			"-x", "cuda", cudaToolkitSrc(t, "kernels.cu"), "-x", "c++", cudaToolkitSrc(t, "launch_main.cpp"), "-lcudart", "-o", "prog"))
		sameRegistration(t, dir, stub, fmt.Sprintf("%v: ", driver), "kernel: module 0 _Z4wavePffi", "kernel: module 0 _Z4fillIdEvPT_S0_i",
			"var: module 0 counter size=4", "var: module 0 coef size=16", "launched")
	}
}

// TestCUDAToolFailures: a failing ptxas or nvlink is reported as clang
// reports it, under the tool's name ("ptxas command failed with exit code
// 255"), with clang's exit status and no crash report; nothing is written.
func TestCUDAToolFailures(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc's diagnostics with clang's")
	llvmtest.CUDA(t)
	_, tmp := tmpEnv(t)
	for _, tc := range []struct {
		name  string
		args  []string
		tool  string // the output's line from the tool
		clang string // offcc's line, as clang words it
	}{
		{"ptxas", args("-x", "cuda", "--offload-arch=sm_80", "-c", cudaToolkitSrc(t, "bad_ptx.cu"), "-o", "out"),
			"Not a name of any known instruction: 'bogus'", "error: ptxas command failed with exit code 255 (use -v to see invocation)"},
		{"unresolved", args("-x", "cuda", "--offload-arch=sm_80", "-c", cudaToolkitSrc(t, "unresolved.cu"), "-o", "out"),
			"Unresolved extern function '_Z6helperi'", "error: ptxas command failed with exit code 255 (use -v to see invocation)"},
		{"nvlink", args("-x", "cuda", "--offload-arch=sm_80", "--offload-new-driver", "-fgpu-rdc", cudaToolkitSrc(t, "unresolved.cu"), "-lcudart", "-o", "out"),
			"Undefined reference to '_Z6helperi'", "error: nvlink command failed with exit code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			theirs := cmdSpec{dir: dir, env: []string{tmp}, name: refClangXX, args: tc.args}.run(t)
			os.RemoveAll(filepath.Join(dir, "out"))
			ours := cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx, args: tc.args}.run(t)
			if ours.code == 0 || ours.code != theirs.code {
				t.Errorf("offcc exits %d, clang %d:\n%s", ours.code, theirs.code, ours)
			}
			for _, want := range []string{tc.tool, tc.clang} {
				if !strings.Contains(ours.stderr, want) || !strings.Contains(theirs.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s\nclang's:\n%s", want, ours.stderr, theirs.stderr)
				}
			}
			for _, bad := range []string{"NVPTX::", "PLEASE", "diagnostic msg", "panic"} {
				if strings.Contains(ours.stderr, bad) {
					t.Errorf("stderr has %q:\n%s", bad, ours.stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
				t.Error("the output was written")
			}
		})
	}
}
