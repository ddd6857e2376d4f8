package packager

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/objfile"
)

// fatbinSource is a HIP or CUDA translation unit that needs no headers:
// with kernel set it has a kernel (so clang registers a fat binary), and
// with asmBytes > 0 its top-level asm puts that many bytes of its own into
// section, as CUDA's crt/link.stub puts nvlink's fat binary into .nv_fatbin.
func fatbinSource(hip, kernel bool, section string, asmBytes int) string {
	var b strings.Builder
	b.WriteString("#define __global__ __attribute__((global))\n")
	b.WriteString("struct dim3 { unsigned x, y, z; __attribute__((host,device)) dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {} };\n")
	if hip {
		b.WriteString("extern \"C\" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, void *);\n")
	} else {
		b.WriteString("extern \"C\" int cudaLaunchKernel(const void *, dim3, dim3, void **, unsigned long, struct CUstream_st *);\n")
	}
	if asmBytes > 0 {
		fmt.Fprintf(&b, "asm(\".section %s, \\\"a\\\"\\n.align 8\\nuserData:\\n.fill %d, 1, 0x5a\\n.text\\n\");\n", section, asmBytes)
		b.WriteString("extern \"C\" const unsigned char userData[]; const void *user(void) { return userData; }\n")
	}
	if kernel {
		b.WriteString("__global__ void k(int *p) { *p = 1; }\n")
	}
	b.WriteString("static const double table[2] = {1.5, 2.5};\ndouble f(int i) { return table[i]; }\n")
	return b.String()
}

// TestEmbedFatbinLikeTheCompiler compiles HIP and CUDA host objects (CUDA's
// old-driver -fgpu-rdc too) once with an empty fat binary and once with
// fat binaries of several sizes, with and without kernels and with and
// without bytes of the translation unit's own in the fat binary section:
// embedding the fat binary into the first gives the second byte for byte.
func TestEmbedFatbinLikeTheCompiler(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	for _, model := range []struct {
		name    string
		hip     bool
		section string // where the fat binary goes
		flags   []string
	}{
		{"hip", true, ".hip_fatbin", []string{"-x", "hip", "--offload-arch=gfx906", "-nogpuinc", "-nogpulib"}},
		{"cuda", false, ".nv_fatbin", []string{"-x", "cuda", "--offload-arch=sm_80", "-nocudainc", "-nocudalib"}},
		{"cuda-rdc", false, "__nv_relfatbin", []string{"-x", "cuda", "--offload-arch=sm_80", "-nocudainc", "-nocudalib", "--no-offload-new-driver", "-fgpu-rdc"}},
	} {
		// The user's bytes in the section the fat binary goes to, and
		// (for CUDA's relocatable code) in .nv_fatbin, which CUDA's
		// link.stub fills.
		userSections := []string{model.section}
		if model.section == "__nv_relfatbin" {
			userSections = append(userSections, ".nv_fatbin")
		}
		for _, kernel := range []bool{true, false} {
			for _, userSection := range userSections {
				for _, asmBytes := range []int{0, 17, 4097} {
					name := fmt.Sprintf("%s/kernel=%v/%s=%d", model.name, kernel, userSection, asmBytes)
					src := filepath.Join(dir, "k."+model.name)
					if err := os.WriteFile(src, []byte(fatbinSource(model.hip, kernel, userSection, asmBytes)), 0o644); err != nil {
						t.Fatal(err)
					}
					compile := func(gpubinary, out string) []byte {
						t.Helper()
						cmd := exec.Command(clang, append(model.flags, "-O2", "--offload-host-only", "-cuid=fixed",
							"-Xclang", "-fcuda-include-gpubinary", "-Xclang", gpubinary, "-c", src, "-o", out)...)
						if b, err := cmd.CombinedOutput(); err != nil {
							t.Fatalf("%s: %v: %v\n%s", name, cmd.Args, err, b)
						}
						b, err := os.ReadFile(out)
						if err != nil {
							t.Fatal(err)
						}
						return b
					}
					empty := compile(os.DevNull, filepath.Join(dir, "empty.o"))
					for _, size := range []int{1, 7, 4099} {
						fb := bytes.Repeat([]byte{0xa5}, size)
						fb[0] = byte(size)
						file := filepath.Join(dir, "fatbin")
						if err := os.WriteFile(file, fb, 0o644); err != nil {
							t.Fatal(err)
						}
						want := compile(file, filepath.Join(dir, "want.o"))
						if kernel && bytes.Equal(want, empty) {
							t.Fatalf("%s: the fat binary changes nothing: the test compiles the wrong thing", name)
						}
						got, err := embedFatbin(empty, fb, model.hip)
						if err != nil {
							t.Errorf("%s, fat binary of %d bytes: %v", name, size, err)
							continue
						}
						if !bytes.Equal(got, want) {
							t.Errorf("%s, fat binary of %d bytes: offcc's object (%d bytes) differs from the compiled one (%d bytes)", name, size, len(got), len(want))
						}
					}
				}
			}
		}
	}
}

// TestEmbedFatbinRefuses: objects whose wrapper does not point at the end
// of a fat binary section are not edited (the caller compiles them).
func TestEmbedFatbinRefuses(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	compile := func(src string) []byte {
		t.Helper()
		file := filepath.Join(dir, "k.cu")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "k.o")
		cmd := exec.Command(clang, "-x", "cuda", "--offload-arch=sm_80", "-nocudainc", "-nocudalib", "-O2", "--offload-host-only",
			"-Xclang", "-fcuda-include-gpubinary", "-Xclang", os.DevNull, "-c", file, "-o", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The user's own wrapper symbol (clang's is then renamed) pointing
	// into a data section.
	base := fatbinSource(false, true, "", 0)
	for name, src := range map[string]string{
		"user's wrapper into .data": base + "int payload[8];\n" +
			"extern \"C\" { struct W { int magic, version; const void *data, *unused; }; W __cuda_fatbin_wrapper = {0, 1, payload + 2, 0}; }\n",
		"user's wrapper into .nv_fatbin": base +
			"asm(\".section .nv_fatbin, \\\"a\\\"\\n.align 8\\nuserData:\\n.fill 40, 1, 0x5a\\n.text\\n\");\n" +
			"extern \"C\" { extern const unsigned char userData[]; struct W { int magic, version; const void *data, *unused; }; W __cuda_fatbin_wrapper = {0, 1, userData + 8, 0}; }\n",
	} {
		obj := compile(src)
		_, err := embedFatbin(obj, []byte("fatbin"), false)
		var re *objfile.ReplaceError
		if !errors.As(err, &re) {
			t.Errorf("%s: embedFatbin returned %v, want a *objfile.ReplaceError", name, err)
		}
	}
}
