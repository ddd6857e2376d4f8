package e2e

// End-to-end tests of offcc's base directory (OFFCC_BASE_DIR, base_dir in
// offcc.conf: ccache's base_dir) where users meet it: a CMake project built
// through cmake/offcc-toolchain.cmake, which gives every compile a base
// directory without any environment variable; a hand-written Makefile of
// absolute paths with base_dir in offcc.conf; and the OpenMP kernel names
// of sources that share a name (recursive make) or are compiled twice.
// The project is testdata/cmake-basedir: OpenMP offload to the host device
// (C), HIP for Debian's ROCm 5.2 and CUDA; the HIP and CUDA parts are left
// out where ROCm or the CUDA toolkit is missing (a failure under
// OFFCC_REQUIRE_LLVM=1 or OFFCC_REQUIRE_CUDA=1).
//
// A compile's jobs and their cache statuses are read from its job trace:
// the builds run each compile through a launcher script (as a user's
// -DCMAKE_C_COMPILER_LAUNCHER=ccache would) that gives it a trace file of
// its own in $BASEDIR_TRACES.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// traceLauncher is the launcher script: a job trace per compile in
// $BASEDIR_TRACES (none when it is unset, as in CMake's compiler checks).
const traceLauncher = `#!/bin/sh
if [ -n "$BASEDIR_TRACES" ]; then
	OFFCC_JOB_TRACE=$(mktemp "$BASEDIR_TRACES/XXXXXXXX.json") || exit 1
	export OFFCC_JOB_TRACE
fi
exec "$@"
`

// writeTraceLauncher writes traceLauncher into dir and returns its path.
func writeTraceLauncher(t testing.TB, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "trace-launcher.sh")
	if err := os.WriteFile(p, []byte(traceLauncher), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// noOffccEnv returns environment entries that clear every OFFCC_* variable
// of the test's environment, OFFCC_BASE_DIR and OFFCC_CONFIG included,
// and point HOME and XDG_CONFIG_HOME to home (so that no user's offcc.conf
// applies).
func noOffccEnv(home string) []string {
	env := []string{"OFFCC_BASE_DIR=", "OFFCC_CONFIG=", "HOME=" + home, "XDG_CONFIG_HOME="}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OFFCC_") {
			env = append(env, k+"=")
		}
	}
	return env
}

// compileTraces reads the job traces the launcher wrote into dir, one per
// compile, by file name.
func compileTraces(t testing.TB, dir string) map[string][]jobEvent {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	traces := map[string][]jobEvent{}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Size() == 0 {
			t.Errorf("%s: offcc wrote no job trace (the launcher ran something else?)", f)
			continue
		}
		traces[filepath.Base(f)] = readJobTrace(t, f)
	}
	return traces
}

// checkNoCompilerRan fails the test unless every compile of a build hit
// the cache for every cacheable job (and had one), running no compiler.
func checkNoCompilerRan(t testing.TB, what string, traces map[string][]jobEvent, want int) {
	t.Helper()
	if len(traces) != want {
		t.Errorf("%s: %d compiles traced, want %d", what, len(traces), want)
	}
	for _, name := range slices.Sorted(maps.Keys(traces)) {
		evs := traces[name]
		if m := clangMisses(evs); len(m) != 0 {
			t.Errorf("%s: a compile (trace %s) ran the compiler:\n%s", what, name, listEvents(evs))
			continue
		}
		checkAllHits(t, what+": a compile (trace "+name+")", evs)
	}
}

// builtFiles returns the objects and archives under dir (CMake's compiler
// checks left out), by path relative to dir.
func builtFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	return readTree(t, dir, func(rel string) bool {
		if strings.Contains(rel, "CMakeFiles/3.") || strings.Contains(rel, "CMakeScratch") {
			return false
		}
		ext := filepath.Ext(rel)
		return ext == ".o" || ext == ".a"
	})
}

// sameBuiltFiles fails the test unless got holds the files of want (by
// name) with the same bytes.
func sameBuiltFiles(t testing.TB, what string, want, got map[string][]byte) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		b, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: no %s", what, name)
		case !bytes.Equal(b, want[name]):
			t.Errorf("%s: %s (%d bytes) differs from the first build's (%d bytes)%s", what, name, len(b), len(want[name]), kernelsDiffer(t, b, want[name]))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s, which the first build did not write", what, name)
		}
	}
}

