package actions

import (
	"os"
	"syscall"

	"github.com/offcc/offcc/internal/membudget"
)

// procMonitor follows the process that runs an action's command, for
// memory scheduling: it tells started the process's pid as soon as it has
// started, and keeps what wait4 reported when it ended. A nil monitor
// follows nothing.
type procMonitor struct {
	started func(pid int) // nil: nobody asks
	usage   Usage         // set when the process has been waited for
}

// start reports the started process's pid.
func (m *procMonitor) start(pid int) {
	if m != nil && m.started != nil {
		m.started(pid)
	}
}

// exited keeps the peak memory and the killing signal of a process that
// has been waited for.
func (m *procMonitor) exited(ps *os.ProcessState) {
	if m == nil || ps == nil {
		return
	}
	m.usage.PeakRSS = membudget.PeakRSS(ps)
	m.usage.CPU = ps.UserTime() + ps.SystemTime()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		m.usage.Signaled = int(ws.Signal())
	}
}
