package e2e

// The tests of this file are the references for offcc with LLVM 19 (issue
// 37): what clang 19 itself does, on this machine, with Debian's LLVM 19
// (clang-19, lld-19, ...) installed beside 22 by scripts/deps.sh. They
// skip without LLVM 19, and fail then under OFFCC_REQUIRE_LLVM19=1 (CI).
//
// clang 19's OpenMP runtime is not installed: Debian's libomp-19-dev
// conflicts with libomp-22-dev. scripts/deps-llvm19.sh unpacks it, with
// libomp5-19, into /opt/offcc/libomp-19 (llvm19OMPLib is its
// usr/lib/llvm-19/lib). An OpenMP program offloading to the host device is
// built and run with clang 19 against it by
//
//	LIB=/opt/offcc/libomp-19/usr/lib/llvm-19/lib
//	clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu \
//		-isystem $LIB/clang/19/include -L$LIB prog.c -o prog
//	OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$LIB ./prog
//
// -isystem: omp.h (without it clang 19 finds none; its resource directory
// has no omp.h without libomp-19-dev). -L: libomp, libomptarget and
// libomptarget.devicertl.a, which clang-linker-wrapper links into the
// device image. LD_LIBRARY_PATH and not -Wl,-rpath: libomptarget's host
// plugin (built into libomptarget.so.19.1: LLVM 19 has no separate
// libomptarget.rtl.x86_64.so) dlopens "libomp.so", which must be the same
// file as the program's libomp.so.5; with only an rpath it is the system's
// /usr/lib/x86_64-linux-gnu/libomp.so, a second OpenMP runtime, and the
// program aborts with "OMP: Error #15: Initializing libomp.so.5, but found
// libomp.so.5 already initialized".
//
// HIP against Debian's ROCm 5.2 needs fewer flags with clang 19 than with
// 22 (llvmtest.ROCmHIPFlags): clang 19 finds the device libraries under
// --rocm-device-lib-path by itself and still defines
// __AMDGCN_WAVEFRONT_SIZE. CUDA 11.8 (Debian's nvidia-cuda-toolkit under
// /usr/lib/cuda) is found by clang 19 as by 22.

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// openmpHost19 are clang 19's flags of OpenMP offload to the host device
// against its privately unpacked runtime (llvm19OMPLib).
var openmpHost19 = []string{"-fopenmp", "-fopenmp-targets=" + offloadHost,
	"-isystem", filepath.Join(llvm19OMPLib, "clang", "19", "include"), "-L" + llvm19OMPLib}

// offloadEnv19 is the environment in which programs built by clang 19 run:
// offloading mandatory, and clang 19's runtime found first (see the
// comment at the top of this file).
var offloadEnv19 = []string{
	"OMP_TARGET_OFFLOAD=MANDATORY",
	"LD_LIBRARY_PATH=" + llvm19OMPLib,
}

// hipROCmFlags19 are clang 19's flags of a HIP compile against Debian's
// ROCm 5.2 for gfx906.
var hipROCmFlags19 = []string{"-x", "hip", "--rocm-path=" + llvmtest.ROCmPath, "--hip-path=" + llvmtest.ROCmPath,
	"--rocm-device-lib-path=" + llvmtest.ROCmBitcode, "--offload-arch=gfx906"}

// TestLLVM19Reference: clang 19 builds and runs an OpenMP program whose
// target region runs on the host offload device (omp_is_initial_device()
// is 0 in it under OMP_TARGET_OFFLOAD=MANDATORY) against the unpacked
// runtime, compiles HIP for gfx906 against Debian's ROCm 5.2 (the object
// carries a gfx906 code object) and CUDA for sm_70 with Debian's CUDA 11.8
// (the object carries an sm_70 cubin).
func TestLLVM19Reference(t *testing.T) {
	t.Parallel()
	t.Run("openmp", func(t *testing.T) {
		t.Parallel()
		clang := llvm19Tool(t, "clang")
		llvm19OpenMP(t)
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		prog := filepath.Join(dir, "basic")
		cmdSpec{dir: dir, env: []string{tmp}, name: clang,
			args: args(openmpHost19, srcPath(t, "basic.c"), "-o", prog)}.mustRun(t)
		// A clang 19 program: it needs 19's libomptarget.
		f, err := elf.Open(prog)
		if err != nil {
			t.Fatal(err)
		}
		libs, err := f.ImportedLibraries()
		f.Close()
		if err != nil || !slices.Contains(libs, "libomptarget.so.19.1") {
			t.Errorf("%s needs %v (err %v), not libomptarget.so.19.1", prog, libs, err)
		}
		r := cmdSpec{dir: dir, env: offloadEnv19, name: prog}.run(t)
		if r.code != 0 || !strings.Contains(r.stdout, "on device: yes, sum=500500") {
			t.Fatalf("clang 19's offload program did not run its target region on the device:\n%s", r)
		}
	})
	t.Run("hip", func(t *testing.T) {
		t.Parallel()
		clangXX := llvm19Tool(t, "clang++")
		if err := llvmtest.ROCmMissing(); err != nil {
			llvmtest.Missing(t, "%v", err)
		}
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		obj := filepath.Join(dir, "vec_add.o")
		cmdSpec{dir: dir, env: []string{tmp}, name: clangXX,
			args: args(hipROCmFlags19, "-c", rocmProject(t, "vec_add.hip"), "-o", obj)}.mustRun(t)
		// The object's .hip_fatbin is a clang-offload-bundler bundle whose
		// header names its entries.
		b, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"__CLANG_OFFLOAD_BUNDLE__", "hipv4-amdgcn-amd-amdhsa--gfx906"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("clang 19's HIP object has no %s", want)
			}
		}
	})
	t.Run("cuda", func(t *testing.T) {
		t.Parallel()
		clangXX := llvm19Tool(t, "clang++")
		k := llvmtest.CUDA(t)
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		obj := filepath.Join(dir, "kernels.o")
		cmdSpec{dir: dir, env: []string{tmp}, name: clangXX,
			args: args("-x", "cuda", "--offload-arch=sm_70", "-c", cudaToolkitSrc(t, "kernels.cu"), "-o", obj)}.mustRun(t)
		r := cmdSpec{dir: dir, name: k.Cuobjdump, args: args("-lelf", obj)}.mustRun(t)
		if !strings.Contains(r.stdout, "sm_70.cubin") {
			t.Errorf("clang 19's CUDA object has no sm_70 cubin:\n%s", r)
		}
	})
}