// kernelsDiffer says how the OpenMP kernel names of two objects differ, or
// returns "" when they do not.
func kernelsDiffer(t testing.TB, got, want []byte) string {
	t.Helper()
	dir := t.TempDir()
	var names [2][]string
	for i, b := range [][]byte{got, want} {
		p := filepath.Join(dir, fmt.Sprintf("%d.o", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		names[i] = kernelNames(t, p)
	}
	if slices.Equal(names[0], names[1]) {
		return ""
	}
	return fmt.Sprintf(": its OpenMP kernels are %v, the first build's %v", names[0], names[1])
}

// checkBasedirProgram runs the OpenMP program of testdata/cmake-basedir
// offloaded and checks what it computed.
func checkBasedirProgram(t testing.TB, prog string) {
	t.Helper()
	r := runOffloadProgram(t, prog)
	for _, want := range []string{"saxpy 501500.0", "header 5050"} {
		if !slices.Contains(strings.Split(r.stdout, "\n"), want) {
			t.Errorf("%s: the output lacks the line %q:\n%s", prog, want, r)
		}
	}
}

// optionalPart says whether a part of the project can be built: missing
// (err) fails the test when required says so, else it is left out.
func optionalPart(t testing.TB, what string, err error, required bool) bool {
	t.Helper()
	if err == nil {
		return true
	}
	if required {
		t.Fatalf("%s: %v", what, err)
	}
	t.Logf("leaving out %s: %v", what, err)
	return false
}

// TestBaseDirCMakeCheckouts builds testdata/cmake-basedir (OpenMP, HIP and
// CUDA targets) through the toolchain file in two checkouts at different
// paths, each in two build directories inside it (build and build-rel,
// with the Ninja and Unix Makefiles generators in turn), with one shared
// build cache, and no OFFCC_* variable in the environment but
// OFFCC_CACHE_DIR (and each compile's OFFCC_JOB_TRACE). It checks that the
// toolchain file made each checkout its builds' base directory, that the
// base directory reaches every compile, before the user's launcher, and no
// link or archive, that compile_commands.json keeps clang's command lines,
// that every build after the first runs no compiler (every compile all
// cache hits), that the objects and archives of all four builds are
// byte-identical, and that each build's OpenMP program runs offloaded and
// prints the right numbers.
func TestBaseDirCMakeCheckouts(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the base directory and the build cache are offcc's")
	cmake := buildTool(t, "cmake")
	buildTool(t, "ninja")
	buildTool(t, "make")
	hip := optionalPart(t, "the HIP library", llvmtest.ROCmMissing(), llvmtest.Required())
	cuda := optionalPart(t, "the CUDA library", llvmtest.CUDAMissing(), os.Getenv(llvmtest.EnvRequireCUDA) == "1")

	root := t.TempDir()
	home := filepath.Join(root, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	launcher := writeTraceLauncher(t, root)
	_, tmp := tmpEnv(t)
	env := append(buildEnv(t), noOffccEnv(home)...)
	env = append(env, cacheEnvFor(tmp, filepath.Join(root, "cache"))...)
	env = append(env, "LIBRARY_PATH=", "CUDAFLAGS=", "HIPFLAGS=")

	flags := []string{
		"-DCMAKE_TOOLCHAIN_FILE=" + repoPath(t, "cmake/offcc-toolchain.cmake"),
		"-DOFFCC_BIN_DIR=" + c.dir,
		"-DOFFCC_OPENMP_TARGETS=" + offloadHost,
		// The OpenMP flags go to the OpenMP program only (the HIP source
		// is C++ too).
		"-DOFFCC_OPENMP=OFF",
		"-DOFFCC_OFFLOAD_ARCH=sm_80",
		"-DCMAKE_C_COMPILER_LAUNCHER=" + launcher,
		"-DCMAKE_CXX_COMPILER_LAUNCHER=" + launcher,
		"-DCMAKE_CUDA_COMPILER_LAUNCHER=" + launcher,
		"-DBASEDIR_HIP=" + onOff(hip),
		"-DBASEDIR_CUDA=" + onOff(cuda),
	}
	wantObjects := []string{"CMakeFiles/omp_prog.dir/omp/main.c.o", "CMakeFiles/omp_prog.dir/omp/saxpy.c.o"}
	if hip {
		wantObjects = append(wantObjects, "CMakeFiles/hipvec.dir/hip/vec_add.hip.o", "libhipvec.a")
	}
	if cuda {
		wantObjects = append(wantObjects, "CMakeFiles/cudavec.dir/cuda/axpy.cu.o", "libcudavec.a")
	}
	compiles := len(slices.DeleteFunc(slices.Clone(wantObjects), func(n string) bool { return filepath.Ext(n) == ".a" }))

	var first map[string][]byte
	for i, b := range []struct {
		checkout, build, generator string
	}{
		{"a/src", "build", "Ninja"},
		{"a/src", "build-rel", "Unix Makefiles"},
		{"bbb/checkout2/src", "build", "Unix Makefiles"},
		{"bbb/checkout2/src", "build-rel", "Ninja"},
	} {
		what := b.checkout + "/" + b.build + " (" + b.generator + ")"
		src := filepath.Join(root, b.checkout)
		if _, err := os.Stat(src); err != nil {
			if err := os.CopyFS(src, os.DirFS(repoPath(t, "testdata/cmake-basedir"))); err != nil {
				t.Fatal(err)
			}
		}
		cb := &cmakeBuild{cmake: cmake, src: src, dir: filepath.Join(src, b.build), env: env}
		extra := []string{}
		if i == 0 {
			extra = append(extra, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
		}
		cb.configure(t, b.generator, args(flags, extra)...)
		cb.checkCache(t, map[string]string{"OFFCC_BASE_DIR": src})
		if b.generator == "Ninja" {
			checkLaunchers(t, what, cb, src, launcher)
		}
		if i == 0 {
			checkCompileCommands(t, cb, c)
		}

		traces := filepath.Join(root, "traces", strings.ReplaceAll(what, "/", "_"))
		if err := os.MkdirAll(traces, 0o755); err != nil {
			t.Fatal(err)
		}
		cb.env = append(slices.Clone(env), "BASEDIR_TRACES="+traces)
		cb.build(t)
		evs := compileTraces(t, traces)
		if i == 0 {
			// An empty cache: every compile ran the compiler.
			if len(evs) != compiles {
				t.Errorf("%s: %d compiles traced, want %d", what, len(evs), compiles)
			}
			for _, e := range evs {
				if len(clangMisses(e)) == 0 {
					t.Errorf("%s: a compile into an empty cache ran no compiler:\n%s", what, listEvents(e))
				}
			}
		} else {
			checkNoCompilerRan(t, what, evs, compiles)
		}

		files := builtFiles(t, cb.dir)
		for _, name := range wantObjects {
			if _, ok := files[name]; !ok {
				t.Errorf("%s: no %s; built: %v", what, name, slices.Sorted(maps.Keys(files)))
			}
		}
		if i == 0 {
			first = files
		} else {
			sameBuiltFiles(t, what, first, files)
		}
		checkBasedirProgram(t, filepath.Join(cb.dir, "omp_prog"))
	}
}

func onOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

// checkLaunchers checks a Ninja build's commands: each compile runs
// "env OFFCC_BASE_DIR=<base> OFFCC_LLVM_DIR=<llvm> <launcher> <compiler>",
// and no link or
// archive step names the base directory.
func checkLaunchers(t testing.TB, what string, b *cmakeBuild, base, launcher string) {
	t.Helper()
	r := cmdSpec{dir: b.dir, env: b.env, name: "ninja", args: []string{"-C", b.dir, "-t", "commands"}}.mustRun(t)
	compiles := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.Contains(l, " -c "):
			compiles++
			if !strings.HasPrefix(l, "env OFFCC_BASE_DIR="+base+" OFFCC_LLVM_DIR="+llvmBin+" "+launcher+" ") {
				t.Errorf("%s: a compile does not run env OFFCC_BASE_DIR=%s OFFCC_LLVM_DIR=%s, then the user's launcher:\n%s", what, base, llvmBin, l)
			}
		case strings.Contains(l, "OFFCC_BASE_DIR"):
			t.Errorf("%s: a step that compiles nothing gets the base directory:\n%s", what, l)
		}
	}
	if compiles == 0 {
		t.Errorf("%s: ninja -t commands lists no compile:\n%s", what, r.stdout)
	}
}

// checkCompileCommands checks that compile_commands.json holds clang's
// command lines: the compiler first (no launcher, no env), and no offcc
// flag.
func checkCompileCommands(t testing.TB, b *cmakeBuild, c compiler) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.dir, "compile_commands.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []compileCommand
	if err := json.Unmarshal(data, &cmds); err != nil {
		t.Fatalf("compile_commands.json: %v", err)
	}
	if len(cmds) == 0 {
		t.Errorf("compile_commands.json lists no compile")
	}
	for _, cmd := range cmds {
		f := strings.Fields(cmd.Command)
		if len(f) == 0 || (f[0] != c.cc && f[0] != c.cxx) {
			t.Errorf("compile_commands.json: the command of %s does not start with the compiler: %s", cmd.File, cmd.Command)
		}
		if strings.Contains(cmd.Command, "OFFCC_BASE_DIR") || strings.Contains(cmd.Command, "--offcc") {
			t.Errorf("compile_commands.json: the command of %s is not clang's: %s", cmd.File, cmd.Command)
		}
	}
}

// TestBaseDirMakefileConfig builds testdata/cmake-basedir's hand-written
// Makefile, which names sources, include directory and outputs by absolute
// paths, in two checkouts at different paths (a/src, bbb/checkout2/src),
// with base_dir in offcc.conf and no OFFCC_* variable in the environment
// but OFFCC_CACHE_DIR (and each compile's OFFCC_JOB_TRACE; OFFCC_CONFIG
// where it names the file): the second checkout runs no compiler, its
// objects are the first one's, and both programs run offloaded and print
// the right numbers. The base directory is each checkout, in an offcc.conf
// of its own that OFFCC_CONFIG names.
func TestBaseDirMakefileConfig(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "base_dir and the build cache are offcc's")
	mk := buildTool(t, "make")
	for _, tc := range []struct {
		name string
		// conf returns the offcc.conf to write, its contents, and the
		// environment that names it, for the test's root and a checkout.
		conf func(root, src string) (file, text string, env []string)
	}{
		// (A base directory above both checkouts would not do: the
		// sources lie at two places under it, as a/foo.c and b/foo.c do,
		// and two places are two translation units.)
		{"config-per-checkout", func(_, src string) (string, string, []string) {
			f := filepath.Join(src, "offcc.conf")
			return f, "base_dir = " + src + "\n", []string{"OFFCC_CONFIG=" + f}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			home := filepath.Join(root, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			launcher := writeTraceLauncher(t, root)
			_, tmp := tmpEnv(t)
			env := append(buildEnv(t), noOffccEnv(home)...)
			env = append(env, cacheEnvFor(tmp, filepath.Join(root, "cache"))...)

			var first map[string][]byte
			for i, checkout := range []string{"a/src", "bbb/checkout2/src"} {
				src := filepath.Join(root, checkout)
				if err := os.CopyFS(src, os.DirFS(repoPath(t, "testdata/cmake-basedir"))); err != nil {
					t.Fatal(err)
				}
				file, text, confEnv := tc.conf(root, src)
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				traces := filepath.Join(root, "traces", strings.ReplaceAll(checkout, "/", "_"))
				if err := os.MkdirAll(traces, 0o755); err != nil {
					t.Fatal(err)
				}
				e := append(slices.Clone(env), confEnv...)
				r := cmdSpec{dir: src, env: append(e, "BASEDIR_TRACES="+traces), name: mk,
					args: []string{"-j2", "OFFCC=" + c.cc, "LAUNCHER=" + launcher}}.mustRun(t)
				// The Makefile names the sources by absolute paths.
				if !strings.Contains(r.stdout, " -c "+filepath.Join(src, "omp", "main.c")+" ") {
					t.Fatalf("%s: make did not compile %s by its absolute path:\n%s", checkout, filepath.Join(src, "omp", "main.c"), r)
				}
				evs := compileTraces(t, traces)
				if i == 0 {
					if len(evs) != 2 {
						t.Errorf("%s: %d compiles traced, want 2", checkout, len(evs))
					}
				} else {
					checkNoCompilerRan(t, checkout, evs, 2)
				}
				files := builtFiles(t, filepath.Join(src, "out"))
				if len(files) != 2 {
					t.Errorf("%s: objects %v, want main.o and saxpy.o", checkout, slices.Sorted(maps.Keys(files)))
				}
				if i == 0 {
					first = files
				} else {
					sameBuiltFiles(t, checkout, first, files)
				}
				checkBasedirProgram(t, filepath.Join(src, "out", "omp_prog"))
			}
		})
	}
}

// TestBaseDirRecursiveMakeKernels: OpenMP kernels of two files with one
// name (a/foo.c and b/foo.c, each adding its own number in a static
// function f), each compiled from its own directory by the relative name
// foo.c, as recursive make does, and linked into one program: offcc's
// program prints what clang-22's prints (fa 1 fb 100), without a base
// directory and with the project's directory as the base directory.
// (Objects whose kernels do share a name, such as clang's of one file
// compiled twice, are refused at offcc's link: TestKernelCollisionRefused.)
func TestBaseDirRecursiveMakeKernels(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "stable kernel names are offcc's")
	_, tmp := tmpEnv(t)
	want := buildIn(t, refClang, t.TempDir(), tmp, nil)
	if want.code != 0 || strings.TrimSpace(want.stdout) != "fa 1 fb 100" {
		t.Fatalf("clang-22's program does not print fa 1 fb 100:\n%s", want)
	}
	for _, tc := range []struct {
		name string
		env  func(dir string) []string
	}{
		{"no-base-dir", func(string) []string { return []string{"OFFCC_BASE_DIR="} }},
		{"base-dir", func(dir string) []string { return []string{"OFFCC_BASE_DIR=" + dir} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The base directory is the project's: the test's temporary
			// directory of this run.
			dir := t.TempDir()
			got := buildIn(t, c.cc, dir, tmp, tc.env(dir))
			if got.code != want.code || got.stdout != want.stdout {
				t.Errorf("offcc's program differs from clang-22's:\n%s\n--- clang-22's:\n%s", got, want)
			}
		})
	}
}

