package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCMakeLoneArch configures a C project that calls the OpenMP API with
// GPU architectures and no OpenMP targets, as a user who sets only
// -DOFFCC_OFFLOAD_ARCH=gfx90a does (the link then fails on
// omp_is_initial_device): configuring warns once, naming the architectures
// and the OFFCC_OPENMP_TARGETS or language to add. Architectures that a
// target uses get no warning.
func TestCMakeLoneArch(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	cmake := buildTool(t, "cmake")
	src := t.TempDir()
	for name, data := range map[string]string{
		"CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(lone LANGUAGES C)\nadd_executable(app main.c)\n",
		"main.c":         "#include <omp.h>\nint main(void) { return omp_is_initial_device() ? 0 : 1; }\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // in the one warning; none: no warning
	}{
		{"gfx90a", []string{"-DOFFCC_OFFLOAD_ARCH=gfx90a"}, []string{
			"OFFCC_OFFLOAD_ARCH=gfx90a is used by no compile",
			`set -DOFFCC_OPENMP_TARGETS="amdgcn-amd-amdhsa"`,
			"which adds -fopenmp and the offload flags",
			"call enable_language(HIP) in the project"}},
		{"gfx90a-sm_90-host", []string{"-DOFFCC_OFFLOAD_ARCH=gfx90a;sm_90", "-DOFFCC_OPENMP_TARGETS=" + offloadHost}, []string{
			"OFFCC_OFFLOAD_ARCH=sm_90;gfx90a is used by no compile",
			`-DOFFCC_OPENMP_TARGETS="nvptx64-nvidia-cuda;amdgcn-amd-amdhsa"`,
			"enable_language(CUDA) or enable_language(HIP)"}},
		// The architectures go to the amdgcn target (OFFCC_OPENMP=OFF: the
		// flags are only offered, so no device runtime is needed).
		{"used", []string{"-DOFFCC_OFFLOAD_ARCH=gfx90a", "-DOFFCC_OPENMP_TARGETS=amdgcn-amd-amdhsa", "-DOFFCC_OPENMP=OFF"}, nil},
		{"no-arch", []string{"-DOFFCC_OPENMP_TARGETS=" + offloadHost}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-S", src, "-B", filepath.Join(t.TempDir(), "build"), "-G", "Unix Makefiles",
				"-DCMAKE_TOOLCHAIN_FILE=" + repoPath(t, "cmake/offcc-toolchain.cmake"), "-DOFFCC_BIN_DIR=" + c.dir}, tc.args...)
			r := cmdSpec{dir: src, env: buildEnv(t), name: cmake, args: args}.mustRun(t)
			stderr := strings.Join(strings.Fields(r.stderr), " ") // CMake wraps messages
			n := strings.Count(stderr, "CMake Warning")
			if tc.want == nil && n != 0 {
				t.Errorf("want no warning:\n%s", r)
			}
			if tc.want != nil && n != 1 {
				t.Errorf("want one warning, got %d:\n%s", n, r)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the warning lacks %q:\n%s", w, r)
				}
			}
		})
	}
}
