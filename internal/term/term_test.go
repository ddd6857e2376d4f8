package term

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// TestHasColorsLikeClang runs clang -### on a pseudo-terminal (script(1))
// under several TERM values: clang passes -fcolor-diagnostics to its
// compile exactly when HasColors says so.
func TestHasColorsLikeClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) not installed")
	}
	src := filepath.Join(t.TempDir(), "a.c")
	os.WriteFile(src, []byte("int x;\n"), 0o644)
	for _, term := range []string{"xterm", "xterm-256color", "tmux", "tmux-256color", "screen.xterm", "linux", "ansi", "vt100", "rxvt-unicode", "dumb", "foo", ""} {
		cmd := exec.Command(script, "-qec", clang+" -### -c "+src, "/dev/null")
		cmd.Env = append(os.Environ(), "TERM="+term)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("TERM=%s: %v\n%s", term, err, out)
		}
		clangColors := strings.Contains(string(out), `"-fcolor-diagnostics"`)
		ours := HasColors(func(k string) string {
			if k == "TERM" {
				return term
			}
			return ""
		})
		if ours != clangColors {
			t.Errorf("TERM=%q: HasColors = %v, clang colours: %v", term, ours, clangColors)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || Width(f) != 0 {
		t.Errorf("a regular file is a terminal")
	}
}
