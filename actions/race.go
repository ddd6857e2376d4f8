package actions

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"
)

// Dynamic execution (RemoteDeadlines): a remote run that is slow while a
// local slot would idle, or that passes its deadline, is raced by a local
// run of the same action. Each run reports on e.results as any run does;
// the first to end with the action's result claims it (raceClaim), and
// only that run sets a.Discovered and tells the cache. The executor then
// cancels the other run and, once both have ended, handles the winner's
// result as the action's (raceRunEnded): its output is printed, it is
// traced and reported, once.

// errLost is the error of a run whose action another run won.
var errLost = errors.New("another run of the action won")

// race is the executor's state for an action whose remote run a local run
// may race: when the remote run counts as slow and passes its deadline,
// where its two runs stand, and the result that won.
type race struct {
	claim          *raceClaim
	slow, deadline time.Time          // zero: never
	ctx            context.Context    // the action's: both runs' derive from it
	remote         bool               // the remote run is in flight
	cancelRemote   context.CancelFunc // cancels the remote run
	local          localRace          // where the local run stands
	cancelLocal    context.CancelFunc // cancels the local run, while it runs
	raced          bool               // a local run started while the remote one ran
	won            *result            // the winner's result, once it came back
}

// localRace says where the local run of a raced action stands.
type localRace uint8

const (
	localNone    localRace = iota // none (yet, or any more)
	localQueued                   // it waits in the ready heap, or with Options.Memory for memory
	localRunning                  // it runs
)

// raceClaim is shared by the runs of a raced action: the first to end
// with the action's result claims it, and only it sets a.Discovered and
// tells the cache, whose lookup (a miss) the remote run leaves here. It is
// the only state the runs' goroutines share.
type raceClaim struct {
	mu       sync.Mutex
	cached   CachedRun // the remote run's lookup; nil without a cache
	lookedUp bool      // the remote run's lookup missed, or there is none
	claimed  bool
}

// setCached keeps the remote run's cache lookup, a miss, for the winner.
func (c *raceClaim) setCached(cr CachedRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cached, c.lookedUp = cr, true
}

// take claims the action's result for a run that has ended under ctx,
// unless another run claimed it first or ctx is done (the other run won,
// or the build stops); a local run, only once the remote run's lookup
// has missed (a hit restores a.Discovered, which is the winner's to set).
// The winner gets the cache lookup to tell, if any.
func (c *raceClaim) take(ctx context.Context, local bool) (CachedRun, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.claimed || ctx.Err() != nil || local && !c.lookedUp {
		return nil, false
	}
	c.claimed = true
	return c.cached, true
}

// newRace returns the race of n, whose remote run starts under the
// action's context ctx, and the remote run's context; nil when the Remote
// gives it no deadline.
func (e *executor) newRace(n *node, ctx context.Context) (*race, context.Context) {
	rd, ok := e.opt.Remote.(RemoteDeadlines)
	if !ok {
		return nil, ctx
	}
	slow, deadline := rd.Deadlines(n.a)
	if slow <= 0 && deadline <= 0 {
		return nil, ctx
	}
	now := time.Now()
	rc := &race{claim: &raceClaim{lookedUp: e.opt.Cache == nil}, ctx: ctx, remote: true}
	if slow > 0 {
		rc.slow = now.Add(slow)
	}
	if deadline > 0 {
		rc.deadline = now.Add(deadline)
	}
	var rctx context.Context
	rctx, rc.cancelRemote = context.WithCancel(ctx)
	e.races = append(e.races, n)
	return rc, rctx
}

// queueRaces queues a local run of each action whose remote run has passed
// its deadline, then of the one of highest priority whose remote run is
// slow if the local side would idle, and arms the race timer for the next
// of those times still to come. It reports whether it queued any.
func (e *executor) queueRaces(now time.Time) bool {
	queued := false
	var slow *node // the best slow one
	var next time.Time
	kept := e.races[:0]
	for _, n := range e.races {
		rc := n.race
		if rc == nil || !rc.remote || rc.local != localNone || rc.won != nil {
			continue // over, or queued once already
		}
		if passed(rc.deadline, now) {
			e.queueRacer(n)
			queued = true
			continue
		}
		kept = append(kept, n)
		if passed(rc.slow, now) {
			if slow == nil || nodeLess(n, slow) {
				slow = n
			}
		} else {
			next = earliest(next, rc.slow)
		}
		next = earliest(next, rc.deadline)
	}
	e.races = kept
	if slow != nil && e.localIdle() {
		e.queueRacer(slow)
		queued = true
	}
	e.armRaceTimer(next, now)
	return queued
}

// passed reports whether the time t, zero for never, is not after now.
func passed(t, now time.Time) bool {
	return !t.IsZero() && !t.After(now)
}

