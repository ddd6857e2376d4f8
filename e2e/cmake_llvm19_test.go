package e2e

// End-to-end tests of the toolchain file with LLVM 19 (issue 37): an
// OpenMP project (testdata/cmake) picked by OFFCC_LLVM_DIR and a CUDA
// project (testdata/cmake-cuda) picked by OFFCC_LLVM_VERSION=19. Both skip
// without LLVM 19 (and fail then under OFFCC_REQUIRE_LLVM19=1).

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// buildVerbose runs cmake --build -v on two jobs and returns its output,
// the command lines included.
func (b *cmakeBuild) buildVerbose(t testing.TB) string {
	t.Helper()
	r := cmdSpec{dir: b.dir, env: b.env, name: b.cmake, args: []string{"--build", b.dir, "-j", "2", "-v"}}.mustRun(t)
	return r.stdout + r.stderr
}

// checkLLVM19Steps checks a verbose build log: every compile and link that
// runs offcc runs it as "env ... OFFCC_LLVM_DIR=<llvm19Bin> ... offcc"
// (CMake's CUDA device stub, whose rule takes no launcher, included).
func checkLLVM19Steps(t testing.TB, log, offccDir string) {
	t.Helper()
	n := 0
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, filepath.Join(offccDir, "offcc")) {
			continue
		}
		n++
		if !strings.Contains(l, "OFFCC_LLVM_DIR="+llvm19Bin+" ") {
			t.Errorf("a step runs offcc without OFFCC_LLVM_DIR=%s:\n%s", llvm19Bin, l)
		}
	}
	if n == 0 {
		t.Errorf("the build log shows no offcc command line:\n%s", log)
	}
}

// checkMadeBy19 checks that each object's .comment names clang 19.
func checkMadeBy19(t testing.TB, dir string, objects ...string) {
	t.Helper()
	readelf := llvm19Tool(t, "llvm-readelf")
	for _, o := range objects {
		r := cmdSpec{dir: dir, name: readelf, args: []string{"-p", ".comment", o}}.mustRun(t)
		if !strings.Contains(r.stdout, "clang version 19.") || strings.Contains(r.stdout, "clang version 22.") {
			t.Errorf("%s was not made by clang 19 alone:\n%s", o, r)
		}
	}
}

// TestCMakeLLVM19OpenMP builds testdata/cmake offloading to the host with
// -DOFFCC_LLVM_DIR=/usr/lib/llvm-19/bin (OFFCC_LLVM_VERSION is read from
// it), clang 19's private OpenMP runtime given the usual way (CFLAGS,
// CXXFLAGS and LDFLAGS at the first configure), and runs the program with
// that runtime: every compile and link drives LLVM 19, the binutils are
// LLVM 19's, the objects are clang 19's.
func TestCMakeLLVM19OpenMP(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "drives LLVM 19 through offcc")
	buildTool(t, "ninja")
	llvm19Tool(t, "clang")
	llvm19OpenMP(t)
	b := newCMakeBuild(t)
	inc := "-isystem " + filepath.Join(llvm19OMPLib, "clang/19/include")
	b.env = append(b.env, "CFLAGS="+inc, "CXXFLAGS="+inc, "LDFLAGS=-L"+llvm19OMPLib, "OFFCC_LLVM_DIR=")
	b.configure(t, "Ninja", append(toolchainArgs(t, c), "-DOFFCC_LLVM_DIR="+llvm19Bin)...)
	want := binutilsIn(llvm19Bin, false)
	want["OFFCC_LLVM_VERSION"] = "19"
	b.checkCache(t, want)
	log := b.buildVerbose(t)
	checkLLVM19Steps(t, log, c.dir)
	checkMadeBy19(t, b.dir, allObjects...)
	r := cmdSpec{dir: b.dir, env: []string{"OMP_TARGET_OFFLOAD=MANDATORY", "LD_LIBRARY_PATH=" + llvm19OMPLib},
		name: filepath.Join(b.dir, "offcc_example")}.mustRun(t)
	for _, w := range []string{"on device: yes", "saxpy sum: 1000000.0 (ok)", "dot: 999000.0 (ok)"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("the program's output lacks %q:\n%s", w, r)
		}
	}
}

// TestCMakeLLVM19CUDA configures testdata/cmake-cuda with
// -DOFFCC_LLVM_VERSION=19 (OFFCC_LLVM_DIR defaults to
// /usr/lib/llvm-19/bin) for sm_80 and sm_90 and builds it: CMake
// identifies the CUDA compiler as Clang 19, the .cu objects are clang
// 19's (CMake's device stub, cmake_device_link.o, included), and the
// program carries both cubins. main.cu does not launch the
// library's kernel itself (CUDA_EXAMPLE_LAUNCH_FROM_MAIN=OFF): with clang
// 19 itself in offcc's place, CMake 3.25's nvlink device link fails on
// that ("not declared __global__ in all source files").
func TestCMakeLLVM19CUDA(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "drives LLVM 19 through offcc")
	buildTool(t, "ninja")
	llvm19Tool(t, "clang")
	llvmtest.CUDA(t)
	b := newCUDABuild(t)
	b.env = append(b.env, "OFFCC_LLVM_DIR=")
	b.configure(t, "Ninja", "-DCMAKE_TOOLCHAIN_FILE="+repoPath(t, "cmake/offcc-toolchain.cmake"),
		"-DOFFCC_BIN_DIR="+c.dir, "-DOFFCC_OFFLOAD_ARCH="+strings.Join(cudaArchs, ";"),
		"-DOFFCC_LLVM_VERSION=19", "-DCUDA_EXAMPLE_LAUNCH_FROM_MAIN=OFF")
	b.checkCache(t, map[string]string{"OFFCC_LLVM_DIR": llvm19Bin, "OFFCC_LLVM_VERSION": "19",
		"CMAKE_AR": filepath.Join(llvm19Bin, "llvm-ar")})
	files, _ := filepath.Glob(filepath.Join(b.dir, "CMakeFiles", "*", "CMakeCUDACompiler.cmake"))
	if len(files) != 1 {
		t.Fatalf("want one CMakeCUDACompiler.cmake, found %q", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^set\(CMAKE_CUDA_COMPILER_VERSION "19\.`).Match(data) {
		t.Errorf("CMake did not identify the CUDA compiler as clang 19:\n%s", data)
	}
	log := b.buildVerbose(t)
	checkLLVM19Steps(t, log, c.dir)
	checkMadeBy19(t, b.dir, "CMakeFiles/vecops.dir/src/axpy.cu.o", "CMakeFiles/vecops.dir/src/scale.cu.o",
		"CMakeFiles/cuda_example.dir/app/main.cu.o", "CMakeFiles/cuda_example.dir/cmake_device_link.o")
	r := cmdSpec{dir: b.dir, env: b.env, name: "cuobjdump", args: []string{"-lelf", filepath.Join(b.dir, "cuda_example")}}.mustRun(t)
	for _, arch := range cudaArchs {
		if !regexp.MustCompile(`(?m)^ELF file\s+\d+: \S*\.` + arch + `\.cubin$`).MatchString(r.stdout) {
			t.Errorf("cuobjdump -lelf lists no %s cubin:\n%s", arch, r)
		}
	}
}
