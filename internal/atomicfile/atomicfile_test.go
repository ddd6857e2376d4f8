package atomicfile

import (
	"os"
	"path/filepath"
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
