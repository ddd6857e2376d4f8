package mmapfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"small", []byte("hello\x00world")},
		{"page", make([]byte, 3*4096+5)},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(f.Data) != string(tc.data) {
			t.Errorf("%s: got %d bytes, want %d", tc.name, len(f.Data), len(tc.data))
		}
		if err := f.Close(); err != nil {
			t.Errorf("%s: close: %v", tc.name, err)
		}
		if f.Data != nil {
			t.Errorf("%s: Data kept after Close", tc.name)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := Open(dir); err == nil {
		t.Error("directory: no error")
	}
}
