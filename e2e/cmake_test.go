package e2e

// End-to-end tests of offcc in CMake builds: the toolchain file
// cmake/offcc-toolchain.cmake, the example project testdata/cmake (a static
// library with target regions in C and C++, and a C++/C program), the
// Ninja and Unix Makefiles generators, IPO, and make install.

import (
	"bufio"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
)

// buildTool returns the path of a build tool (cmake, ninja, make) on PATH.
// A missing one skips the test, or fails it under OFFCC_REQUIRE_LLVM=1:
// make deps installs cmake and ninja-build with LLVM 22.
func buildTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		llvmtest.Missing(t, "%s not found on PATH (make deps installs it)", name)
	}
	return p
}

// repoPath returns the path of a file in the repository.
func repoPath(t testing.TB, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// buildEnv returns the environment additions for the build systems these
// tests run (cmake, make, ninja, go): a fresh TMPDIR; no jobserver, flags
// or variables from a make that runs go test (make test), whose jobserver
// descriptors these processes do not have; no compiler settings from the
// user's environment. For a race-instrumented offcc, GORACE gets
// atexit_sleep_ms=0 unless it sets it: the race runtime otherwise sleeps a
// second at every exit, and a CMake configure runs the compiler a dozen
// times one after another. Races are still reported (and with make test's
// halt_on_error=1 fail the build) while offcc runs.
func buildEnv(t testing.TB) []string {
	t.Helper()
	_, tmp := tmpEnv(t)
	env := []string{tmp, "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", "MAKEOVERRIDES=",
		"CC=", "CXX=", "CFLAGS=", "CXXFLAGS=", "CPPFLAGS=", "LDFLAGS=",
		"CMAKE_GENERATOR=", "CMAKE_BUILD_PARALLEL_LEVEL=", "CMAKE_TOOLCHAIN_FILE="}
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		env = append(env, strings.TrimSpace("GORACE="+g+" atexit_sleep_ms=0"))
	}
	return env
}

// cmakeBuild is a build directory of a CMake project of testdata.
type cmakeBuild struct {
	cmake string
	src   string // a copy of the project (testdata/cmake by default)
	dir   string // the build directory
	env   []string
}

// newCMakeBuild copies testdata/cmake into a temporary directory, so tests
// may touch its files, and names a build directory beside it.
func newCMakeBuild(t testing.TB) *cmakeBuild {
	t.Helper()
	return newCMakeBuildOf(t, "testdata/cmake")
}

// newCMakeBuildOf is newCMakeBuild for the project in the repository
// directory project.
func newCMakeBuildOf(t testing.TB, project string) *cmakeBuild {
	t.Helper()
	b := &cmakeBuild{cmake: buildTool(t, "cmake"), env: buildEnv(t)}
	root := t.TempDir()
	b.src, b.dir = filepath.Join(root, "src"), filepath.Join(root, "build")
	if err := os.CopyFS(b.src, os.DirFS(repoPath(t, project))); err != nil {
		t.Fatal(err)
	}
	return b
}

// configure runs cmake -S src -B dir with the generator and arguments.
func (b *cmakeBuild) configure(t testing.TB, generator string, args ...string) {
	t.Helper()
	start := time.Now()
	cmdSpec{dir: b.src, env: b.env, name: b.cmake,
		args: append([]string{"-S", b.src, "-B", b.dir, "-G", generator}, args...)}.mustRun(t)
	t.Logf("configure (%s): %.1fs", generator, time.Since(start).Seconds())
}

// build runs cmake --build on two jobs and returns its output.
func (b *cmakeBuild) build(t testing.TB) string {
	t.Helper()
	start := time.Now()
	r := cmdSpec{dir: b.dir, env: b.env, name: b.cmake, args: []string{"--build", b.dir, "-j", "2"}}.mustRun(t)
	t.Logf("build: %.1fs", time.Since(start).Seconds())
	return r.stdout + r.stderr
}

