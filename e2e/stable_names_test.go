package e2e

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// A project whose OpenMP kernels lie in the main file, in a header
// included by a quoted relative name, and in a header found through an
// include directory; the program prints values computed in each, and
// __FILE__.
var stableProject = map[string]string{
	"src/main.c": `#include <omp.h>
#include <stdio.h>
#include "kern.h"
#include "util.h"
int main(void) {
  int x = 0, dev = 0;
#pragma omp target map(tofrom: x, dev)
  {
    x = 40 + twice(1);
    dev = !omp_is_initial_device();
  }
  printf("on device: %s\n", dev ? "yes" : "no");
  printf("x=%d kern=%d util=%d file=%s\n", x, kern(), util_kernel(), __FILE__);
  return 0;
}
`,
	"src/kern.h": `#pragma once
static int kern(void) {
  int y = 0, unused_in_kern;
#pragma omp target map(tofrom: y)
  y = 7;
  return y;
}
`,
	"include/util.h": `#pragma once
static int twice(int a) { return 2 * a; }
static int util_kernel(void) {
  int z = 0;
#pragma omp target map(tofrom: z)
  z = 5;
  return z;
}
`,
}

// stableProjectNoFile is stableProject without __FILE__, whose text
// names the checkout when the command names the source absolutely.
func stableProjectNoFile() map[string]string {
	files := maps.Clone(stableProject)
	files["src/main.c"] = strings.Replace(files["src/main.c"], " file=%s", "", 1)
	files["src/main.c"] = strings.Replace(files["src/main.c"], ", __FILE__", "", 1)
	return files
}

// writeTree writes files under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// kernelNameRE matches an OpenMP kernel name in llvm-nm output.
var kernelNameRE = regexp.MustCompile(`__omp_offloading_([0-9a-f]+)_[0-9a-f]+_([A-Za-z_]+)_l[0-9]+`)

// kernelNames returns the distinct OpenMP kernel names of an object.
func kernelNames(t testing.TB, obj string) []string {
	t.Helper()
	r := cmdSpec{name: filepath.Join(llvmBin, "llvm-nm"), args: []string{obj}}.mustRun(t)
	var names []string
	for _, m := range kernelNameRE.FindAllString(r.stdout, -1) {
		if !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	slices.Sort(names)
	return names
}

// checkStableKernels checks that an object has the project's three kernels,
// all named by path (device 0xdeadf17e).
func checkStableKernels(t testing.TB, what, obj string) {
	t.Helper()
	names := kernelNames(t, obj)
	var fns []string
	for _, n := range names {
		m := kernelNameRE.FindStringSubmatch(n)
		if m[1] != "deadf17e" {
			t.Errorf("%s: kernel %s is named after an inode, not a path", what, n)
		}
		fns = append(fns, m[2])
	}
	slices.Sort(fns)
	if !slices.Equal(fns, []string{"kern", "main", "util_kernel"}) {
		t.Errorf("%s: kernels %v, want one in kern, main and util_kernel", what, names)
	}
}

// TestStableKernelNamesAcrossCheckouts: two checkouts of one project at
// different absolute paths, each its own OFFCC_BASE_DIR, give
// byte-identical objects, with relative commands and with absolute ones
// (as CMake writes them), kernels in headers included; the programs run
// offloaded. With --no-offload-stable-names the names are clang's again.
func TestStableKernelNamesAcrossCheckouts(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "stable kernel names are offcc's")
	_, tmp := tmpEnv(t)
	root := t.TempDir()
	files := stableProjectNoFile()
	var checkouts []string
	for _, name := range []string{"one", "deeper/two"} {
		dir := filepath.Join(root, name, "proj")
		writeTree(t, dir, files)
		checkouts = append(checkouts, dir)
	}
	flags := args(openmpHost, "-O2", "--no-cache")
	for _, mode := range []struct {
		name string
		// compile returns the command's directory, environment and
		// arguments for the checkout dir.
		compile func(dir string) (string, []string, []string)
	}{
		{"relative", func(dir string) (string, []string, []string) {
			return dir, []string{tmp, "OFFCC_BASE_DIR=" + dir}, args(flags, "-Iinclude", "-c", "src/main.c", "-o", "build/main.o")
		}},
		{"relative-from-build", func(dir string) (string, []string, []string) {
			return filepath.Join(dir, "build"), []string{tmp, "OFFCC_BASE_DIR=" + dir}, args(flags, "-I../include", "-c", "../src/main.c", "-o", "main.o")
		}},
		{"absolute-base-dir", func(dir string) (string, []string, []string) {
			return filepath.Join(dir, "build"), []string{tmp, "OFFCC_BASE_DIR=" + dir},
				args(flags, "-I"+filepath.Join(dir, "include"), "-c", filepath.Join(dir, "src/main.c"), "-o", "main.o")
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			var objs [][]byte
			for _, ck := range checkouts {
				wd, env, a := mode.compile(ck)
				obj := a[len(a)-1]
				if !filepath.IsAbs(obj) {
					obj = filepath.Join(wd, obj)
				}
				os.Remove(obj)
				cmdSpec{dir: wd, env: env, name: c.cc, args: a}.mustRun(t)
				checkStableKernels(t, ck, obj)
				objs = append(objs, mustReadTB(t, obj))
				prog := filepath.Join(ck, "build", "prog")
				cmdSpec{dir: wd, env: env, name: c.cc, args: args(openmpHost, obj, "-o", prog)}.mustRun(t)
				if r := runOffloadProgram(t, prog); !strings.Contains(r.stdout, "x=42 kern=7 util=5") {
					t.Errorf("%s: the program printed %q, want x=42 kern=7 util=5", ck, r.stdout)
				}
			}
			if !bytes.Equal(objs[0], objs[1]) {
				t.Errorf("the checkouts' objects differ (%d and %d bytes)", len(objs[0]), len(objs[1]))
			}
		})
	}

	// clang's names, byte for byte clang's object.
	ck := checkouts[0]
	a := args(openmpHost, "-O2", "-Iinclude", "-c", "src/main.c")
	cmdSpec{dir: ck, env: []string{tmp}, name: c.cc, args: args(a, "--no-cache", "--no-offload-stable-names", "-o", "build/ours.o")}.mustRun(t)
	cmdSpec{dir: ck, env: []string{tmp}, name: refClang, args: args(a, "-o", "build/theirs.o")}.mustRun(t)
	ours, theirs := mustReadTB(t, filepath.Join(ck, "build/ours.o")), mustReadTB(t, filepath.Join(ck, "build/theirs.o"))
	if !bytes.Equal(ours, theirs) {
		t.Errorf("--no-offload-stable-names: offcc's object (%d bytes) differs from clang's (%d bytes)", len(ours), len(theirs))
	}
	for _, n := range kernelNames(t, filepath.Join(ck, "build/ours.o")) {
		if strings.Contains(n, "deadf17e") {
			t.Errorf("--no-offload-stable-names: kernel %s is named by path", n)
		}
	}
}

