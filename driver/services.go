package driver

import (
	"io"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
)

// Services open what a build uses beyond clang, its plan and the local
// build cache: the shared cache, the build farm and the progress line.
// The command supplies them (package cmd/offcc/internal/services), so that the
// driver decides when a build needs one (a dry run opens none) but not
// how it is opened, and depends on neither Redis nor the farm. A nil
// Services, or a nil field, does without.
type Services struct {
	// SharedCache connects the build cache c, opened with cfg, to the
	// shared cache cfg.RemoteURL names (never ""). Where the shared cache
	// cannot be used it warns and leaves c local: that is no reason to
	// fail a build.
	SharedCache func(env ServiceEnv, c *cache.Cache, cfg cache.Config)
	// Remote returns the client of the build farm that req names and the
	// function that closes it, or nil (after a warning) when the farm
	// cannot be used: the build then runs every job locally.
	Remote func(env ServiceEnv, req RemoteRequest) (actions.Remote, func())
	// Progress returns the build's status line on stderr, or nil where
	// there is none (stderr is not a terminal, OFFCC_PROGRESS=0...).
	Progress func(env ServiceEnv, stderr io.Writer) Progress
}

// ServiceEnv is what every service is told of the invocation.
type ServiceEnv struct {
	// Prog is offcc's name in messages.
	Prog string
	// Getenv reads the invocation's environment (Invocation.Env).
	Getenv func(key string) string
	// Warn prints one of offcc's warnings ("PROG: warning: MESSAGE").
	Warn func(message string)
}

// RemoteRequest names the build farm a build asks for.
type RemoteRequest struct {
	// URL is the farm's Redis server (--remote-exec or OFFCC_REMOTE_EXEC).
	URL string
	// Clang is the build's clang; TempDir its private temporary directory.
	Clang, TempDir string
	// Release is the LLVM major version of Clang (its profile's), whose
	// option tables the farm reads the build's jobs with.
	Release int
	// Shell is the build's Shell, through which the client runs what it
	// runs here (its dependency scans).
	Shell *actions.Shell
	// Peaks, when not nil, gives each job its expected peak memory (which
	// workers admit it by) and learns the peaks workers measure: the
	// build's memory governor.
	Peaks interface {
		Expect(a *actions.Action) int64
		Learn(a *actions.Action, peak int64)
		ExpectTime(a *actions.Action) time.Duration
		LearnTime(a *actions.Action, d time.Duration)
	}
}

// Progress is a build's status line: it observes the actions that run.
type Progress interface {
	actions.Observer
	// Writer wraps one of the build's output streams so that what is
	// written through it does not garble the line.
	Writer(w io.Writer) io.Writer
	// Close erases the line and stops it.
	Close()
}

// serviceEnv returns the ServiceEnv of inv.
func (inv *Invocation) serviceEnv() ServiceEnv {
	return ServiceEnv{Prog: inv.prog(), Getenv: inv.getenv, Warn: func(msg string) { inv.warnf("%s", msg) }}
}
