package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTempDir: a lazy temporary directory is named at once, made (0700)
// on first ensure only, and removed only if made; one made at once
// exists; a name taken by someone else is an error, not theirs.
func TestTempDir(t *testing.T) {
	root := t.TempDir()
	lazy, err := newTempDir(root, false)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(lazy.path) != root || !strings.HasPrefix(filepath.Base(lazy.path), "offcc-") {
		t.Errorf("lazy directory %s, want offcc-* in %s", lazy.path, root)
	}
	if _, err := os.Stat(lazy.path); !os.IsNotExist(err) {
		t.Fatalf("lazy directory exists before ensure: %v", err)
	}
	lazy.remove() // nothing to remove
	for i := 0; i < 2; i++ {
		if err := lazy.ensure(); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(lazy.path); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("after ensure: %v, %v", fi, err)
	}
	os.WriteFile(filepath.Join(lazy.path, "x"), nil, 0o644)
	lazy.remove()
	if _, err := os.Stat(lazy.path); !os.IsNotExist(err) {
		t.Errorf("removed directory still there: %v", err)
	}

	now, err := newTempDir(root, true)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(now.path); err != nil || !fi.IsDir() {
		t.Fatalf("directory made at once: %v, %v", fi, err)
	}
	if err := now.ensure(); err != nil {
		t.Errorf("ensure of a made directory: %v", err)
	}
	now.remove()
	if _, err := os.Stat(now.path); !os.IsNotExist(err) {
		t.Errorf("removed directory still there: %v", err)
	}

	taken, _ := newTempDir(root, false)
	if err := os.Mkdir(taken.path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := taken.ensure(); err == nil {
		t.Errorf("ensure took a directory someone else made")
	}
	taken.remove()
	if _, err := os.Stat(taken.path); err != nil {
		t.Errorf("remove removed a directory it did not make: %v", err)
	}
	if _, err := newTempDir(filepath.Join(root, "none"), true); err == nil {
		t.Errorf("a directory made at once under a missing root")
	}
}