// TestStableKernelNamesSecondCheckoutHitsCache: a second checkout built
// with the first one's cache, each checkout its OFFCC_BASE_DIR, starts no
// compiler (clang runs through a logging script), and its object is the
// first one's.
func TestStableKernelNamesSecondCheckoutHitsCache(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	l := newPLCLLVM(t)
	files := stableProjectNoFile()
	root := filepath.Dir(w.dir)
	a := args(openmpHost, "--llvm-dir="+l.bin, "-O2", "-Iinclude", "-c", "src/main.c", "-o", "main.o")
	var objs [][]byte
	for i, name := range []string{"first", "second/checkout"} {
		dir := filepath.Join(root, name)
		writeTree(t, dir, files)
		w.dir = dir
		before := l.starts(t)
		_, evs := w.run(t, []string{"OFFCC_BASE_DIR=" + dir}, a...)
		if n := l.starts(t) - before; i == 1 && n != 0 {
			t.Errorf("the second checkout started clang %d times:\n%s", n, mustReadTB(t, l.log))
		}
		if i == 0 {
			if len(clangMisses(evs)) == 0 {
				t.Fatalf("the first checkout's build compiled nothing:\n%s", listEvents(evs))
			}
		} else {
			if m := clangMisses(evs); len(m) != 0 {
				t.Errorf("the second checkout ran compiler jobs:\n%s", listEvents(evs))
			}
			checkAllHits(t, "second checkout", evs)
		}
		objs = append(objs, mustReadTB(t, w.path("main.o")))
	}
	if !bytes.Equal(objs[0], objs[1]) {
		t.Errorf("the second checkout's object differs from the first's")
	}
}