// buildIn is TestBaseDirRecursiveMakeKernels' build, in dir.
func buildIn(t *testing.T, cc, dir, tmp string, env []string) result {
	t.Helper()
	for _, sub := range []string{"a", "b"} {
		os.Mkdir(filepath.Join(dir, sub), 0o755)
		copyFile(t, collideSrc(t, sub+"/foo.c"), filepath.Join(dir, sub, "foo.c"))
		cmdSpec{dir: filepath.Join(dir, sub), env: append([]string{tmp}, env...), name: cc,
			args: args(openmpHost, "-c", "foo.c", "-o", "foo.o")}.mustRun(t)
	}
	copyFile(t, collideSrc(t, "main.c"), filepath.Join(dir, "main.c"))
	cmdSpec{dir: dir, env: append([]string{tmp}, env...), name: cc,
		args: args(openmpHost, "a/foo.o", "b/foo.o", "main.c", "-o", "prog")}.mustRun(t)
	return cmdSpec{dir: dir, env: offloadEnv, name: filepath.Join(dir, "prog")}.run(t)
}

// TestSameFileTwiceKernels: one file (collide/scale.c) compiled by offcc
// into two objects under different macros (-DSCALE=1 -DNAME=f1 and
// -DSCALE=100 -DNAME=f100), from one directory by one relative name, and
// linked into one program: each object's kernel runs for its own function
// (f1 adds 1, f100 adds 100). clang names both kernels alike (after the
// file's inode and the line) and its program runs one kernel for both;
// offcc's link refuses clang's objects (TestKernelCollisionRefused, "one
// file twice").
func TestSameFileTwiceKernels(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "stable kernel names are offcc's")
	_, tmp := tmpEnv(t)
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"no-base-dir", []string{"OFFCC_BASE_DIR="}},
		{"base-dir", nil}, // the directory, below
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env := append([]string{tmp}, tc.env...)
			if tc.env == nil {
				env = append(env, "OFFCC_BASE_DIR="+dir)
			}
			copyFile(t, collideSrc(t, "scale.c"), filepath.Join(dir, "scale.c"))
			copyFile(t, collideSrc(t, "scale_main.c"), filepath.Join(dir, "scale_main.c"))
			for _, v := range []string{"1", "100"} {
				cmdSpec{dir: dir, env: env, name: c.cc,
					args: args(openmpHost, "-DSCALE="+v, "-DNAME=f"+v, "-c", "scale.c", "-o", "scale"+v+".o")}.mustRun(t)
			}
			cmdSpec{dir: dir, env: env, name: c.cc, args: args(openmpHost, "scale1.o", "scale100.o", "scale_main.c", "-o", "prog")}.mustRun(t)
			r := cmdSpec{dir: dir, env: offloadEnv, name: filepath.Join(dir, "prog")}.run(t)
			if r.code != 0 || strings.TrimSpace(r.stdout) != "f1 1 f100 100" {
				t.Errorf("the program does not print f1 1 f100 100:\n%s", r)
			}
		})
	}
}
