package driver

import (
	"os"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/progress"
	"github.com/offcc/offcc/target"
)

// progressObserver shows the running actions of a build on a status line.
type progressObserver struct{ st *progress.Status }

// ActionStarted puts a on the status line.
func (p progressObserver) ActionStarted(a *actions.Action) {
	if a.Expand == nil { // an expanding action only plans; its children run
		p.st.Start(a, progressLabel(a))
	}
}

// ActionHit counts a job the cache served.
func (p progressObserver) ActionHit(*actions.Action) { p.st.Cached() }

// ActionFinished takes a off the status line.
func (p progressObserver) ActionFinished(a *actions.Action) { p.st.Stop(a) }

// progressLabel names an action on the status line: the device it
// compiles for ("gfx90a", "sm_90", "x86_64" for the host device), "host"
// for the host compile, "link" (with the device for a device link).
func progressLabel(a *actions.Action) string {
	arch := a.Target.Arch
	if arch == "" || arch == "generic" {
		arch = target.ArchName(a.Target.Triple)
	}
	switch a.Kind {
	case actions.DeviceLink:
		return "link " + arch
	case actions.Link, actions.HostLink:
		return "link"
	case actions.Preprocess, actions.Compile, actions.HostFrontend, actions.Backend, actions.Assemble,
		actions.DeviceCompile, actions.DeviceAssemble:
		if a.Device && arch != "" {
			return arch
		}
		return "host"
	}
	return a.Kind.String()
}

// startProgress returns the build's status line, or nil (whose methods do
// nothing) when stderr is not a terminal, make synchronises output, or
// OFFCC_PROGRESS=0.
func (inv *Invocation) startProgress() *progress.Status {
	f, _ := inv.Stderr.(*os.File)
	if !progress.Enabled(f, inv.getenv) {
		return nil
	}
	return progress.New(inv.Stderr, progress.Options{Prog: inv.prog()})
}