// TestStableKernelNamesShowRealFiles: what names files (__FILE__,
// diagnostics, dependency files, debug information) is clang's for the
// same command, relative or absolute; under OFFCC_BASE_DIR, clang's for
// the command with the paths under it made relative (ccache's base_dir);
// only the kernel names differ.
func TestStableKernelNamesShowRealFiles(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "stable kernel names are offcc's")
	_, tmp := tmpEnv(t)
	ck := filepath.Join(t.TempDir(), "proj")
	writeTree(t, ck, stableProject)
	build := filepath.Join(ck, "build")
	abs := []string{"-I" + filepath.Join(ck, "include"), filepath.Join(ck, "src/main.c")}
	for _, mode := range []struct {
		name, dir string
		env       []string
		flags     []string
		// clangFlags are clang's flags for the same build: flags when
		// nil.
		clangFlags []string
	}{
		{"relative", ck, []string{tmp}, []string{"-Iinclude", "src/main.c"}, nil},
		{"absolute", build, []string{tmp}, abs, nil},
		{"absolute-base-dir", build, []string{tmp, "OFFCC_BASE_DIR=" + ck}, abs, []string{"-I../include", "../src/main.c"}},
		// The user's own maps: of the base directory, and of a directory
		// under it (which, as ccache's, no longer match the relative
		// paths).
		{"absolute-base-dir-mapped", build, []string{tmp, "OFFCC_BASE_DIR=" + ck},
			append([]string{"-ffile-prefix-map=" + ck + "=.", "-fdebug-prefix-map=" + filepath.Join(ck, "include") + "/=INC/"}, abs...),
			[]string{"-ffile-prefix-map=" + ck + "=.", "-fdebug-prefix-map=" + filepath.Join(ck, "include") + "/=INC/", "-I../include", "../src/main.c"}},
	} {
		if mode.clangFlags == nil {
			mode.clangFlags = mode.flags
		}
		t.Run(mode.name, func(t *testing.T) {
			type built struct {
				stderr, dep, file, dwarf string
			}
			var out [2]built
			for i, cc := range []string{refClang, c.cc} {
				extra, flags := []string{}, mode.clangFlags
				if cc == c.cc {
					extra, flags = []string{"--no-cache"}, mode.flags
				}
				obj := filepath.Join(build, mode.name+filepath.Base(cc)+".o")
				dep := filepath.Join(build, mode.name+".d")
				r := cmdSpec{dir: mode.dir, env: mode.env, name: cc,
					args: args(openmpHost, extra, "-Wall", "-g", "-MD", "-MF", dep, "-MT", "main.o", "-c", flags, "-o", obj)}.mustRun(t)
				out[i].stderr = r.stderr
				out[i].dep = string(mustReadTB(t, dep))
				prog := obj + ".prog"
				cmdSpec{dir: mode.dir, env: mode.env, name: cc, args: args(openmpHost, obj, "-o", prog)}.mustRun(t)
				p := runOffloadProgram(t, prog)
				_, out[i].file, _ = strings.Cut(strings.TrimSpace(p.stdout), " file=")
				d := cmdSpec{name: filepath.Join(llvmBin, "llvm-dwarfdump"), args: []string{"--debug-info", "--debug-line", obj}}.mustRun(t)
				out[i].dwarf = dwarfFileNames(d.stdout)
			}
			theirs, ours := out[0], out[1]
			if ours.file != theirs.file || ours.file == "" {
				t.Errorf("__FILE__ is %q, clang's is %q", ours.file, theirs.file)
			}
			if ours.dep != theirs.dep {
				t.Errorf("the dependency file differs from clang's:\n--- offcc:\n%s--- clang:\n%s", ours.dep, theirs.dep)
			}
			if !strings.Contains(theirs.stderr, "unused_in_kern") || ours.stderr != theirs.stderr {
				t.Errorf("diagnostics differ from clang's:\n--- offcc:\n%s--- clang:\n%s", ours.stderr, theirs.stderr)
			}
			if ours.dwarf != theirs.dwarf || !strings.Contains(theirs.dwarf, "kern.h") {
				t.Errorf("the debug information names other files than clang's:\n--- offcc:\n%s--- clang:\n%s", ours.dwarf, theirs.dwarf)
			}
		})
	}
}

// dwarfFileNames returns the file and directory names of llvm-dwarfdump's
// output, one per line, sorted: DW_AT_name, DW_AT_comp_dir, DW_AT_decl_file
// and line-table file and directory entries, less the kernels' own names.
func dwarfFileNames(dump string) string {
	var lines []string
	for _, l := range strings.Split(dump, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.Contains(l, "__omp_offloading_"):
		case strings.HasPrefix(l, "DW_AT_comp_dir"), strings.HasPrefix(l, "DW_AT_decl_file"),
			strings.HasPrefix(l, "include_directories["), strings.HasPrefix(l, "name:"),
			strings.HasPrefix(l, "DW_AT_name") && strings.Contains(l, "/"):
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return strings.Join(slices.Compact(lines), "\n") + "\n"
}

// TestStableKernelNamesFallBack: where offcc cannot give a compile stable
// names (-save-temps compiles preprocessed files), it keeps clang's, says
// so under -v, and the program still runs.
func TestStableKernelNamesFallBack(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "stable kernel names are offcc's")
	_, tmp := tmpEnv(t)
	ck := filepath.Join(t.TempDir(), "proj")
	writeTree(t, ck, stableProject)
	r := cmdSpec{dir: filepath.Join(ck, "build"), env: []string{tmp}, name: c.cc,
		args: args(openmpHost, "-v", "--no-cache", "-save-temps", "-I../include", "../src/main.c", "-o", "prog")}.mustRun(t)
	if !strings.Contains(r.stderr, "offcc: note: OpenMP kernels keep clang's names") {
		t.Errorf("no note under -v that the kernels keep clang's names:\n%s", r.stderr)
	}
	if p := runOffloadProgram(t, filepath.Join(ck, "build", "prog")); !strings.Contains(p.stdout, "x=42 kern=7 util=5") {
		t.Errorf("the program printed %q", p.stdout)
	}
}

