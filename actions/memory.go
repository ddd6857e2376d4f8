package actions

import "time"

// Memory admits local actions by the memory they are expected to use, on
// top of the slots that bound them by cores (Options.Memory). The executor
// asks it before it starts each local action that runs a process, in
// critical-path order among the ready actions, and starts the first one
// it admits. With none of the build's actions holding a reservation,
// Memory may still refuse (other offcc processes hold the budget) if its
// Wake channel tells when to try again; otherwise, or without a Wake, the
// best one starts whatever Memory says, so that a build always makes
// progress.
//
// Its methods are called from the executor's scheduling goroutine, except
// the Reservation's Started, which the action's goroutine calls.
type Memory interface {
	// Reserve reports whether a may start now, given that running
	// local actions of this build hold reservations. With running 0 it
	// refuses only when memory held outside this build will be freed and
	// Wake will say so; otherwise it reserves. When it admits, it
	// reserves a's expected peak until the Reservation is done.
	Reserve(a *Action, running int) (Reservation, bool)
	// Wake returns a channel that receives when memory may have been
	// freed outside this build (another offcc process's job ended, a
	// running job's sampled use fell), so that held actions are
	// reconsidered; nil when only this build's own finishes matter.
	Wake() <-chan struct{}
}

// Reservation is the memory reserved for one running action.
type Reservation interface {
	// Started is told the process that runs the action, so that its use
	// can be sampled while it runs.
	Started(pid int)
	// Done releases the reservation with what the run measured. It
	// returns true when the action was killed for want of memory and
	// should run again alone: the executor then runs it once more, with
	// no other local action running beside it.
	Done(u Usage, err error) (retryAlone bool)
	// Expected is the peak the action was expected to reach, in bytes.
	Expected() int64
}

// Usage is what a finished command used, as wait4 reports it.
type Usage struct {
	// PeakRSS is the command's peak resident set size in bytes (ru_maxrss
	// of it and the children it waited for); 0 when unknown.
	PeakRSS int64
	// Signaled is the signal that killed it, 0 when it exited.
	Signaled int
	// CPU is the user and system time the command and the children it
	// waited for used.
	CPU time.Duration
	// MemoryWait is how long Memory held the action back, ready (as
	// MemoryInfo.Wait: waiting for a slot is not in it).
	MemoryWait time.Duration
}
