package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/llvmtest"
)

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// dbEntry is one compile_commands.json entry.
type dbEntry struct {
	Directory string   `json:"directory"`
	File      string   `json:"file"`
	Arguments []string `json:"arguments"`
	Command   string   `json:"command"`
	Output    string   `json:"output"`
}

// readJSON reads the JSON file path into a T, failing the test when it is
// missing or not JSON.
func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(mustRead(t, path), &v); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	return v
}

func readDB(t *testing.T, path string) []dbEntry { t.Helper(); return readJSON[[]dbEntry](t, path) }

// deviceCC1 returns, for each cc1 job of clang -### with args that
// compiles for an offload device, its -target-cpu (or triple).
func deviceCC1(t *testing.T, dir string, args []string) []string {
	t.Helper()
	r := cmdSpec{dir: dir, name: refClang, args: append(slices.Clone(args), "-###")}.mustRun(t)
	var cpus []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if !strings.Contains(line, `"-cc1"`) {
			continue
		}
		argv, err := actions.SplitHash(line)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(argv, "-fopenmp-is-target-device") && !slices.Contains(argv, "-fcuda-is-device") {
			continue
		}
		cpu := argv[slices.Index(argv, "-triple")+1]
		if i := slices.Index(argv, "-target-cpu"); i >= 0 && strings.HasPrefix(argv[i+1], "gfx") {
			cpu = argv[i+1]
		}
		cpus = append(cpus, cpu)
	}
	return cpus
}

