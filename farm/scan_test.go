package farm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/llvmtest"
)

// TestScanThroughShell: the client's dependency scan (a preprocessor pass
// of the job's own cc1 command) runs through the build's Shell: -v lists
// it as it lists the build's commands, and it finds the headers read.
func TestScanThroughShell(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "main.c")
	hdr := filepath.Join(dir, "util.h")
	if err := os.WriteFile(hdr, []byte("int util(void);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("#include \"util.h\"\nint main(void) { return util(); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	sh := actions.NewShell(actions.ShellOptions{Stderr: &stderr, Verbose: true, TempDir: dir})
	c := &Client{opt: ClientOptions{Clang: clang, TempDir: dir, Shell: sh}, tables: tables22()}
	a := &actions.Action{Command: []string{clang, "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj",
		"-o", filepath.Join(dir, "main.o"), "-x", "c", src}}
	files, err := c.scan(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, hdr) {
		t.Errorf("scan found %q, want %s among them", files, hdr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], ` "`+clang+`" -cc1 `) || !strings.Contains(lines[0], " -Eonly ") {
		t.Errorf("-v listed %q, want the scan's clang -cc1 ... -Eonly command", stderr.String())
	}
}