// TestStableKernelNamesInodeHeaderCache: a kernel in a header found
// through an absolute include directory keeps clang's inode name, so the
// cache must not serve that result for another file with the same bytes:
// a header replaced by a copy (a new inode) recompiles, and the object is
// the one an uncached build gives.
func TestStableKernelNamesInodeHeaderCache(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	ext := filepath.Join(filepath.Dir(w.dir), "ext")
	writeTree(t, ext, map[string]string{"ext.h": `#pragma once
static int ext_kernel(void) {
  int v = 0;
#pragma omp target map(tofrom: v)
  v = 3;
  return v;
}
`})
	w.write(t, map[string]string{"k.c": `#include <omp.h>
#include <stdio.h>
#include "ext.h"
int main(void) {
  int dev = 0;
#pragma omp target map(tofrom: dev)
  dev = !omp_is_initial_device();
  printf("on device: %s ext=%d\n", dev ? "yes" : "no", ext_kernel());
  return 0;
}
`})
	a := args(openmpHost, "-I"+ext, "-c", "k.c", "-o", "k.o")
	w.build(t, a...)
	names := kernelNames(t, w.path("k.o"))
	inode := false
	for _, n := range names {
		if strings.Contains(n, "ext_kernel") && !strings.Contains(n, "deadf17e") {
			inode = true
		}
	}
	if !inode {
		t.Fatalf("the kernel of a header found by an absolute path is named by path: %v", names)
	}
	_, evs := w.build(t, a...)
	checkAllHits(t, "rebuild", evs)

	// The same bytes in a new file.
	h := filepath.Join(ext, "ext.h")
	data := mustReadTB(t, h)
	if err := os.WriteFile(h+".new", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(h+".new", h); err != nil { // (a new inode: the old one is in use until now)
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	_, evs = w.build(t, a...)
	if len(clangMisses(evs)) == 0 {
		t.Errorf("a header that is another file (inode) gave cache hits:\n%s", listEvents(evs))
	}
	cached := mustReadTB(t, w.path("k.o"))
	cmdSpec{dir: w.dir, env: w.env, name: w.c.cc, args: args(openmpHost, "--no-cache", "-I"+ext, "-c", "k.c", "-o", "ref.o")}.mustRun(t)
	if !bytes.Equal(cached, mustReadTB(t, w.path("ref.o"))) {
		t.Errorf("the rebuilt object differs from an uncached build's")
	}
	cmdSpec{dir: w.dir, env: w.env, name: w.c.cc, args: args(openmpHost, "k.o", "-o", "prog")}.mustRun(t)
	if r := runOffloadProgram(t, w.path("prog")); !strings.Contains(r.stdout, "ext=3") {
		t.Errorf("the program printed %q", r.stdout)
	}
}

// TestStableKernelNamesAMDGPUBaseDir: AMD GPU device compiles (which
// clang gives -include __clang_openmp_device_functions.h, found through
// the include path) have stable names under OFFCC_BASE_DIR too: two
// checkouts give one object; a build directory outside the base
// directory gets stable names too (but not the same object: its command
// names the sources by other relative paths, as under ccache's base_dir).
func TestStableKernelNamesAMDGPUBaseDir(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "stable kernel names are offcc's")
	_, tmp := tmpEnv(t)
	root := t.TempDir()
	files := stableProjectNoFile()
	var objs [][]byte
	for i, ck := range []string{filepath.Join(root, "a", "proj"), filepath.Join(root, "b", "c", "proj"), filepath.Join(root, "d", "proj")} {
		writeTree(t, ck, files)
		build := filepath.Join(ck, "build")
		if i == 2 {
			build = filepath.Join(root, "out-of-tree")
		}
		os.MkdirAll(build, 0o755)
		obj := filepath.Join(build, "main.o")
		cmdSpec{dir: build, env: []string{tmp, "OFFCC_BASE_DIR=" + ck}, name: c.cc,
			args: args("-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-O2", "--no-cache",
				"-I"+filepath.Join(ck, "include"), "-c", filepath.Join(ck, "src/main.c"), "-o", obj)}.mustRun(t)
		checkStableKernels(t, ck, obj)
		objs = append(objs, mustReadTB(t, obj))
	}
	if !bytes.Equal(objs[0], objs[1]) {
		t.Errorf("the checkouts' objects differ (%d and %d bytes)", len(objs[0]), len(objs[1]))
	}
}