// cache returns the build directory's CMakeCache.txt as a map.
func (b *cmakeBuild) cache(t testing.TB) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(b.dir, "CMakeCache.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "//") {
			continue
		}
		// KEY:TYPE=VALUE
		if kt, v, ok := strings.Cut(l, "="); ok {
			k, _, _ := strings.Cut(kt, ":")
			m[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkCache checks cache entries against want.
func (b *cmakeBuild) checkCache(t testing.TB, want map[string]string) {
	t.Helper()
	got := b.cache(t)
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			t.Errorf("CMakeCache.txt: %s = %q, want %q", k, got[k], want[k])
		}
	}
}

// compilerDef matches the compiler path in CMake<LANG>Compiler.cmake.
var compilerDef = regexp.MustCompile(`(?m)^set\(CMAKE_(C|CXX|CUDA)_COMPILER "([^"]*)"\)$`)

// checkCompilers checks the C and C++ compilers CMake configured, which a
// toolchain file sets outside the cache.
func (b *cmakeBuild) checkCompilers(t testing.TB, cc, cxx string) {
	t.Helper()
	b.checkCompiler(t, "C", cc)
	b.checkCompiler(t, "CXX", cxx)
}

// checkCompiler checks the compiler CMake configured for lang (C, CXX or
// CUDA).
func (b *cmakeBuild) checkCompiler(t testing.TB, lang, want string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(b.dir, "CMakeFiles", "*", "CMake"+lang+"Compiler.cmake"))
	if len(files) != 1 {
		t.Errorf("want one CMakeFiles/*/CMake%sCompiler.cmake, found %q", lang, files)
		return
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, m := range compilerDef.FindAllStringSubmatch(string(data), -1) {
		if m[1] == lang {
			got = m[2]
		}
	}
	if got != want {
		t.Errorf("CMAKE_%s_COMPILER = %q, want %q", lang, got, want)
	}
}

// binutils are the tools the toolchain file (and the links beside offcc)
// take from LLVM 22.
var binutils = []string{"AR", "RANLIB", "NM", "OBJCOPY", "OBJDUMP", "STRIP"}

// binutilsIn returns the cache entries of binutils in dir, with the
// archiver and ranlib for IPO (CMAKE_<LANG>_COMPILER_AR and _RANLIB) when
// compilerTools is set.
func binutilsIn(dir string, compilerTools bool) map[string]string {
	m := map[string]string{}
	for _, tool := range binutils {
		m["CMAKE_"+tool] = filepath.Join(dir, "llvm-"+strings.ToLower(tool))
	}
	if compilerTools {
		for _, lang := range []string{"C", "CXX"} {
			m["CMAKE_"+lang+"_COMPILER_AR"] = filepath.Join(dir, "llvm-ar")
			m["CMAKE_"+lang+"_COMPILER_RANLIB"] = filepath.Join(dir, "llvm-ranlib")
		}
	}
	return m
}

// run runs the example program offloaded and checks its results.
func (b *cmakeBuild) run(t testing.TB) {
	t.Helper()
	r := runOffloadProgram(t, filepath.Join(b.dir, "offcc_example"))
	for _, want := range []string{"saxpy sum: 1000000.0 (ok)", "dot: 999000.0 (ok)"} {
		if !slices.Contains(strings.Split(r.stdout, "\n"), want) {
			t.Errorf("output lacks the line %q:\n%s", want, r)
		}
	}
}

// builtObjects matches the objects that a Ninja or Makefiles build compiles.
var builtObjects = regexp.MustCompile(`(?m)Building (?:C|CXX) object (\S+)$`)

func compiled(out string) []string {
	var objs []string
	for _, m := range builtObjects.FindAllStringSubmatch(out, -1) {
		objs = append(objs, m[1])
	}
	slices.Sort(objs)
	return objs
}

// The example's objects; tuning.h is included by saxpy.c and dot.cpp only.
var (
	allObjects = []string{
		"CMakeFiles/kernels.dir/src/devinfo.c.o",
		"CMakeFiles/kernels.dir/src/dot.cpp.o",
		"CMakeFiles/kernels.dir/src/saxpy.c.o",
		"CMakeFiles/offcc_example.dir/app/main.cpp.o",
		"CMakeFiles/offcc_example.dir/app/report.c.o",
	}
	tuningObjects = []string{
		"CMakeFiles/kernels.dir/src/dot.cpp.o",
		"CMakeFiles/kernels.dir/src/saxpy.c.o",
	}
)

