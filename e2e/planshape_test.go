package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// One plan per command shape: the files of a project, compiled with the
// same flags, share the plan of the first (clang -### runs once), and each
// object is clang's own, byte for byte: the source's names, the output's,
// the dependency file's target and HIP's compile unit IDs come out right
// for every file. offcc runs with the logging LLVM of the plan cache's
// location tests (newPLCLLVM), which counts clang's starts; clang builds
// first, on the same sources (HIP's compile unit IDs hash the names on the
// command line, OpenMP's kernel names the sources' inodes).

// psBuild compiles each source of a project in dir with cc and flags,
// writing out/NAME.o with a dependency file; the first source is taken
// from dir, the others from sub/ (another directory of the same shape).
func psBuild(t *testing.T, dir, cc string, env []string, flags []string, sources []string) {
	t.Helper()
	for i, src := range sources {
		in := src
		if i > 0 {
			in = "sub/" + src
		}
		out := "out/" + trimExt(src) + ".o"
		cmdSpec{dir: dir, env: env, name: cc, args: args(flags, "-MD", "-MF", out+".d", "-c", in, "-o", out)}.mustRun(t)
	}
}

// trimExt returns a file name less its extension.
func trimExt(name string) string { return name[:len(name)-len(filepath.Ext(name))] }

// psProject copies files (name in the repository: name in dir) into dir,
// with out/ for the objects.
func psProject(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for from, to := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(to)), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, repoPath(t, from), filepath.Join(dir, to))
	}
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	sameTimes(t, dir)
}

// psCompare builds the project with clang, then with offcc in the same
// place (clang's objects moved aside), and checks the objects, the
// dependency files and how often clang started.
func psCompare(t *testing.T, c compiler, files map[string]string, flags []string, sources []string, wantStarts int) {
	t.Helper()
	l := newPLCLLVM(t)
	_, tmp := tmpEnv(t)
	root := t.TempDir()
	dir := filepath.Join(root, "p")
	psProject(t, dir, files)
	psBuild(t, dir, refClang, []string{tmp}, flags, sources)
	// The same sources: OpenMP's kernel names hash their inodes.
	ref := filepath.Join(root, "clang")
	if err := os.Rename(filepath.Join(dir, "out"), ref); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := cacheEnvFor(tmp, filepath.Join(root, "cache"))
	psBuild(t, dir, c.cc, env, args("--llvm-dir="+l.bin, c.clangNames(), flags), sources)
	if n := l.starts(t); n != wantStarts {
		t.Errorf("%d compiles of one shape started clang %d times, want %d:\n%s", len(sources), n, wantStarts, mustReadTB(t, l.log))
	}
	for _, src := range sources {
		out := "out/" + trimExt(src) + ".o"
		sameBytes(t, "offcc's "+out, filepath.Join(dir, out), mustReadTB(t, filepath.Join(ref, filepath.Base(out))))
		sameBytes(t, "offcc's "+out+".d", filepath.Join(dir, out+".d"), mustReadTB(t, filepath.Join(ref, filepath.Base(out)+".d")))
	}
}

// TestPlanShapeOpenMP compiles testdata/e2e/twotu's two translation units
// with OpenMP offload to the host: one clang -###.
func TestPlanShapeOpenMP(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the plan cache is offcc's")
	files := map[string]string{
		"testdata/e2e/twotu/tu_a.c": "tu_a.c", "testdata/e2e/twotu/tu_b.c": "sub/tu_b.c",
		"testdata/e2e/twotu/shared.h": "shared.h",
	}
	psCompare(t, c, files, args(openmpHost, "-O2", "-I."), []string{"tu_a.c", "tu_b.c"}, 1)
}

// TestPlanShapeHIPROCm compiles three of testdata/hip-rocm's sources for
// two AMD GPUs with ROCm's flags: one clang -###, and each object has its
// own compile unit ID, as clang's.
func TestPlanShapeHIPROCm(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the plan cache is offcc's")
	llvmtest.ROCm(t)
	files := map[string]string{"testdata/hip-rocm/common.h": "common.h", "testdata/hip-rocm/main.hip": "main.hip"}
	for _, src := range []string{"vec_add", "report"} {
		files["testdata/hip-rocm/"+src+".hip"] = "sub/" + src + ".hip"
	}
	psCompare(t, c, files, args(llvmtest.ROCmHIPFlags(), "-O2", "-I."), []string{"main.hip", "vec_add.hip", "report.hip"}, 1)
}
