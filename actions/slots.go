package actions

import (
	"context"
	"errors"
)

// slots hands out the places where the executor runs actions and takes
// them back: local slots, at most jobs at once, and remote slots, at most
// what Remote.Slots says.
//
// With a make jobserver a local slot is either the process's implicit
// slot, which every process owns, or a token read from the jobserver. A
// token is read in the background (acquireLocal starts the read, and its
// outcome arrives on tokenReady for tokenArrived), so that the executor
// can wait for a token and for its running actions at once. A jobserver
// that fails is given up: the build goes on in the implicit slot.
//
// A slots is used from the executor's scheduling goroutine only; the
// background read touches nothing but its own channel.
type slots struct {
	jobs   int
	js     *Jobserver // nil without a jobserver
	remote Remote     // nil without a build farm

	busy          []bool // busy[i]: local slot i is taken (its number in traces)
	running       int    // local slots taken
	implicitBusy  bool   // the implicit slot is taken
	remoteRunning int    // remote slots taken

	acquiring bool               // a token read is under way
	parent    context.Context    // the context it was started under
	cancelAcq context.CancelFunc // cancels it
	tokens    chan error         // its outcome
	broken    bool               // the jobserver failed: take no more tokens
}

// slotKind says what a local slot stands for.
type slotKind uint8

const (
	plainSlot    slotKind = iota // one of jobs, without a jobserver
	implicitSlot                 // the process's implicit jobserver slot
	tokenSlot                    // a jobserver token
)

// slot is a local slot taken: its number (for traces) and what it stands
// for, which releaseLocal gives back.
type slot struct {
	index int
	kind  slotKind
}

// newSlots returns slots for at most jobs (at least 1) local actions at
// once, limited further by js and run beside remote when they are non-nil.
func newSlots(jobs int, js *Jobserver, remote Remote) *slots {
	jobs = max(jobs, 1)
	return &slots{jobs: jobs, js: js, remote: remote, busy: make([]bool, jobs), tokens: make(chan error, 1)}
}

// acquireLocal returns a local slot if one is free now. If not, and a
// jobserver token could make one, it starts reading a token under ctx
// (unless a read is under way already): its outcome arrives on
// tokenReady, for tokenArrived.
func (s *slots) acquireLocal(ctx context.Context) (slot, bool) {
	switch {
	case s.running >= s.jobs:
		return slot{}, false
	case !s.implicitBusy && s.js != nil:
		s.implicitBusy = true
		return s.take(implicitSlot), true
	case s.js == nil:
		return s.take(plainSlot), true
	case s.broken || s.acquiring:
		return slot{}, false
	}
	s.acquiring = true
	actx, cancel := context.WithCancel(ctx)
	s.parent, s.cancelAcq = ctx, cancel
	go func() { s.tokens <- s.js.Acquire(actx) }()
	return slot{}, false
}

// tokenReady returns the channel on which a token read under way reports
// (nil, which never delivers, when none is).
func (s *slots) tokenReady() <-chan error {
	if !s.acquiring {
		return nil
	}
	return s.tokens
}

// tokenArrived takes the outcome err of a token read, received from
// tokenReady. When the read got a token and want is set (an action waits
// for a slot), it returns a local slot: the implicit one if it came free
// meanwhile (the token then goes back), else the token's. Otherwise the
// token goes back. A failed read that was not cancelled breaks the
// jobserver.
func (s *slots) tokenArrived(err error, want bool) (slot, bool) {
	s.acquiring = false
	s.cancelAcq()
	if err != nil {
		if s.parent.Err() == nil && !errors.Is(err, context.Canceled) {
			s.broken = true
		}
		return slot{}, false
	}
	switch {
	case !want || s.running >= s.jobs:
		s.js.Release()
		return slot{}, false
	case !s.implicitBusy:
		s.js.Release()
		s.implicitBusy = true
		return s.take(implicitSlot), true
	}
	return s.take(tokenSlot), true
}

// stopAcquiring cancels a token read under way unless want is set (an
// action waits for a slot) and a local slot could still be used: a read
// nobody needs could block forever. Its outcome still arrives on
// tokenReady.
func (s *slots) stopAcquiring(want bool) {
	if s.acquiring && (!want || s.running >= s.jobs) {
		s.cancelAcq()
	}
}

// take marks the lowest free slot number busy and returns the slot.
func (s *slots) take(kind slotKind) slot {
	s.running++
	for i, busy := range s.busy {
		if !busy {
			s.busy[i] = true
			return slot{index: i, kind: kind}
		}
	}
	// More running than jobs cannot happen; keep the trace readable anyway.
	s.busy = append(s.busy, true)
	return slot{index: len(s.busy) - 1, kind: kind}
}

// releaseLocal gives back a local slot that acquireLocal or tokenArrived
// returned: its token to the jobserver, or the implicit slot.
func (s *slots) releaseLocal(sl slot) {
	s.running--
	s.busy[sl.index] = false
	switch sl.kind {
	case tokenSlot:
		s.js.Release()
	case implicitSlot:
		s.implicitBusy = false
	}
}

// acquireRemote takes a remote slot if Remote has one free. Call it only
// when a ready action could go there: Remote.Slots is asked.
func (s *slots) acquireRemote() bool {
	if s.remote == nil || s.remoteRunning >= s.remote.Slots() {
		return false
	}
	s.remoteRunning++
	return true
}

// releaseRemote gives back a remote slot that acquireRemote took.
func (s *slots) releaseRemote() {
	s.remoteRunning--
}

// idle reports whether no slot is taken and no token read is under way.
func (s *slots) idle() bool {
	return s.running == 0 && s.remoteRunning == 0 && !s.acquiring
}

// close ends a token read still under way, waits for it and gives its
// token back, if it got one. Call it once every slot is released.
func (s *slots) close() {
	if !s.acquiring {
		return
	}
	s.cancelAcq()
	if err := <-s.tokens; err == nil {
		s.js.Release()
	}
	s.acquiring = false
}
