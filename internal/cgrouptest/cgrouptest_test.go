//go:build linux

package cgrouptest

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// envAlloc makes the test binary, run as a command, touch that many bytes
// and exit.
const envAlloc = "CGROUPTEST_ALLOC"

func TestMain(m *testing.M) {
	if v := os.Getenv(envAlloc); v != "" {
		n, _ := strconv.Atoi(v)
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		os.Exit(int(b[len(b)/2]) - 1)
	}
	os.Exit(m.Run())
}

func allocCmd(t *testing.T, g *Group, n int) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := g.Command(exe)
	cmd.Env = append(os.Environ(), envAlloc+"="+strconv.Itoa(n))
	return cmd
}

const limit = 64 << 20

func TestOverLimitIsOOMKilled(t *testing.T) {
	g := New(t, limit)
	before := g.OOMKills()
	err := allocCmd(t, g, 4*limit).Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("allocating 4× the limit: got %v, want the process killed", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("allocating 4× the limit: got %v, want SIGKILL", err)
	}
	if after := g.OOMKills(); after <= before {
		t.Errorf("OOMKills = %d after an OOM kill, was %d", after, before)
	}
	if p := g.Peak(); p < limit*9/10 || p > limit+1<<20 {
		t.Errorf("Peak = %d, want near the limit %d", p, limit)
	}
}

func TestUnderLimitSucceeds(t *testing.T) {
	g := New(t, limit)
	if err := allocCmd(t, g, limit/4).Run(); err != nil {
		t.Fatalf("allocating a quarter of the limit: %v", err)
	}
	if g.OOMKills() != 0 {
		t.Errorf("OOMKills = %d, want 0", g.OOMKills())
	}
	if p := g.Peak(); p < limit/4 {
		t.Errorf("Peak = %d, want at least the %d bytes allocated", p, limit/4)
	}
}

func TestCleanupRemovesGroupAndKillsProcesses(t *testing.T) {
	var dir string
	var cmd *exec.Cmd
	t.Run("inner", func(t *testing.T) {
		g := New(t, limit)
		dir = g.Path()
		cmd = g.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the shell has moved itself in and exec'd sleep.
		for len(g.Pids()) == 0 {
			time.Sleep(time.Millisecond)
		}
	})
	if dir == "" {
		t.Skip("no cgroup")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cgroup %s still exists after the test: %v", dir, err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("process in the group: %v, want killed", err)
	}
}
