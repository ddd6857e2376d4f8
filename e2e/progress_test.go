package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgressLineOnTerminal builds a translation unit for four devices
// (several seconds) on a pseudo-terminal: a status line names the running
// devices and is erased at the end. On a pipe, and under make's output
// synchronisation, nothing of it appears.
func TestProgressLineOnTerminal(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the status line is offcc's")
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) not installed")
	}
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	src := genKernels(t, dir, 80)
	cmd := shellJoin(args(c.cc, "-fopenmp", "--offload-arch=gfx906,gfx908,gfx90a,gfx1030", "-nogpulib", "-O2", "-c", src, "-o", filepath.Join(dir, "k.o")))
	for _, tc := range []struct {
		name, shell string
		env         []string
		want        bool
	}{
		{"terminal", cmd, nil, true},
		{"pipe", cmd + " 2>&1 | cat", nil, false},
		{"make -O", cmd, []string{"MAKEFLAGS= -Otarget"}, false},
		{"dumb terminal", cmd, []string{"TERM=dumb"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Cache off: each run must compile for seconds.
			r := cmdSpec{dir: dir, env: append([]string{tmp, "TERM=xterm", "MAKEFLAGS=", "OFFCC_CACHE=0"}, tc.env...), name: script,
				args: args("-qec", tc.shell, "/dev/null")}.mustRun(t)
			out := r.stdout
			drawn := strings.Contains(out, "offcc: ") && strings.Contains(out, " running: ")
			if drawn != tc.want {
				t.Fatalf("status line drawn = %v, want %v:\n%q", drawn, tc.want, out)
			}
			if !tc.want {
				if strings.Contains(out, "\x1b[K") {
					t.Errorf("terminal control codes written: %q", out)
				}
				return
			}
			if !strings.Contains(out, "gfx") {
				t.Errorf("status line does not name a device: %q", out)
			}
			if !strings.HasSuffix(out, "\r\x1b[K") {
				t.Errorf("status line not erased at the end: %q", out[max(0, len(out)-80):])
			}
		})
	}
}

// TestColorDiagnosticsOnTerminal: on a terminal, offcc's offload compiles
// colour their diagnostics as clang's do (their output is collected, so
// they do not see the terminal themselves); not with -fno-color-diagnostics,
// not with TERM=dumb, not on a pipe.
func TestColorDiagnosticsOnTerminal(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) not installed")
	}
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	src := filepath.Join(dir, "err.c")
	os.WriteFile(src, []byte("int main(void) {\n#pragma omp target\n  { return undeclared; }\n}\n"), 0o644)
	cmd := shellJoin(args(c.cc, openmpHost, "-c", src, "-o", filepath.Join(dir, "err.o")))
	for _, tc := range []struct {
		name, shell, term string
		want              bool
	}{
		{"terminal", cmd, "xterm-256color", true},
		{"no colour asked", cmd + " -fno-color-diagnostics", "xterm-256color", false},
		{"dumb terminal", cmd, "dumb", false},
		{"pipe", cmd + " 2>&1 | cat", "xterm-256color", false},
	} {
		r := cmdSpec{dir: dir, env: []string{tmp, "TERM=" + tc.term}, name: script, args: args("-qec", tc.shell, "/dev/null")}.run(t)
		if !strings.Contains(r.stdout, "undeclared identifier") {
			t.Fatalf("%s: no diagnostic:\n%s", tc.name, r)
		}
		if colored := strings.Contains(r.stdout, "\x1b[0;1;31merror: "); colored != tc.want {
			t.Errorf("%s: coloured = %v, want %v:\n%q", tc.name, colored, tc.want, r.stdout)
		}
	}
}
