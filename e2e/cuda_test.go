package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CUDA tests of this file need no CUDA toolkit: device code compiles
// to PTX (or bitcode), and the tools that need NVIDIA's ptxas and
// fatbinary are checked for the error offcc gives. cuda_toolkit_test.go
// has the tests that run NVIDIA's tools. --cuda-feature=+ptx80
// and -target-sdk-version=12.0 stand in for what clang reads from a CUDA
// installation (PTX ISA version, launch API).

// cudaFlags compile testdata/cuda for sm_80 and sm_90 without the toolkit.
func cudaFlags(t *testing.T) []string {
	return []string{"-x", "cuda", "--offload-arch=sm_80,sm_90", "-nocudainc", "-nocudalib", "-O2",
		"--cuda-feature=+ptx80", "-Xclang", "-target-sdk-version=12.0", "-I" + srcPath(t, "../cuda")}
}

// TestCUDADeviceCodeLikeClang: the PTX of each sm arch (--cuda-device-only
// -S), and the bitcode images an RDC compile with the new offload driver
// embeds (-fgpu-rdc -foffload-lto), are clang 22's byte for byte; offcc
// ran the two device compiles at once.
func TestCUDADeviceCodeLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	src := srcPath(t, "../cuda/kernels.cu")
	for _, build := range []struct{ name, cc string }{{"clang", refClangXX}, {"offcc", c.cxx}} {
		bdir := filepath.Join(dir, build.name)
		os.Mkdir(bdir, 0o755)
		ptx := args(cudaFlags(t), "--cuda-device-only", "-S", src)
		if build.name == "offcc" {
			// The trace must show the compiles running, not the cache.
			ptx = append(ptx, "--job-trace=trace.json", "--no-cache")
		}
		cmdSpec{dir: bdir, env: []string{tmp}, name: build.cc, args: ptx}.mustRun(t)
		cmdSpec{dir: bdir, env: []string{tmp}, name: build.cc,
			args: args(cudaFlags(t), "--offload-new-driver", "-fgpu-rdc", "-foffload-lto", "-c", src, "-o", "rdc.o")}.mustRun(t)
	}
	for _, f := range []string{"kernels-cuda-nvptx64-nvidia-cuda-sm_80.s", "kernels-cuda-nvptx64-nvidia-cuda-sm_90.s", "rdc.o"} {
		a, _ := os.ReadFile(filepath.Join(dir, "clang", f))
		b, _ := os.ReadFile(filepath.Join(dir, "offcc", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: offcc's (%d bytes) differs from clang's (%d bytes)", f, len(b), len(a))
		}
	}
	sm80, _ := os.ReadFile(filepath.Join(dir, "offcc", "kernels-cuda-nvptx64-nvidia-cuda-sm_80.s"))
	if !bytes.Contains(sm80, []byte(".target sm_80")) || !bytes.Contains(sm80, []byte(".entry _Z5scalePffi")) {
		t.Errorf("sm_80 output is not PTX with the kernel scale:\n%.300s", sm80)
	}
	// The RDC object carries one bitcode image per arch, of kind cuda.
	r := cmdSpec{dir: dir, name: c.cc, args: args("inspect", filepath.Join(dir, "offcc", "rdc.o"))}.mustRun(t)
	for _, want := range []string{"producer cuda, triple nvptx64-nvidia-cuda, arch sm_80", "producer cuda, triple nvptx64-nvidia-cuda, arch sm_90", "LLVM bitcode"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect rdc.o lacks %q:\n%s", want, r.stdout)
		}
	}
	device := spans(t, filepath.Join(dir, "offcc", "trace.json"), "device-compile")
	if len(device) != 2 || !device[0].overlaps(device[1]) {
		t.Errorf("the two device compiles did not run at once: %v", device)
	}
}

// TestCUDAWithoutToolkit: a CUDA compile that needs NVIDIA's ptxas stops
// before it starts, with one line naming the missing tool and how to get
// PTX only; it writes nothing and leaves no temporary. The toolkit is
// hidden: --cuda-path names an empty directory and PATH holds nothing.
func TestCUDAWithoutToolkit(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "offcc's own diagnostic")
	dir := t.TempDir()
	empty := t.TempDir()
	tmpDir, tmp := tmpEnv(t)
	r := cmdSpec{dir: dir, env: []string{tmp, "PATH=" + empty}, name: c.cxx,
		args: args(cudaFlags(t), "--cuda-path="+empty, "-c", srcPath(t, "../cuda/kernels.cu"), "-o", "k.o")}.run(t)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "error: cannot find 'ptxas'") || !strings.Contains(lines[0], "--cuda-device-only -S") {
		t.Errorf("want exit 1 and one line naming ptxas and the PTX-only way:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "k.o")); err == nil {
		t.Error("k.o was written")
	}
	if left, _ := os.ReadDir(tmpDir); len(left) > 0 {
		t.Errorf("temporaries left: %v", left)
	}
}
