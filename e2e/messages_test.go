package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fullDiskSource writes an OpenMP program whose offload compile needs more
// than the small file systems below hold, and returns its path.
func fullDiskSource(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#define N 4096\ndouble a[N];\n")
	for k := range 200 {
		fmt.Fprintf(&b, "void f%d(void) {\n#pragma omp target teams distribute parallel for map(tofrom : a)\n"+
			"  for (int i = 0; i < N; i++) a[i] = i * %d.0 + a[(i + %d) %% N];\n}\n", k, k, k)
	}
	src := filepath.Join(dir, "heavy.c")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// smallDisk mounts a 256 KiB tmpfs on a new directory for the test (offcc's
// tests run as root), skipping the test when it cannot.
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root and mount): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// offccLines returns the lines of stderr that offcc itself printed.
func offccLines(stderr string) []string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "offcc: ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestFullTMPDIR compiles an OpenMP offload program whose temporaries fill
// TMPDIR: besides clang's own "IO failure on output stream", which names no
// file, offcc says that TMPDIR is full and which step was writing.
func TestFullTMPDIR(t *testing.T) {
	c := offccOnly(t, "the message is offcc's")
	dir := t.TempDir()
	src := fullDiskSource(t, dir)
	tmp := smallDisk(t)
	r := cmdSpec{dir: dir, env: []string{"TMPDIR=" + tmp}, name: c.cc,
		args: args(openmpHost, "--no-cache", "-c", src, "-o", "heavy.o")}.run(t)
	if r.code == 0 {
		t.Fatalf("the compile succeeded in a 256 KiB TMPDIR; make heavy.c heavier\n%s", r)
	}
	want := "offcc: error: no space left on device in TMPDIR (" + tmp + "): writing the "
	if !strings.Contains(r.stderr, "\n"+want) && !strings.HasPrefix(r.stderr, want) {
		t.Errorf("no line starting %q:\n%s", want, r)
	}
	if _, err := os.Stat(filepath.Join(dir, "heavy.o")); err == nil {
		t.Errorf("heavy.o written by a failed compile")
	}
}

// TestFullOutputDirectory compiles into a full directory: the error names
// the user's heavy.o, never the hidden temporary offcc writes it through,
// and nothing is left behind.
func TestFullOutputDirectory(t *testing.T) {
	c := offccOnly(t, "the message is offcc's")
	dir := t.TempDir()
	src := fullDiskSource(t, dir)
	out := smallDisk(t)
	_, tmp := tmpEnv(t)
	for _, flags := range [][]string{openmpHost, nil} {
		// Fill the disk but for a few blocks: a plain compile's object
		// must not fit either.
		filler := filepath.Join(out, "filler")
		exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=4k", "count=60").Run()
		obj := filepath.Join(out, "heavy.o")
		r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
			args: args(flags, "--no-cache", "-c", src, "-o", obj)}.run(t)
		os.Remove(filler)
		if r.code == 0 {
			t.Fatalf("the compile succeeded in a full directory\n%s", r)
		}
		if strings.Contains(r.stderr, ".offcc-") || !strings.Contains(r.stderr, obj) {
			t.Errorf("%v: want a message naming %s, and no hidden temporary:\n%s", flags, obj, r)
		}
		if !strings.Contains(strings.ToLower(r.stderr), "no space left on device") {
			t.Errorf("%v: the disk being full is not said:\n%s", flags, r)
		}
		if flags == nil {
			// A compile without offloading is clang's own, messages
			// and leftovers (clang's heavy-*.o.tmp) included.
			continue
		}
		if lines := offccLines(r.stderr); len(lines) == 0 || !strings.Contains(strings.Join(lines, "\n"), obj) {
			t.Errorf("%v: no offcc line naming %s:\n%s", flags, obj, r)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("%v: left in the output directory: %v", flags, entries)
		}
	}
}