// toolchainArgs are the cache settings of a build with the source tree's
// toolchain file and the compiler under test.
func toolchainArgs(t testing.TB, c compiler) []string {
	return []string{
		"-DCMAKE_TOOLCHAIN_FILE=" + repoPath(t, "cmake/offcc-toolchain.cmake"),
		"-DOFFCC_BIN_DIR=" + c.dir,
		"-DOFFCC_OPENMP_TARGETS=" + offloadHost,
	}
}

// TestCMakeGenerators builds the example with the toolchain file, with
// Ninja and with Unix Makefiles (make -j2), runs it offloaded, and checks incremental builds: nothing to do after a
// build, and touching src/tuning.h recompiles exactly the two sources that
// include it (the depfiles offcc writes for offload compiles name it).
func TestCMakeGenerators(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	for _, gen := range []string{"Ninja", "Unix Makefiles"} {
		t.Run(strings.ReplaceAll(gen, " ", ""), func(t *testing.T) {
			t.Parallel()
			if gen == "Ninja" {
				buildTool(t, "ninja")
			} else {
				buildTool(t, "make")
			}
			b := newCMakeBuild(t)
			b.configure(t, gen, toolchainArgs(t, c)...)
			b.checkCompilers(t, c.cc, c.cxx)
			want := binutilsIn(llvmBin, true)
			want["CMAKE_C_FLAGS"] = "-fopenmp -fopenmp-targets=" + offloadHost
			want["CMAKE_CXX_FLAGS"] = "-fopenmp -fopenmp-targets=" + offloadHost
			b.checkCache(t, want)

			out := b.build(t)
			if got := compiled(out); !slices.Equal(got, allObjects) {
				t.Errorf("first build compiled %q, want %q\n%s", got, allObjects, out)
			}
			b.run(t)

			out = b.build(t)
			if got := compiled(out); len(got) != 0 {
				t.Errorf("a second build compiled %q, want nothing\n%s", got, out)
			}
			if gen == "Ninja" && !strings.Contains(out, "ninja: no work to do.") {
				t.Errorf("a second Ninja build did work:\n%s", out)
			}

			now := time.Now()
			if err := os.Chtimes(filepath.Join(b.src, "src", "tuning.h"), now, now); err != nil {
				t.Fatal(err)
			}
			out = b.build(t)
			if got := compiled(out); !slices.Equal(got, tuningObjects) {
				t.Errorf("after touching src/tuning.h the build compiled %q, want %q\n%s", got, tuningObjects, out)
			}
			for _, l := range []string{"Linking CXX static library libkernels.a", "Linking CXX executable offcc_example"} {
				if !strings.Contains(out, l) {
					t.Errorf("after touching src/tuning.h the build did not print %q:\n%s", l, out)
				}
			}
			b.run(t)
		})
	}
}

// TestCMakeIPO builds the example with CMAKE_INTERPROCEDURAL_OPTIMIZATION:
// the library's objects are LLVM 22 bitcode, which only LLVM 22's llvm-ar
// can index (LLVM 14's, /usr/bin/llvm-ar on Debian 12, fails), and the
// offload link goes through LTO. CMake archives IPO objects with
// CMAKE_<LANG>_COMPILER_AR, which the toolchain file sets. (Without it,
// CMake finds llvm-ar-22 on PATH for that; -flto in the flags, which
// uses CMAKE_AR, is the case that needs the links beside offcc: see
// TestCMakeInstall/plain-compiler-flto.)
func TestCMakeIPO(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	buildTool(t, "ninja")
	b := newCMakeBuild(t)
	b.configure(t, "Ninja", append(toolchainArgs(t, c), "-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON")...)
	b.checkCache(t, binutilsIn(llvmBin, true))
	cmds := cmdSpec{dir: b.dir, env: b.env, name: buildTool(t, "ninja"), args: []string{"-t", "commands"}}.mustRun(t)
	if !regexp.MustCompile(`offcc .*-flto.* -c \S*saxpy\.c`).MatchString(cmds.stdout) {
		t.Errorf("saxpy.c is not compiled with -flto:\n%s", cmds.stdout)
	}
	if !regexp.MustCompile(`"?` + regexp.QuoteMeta(filepath.Join(llvmBin, "llvm-ar")) + `"? cr libkernels\.a `).MatchString(cmds.stdout) {
		t.Errorf("libkernels.a is not archived with LLVM 22's llvm-ar:\n%s", cmds.stdout)
	}
	b.build(t)
	b.run(t)
}

