package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The plan cache's location tests: a rebuild of a translation unit (one
// offloading to the host, one to four AMD GPU archs) in a
// fresh build directory, under another -o, or in another checkout under
// OFFCC_BASE_DIR, starts no clang process at all, not even clang -###.
// offcc runs with --llvm-dir naming a copy of LLVM's bin directory whose
// clang is a script that logs each start and runs the real clang; the
// jobs clang's -### prints run the real tools by their own paths, so the
// log counts the -### runs, and --job-trace the jobs that ran.

// plcLLVM is an LLVM directory whose clang logs its starts.
type plcLLVM struct {
	bin string // for --llvm-dir
	log string
}

// newPLCLLVM makes one in a directory of the test's: bin holds the
// logging clang and links to every other tool of LLVM's, lib links to
// LLVM's.
func newPLCLLVM(t *testing.T) plcLLVM {
	t.Helper()
	root := t.TempDir()
	l := plcLLVM{bin: filepath.Join(root, "bin"), log: filepath.Join(root, "clang.log")}
	if err := os.Mkdir(l.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(llvmBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "clang" {
			continue
		}
		if err := os.Symlink(filepath.Join(llvmBin, e.Name()), filepath.Join(l.bin, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(llvmBin, "..", "lib"), filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"$*\" >> '" + l.log + "'\nexec '" + refClang + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(l.bin, "clang"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return l
}

// starts returns how many times clang has started.
func (l plcLLVM) starts(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(l.log)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// plcCheckout writes a checkout at root: src/k.c and include/k.h.
func plcCheckout(t *testing.T, root string) {
	t.Helper()
	for name, text := range map[string]string{"src/k.c": "#include \"k.h\"\n" + kernelsSrc, "include/k.h": "#define K 1\n"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// plcBuild runs offcc with the logging LLVM in dir (made first, with the
// output's directory) and returns the jobs it traced.
func plcBuild(t *testing.T, c compiler, l plcLLVM, env []string, dir, out string, a ...string) []jobEvent {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(out)), 0o755); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace.json")
	cmdSpec{dir: dir, env: env, name: c.cc,
		args: args("--llvm-dir="+l.bin, a, "-o", out, "--job-trace="+trace)}.mustRun(t)
	return readJobTrace(t, trace)
}

// TestPlanCacheLocation builds an OpenMP offload object in one build
// directory, then in a fresh one under another -o (sources named
// relatively), and likewise CMake's way (absolute sources and include
// directories, OFFCC_BASE_DIR the checkout, the same relative -o, or
// another): the second build of each starts no clang, runs no job (but
// the host front end that writes the dependency file naming a new -o), and
// writes the first one's object byte for byte.
func TestPlanCacheLocation(t *testing.T) {
	c := offccOnly(t, "the plan cache is offcc's")
	omp := []string{"-fopenmp", "-fopenmp-targets=" + offloadHost, "-O2"}
	const cmakeOut = "CMakeFiles/k.dir/src/k.c.o"
	for _, tc := range []struct {
		name       string
		base       bool
		out1, out2 string
		// frontEnd: the host front end runs again (it writes a dependency
		// file whose target is the new -o); every other job hits.
		frontEnd bool
		// flags returns the command line in the build directory of the
		// checkout root, writing out.
		flags func(root, out string) []string
	}{
		{name: "relative", out1: "a.o", out2: "b.o", flags: func(root, out string) []string {
			return args(omp, "-I../include", "-c", "../src/k.c")
		}},
		{name: "four AMD archs", out1: "k.o", out2: "kernels.o", flags: func(root, out string) []string {
			return args(amdFlags(fourArchs), "-O2", "-I../include", "-c", "../src/k.c")
		}},
		{name: "cmake", base: true, out1: cmakeOut, out2: cmakeOut, flags: func(root, out string) []string {
			return args(omp, "-I"+root+"/include", "-MD", "-MT", out, "-MF", out+".d", "-c", root+"/src/k.c")
		}},
		{name: "cmake new name", base: true, frontEnd: true, out1: cmakeOut, out2: "CMakeFiles/k.dir/src/m.c.o", flags: func(root, out string) []string {
			return args(omp, "-I"+root+"/include", "-MD", "-MT", out, "-MF", out+".d", "-c", root+"/src/k.c")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newPLCLLVM(t)
			root := filepath.Join(t.TempDir(), "checkout")
			plcCheckout(t, root)
			_, tmp := tmpEnv(t)
			env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
			if tc.base {
				env = append(env, "OFFCC_BASE_DIR="+root)
			}
			one, two := filepath.Join(root, "build"), filepath.Join(root, "build-fresh")

			plcBuild(t, c, l, env, one, tc.out1, tc.flags(root, tc.out1)...)
			cold := l.starts(t)
			if cold == 0 {
				t.Fatalf("the cold build started no clang (does %s log?)", l.bin)
			}
			warm := plcBuild(t, c, l, env, two, tc.out2, tc.flags(root, tc.out2)...)
			if n := l.starts(t) - cold; n != 0 {
				t.Errorf("the rebuild in a fresh build directory started clang %d times, want 0:\n%s", n, mustReadTB(t, l.log))
			}
			if tc.frontEnd {
				ran := selectEvents(warm, func(e jobEvent) bool { return e.Cache != "hit" })
				if len(ran) != 1 || ran[0].Kind != "host-frontend" {
					t.Errorf("the rebuild under a new name: want the host front end alone to run:\n%s", listEvents(warm))
				}
				if dep := mustReadTB(t, filepath.Join(two, tc.out2+".d")); !strings.HasPrefix(string(dep), tc.out2+": ") {
					t.Errorf("the rebuild's dependency file does not name %s:\n%s", tc.out2, dep)
				}
			} else {
				checkNothingRan(t, "the rebuild in a fresh build directory", warm)
			}
			sameBytes(t, "the rebuild in a fresh build directory", filepath.Join(two, tc.out2), mustReadTB(t, filepath.Join(one, tc.out1)))
			if tc.base && tc.out1 == tc.out2 {
				sameBytes(t, "the rebuild's dependency file", filepath.Join(two, tc.out2+".d"), mustReadTB(t, filepath.Join(one, tc.out1+".d")))
			}
		})
	}
}

// TestPlanCacheOtherCheckout builds CMake's way in one checkout, then in a
// copy of it elsewhere, OFFCC_BASE_DIR naming each: the second build takes
// its plan from the plan cache (no clang -###), and writes the same object
// and the same dependency file, which names the files relative to the
// build directory (ccache's base_dir).
func TestPlanCacheOtherCheckout(t *testing.T) {
	c := offccOnly(t, "the plan cache is offcc's")
	l := newPLCLLVM(t)
	_, tmp := tmpEnv(t)
	env := cacheEnvFor(tmp, filepath.Join(t.TempDir(), "cache"))
	const out = "CMakeFiles/k.dir/src/k.c.o"
	var objects, deps [2][]byte
	var jobs []jobEvent
	for i, root := range []string{filepath.Join(t.TempDir(), "a", "checkout"), filepath.Join(t.TempDir(), "elsewhere")} {
		plcCheckout(t, root)
		before := l.starts(t)
		build := filepath.Join(root, "build")
		jobs = plcBuild(t, c, l, args(env, "OFFCC_BASE_DIR="+root), build, out,
			"-fopenmp", "-fopenmp-targets="+offloadHost, "-I"+root+"/include", "-MD", "-MT", out, "-MF", out+".d", "-c", root+"/src/k.c")
		if n := l.starts(t) - before; (n == 0) != (i == 1) {
			t.Errorf("build %d started clang %d times:\n%s", i+1, n, mustReadTB(t, l.log))
		}
		objects[i] = mustReadTB(t, filepath.Join(build, out))
		deps[i] = mustReadTB(t, filepath.Join(build, out+".d"))
		if !strings.Contains(string(deps[i]), " ../include/k.h") || strings.Contains(string(deps[i]), root) {
			t.Errorf("build %d: the dependency file does not name ../include/k.h relatively:\n%s", i+1, deps[i])
		}
	}
	if string(objects[0]) != string(objects[1]) {
		t.Errorf("the other checkout's object (%d bytes) differs from the first's (%d bytes)", len(objects[1]), len(objects[0]))
	}
	if string(deps[0]) != string(deps[1]) {
		t.Errorf("the dependency files differ:\n%s\n%s", deps[0], deps[1])
	}
	t.Logf("jobs of the build in the other checkout:\n%s", listEvents(jobs))
}
