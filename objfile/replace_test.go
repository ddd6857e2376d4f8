package objfile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// TestReplaceSectionLikeTheCompiler compiles a HIP host object once with an
// empty fat binary (-fcuda-include-gpubinary /dev/null) and once with each
// of several fat binaries: replacing .hip_fatbin in the first gives the
// second byte for byte.
func TestReplaceSectionLikeTheCompiler(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "k.hip")
	os.WriteFile(src, []byte(`#define __global__ __attribute__((global))
struct dim3 { unsigned x, y, z; __attribute__((host,device)) dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {} };
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, void *);
__global__ void k(int *p) { *p = 1; }
static const double table[2] = {1.5, 2.5};
double f(int i) { return table[i]; }
`), 0o644)
	compile := func(gpubinary, out string) []byte {
		t.Helper()
		cmd := exec.Command(clang, "-x", "hip", "--offload-arch=gfx906", "-nogpuinc", "-nogpulib", "-O2",
			"--offload-host-only", "-cuid=fixed", "-Xclang", "-fcuda-include-gpubinary", "-Xclang", gpubinary,
			"-c", src, "-o", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	checkReplaceLikeCompiler(t, dir, ".hip_fatbin", []int{1, 7, 8, 1001, 4096, 42264}, compile)
}

// checkReplaceLikeCompiler compiles an object with an empty file as the
// section's contents and one with a file of each size: filling section in
// the first with the same bytes gives the second byte for byte, and
// emptying it again gives the first back.
func checkReplaceLikeCompiler(t *testing.T, dir, section string, sizes []int, compile func(contents, out string) []byte) {
	t.Helper()
	empty := compile("/dev/null", filepath.Join(dir, "empty.o"))
	for _, size := range sizes {
		// Any bytes do: the compiler copies the file as it is.
		data := bytes.Repeat([]byte{0xa5}, size)
		data[0] = byte(size)
		file := filepath.Join(dir, "contents")
		os.WriteFile(file, data, 0o644)
		want := compile(file, filepath.Join(dir, "want.o"))
		got, err := ReplaceSection(empty, section, data)
		if err != nil {
			t.Fatalf("%s, size %d: %v", section, size, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s, size %d: filled object (%d bytes) differs from the compiled one (%d bytes)", section, size, len(got), len(want))
		}
		if back, err := ReplaceSection(got, section, nil); err != nil || !bytes.Equal(back, empty) {
			t.Errorf("%s, size %d: emptying it again: %v", section, size, err)
		}
	}
}

func TestReplaceSectionErrors(t *testing.T) {
	obj := smallObject(t, t.TempDir())
	for _, tc := range []struct{ name, section string }{
		{"missing", ".nope"},
		{"not progbits", ".symtab"},
	} {
		_, err := ReplaceSection(obj, tc.section, []byte("x"))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if missing := errors.Is(err, ErrNoSection); missing != (tc.name == "missing") {
			t.Errorf("%s: errors.Is(%v, ErrNoSection) = %v", tc.name, err, missing)
		}
	}
	if _, err := ReplaceSection([]byte("not an object"), ".text", nil); err == nil {
		t.Error("garbage: no error")
	}
}

// TestReplaceOffloadSectionLikeTheCompiler compiles a host object with an
// empty offload binary (-fembed-offload-object=/dev/null), whose
// .llvm.offloading section is then empty and sits right where later
// sections start, and with real offload binaries of several sizes (each a
// multiple of 8, as offload binaries are): filling the empty section gives
// the compiled object byte for byte.
func TestReplaceOffloadSectionLikeTheCompiler(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "h.c")
	os.WriteFile(src, []byte("static const double table[2] = {1.5, 2.5};\ndouble f(int i) { return table[i]; }\nint g(void) { return 42; }\n"), 0o644)
	compile := func(blob, out string) []byte {
		t.Helper()
		cmd := exec.Command(clang, "-O2", "-c", "-Xclang", "-fembed-offload-object="+blob, src, "-o", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	checkReplaceLikeCompiler(t, dir, ".llvm.offloading", []int{8, 160, 4096, 40008}, compile)
}