// TestCMakeInstall runs the real make install (DESTDIR and PREFIX), with
// the compiler under test as the executable it installs, checks the
// layout, and builds the example through the installed tree: with the
// installed toolchain file (which finds offcc and the binutils links beside
// it on its own), and with plain CMAKE_C_COMPILER=<prefix>/bin/offcc and
// -flto in the flags, where CMake looks for llvm-ar beside the compiler
// first (without the links it takes /usr/bin/llvm-ar, LLVM 14's, which
// cannot index LLVM 22 bitcode).
func TestCMakeInstall(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "make install installs offcc, not the reference compiler")
	buildTool(t, "cmake")
	buildTool(t, "ninja")
	mk := buildTool(t, "make")
	stage := t.TempDir()
	const prefix = "/opt/offcc"
	cmdSpec{dir: repoPath(t, ""), env: buildEnv(t), name: mk,
		args: []string{"--no-print-directory", "install", "DESTDIR=" + stage, "PREFIX=" + prefix,
			"INSTALL_EXE=" + c.cc, "LLVM_BIN=" + llvmBin}}.mustRun(t)
	root := filepath.Join(stage, prefix)
	bin := filepath.Join(root, "bin")

	// The layout.
	if fi, err := os.Lstat(filepath.Join(bin, "offcc")); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		t.Errorf("bin/offcc is not an executable file: %v %v", fi, err)
	}
	links := map[string]string{filepath.Join(bin, "offcc++"): "offcc"}
	for _, tool := range binutils {
		name := "llvm-" + strings.ToLower(tool)
		links[filepath.Join(bin, name)] = filepath.Join(llvmBin, name)
	}
	for _, name := range []string{"llvm-offload-binary", "clang-offload-packager", "clang-offload-bundler"} {
		links[filepath.Join(root, "libexec", "offcc", name)] = "../../bin/offcc"
	}
	for link, to := range links {
		if got, err := os.Readlink(link); err != nil || got != to {
			t.Errorf("%s: link to %q (%v), want %q", link, got, err, to)
		}
	}
	for _, name := range []string{"llvm-offload-binary", "clang-offload-bundler"} {
		r := cmdSpec{dir: root, env: buildEnv(t), name: filepath.Join(root, "libexec", "offcc", name), args: []string{"--version"}}.mustRun(t)
		if !strings.Contains(r.stdout, "offcc") {
			t.Errorf("%s --version does not name offcc:\n%s", name, r)
		}
	}
	toolchain := filepath.Join(root, "share", "offcc", "cmake", "offcc-toolchain.cmake")
	if got, err := os.ReadFile(toolchain); err != nil {
		t.Fatal(err)
	} else if want, _ := os.ReadFile(repoPath(t, "cmake/offcc-toolchain.cmake")); string(got) != string(want) {
		t.Errorf("%s differs from cmake/offcc-toolchain.cmake", toolchain)
	}
	if t.Failed() {
		t.FailNow()
	}

	t.Run("toolchain", func(t *testing.T) {
		t.Parallel()
		b := newCMakeBuild(t)
		b.configure(t, "Ninja", "-DCMAKE_TOOLCHAIN_FILE="+toolchain, "-DOFFCC_OPENMP_TARGETS="+offloadHost)
		want := binutilsIn(bin, true)
		want["OFFCC_BIN_DIR"] = bin
		b.checkCache(t, want)
		b.checkCompilers(t, filepath.Join(bin, "offcc"), filepath.Join(bin, "offcc++"))
		b.build(t)
		b.run(t)
	})
	t.Run("plain-compiler-flto", func(t *testing.T) {
		t.Parallel()
		b := newCMakeBuild(t)
		flags := "-fopenmp -fopenmp-targets=" + offloadHost + " -flto"
		b.configure(t, "Ninja", "-DCMAKE_C_COMPILER="+filepath.Join(bin, "offcc"),
			"-DCMAKE_CXX_COMPILER="+filepath.Join(bin, "offcc++"),
			"-DCMAKE_C_FLAGS="+flags, "-DCMAKE_CXX_FLAGS="+flags)
		b.checkCache(t, binutilsIn(bin, false))
		b.build(t)
		b.run(t)
	})
}

