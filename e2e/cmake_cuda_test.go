package e2e

// End-to-end tests of the toolchain file with a CUDA project,
// testdata/cmake-cuda (project(... LANGUAGES CXX CUDA): a static library of
// relocatable device code and a program that launches its kernel). They
// need NVIDIA's CUDA toolkit; without a GPU the program is built and
// inspected, not run.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// cudaArchs are the architectures testdata/cmake-cuda is built for.
var cudaArchs = []string{"sm_80", "sm_90"}

// newCUDABuild copies testdata/cmake-cuda for a build with the CUDA
// toolkit's programs on PATH.
func newCUDABuild(t testing.TB) *cmakeBuild {
	t.Helper()
	// nvcc (CMake finds the toolkit through it), ptxas, fatbinary, nvlink
	// (the device link of separable compilation) and cuobjdump.
	toolkit := filepath.Dir(llvmtest.CUDA(t).Nvcc)
	b := newCMakeBuildOf(t, "testdata/cmake-cuda")
	b.env = append(b.env, "PATH="+toolkit+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LIBRARY_PATH=", "CUDAFLAGS=")
	return b
}

// compileCommand is an entry of compile_commands.json.
type compileCommand struct {
	File    string `json:"file"`
	Command string `json:"command"`
}

// TestCMakeCUDA configures testdata/cmake-cuda with the toolchain file and
// OFFCC_OFFLOAD_ARCH="sm_80;sm_90" alone, builds it with Ninja, and checks
// that offcc++ is the CUDA compiler; that the .cu files compile with both
// architectures and no OpenMP (GPU archs are not OpenMP flags unless
// OFFCC_OPENMP_TARGETS names their triple), nor do the C++ files; and that
// the program carries an sm_80 and an sm_90 cubin (CMake's device link of
// the separable compilation), which offcc inspect finds.
func TestCMakeCUDA(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	buildTool(t, "ninja")
	b := newCUDABuild(t)
	b.configure(t, "Ninja", "-DCMAKE_TOOLCHAIN_FILE="+repoPath(t, "cmake/offcc-toolchain.cmake"),
		"-DOFFCC_BIN_DIR="+c.dir, "-DOFFCC_OFFLOAD_ARCH="+strings.Join(cudaArchs, ";"),
		"-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
	b.checkCompiler(t, "CXX", c.cxx)
	b.checkCompiler(t, "CUDA", c.cxx)
	b.checkCache(t, map[string]string{"CMAKE_CXX_FLAGS": "", "CMAKE_CUDA_FLAGS": "", "OFFCC_OPENMP_TARGETS": ""})

	// The compile commands.
	data, err := os.ReadFile(filepath.Join(b.dir, "compile_commands.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []compileCommand
	if err := json.Unmarshal(data, &cmds); err != nil {
		t.Fatalf("compile_commands.json: %v", err)
	}
	var cu, cpp int
	for _, cmd := range cmds {
		args := strings.Fields(cmd.Command)
		switch filepath.Ext(cmd.File) {
		case ".cu":
			cu++
			if len(args) == 0 || args[0] != c.cxx {
				t.Errorf("%s is not compiled with %s: %s", cmd.File, c.cxx, cmd.Command)
			}
			for _, arch := range cudaArchs {
				if !hasArchFlag(args, arch) {
					t.Errorf("%s is not compiled for %s (--cuda-gpu-arch or --offload-arch): %s", cmd.File, arch, cmd.Command)
				}
			}
		case ".cpp":
			cpp++
		}
		for _, a := range args {
			if strings.HasPrefix(a, "-fopenmp") || strings.HasPrefix(a, "-Xopenmp-target") {
				t.Errorf("%s is compiled with OpenMP (%s): %s", cmd.File, a, cmd.Command)
			}
		}
	}
	if cu != 3 || cpp != 1 {
		t.Errorf("compile_commands.json has %d .cu and %d .cpp files, want 3 and 1:\n%s", cu, cpp, data)
	}
	if t.Failed() {
		t.FailNow()
	}

	b.build(t)
	exe := filepath.Join(b.dir, "cuda_example")
	r := cmdSpec{dir: b.dir, env: b.env, name: "cuobjdump", args: []string{"-lelf", exe}}.mustRun(t)
	for _, arch := range cudaArchs {
		if !regexp.MustCompile(`(?m)^ELF file\s+\d+: \S*\.` + arch + `\.cubin$`).MatchString(r.stdout) {
			t.Errorf("cuobjdump -lelf lists no %s cubin:\n%s", arch, r)
		}
	}
	if c.reference {
		t.Log("reference compiler: offcc inspect not run")
		return
	}
	r = cmdSpec{dir: b.dir, env: b.env, name: c.cc, args: []string{"inspect", exe}}.mustRun(t)
	for _, arch := range cudaArchs {
		if !strings.Contains(r.stdout, "arch "+arch) {
			t.Errorf("offcc inspect does not list the %s image:\n%s", arch, r)
		}
	}
}

// hasArchFlag reports whether args compile for arch: --cuda-gpu-arch=arch,
// or arch among the comma-separated --offload-arch= values.
func hasArchFlag(args []string, arch string) bool {
	for _, a := range args {
		if a == "--cuda-gpu-arch="+arch {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--offload-arch="); ok {
			for _, x := range strings.Split(v, ",") {
				if x == arch {
					return true
				}
			}
		}
	}
	return false
}

// TestCMakeCUDAOpenMPRuntimeMissing: asking for OpenMP offload to the CUDA
// GPUs as well (OFFCC_OPENMP_TARGETS=nvptx64-nvidia-cuda) with an LLVM that
// lacks the OpenMP device runtime (Debian's LLVM 22) stops the configure
// in the toolchain file, before CMake's compiler checks, with one message:
// what is missing, for which target, what to do. Where the runtime is
// installed the test is skipped.
func TestCMakeCUDAOpenMPRuntimeMissing(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	buildTool(t, "ninja")
	b := newCUDABuild(t)

	// Does the compiler find libomptarget-nvptx.bc? (The link fails
	// without it, -### included.)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.c"), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	probe := cmdSpec{dir: dir, env: b.env, name: c.cc,
		args: []string{"-fopenmp", "--offload-arch=sm_80", "x.c", "-o", "x", "-###"}}.run(t)
	if !strings.Contains(probe.stderr, "libomptarget-nvptx.bc") {
		t.Skipf("this LLVM has the OpenMP device runtime for nvptx64 (%s -fopenmp --offload-arch=sm_80 links):\n%s", c.cc, probe)
	}

	r := cmdSpec{dir: b.src, env: b.env, name: b.cmake, args: []string{"-S", b.src, "-B", b.dir, "-G", "Ninja",
		"-DCMAKE_TOOLCHAIN_FILE=" + repoPath(t, "cmake/offcc-toolchain.cmake"), "-DOFFCC_BIN_DIR=" + c.dir,
		"-DOFFCC_OFFLOAD_ARCH=" + strings.Join(cudaArchs, ";"), "-DOFFCC_OPENMP_TARGETS=nvptx64-nvidia-cuda"}}.run(t)
	stderr := strings.Join(strings.Fields(r.stderr), " ") // CMake wraps messages
	if r.code == 0 {
		t.Fatalf("configure succeeded, want the missing runtime reported:\n%s", r)
	}
	toolchainErrors := strings.Count(stderr, "CMake Error at "+repoPath(t, "cmake/offcc-toolchain.cmake"))
	if toolchainErrors != 1 {
		t.Errorf("want one error from the toolchain file, got %d", toolchainErrors)
	}
	for _, want := range []string{
		"OpenMP offload to nvptx64-nvidia-cuda needs LLVM's OpenMP device runtime libomptarget-nvptx.bc, which is missing",
		"build and install LLVM's OpenMP offload runtime for nvptx64-nvidia-cuda",
		"drop nvptx64-nvidia-cuda from OFFCC_OPENMP_TARGETS",
		"configure with -DOFFCC_OPENMP=OFF",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the error lacks %q", want)
		}
	}
	// Stopped before CMake ran the compiler.
	for _, not := range []string{"Check for working", "compiler identification", "error: no library"} {
		if strings.Contains(r.stdout+r.stderr, not) {
			t.Errorf("configure went on to the compiler checks (%q)", not)
		}
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
}

// TestCMakeCUDASeparableLikeClang builds testdata/cmake-cuda (separable
// compilation: CMake's device link runs nvlink and fatbinary and compiles
// CUDA's crt/link.stub with the CUDA compiler) through the toolchain file
// twice in the same directories, once with clang 22 standing in for
// offcc (offcc and offcc++ links to clang and clang++) and once with
// offcc, with clang's default (new) offload driver and with
// --no-offload-new-driver, both without a base directory
// (-DOFFCC_BASE_DIR=OFF), so that clang and offcc see one command line.
// Every object, the library, the cubins, the fat binary header,
// cmake_device_link.o and the program are clang's byte for byte.
func TestCMakeCUDASeparableLikeClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "compares offcc with clang")
	buildTool(t, "ninja")
	refDir := t.TempDir()
	for _, l := range []struct{ link, to string }{{"offcc", refClang}, {"offcc++", refClangXX}} {
		if err := os.Symlink(l.to, filepath.Join(refDir, l.link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []struct {
		name  string
		flags []string
	}{
		{"new-driver", nil},
		{"old-driver", []string{"-DCMAKE_CUDA_FLAGS=--no-offload-new-driver", "-DCUDA_EXAMPLE_LAUNCH_FROM_MAIN=OFF"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			root := t.TempDir()
			for _, b := range []struct{ name, bin string }{{"clang", refDir}, {"offcc", c.dir}} {
				build := newCUDABuild(t)
				build.env = append(build.env, "OFFCC_CACHE=0")
				// The same source and build paths for both builds.
				build.src, build.dir = filepath.Join(root, "src"), filepath.Join(root, "build")
				if err := os.CopyFS(build.src, os.DirFS(repoPath(t, "testdata/cmake-cuda"))); err != nil {
					t.Fatal(err)
				}
				// No base directory: offcc would give clang the paths under
				// it relative to the build directory, and CUDA's compile
				// unit IDs come from the command line clang sees (clang
				// here gets CMake's absolute paths).
				build.configure(t, "Ninja", append([]string{"-DCMAKE_TOOLCHAIN_FILE=" + repoPath(t, "cmake/offcc-toolchain.cmake"),
					"-DOFFCC_BIN_DIR=" + b.bin, "-DOFFCC_OFFLOAD_ARCH=" + strings.Join(cudaArchs, ";"), "-DOFFCC_BASE_DIR=OFF"}, mode.flags...)...)
				log := build.build(t)
				if !strings.Contains(log, "Compiling CUDA device stub") {
					t.Fatalf("%s: CMake compiled no device stub (CUDA's link.stub):\n%s", b.name, log)
				}
				if err := os.Mkdir(filepath.Join(root, b.name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(build.dir, filepath.Join(root, b.name, "build")); err != nil {
					t.Fatal(err)
				}
				os.RemoveAll(build.src)
			}
			compared := sameFiles(t, root, func(name string) bool {
				switch filepath.Ext(name) {
				case ".o", ".a", ".cubin", ".h":
					return !strings.Contains(name, "CMakeFiles/3.") // CMake's compiler checks
				}
				return filepath.Base(name) == "cuda_example"
			})
			for _, want := range []string{"cmake_device_link.o", "cuda_example", "libvecops.a", "cmake_cuda_fatbin.h", "axpy.cu.o"} {
				if !slices.ContainsFunc(compared, func(n string) bool { return strings.HasSuffix(n, want) }) {
					t.Errorf("no %s compared: %v", want, compared)
				}
			}
			// offcc inspect reads each of them.
			for _, name := range compared {
				if filepath.Ext(name) != ".h" {
					cmdSpec{dir: root, name: c.cc, args: []string{"inspect", filepath.Join(root, "offcc", name)}}.mustRun(t)
				}
			}
		})
	}
}