// earliest returns the earlier of a and b, either zero for never.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// armRaceTimer makes raceWake deliver at next, or never when it is zero.
func (e *executor) armRaceTimer(next, now time.Time) {
	if next.IsZero() {
		if e.raceTimer != nil {
			e.raceTimer.Stop()
		}
		e.raceWake = nil
		return
	}
	if e.raceTimer == nil {
		e.raceTimer = time.NewTimer(next.Sub(now))
	} else {
		e.raceTimer.Reset(next.Sub(now))
	}
	e.raceWake = e.raceTimer.C
}

// localIdle reports whether the local side would idle: fewer local
// actions run than Options.Jobs and none waits for a slot, nor may soon
// (with Options.Memory: none waits to run alone, and memory held outside
// the build does not block it).
func (e *executor) localIdle() bool {
	return e.slots.running < e.opt.Jobs && !e.wantSlot() && !e.aloneRunning && e.alone.Len() == 0 && !e.memBlocked
}

// queueRacer queues a local run of n beside its remote run: with
// Options.Memory to wait for memory, as a command that missed the cache
// (the remote run's lookup missed), else in the ready heap. n stays
// running.
func (e *executor) queueRacer(n *node) {
	n.race.local = localQueued
	if e.reserves(n) {
		n.run = e.newRun(n)
		n.run.claim = n.race.claim
		n.beginWait(time.Now())
		heap.Push(&e.memWait, n)
		e.memHeld = false
		return
	}
	n.beginWait(time.Now())
	heap.Push(&e.ready, n)
}

// unqueueRacer takes the queued local run of n off the heap it waits in.
func (e *executor) unqueueRacer(n *node) {
	n.race.local = localNone
	n.waitSince, n.memSince = time.Time{}, time.Time{}
	for _, h := range []*readyHeap{&e.ready, &e.memWait, &e.alone} {
		for i, m := range *h {
			if m == n {
				heap.Remove(h, i)
				return
			}
		}
	}
}

// racing reports whether n, taken from a heap, is the queued local run of
// a raced action.
func racing(n *node) bool {
	return n.race != nil && n.race.local == localQueued
}

// racerContext marks the local run of n running and returns its context.
func (e *executor) racerContext(n *node) context.Context {
	rc := n.race
	rc.local = localRunning
	rc.raced = rc.raced || rc.remote
	ctx, cancel := context.WithCancel(rc.ctx)
	rc.cancelLocal = cancel
	return ctx
}

// startRacer runs the command of n, which races n's remote run (or which
// that run gave back meanwhile), in local slot sl: with no cache lookup of
// its own, its output collected.
func (e *executor) startRacer(sl slot, n *node) {
	n.state = stRunning
	ctx := e.racerContext(n)
	claim := n.race.claim
	slotWait, _ := n.endWait(time.Now())
	go func() {
		r := result{n: n, slot: sl, slotWait: slotWait, out: new(bytes.Buffer), errOut: new(bytes.Buffer), start: time.Now()}
		r.err = runLocal(ctx, n.a, e.sh.forAction(r.out, r.errOut), nil)
		winLocal(ctx, claim, &r)
		r.end = time.Now()
		e.results <- r
	}()
}

// winLocal claims the action's result for a local run of a raced action
// that has ended (r): when it wins, it finishes the dependency files and
// tells the cache.
func winLocal(ctx context.Context, claim *raceClaim, r *result) {
	cached, ok := claim.take(ctx, true)
	if !ok {
		if r.err == nil {
			r.err, r.code = errLost, 1
		}
		return
	}
	r.won = true
	if r.err == nil {
		r.err = finishDeps(r.n.a)
	}
	if r.err != nil {
		r.code = exitCode(r.err)
	}
	if cached != nil {
		cached.Done(r.out.Bytes(), r.errOut.Bytes(), r.err)
		r.cache = cached.Status()
	}
}

// raceRunEnded takes the result r of one run of the raced action r.n,
// whose slot has been given back. The first result that won is kept and
// the other run cancelled (or, queued, taken off its heap). Once no run of
// the action is left it returns the action's result and true: the
// winner's, with the side that won when both ran at once; with no winner,
// r when it is the remote run's (it gave the action back, or failed, with
// no local run beside it), else a local run that was cancelled (the
// build stops, or Memory had it killed) after the remote one gave up,
// requeued to run locally unless the build stops.
func (e *executor) raceRunEnded(r result) (result, bool) {
	n, rc := r.n, r.n.race
	if r.remote {
		rc.remote = false
		rc.cancelRemote()
		if r.requeue {
			n.farmNote = r.why
		}
	} else {
		rc.local = localNone
		rc.cancelLocal()
	}
	if r.won {
		rc.won = &r
		if rc.remote {
			rc.cancelRemote()
		}
		switch rc.local {
		case localRunning:
			rc.cancelLocal()
		case localQueued:
			e.unqueueRacer(n)
		}
	}
	if rc.remote || rc.local != localNone {
		return result{}, false // the other run goes on
	}
	n.race = nil
	if rc.won == nil {
		if !r.remote {
			r.requeue, r.why = true, n.farmNote
		}
		return r, true
	}
	w := *rc.won
	if rc.raced {
		w.raced = "local"
		if w.remote {
			w.raced = "remote"
		}
	}
	return w, true
}