// TestCMakeToolchainVariables evaluates the toolchain file in CMake's
// script mode: where it finds offcc, the flags and architectures it makes
// of OFFCC_OPENMP_TARGETS and OFFCC_OFFLOAD_ARCH (GPU archs are OpenMP
// flags only for the GPU triples of OFFCC_OPENMP_TARGETS), and the error
// when the OpenMP device runtime of such a triple is missing. Fake device
// runtimes (empty files) in LIBRARY_PATH or an LLVM directory stand in for
// real ones; offcc here is an empty file, with no library directories.
// (testdata/cmake-cuda builds for CUDA GPUs, where a CUDA toolkit is
// installed: see TestCMakeCUDA.)
func TestCMakeToolchainVariables(t *testing.T) {
	t.Parallel()
	getCompiler(t)
	cmake := buildTool(t, "cmake")
	src, err := os.ReadFile(repoPath(t, "cmake/offcc-toolchain.cmake"))
	if err != nil {
		t.Fatal(err)
	}
	// Two layouts with the toolchain file and an (empty) offcc: offcc's
	// source tree and an installed prefix. And OpenMP device runtimes: both
	// in devrtl/, nvptx's in an LLVM tree's lib/<triple>.
	root := t.TempDir()
	for _, l := range []struct{ file, data string }{
		{"tree/cmake/offcc-toolchain.cmake", string(src)},
		{"tree/bin/offcc", ""},
		{"prefix/share/offcc/cmake/offcc-toolchain.cmake", string(src)},
		{"prefix/bin/offcc", ""},
		{"devrtl/libomptarget-nvptx.bc", ""},
		{"devrtl/libomptarget-amdgpu.bc", ""},
		{"llvm/bin/.keep", ""},
		{"llvm/lib/nvptx64-nvidia-cuda/libomptarget-nvptx.bc", ""},
		{"llvm/lib/clang/22/.keep", ""},
		{"nollvm/bin/.keep", ""},
		{"nollvm/lib/clang/22/.keep", ""},
	} {
		p := filepath.Join(root, l.file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(l.data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(root, "print.cmake")
	if err := os.WriteFile(script, []byte(`include("${TOOLCHAIN}")
foreach(v OFFCC_BIN_DIR CMAKE_C_COMPILER CMAKE_CXX_COMPILER CMAKE_HIP_COMPILER CMAKE_AR
    CMAKE_CXX_COMPILER_RANLIB OFFCC_OPENMP_FLAGS CMAKE_C_FLAGS_INIT CMAKE_CXX_FLAGS_INIT
    CMAKE_CUDA_ARCHITECTURES CMAKE_HIP_ARCHITECTURES OFFCC_BASE_DIR CMAKE_C_COMPILER_LAUNCHER
    CMAKE_CUDA_COMPILER_LAUNCHER)
  message("${v}=${${v}}")
endforeach()
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		// The device runtimes are in LIBRARY_PATH.
		withRuntimes = []string{"LIBRARY_PATH=" + filepath.Join(root, "devrtl")}
		// Only nvptx's, in OFFCC_LLVM_DIR/../lib/nvptx64-nvidia-cuda.
		llvmNVPTX = []string{"LIBRARY_PATH=", "OFFCC_LLVM_DIR=" + filepath.Join(root, "llvm/bin")}
		// None.
		noRuntimes = []string{"LIBRARY_PATH=", "OFFCC_LLVM_DIR=" + filepath.Join(root, "nollvm/bin")}
	)
	const hostFlags = "-fopenmp -fopenmp-targets=" + offloadHost
	for _, tc := range []struct {
		name    string
		args    []string
		env     []string
		want    map[string]string
		warning string // in stderr; without it, no warning
	}{
		{"tree-layout", []string{"-DTOOLCHAIN=" + filepath.Join(root, "tree/cmake/offcc-toolchain.cmake")}, nil,
			map[string]string{
				"OFFCC_BIN_DIR":             filepath.Join(root, "tree/bin"),
				"CMAKE_C_COMPILER":          filepath.Join(root, "tree/bin/offcc"),
				"CMAKE_CXX_COMPILER":        filepath.Join(root, "tree/bin/offcc++"),
				"CMAKE_HIP_COMPILER":        filepath.Join(root, "tree/bin/offcc++"),
				"CMAKE_AR":                  filepath.Join(llvmBin, "llvm-ar"),
				"CMAKE_CXX_COMPILER_RANLIB": filepath.Join(llvmBin, "llvm-ranlib"),
				"OFFCC_OPENMP_FLAGS":        "",
				"CMAKE_C_FLAGS_INIT":        "",
			}, ""},
		{"installed-layout", []string{"-DTOOLCHAIN=" + filepath.Join(root, "prefix/share/offcc/cmake/offcc-toolchain.cmake")}, nil,
			map[string]string{
				"OFFCC_BIN_DIR":    filepath.Join(root, "prefix/bin"),
				"CMAKE_C_COMPILER": filepath.Join(root, "prefix/bin/offcc"),
			}, ""},
		{"openmp-host", []string{"-DOFFCC_OPENMP_TARGETS=" + offloadHost}, nil,
			map[string]string{
				"OFFCC_OPENMP_FLAGS":       "-fopenmp;-fopenmp-targets=" + offloadHost,
				"CMAKE_C_FLAGS_INIT":       hostFlags,
				"CMAKE_CXX_FLAGS_INIT":     hostFlags,
				"CMAKE_CUDA_ARCHITECTURES": "",
			}, ""},
		// GPU architectures alone are for CUDA and HIP: C and C++ stay
		// plain host compiles, and no device runtime is looked for.
		{"gpu-archs", []string{"-DOFFCC_OFFLOAD_ARCH=gfx90a;sm_90;gfx942"}, noRuntimes,
			map[string]string{
				"OFFCC_OPENMP_FLAGS":       "",
				"CMAKE_C_FLAGS_INIT":       "",
				"CMAKE_CXX_FLAGS_INIT":     "",
				"CMAKE_CUDA_ARCHITECTURES": "90",
				"CMAKE_HIP_ARCHITECTURES":  "gfx90a;gfx942",
			}, ""},
		{"host-and-gpu-archs", []string{"-DOFFCC_OPENMP_TARGETS=" + offloadHost, "-DOFFCC_OFFLOAD_ARCH=gfx90a;sm_90"}, noRuntimes,
			map[string]string{
				"OFFCC_OPENMP_FLAGS":       "-fopenmp;-fopenmp-targets=" + offloadHost,
				"CMAKE_CXX_FLAGS_INIT":     hostFlags,
				"CMAKE_CUDA_ARCHITECTURES": "90",
				"CMAKE_HIP_ARCHITECTURES":  "gfx90a",
			}, ""},
		// GPU triples named in OFFCC_OPENMP_TARGETS get their architectures
		// through -Xopenmp-target: clang 22 applies a bare --offload-arch
		// to the -fopenmp-targets triples too (the host triple would get
		// -target-cpu gfx90a).
		{"host-and-gpus", []string{"-DOFFCC_OPENMP_TARGETS=" + offloadHost + ";amdgcn-amd-amdhsa;nvptx64-nvidia-cuda",
			"-DOFFCC_OFFLOAD_ARCH=gfx90a;sm_90;gfx942"}, withRuntimes,
			map[string]string{
				"CMAKE_CXX_FLAGS_INIT": "-fopenmp -fopenmp-targets=" + offloadHost + ",amdgcn-amd-amdhsa,nvptx64-nvidia-cuda" +
					" -Xopenmp-target=amdgcn-amd-amdhsa --offload-arch=gfx90a,gfx942" +
					" -Xopenmp-target=nvptx64-nvidia-cuda --offload-arch=sm_90",
				"CMAKE_CUDA_ARCHITECTURES": "90",
				"CMAKE_HIP_ARCHITECTURES":  "gfx90a;gfx942",
			}, ""},
		// The short triple, as clang takes it; the runtime from the LLVM
		// tree's lib/nvptx64-nvidia-cuda.
		{"nvptx64-short", []string{"-DOFFCC_OPENMP_TARGETS=nvptx64", "-DOFFCC_OFFLOAD_ARCH=sm_80;gfx90a;sm_90"}, llvmNVPTX,
			map[string]string{
				"OFFCC_OPENMP_FLAGS": "-fopenmp;-fopenmp-targets=nvptx64;-Xopenmp-target=nvptx64;--offload-arch=sm_80,sm_90",
			}, ""},
		// With OFFCC_OPENMP=OFF the flags are only offered: no runtime
		// needed.
		{"openmp-off", []string{"-DOFFCC_OPENMP_TARGETS=" + offloadHost + ";nvptx64-nvidia-cuda", "-DOFFCC_OPENMP=OFF"}, noRuntimes,
			map[string]string{
				"OFFCC_OPENMP_FLAGS": "-fopenmp;-fopenmp-targets=" + offloadHost + ",nvptx64-nvidia-cuda",
				"CMAKE_C_FLAGS_INIT": "",
			}, ""},
		// The base directory: by default the common parent of the source
		// and build directories (in script mode both are the working
		// directory), in a launcher before the user's (the environment's
		// here: script mode has no cache); none when OFF.
		{"base-dir", nil, nil,
			map[string]string{
				"OFFCC_BASE_DIR":               root,
				"CMAKE_C_COMPILER_LAUNCHER":    "env;OFFCC_BASE_DIR=" + root + ";OFFCC_LLVM_DIR=" + llvmBin,
				"CMAKE_CUDA_COMPILER_LAUNCHER": "env;OFFCC_BASE_DIR=" + root + ";OFFCC_LLVM_DIR=" + llvmBin,
			}, ""},
		{"base-dir-and-launcher", []string{"-DOFFCC_BASE_DIR=/"}, []string{"CMAKE_C_COMPILER_LAUNCHER=ccache"},
			map[string]string{
				"CMAKE_C_COMPILER_LAUNCHER":    "env;OFFCC_BASE_DIR=/;OFFCC_LLVM_DIR=" + llvmBin + ";ccache",
				"CMAKE_CUDA_COMPILER_LAUNCHER": "env;OFFCC_BASE_DIR=/;OFFCC_LLVM_DIR=" + llvmBin,
			}, ""},
		{"base-dir-off", []string{"-DOFFCC_BASE_DIR=OFF"}, []string{"CMAKE_C_COMPILER_LAUNCHER=ccache"},
			map[string]string{
				"CMAKE_C_COMPILER_LAUNCHER":    "env;OFFCC_LLVM_DIR=" + llvmBin + ";ccache",
				"CMAKE_CUDA_COMPILER_LAUNCHER": "env;OFFCC_LLVM_DIR=" + llvmBin,
			}, ""},
		{"bin-dir", []string{"-DOFFCC_BIN_DIR=" + filepath.Join(root, "prefix/bin")}, nil,
			map[string]string{"CMAKE_CXX_COMPILER": filepath.Join(root, "prefix/bin/offcc++")}, ""},
		// CMAKE_C_FLAGS given (or cached) without the offload flags: CMake
		// ignores CMAKE_C_FLAGS_INIT then.
		{"flags-given", []string{"-DOFFCC_OPENMP_TARGETS=" + offloadHost, "-DCMAKE_C_FLAGS=-O2",
			"-DCMAKE_CXX_FLAGS=-O2 " + hostFlags}, nil,
			map[string]string{"CMAKE_C_FLAGS_INIT": hostFlags},
			`CMAKE_C_FLAGS ("-O2") lacks the offload flags`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := tc.args
			if !strings.HasPrefix(strings.Join(args, " "), "-DTOOLCHAIN=") {
				args = append([]string{"-DTOOLCHAIN=" + filepath.Join(root, "tree/cmake/offcc-toolchain.cmake")}, args...)
			}
			r := cmdSpec{dir: root, env: append(buildEnv(t), tc.env...), name: cmake, args: append(args, "-P", script)}.mustRun(t)
			got := map[string]string{}
			for _, l := range strings.Split(r.stderr, "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					got[k] = v
				}
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			stderr := strings.Join(strings.Fields(r.stderr), " ") // CMake wraps messages
			n := strings.Count(stderr, "CMake Warning")
			if tc.warning == "" && n != 0 {
				t.Errorf("want no warning")
			}
			if tc.warning != "" && (n != 1 || !strings.Contains(stderr, tc.warning)) {
				t.Errorf("want one warning, with %q", tc.warning)
			}
			if t.Failed() {
				t.Logf("%s", r)
			}
		})
	}

	// Errors: an architecture with no known triple, and an OpenMP GPU
	// target whose device runtime is missing (one message: what, for
	// which target, and what to do).
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want []string
	}{
		{"unknown-arch", []string{"-DOFFCC_OFFLOAD_ARCH=pentium"}, nil, []string{`unknown architecture "pentium"`}},
		{"no-nvptx-runtime", []string{"-DOFFCC_OPENMP_TARGETS=" + offloadHost + ";nvptx64-nvidia-cuda", "-DOFFCC_OFFLOAD_ARCH=sm_80;sm_90"},
			noRuntimes, []string{"OpenMP offload to nvptx64-nvidia-cuda needs LLVM's OpenMP device runtime libomptarget-nvptx.bc, which is missing",
				filepath.Join(root, "nollvm/lib/nvptx64-nvidia-cuda"), "LIBRARY_PATH",
				"install LLVM's OpenMP offload runtime for nvptx64-nvidia-cuda",
				"drop nvptx64-nvidia-cuda from OFFCC_OPENMP_TARGETS", "-DOFFCC_OPENMP=OFF"}},
		// The LLVM: a release offcc does not drive, and a version and a
		// directory of different releases (one line each).
		{"llvm-version-17", []string{"-DOFFCC_LLVM_VERSION=17"}, nil,
			[]string{"OFFCC_LLVM_VERSION=17: offcc drives LLVM 19 and 22"}},
		{"llvm-version-dir-disagree", []string{"-DOFFCC_LLVM_VERSION=19", "-DOFFCC_LLVM_DIR=" + filepath.Join(root, "llvm/bin")}, nil,
			[]string{"OFFCC_LLVM_VERSION=19 but OFFCC_LLVM_DIR=" + filepath.Join(root, "llvm/bin") + " is LLVM 22"}},
		{"no-amdgpu-runtime", []string{"-DOFFCC_OPENMP_TARGETS=nvptx64-nvidia-cuda;amdgcn-amd-amdhsa", "-DOFFCC_OFFLOAD_ARCH=sm_90;gfx90a"},
			llvmNVPTX, []string{"OpenMP offload to amdgcn-amd-amdhsa needs LLVM's OpenMP device runtime libomptarget-amdgpu.bc",
				"drop amdgcn-amd-amdhsa from OFFCC_OPENMP_TARGETS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cmdSpec{dir: root, env: append(buildEnv(t), tc.env...), name: cmake, args: append([]string{
				"-DTOOLCHAIN=" + filepath.Join(root, "tree/cmake/offcc-toolchain.cmake")}, append(tc.args, "-P", script)...)}.run(t)
			stderr := strings.Join(strings.Fields(r.stderr), " ")
			if r.code == 0 || strings.Count(stderr, "CMake Error") != 1 {
				t.Errorf("want one error, and a failure:\n%s", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the error lacks %q:\n%s", w, r)
				}
			}
		})
	}
}
