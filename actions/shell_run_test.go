package actions

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunVerbose: a command run through Shell.Run is listed under -v, as
// an action's command is, unless it is Quiet, and never in a dry run.
func TestRunVerbose(t *testing.T) {
	for _, tc := range []struct {
		name          string
		verbose, dry  bool
		quiet, listed bool
	}{
		{"verbose", true, false, false, true},
		{"quiet", true, false, true, false},
		{"not verbose", false, false, false, false},
		{"dry run", false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr, out bytes.Buffer
			sh := NewShell(ShellOptions{Stderr: &stderr, Verbose: tc.verbose, DryRun: tc.dry})
			err := sh.Run(context.Background(), &Cmd{Argv: []string{"/bin/sh", "-c", "echo ran", "sh", "two words"}, Stdout: &out, Quiet: tc.quiet})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != "ran\n" {
				t.Errorf("stdout %q, want the command's", out.String())
			}
			want := ""
			if tc.listed {
				want = ` "/bin/sh" -c "echo ran" sh "two words"` + "\n"
			}
			if stderr.String() != want {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
			}
		})
	}
}

// TestOutput: Output returns the command's standard output, and its
// standard error with an *exec.ExitError when it fails.
func TestOutput(t *testing.T) {
	sh := NewShell(ShellOptions{Env: []string{"OFFCC_RUN_TEST=from-shell"}})
	out, err := sh.Output(context.Background(), "/bin/sh", "-c", `echo "$OFFCC_RUN_TEST"; echo noise >&2`)
	if err != nil || string(out) != "from-shell\n" {
		t.Errorf("Output = %q, %v; want the shell's environment", out, err)
	}
	_, err = sh.Output(context.Background(), "/bin/sh", "-c", "echo why >&2; exit 3")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(ee.Stderr) != "why\n" {
		t.Errorf("err = %#v, want exit status 3 with its stderr", err)
	}
	_, err = sh.Output(context.Background(), filepath.Join(t.TempDir(), "missing"))
	var se *StartError
	if !errors.As(err, &se) {
		t.Errorf("err = %v, want a *StartError", err)
	}
}

// TestRunBaseEnv: BaseEnv replaces offcc's environment, Env and Cmd.Env
// come after it.
func TestRunBaseEnv(t *testing.T) {
	t.Setenv("OFFCC_RUN_TEST_OUTER", "outer")
	sh := NewShell(ShellOptions{BaseEnv: []string{"A=base", "B=base"}, Env: []string{"B=shell"}})
	var out bytes.Buffer
	err := sh.Run(context.Background(), &Cmd{Argv: []string{"/bin/sh", "-c", `echo "$A $B $C ${OFFCC_RUN_TEST_OUTER:-none}"`},
		Env: []string{"C=cmd"}, Stdout: &out})
	if err != nil || out.String() != "base shell cmd none\n" {
		t.Errorf("got %q, %v", out.String(), err)
	}
}

// TestRunCancelKillsProcessGroup: cancelling the context kills a command
// started through Shell.Run, its children included, and Run returns.
func TestRunCancelKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "gc.pid")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPid(t, pidFile)
		cancel()
	}()
	var out bytes.Buffer
	t0 := time.Now()
	err := NewShell(ShellOptions{}).Run(ctx, &Cmd{
		Argv:   []string{"/bin/sh", "-c", `sleep 30 & echo $! > "$1"; sleep 30; wait`, "sh", pidFile},
		Stdout: &out,
	})
	if err == nil {
		t.Fatal("a cancelled command succeeded")
	}
	if d := time.Since(t0); d > 4*time.Second {
		t.Errorf("Run returned after %v", d)
	}
	gc := readPid(t, pidFile)
	deadline := time.Now().Add(time.Second)
	for alive(gc) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(gc) {
		syscall.Kill(gc, syscall.SIGKILL)
		t.Errorf("grandchild %d still alive", gc)
	}
	// A context done before the start runs nothing.
	err = NewShell(ShellOptions{}).Run(ctx, &Cmd{Argv: []string{"/bin/sh", "-c", "echo ran"}, Stdout: &out})
	if !errors.Is(err, context.Canceled) || strings.Contains(out.String(), "ran") {
		t.Errorf("err %v, stdout %q: want context.Canceled and nothing run", err, out.String())
	}
}
