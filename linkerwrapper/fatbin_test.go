package linkerwrapper

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/objfile"
)

// TestFatbinWrapperObject compiles the HIP and the CUDA registration
// modules: the fat binary lands byte for byte in its section, the wrapper
// struct in its own, and the object calls exactly the runtime's entry
// points clang-linker-wrapper 22's module calls (CUDA without surfaces and
// textures, with __cudaRegisterFatBinaryEnd).
func TestFatbinWrapperObject(t *testing.T) {
	clangPath := llvmtest.Clang(t)
	dir := t.TempDir()
	// Every byte value, and the quote and backslash IR strings escape.
	data := bytes.Repeat([]byte("fatbin!\"\\"), 1001)
	for i := 0; i < 256; i++ {
		data = append(data, byte(i))
	}
	for _, tc := range []struct {
		rt   fatbinRuntime
		want []string
	}{
		{hipRuntime, []string{"__hipRegisterFatBinary", "__hipRegisterFunction", "__hipRegisterManagedVar",
			"__hipRegisterSurface", "__hipRegisterTexture", "__hipRegisterVar", "__hipUnregisterFatBinary",
			"__start_llvm_offload_entries", "__stop_llvm_offload_entries", "atexit"}},
		{cudaRuntime, []string{"__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaRegisterFunction",
			"__cudaRegisterManagedVar", "__cudaRegisterVar", "__cudaUnregisterFatBinary",
			"__start_llvm_offload_entries", "__stop_llvm_offload_entries", "atexit"}},
	} {
		ll := filepath.Join(dir, tc.rt.prefix+".ll")
		obj := filepath.Join(dir, tc.rt.prefix+".o")
		os.WriteFile(ll, []byte(fatbinWrapperIR("x86_64-pc-linux-gnu", tc.rt, data)), 0o644)
		if out, err := exec.Command(clangPath, "--no-default-config", "-c", "-x", "ir", "--target=x86_64-pc-linux-gnu", "-O2", "-fPIC", "-o", obj, ll).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tc.rt.prefix, err, out)
		}
		b, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		secs, err := objfile.Sections(b)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string][]byte{}
		for _, s := range secs {
			found[s.Name] = s.Data
		}
		if !bytes.Equal(found[tc.rt.fatbinSection], data) {
			t.Errorf("%s: section %s holds %d bytes, not the fat binary", tc.rt.prefix, tc.rt.fatbinSection, len(found[tc.rt.fatbinSection]))
		}
		if w := found[tc.rt.wrapSection]; len(w) != 24 || !bytes.Equal(w[:8], []byte{byte(tc.rt.magic), byte(tc.rt.magic >> 8), byte(tc.rt.magic >> 16), byte(tc.rt.magic >> 24), 1, 0, 0, 0}) {
			t.Errorf("%s: wrapper section %s = % x", tc.rt.prefix, tc.rt.wrapSection, w)
		}
		_, undef, err := objfile.Symbols(b)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(undef)
		if !slices.Equal(undef, tc.want) {
			t.Errorf("%s: undefined symbols\n%s\nwant\n%s", tc.rt.prefix, strings.Join(undef, " "), strings.Join(tc.want, " "))
		}
	}
}

// TestCUDARegistrationRuns links a CUDA host object (clang 22, -fgpu-rdc
// with the new offload driver: its kernels and device variables are
// offload entries of kind cuda) with offcc's CUDA registration module
// around a stand-in fat binary, and runs it against the stand-in CUDA
// runtime testdata/cuda/cudartstub.c: the wrapper carries CUDA's magic and
// the fat binary, every kernel and variable is registered,
// __cudaRegisterFatBinaryEnd follows, and the fat binary is unregistered
// at exit. (NVIDIA's fatbinary, which makes the real fat binary, is not
// needed to check what the runtime is given.)
func TestCUDARegistrationRuns(t *testing.T) {
	clangPath := llvmtest.Clang(t)
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	src, _ := filepath.Abs("../testdata/cuda/kernels.cu")
	stub, _ := filepath.Abs("../testdata/cuda/cudartstub.c")
	run(clangPath, "-x", "cuda", "--offload-arch=sm_80", "-nocudainc", "-nocudalib", "--cuda-feature=+ptx80",
		"-Xclang", "-target-sdk-version=12.0", "--offload-new-driver", "-fgpu-rdc", "-foffload-lto", "-c", src, "-o", "k.o")
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("int launch(float *, int);\nint main(void) { float a[4] = {0}; return launch(a, 4); }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "w.ll"), []byte(fatbinWrapperIR("x86_64-pc-linux-gnu", cudaRuntime, []byte("FATBIN42 stand-in bytes"))), 0o644)
	run(clangPath, "--no-default-config", "-c", "-x", "ir", "--target=x86_64-pc-linux-gnu", "-O2", "-fPIC", "-o", "w.o", "w.ll")
	run(clangPath, "-shared", "-fPIC", "-o", "libcudart.so", stub)
	run(clangPath+"++", "w.o", "k.o", "main.c", "-L.", "-lcudart", "-o", "prog")
	out := run(filepath.Join(dir, "prog"))
	want := "fatbin: magic=0x466243b1 version=1 data=FATBIN42\n" +
		"kernel: module 0 _Z5scalePffi\nkernel: module 0 _Z10accumulatePKfi\n" +
		"kernel: module 0 _Z4fillIfEvPT_S0_i\nkernel: module 0 _Z4fillIiEvPT_S0_i\n" +
		"var: module 0 counter size=4 extern=0 constant=0 global=0\n" +
		"var: module 0 coef size=16 extern=0 constant=1 global=0\n" +
		"end: module 0\nunregister: module 0\n"
	if got := sortedLines(out); got != sortedLines(want) || !strings.HasPrefix(out, "fatbin: ") || !strings.HasSuffix(out, "end: module 0\nunregister: module 0\n") {
		t.Errorf("registration:\n%s\nwant (in any order between the first and the last two lines):\n%s", out, want)
	}
}

// sortedLines returns s's lines sorted, joined by newlines.
func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestIRAsmEscape: a path in a module asm string survives the assembler's
// and the IR's quoting.
func TestIRAsmEscape(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/a b/x.bin":   "/tmp/a b/x.bin",
		`a\b"c` + "\n\xff": `a\5C\5Cb\5C\22c\0A\FF`,
	} {
		if got := irAsmEscape(in); got != want {
			t.Errorf("irAsmEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