// TestCompileCommandsDeviceEntries: --print-compile-commands writes the
// command itself and one entry per device compile; each device entry, as
// clangd runs it (with -fsyntax-only), is one compile for that device and
// nothing else, and parses the code as the device does.
func TestCompileCommandsDeviceEntries(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "--print-compile-commands is offcc's")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	src := filepath.Join(dir, "dev.c")
	// Each device sees only its own branch; the host entry none of them.
	os.WriteFile(src, []byte(`#include <stdio.h>
#if defined(__gfx90a__)
int only_gfx90a;
#elif defined(__gfx1030__)
int only_gfx1030;
#endif
int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x = 1;
  printf("%d\n", x);
  return 0;
}
`), 0o644)
	db := filepath.Join(dir, "compile_commands.json")
	flags := []string{"-fopenmp", "--offload-arch=gfx90a,gfx1030", "-nogpulib", "-O1"}
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
		args: args(flags, "--print-compile-commands="+db, "-c", "dev.c", "-o", "dev.o", "-MD")}.mustRun(t)
	entries := readDB(t, db)
	want := deviceCC1(t, dir, args(flags, "-c", "dev.c"))
	if len(want) != 2 || len(entries) != 1+len(want) {
		t.Fatalf("clang compiles dev.c for devices %v; database has %d entries, want %d:\n%+v", want, len(entries), 1+len(want), entries)
	}
	for _, e := range entries {
		if e.Directory != dir || e.File != "dev.c" || e.Output != "dev.o" {
			t.Errorf("entry %+v: want directory %s, file dev.c, output dev.o", e, dir)
		}
	}
	if got := entries[0].Arguments[1:]; !slices.Equal(got, args(flags, "-c", "dev.c", "-o", "dev.o", "-MD", "--offload-host-only")) {
		t.Errorf("host entry %q, want the command line without offcc's own option, host only", got)
	}
	var seen []string
	for _, e := range entries[1:] {
		a := append(slices.Clone(e.Arguments[1:]), "-fsyntax-only")
		if slices.Contains(a, "-MD") || slices.Contains(a, "-o") {
			t.Errorf("device entry %q names the host's outputs", a)
		}
		cpus := deviceCC1(t, dir, a)
		if len(cpus) != 1 {
			t.Fatalf("device entry %q: clang runs %d device compiles, want 1", a, len(cpus))
		}
		seen = append(seen, cpus[0])
		// The entry compiles, and sees the device's own macros.
		cmdSpec{dir: dir, name: refClang, args: append(a, "-DCHECK")}.mustRun(t)
		r := cmdSpec{dir: dir, name: refClang, args: append(slices.Clone(a), "-E", "-P")}.mustRun(t)
		if !strings.Contains(r.stdout, "only_"+cpus[0]) {
			t.Errorf("device entry for %s does not preprocess as that device:\n%s", cpus[0], r.stdout)
		}
	}
	slices.Sort(seen)
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Errorf("device entries cover %v, clang compiles for %v", seen, want)
	}

	// A libTooling tool (clang-check, clang-tidy) runs a file once per
	// entry, so with these entries it checks the host compile and each
	// device compile. The command line alone, which is what CMake records,
	// shows it the first device's compile only.
	checker := llvmtest.Tool(t, "clang-check")
	code := mustRead(t, src)
	os.WriteFile(src, append([]byte(`#if defined(__gfx1030__)
#error "checked for gfx1030"
#elif defined(__gfx90a__)
#error "checked for gfx90a"
#elif !defined(__AMDGCN__)
#error "checked for the host"
#endif
`), code...), 0o644)
	r := cmdSpec{dir: dir, name: checker, args: args("-p", dir, "dev.c")}.run(t)
	for _, what := range []string{"the host", "gfx90a", "gfx1030"} {
		if !strings.Contains(r.stderr, "checked for "+what) {
			t.Errorf("clang-check with the database did not check the compile for %s:\n%s", what, r)
		}
	}
	r = cmdSpec{dir: dir, name: checker, args: args("dev.c", "--", flags, "-c", "dev.c")}.run(t)
	if n := strings.Count(r.stderr, "error: \"checked for "); n != 1 || strings.Contains(r.stderr, "checked for the host") {
		t.Errorf("the command line alone: %d compiles checked, want the first device's only:\n%s", n, r)
	}
	os.WriteFile(src, code, 0o644)

	// Compiling again replaces the entries instead of adding more; a plain
	// compile adds its one entry; an entry for a deleted file goes.
	cmdSpec{dir: dir, env: []string{tmp, "OFFCC_COMPILE_COMMANDS=" + db}, name: c.cc,
		args: args(flags, "-c", "dev.c", "-o", "dev.o", "-MD")}.mustRun(t)
	gone := filepath.Join(dir, "gone.c")
	os.WriteFile(gone, []byte("int g;\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "plain.c"), []byte("int p;\n"), 0o644)
	for _, f := range []string{"gone.c", "plain.c"} {
		cmdSpec{dir: dir, env: []string{tmp, "OFFCC_COMPILE_COMMANDS=" + db}, name: c.cc, args: args("-c", f)}.mustRun(t)
	}
	os.Remove(gone)
	cmdSpec{dir: dir, env: []string{tmp, "OFFCC_COMPILE_COMMANDS=" + db}, name: c.cc,
		args: args(flags, "-c", "dev.c", "-o", "dev.o", "-MD")}.mustRun(t)
	var files []string
	for _, e := range readDB(t, db) {
		files = append(files, e.File)
	}
	if want := []string{"plain.c", "dev.c", "dev.c", "dev.c"}; !slices.Equal(files, want) {
		t.Errorf("after recompiling: entries for %v, want %v", files, want)
	}
}

// TestCompileCommandsParallelMake: the compiles of make -j4 share one
// database; every entry arrives, and entries written by others (CMake's
// "command" form) are kept.
func TestCompileCommandsParallelMake(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "--print-compile-commands is offcc's")
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("GNU make not installed")
	}
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	db := filepath.Join(dir, "compile_commands.json")
	os.WriteFile(filepath.Join(dir, "cmake.c"), []byte("int c;\n"), 0o644)
	cmakeEntry := fmt.Sprintf(`[{"directory": %q, "command": "cc -c cmake.c", "file": "cmake.c"}]`, dir)
	os.WriteFile(db, []byte(cmakeEntry), 0o644)
	var objs []string
	for i := range 6 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.c", i)), []byte(fmt.Sprintf(
			"int f%d(int *x) {\n#pragma omp target map(tofrom : x[0])\n  x[0] += %d;\n  return x[0];\n}\n", i, i)), 0o644)
		objs = append(objs, fmt.Sprintf("s%d.o", i))
	}
	mk := fmt.Sprintf("all: %s\n%%.o: %%.c\n\t%s -fopenmp -fopenmp-targets=%s -c $< -o $@\n",
		strings.Join(objs, " "), c.cc, offloadHost)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	cmdSpec{dir: dir, env: []string{tmp, "OFFCC_COMPILE_COMMANDS=" + db}, name: makePath, args: args("-j4")}.mustRun(t)
	entries := readDB(t, db)
	count := map[string]int{}
	for _, e := range entries {
		count[e.File]++
	}
	if count["cmake.c"] != 1 || entries[0].Command != "cc -c cmake.c" {
		t.Errorf("CMake's entry was not kept: %+v", entries)
	}
	for i := range 6 {
		if n := count[fmt.Sprintf("s%d.c", i)]; n != 2 {
			t.Errorf("s%d.c has %d entries, want 2 (host and the host-device compile)", i, n)
		}
	}
	// A database offcc cannot read is left alone, with a warning; the
	// compile goes on.
	os.WriteFile(db, []byte("not json"), 0o644)
	r := cmdSpec{dir: dir, env: []string{tmp, "OFFCC_COMPILE_COMMANDS=" + db}, name: c.cc,
		args: args("-c", "s0.c", "-o", "x.o")}.mustRun(t)
	if !strings.Contains(r.stderr, "warning: cannot update the compile commands") {
		t.Errorf("no warning for a broken database:\n%s", r)
	}
	if data, _ := os.ReadFile(db); string(data) != "not json" {
		t.Errorf("broken database was rewritten: %q", data)
	}
}

