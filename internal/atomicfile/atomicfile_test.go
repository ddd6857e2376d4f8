package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.o")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, []byte("new content"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(name)
	if string(got) != "new content" {
		t.Errorf("content = %q", got)
	}
	fi, _ := os.Stat(name)
	if want := os.FileMode(0o644) &^ umask(); fi.Mode().Perm() != want {
		t.Errorf("mode = %v, want %v", fi.Mode().Perm(), want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want only the output", len(entries))
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.o")
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("aborted write left %d files", len(entries))
	}
}

func TestWriteIntoMissingDirectoryFails(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "such", "out.o"), []byte("x"), 0o644); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}

func TestTempNameIsBesideTarget(t *testing.T) {
	dir := t.TempDir()
	tmp, err := TempName(filepath.Join(dir, "prog"))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(tmp)
	if filepath.Dir(tmp) != dir {
		t.Errorf("temporary %s is not in %s (rename would not be atomic)", tmp, dir)
	}
}

// TestTempNameModeIsATools: the reserved file has the mode a tool's own
// output would get (0666 less the umask), not CreateTemp's private 0600,
// which a tool truncating the file (GNU ld) would keep: a linked program
// came out 0711 instead of 0755.
func TestTempNameModeIsATools(t *testing.T) {
	tmp, err := TempName(filepath.Join(t.TempDir(), "prog"))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(tmp)
	fi, err := os.Stat(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if want := os.FileMode(0o666) &^ umask(); fi.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), want)
	}
}

// TestErrorsNameTheFile fills a small file system: the write error names
// the file asked for, never the hidden temporary beside it.
func TestErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	name := filepath.Join(dir, "heavy.o")
	err := Write(name, make([]byte, 1<<20), 0o666)
	if err == nil || !strings.Contains(err.Error(), name+":") || strings.Contains(err.Error(), ".offcc-") || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Write to a full file system: %v; want ENOSPC naming %s", err, name)
	}
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(f, bytes.NewReader(make([]byte, 1<<20)))
	f.Abort()
	if err == nil || strings.Contains(err.Error(), ".offcc-") || !strings.Contains(err.Error(), name) {
		t.Errorf("io.Copy to a full file system: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	// Creating in a missing directory names the file too.
	if _, err := Create(filepath.Join(dir, "no", "x.o")); err == nil || strings.Contains(err.Error(), ".offcc-") {
		t.Errorf("Create in a missing directory: %v", err)
	}
}
