package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/farm"
)

// TestFarmSandbox: a worker's job (offcc __farm-sandbox DIR -- TOOL ...)
// may write in its directory and nowhere else, whatever it runs, where the
// kernel has Landlock.
func TestFarmSandbox(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	abi := farm.SandboxABI()
	if abi == 0 {
		t.Skip("this kernel offers no Landlock: workers run jobs without the sandbox (their log says so)")
	}
	job := t.TempDir()
	outside := t.TempDir()
	script := "echo in > " + filepath.Join(job, "x") + " && echo null > /dev/null && echo out > " + filepath.Join(outside, "y")
	r := cmdSpec{name: c.cc, args: []string{"__farm-sandbox", job, "--", "/bin/sh", "-c", script}}.run(t)
	if r.code == 0 {
		t.Fatalf("a sandboxed job wrote outside its directory:\n%s", r)
	}
	if data, err := os.ReadFile(filepath.Join(job, "x")); err != nil || string(data) != "in\n" {
		t.Errorf("the job could not write in its directory (%v):\n%s", err, r)
	}
	if _, err := os.Stat(filepath.Join(outside, "y")); err == nil {
		t.Errorf("the job's write outside its directory took place:\n%s", r)
	}
	if !strings.Contains(r.stderr, "Permission denied") {
		t.Errorf("the refused write did not fail with EACCES:\n%s", r)
	}
	// Removing or renaming outside is refused too.
	victim := filepath.Join(outside, "keep")
	os.WriteFile(victim, []byte("keep"), 0o644)
	r = cmdSpec{name: c.cc, args: []string{"__farm-sandbox", job, "--", "/bin/rm", "-f", victim}}.run(t)
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a sandboxed job removed a file outside its directory:\n%s", r)
	}
	// Bad use is a clear error.
	r = cmdSpec{name: c.cc, args: []string{"__farm-sandbox", job}}.run(t)
	if r.code == 0 || !strings.Contains(r.stderr, "offcc: error: __farm-sandbox: usage") {
		t.Errorf("__farm-sandbox without a command:\n%s", r)
	}
}