// TestResponseFilesPastTheLimit: a command line that only fits in a
// response file (an argument longer than execve allows, and 1.2 MB of
// -D options) builds and runs offloaded, and offcc passes it on to clang
// and the compiles in response files it removes.
func TestResponseFilesPastTheLimit(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	tmpDir, tmp := tmpEnv(t)
	var b strings.Builder
	fmt.Fprintf(&b, "'-DLONG_NAME=\"%s\"'\n", strings.Repeat("x", 200000))
	for i := range 10 { // 1.2 MB in all, past ArgLimit with an 8 MB stack
		fmt.Fprintf(&b, "-DUNUSED_%d=%d+0*%s\n", i, i, strings.Repeat("0", 120000))
	}
	rsp := filepath.Join(dir, "args.rsp")
	os.WriteFile(rsp, []byte(b.String()), 0o644)
	src := filepath.Join(dir, "long.c")
	os.WriteFile(src, []byte(`#include <omp.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  int on_host = 1;
  size_t n = 0;
  const char *s = LONG_NAME;
#pragma omp target map(from : on_host, n) map(to : s[:1])
  {
    on_host = omp_is_initial_device();
    n = sizeof(LONG_NAME) - 1 + (UNUSED_9 != 0);
  }
  printf("on device: %s, n=%zu\n", on_host ? "no" : "yes", n);
  return on_host || n != 200000 + 1;
}
`), 0o644)
	prog := filepath.Join(dir, "long")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, "@"+rsp, src, "-o", prog)}.mustRun(t)
	runOffloadProgram(t, prog)
	// Without offloading, offcc hands the line to clang the same way.
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args("@"+rsp, "-c", src, "-o", filepath.Join(dir, "plain.o"))}.mustRun(t)
	if left, _ := os.ReadDir(tmpDir); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestJobserverNoteWithoutPlus: under make 4.3 a recipe line without '+'
// gets MAKEFLAGS naming jobserver fds it does not have; with -v offcc says
// once why it uses the CPU count, and says nothing when the line has '+'.
func TestJobserverNoteWithoutPlus(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the note is offcc's")
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("GNU make not installed")
	}
	out, _ := exec.Command(makePath, "--version").Output()
	if !strings.HasPrefix(string(out), "GNU Make 4.3") && !strings.HasPrefix(string(out), "GNU Make 4.2") {
		t.Skipf("make passes a pipe jobserver only before 4.4: %s", strings.SplitN(string(out), "\n", 2)[0])
	}
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	os.WriteFile(filepath.Join(dir, "a.c"), []byte("int f(int *x) {\n#pragma omp target map(tofrom : x[0])\n  x[0]++;\n  return 0;\n}\n"), 0o644)
	cmd := fmt.Sprintf("%s -v -fopenmp -fopenmp-targets=%s -c a.c -o $@", c.cc, offloadHost)
	mk := fmt.Sprintf("all: plain.o plus.o\nplain.o:\n\t%s\nplus.o:\n\t+%s\n", cmd, cmd)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	for target, want := range map[string]int{"plain.o": 1, "plus.o": 0} {
		r := cmdSpec{dir: dir, env: []string{tmp}, name: makePath, args: args("-j2", target)}.mustRun(t)
		if n := strings.Count(r.stderr, "note: make's jobserver"); n != want {
			t.Errorf("make %s: %d jobserver notes, want %d:\n%s", target, n, want, r.stderr)
		}
		if want == 1 && !strings.Contains(r.stderr, "marked with '+'") {
			t.Errorf("the note does not say how to fix it:\n%s", r.stderr)
		}
	}
}
