//go:build !linux

package farm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// Sandbox runs a worker's jobs. This system has no sandbox (bubblewrap and
// Landlock are Linux's): jobs run unconfined, with Insecure only, and
// Limits are not enforced.
type Sandbox struct {
	opt SandboxOptions
}

// NewSandbox fails unless opt.Insecure: this system has no sandbox.
func NewSandbox(opt SandboxOptions) (*Sandbox, error) {
	if !opt.Insecure {
		return nil, errors.New("no sandbox: bubblewrap and Landlock are Linux's; give --insecure-no-sandbox to run jobs unconfined")
	}
	return &Sandbox{opt: opt}, nil
}

// Layers returns none: jobs run unconfined.
func (s *Sandbox) Layers() []string { return nil }

// Command returns the command that runs tool with args directly, in jobDir,
// with env; cancelling ctx kills it (what it started may live on).
func (s *Sandbox) Command(ctx context.Context, slot int, jobDir string, readOnly []string, tool string, args []string, env []string) (*exec.Cmd, error) {
	// Worker side: the worker's own executor starts its jobs here, not
	// through a client build's actions.Shell (deliberately).
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Dir = jobDir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	return cmd, nil
}

// SandboxABI returns 0: Landlock is Linux's.
func SandboxABI() int { return 0 }

// SandboxMain fails: there is no sandbox on this system.
func SandboxMain(args []string) int {
	fmt.Fprintln(os.Stderr, "offcc: error: __farm-sandbox: no sandbox on this system")
	return 2
}

// CheckDir returns nil: jobs run as the worker.
func (s *Sandbox) CheckDir(dir string) error { return nil }
