// Package cgrouptest makes memory cgroups for tests: a fresh group under
// the test process's own, with a memory limit, that commands can be run
// in, and that is removed when the test ends. Where no memory cgroup can
// be written (not root, no cgroup file system) the test is skipped, except
// under OFFCC_REQUIRE_CGROUP=1 (set by CI), where it fails.
package cgrouptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// EnvRequire names the variable that turns skips into failures.
const EnvRequire = "OFFCC_REQUIRE_CGROUP"

// Required reports whether tests must fail rather than skip when no
// memory cgroup can be made.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Group is a memory cgroup made for one test.
type Group struct {
	version int
	dir     string
}

// New makes a memory cgroup under this process's own with a limit of
// limit bytes (and, in cgroup v1, the same memory+swap limit, so that swap
// does not hide it). The group's processes are killed and the group is
// removed when the test ends. Where none can be made the test is skipped
// (failed under OFFCC_REQUIRE_CGROUP=1).
func New(t testing.TB, limit int64) *Group {
	t.Helper()
	g, err := create(limit)
	if err != nil {
		if Required() {
			t.Fatalf("cgrouptest: %v (required by %s=1)", err, EnvRequire)
		}
		t.Skipf("cgrouptest: %v", err)
	}
	t.Cleanup(func() {
		if err := g.remove(); err != nil {
			t.Errorf("cgrouptest: %v", err)
		}
	})
	return g
}

func (g *Group) write(file, v string) error {
	return os.WriteFile(filepath.Join(g.dir, file), []byte(v), 0)
}

func (g *Group) read(file string) string {
	b, _ := os.ReadFile(filepath.Join(g.dir, file))
	return strings.TrimSpace(string(b))
}

// Path returns the group's directory in the cgroup file system.
func (g *Group) Path() string { return g.dir }

// Version returns 1 for a cgroup v1 memory group, 2 for a cgroup v2 one.
func (g *Group) Version() int { return g.version }

// Command returns a command that runs name with args inside the group: a
// shell moves itself into the group and then executes the command, so the
// command's pid is the one in the group.
func (g *Group) Command(name string, args ...string) *exec.Cmd {
	procs := filepath.Join(g.dir, "cgroup.procs")
	script := `echo $$ > '` + strings.ReplaceAll(procs, `'`, `'\''`) + `' && exec "$@"`
	return exec.Command("/bin/sh", append([]string{"-c", script, "sh", name}, args...)...)
}

// Add moves the process pid into the group.
func (g *Group) Add(pid int) error {
	return g.write("cgroup.procs", strconv.Itoa(pid))
}

// Peak returns the group's peak memory use in bytes (v1
// memory.max_usage_in_bytes, v2 memory.peak); 0 when unknown.
func (g *Group) Peak() int64 {
	file := "memory.max_usage_in_bytes"
	if g.version == 2 {
		file = "memory.peak"
	}
	n, _ := strconv.ParseInt(g.read(file), 10, 64)
	return n
}

// OOMKills returns how many processes the OOM killer has killed in the
// group (v1 memory.oom_control's oom_kill, v2 memory.events' oom_kill).
func (g *Group) OOMKills() int {
	file := "memory.oom_control"
	if g.version == 2 {
		file = "memory.events"
	}
	for _, line := range strings.Split(g.read(file), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// Pids returns the processes in the group.
func (g *Group) Pids() []int {
	var pids []int
	for _, f := range strings.Fields(g.read("cgroup.procs")) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}
