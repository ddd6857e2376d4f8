package actions

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/offcc/offcc/target"
	"github.com/offcc/offcc/toolchain"
)

// Options control Execute.
type Options struct {
	// Jobs is the concurrency limit; values below 1 mean 1.
	Jobs int
	// Jobserver, when non-nil, limits concurrency further: the first
	// running action uses the process's implicit slot and each additional
	// concurrently running action holds a token.
	Jobserver *Jobserver
	// Trace, when non-nil, records every action that ran.
	Trace *Trace
	// Observer, when non-nil, is told when each action starts and ends.
	Observer Observer
	// Cache, when non-nil, is asked before each action runs and told
	// after it ran (see Cache).
	Cache Cache
	// Remote, when non-nil, runs the actions it accepts on other machines
	// while local slots run others (see Remote).
	Remote Remote
	// Memory, when non-nil, admits the local actions that run a process
	// by the memory they are expected to use as well as by slots, is told
	// what each used, and may have one killed for want of memory run
	// again alone (see Memory). Collected output is then printed in the
	// graph's order even with Jobs == 1.
	Memory Memory
	// StopAfterFailure stops the build at its first failure in the
	// graph's order, as clang's driver stops a CUDA, HIP or SYCL build
	// (which compiles one source several times) at its first failing
	// job: once an action fails, no action after it in that order runs
	// or prints, and those running are cancelled, while the actions
	// before it run on and print, as clang ran them first. The failure
	// reported is the first in that order.
	StopAfterFailure bool
}

// Observer follows a build as it runs (a progress line, say). Its methods
// are called from the executor's scheduling goroutine, one at a time, and
// must not block.
type Observer interface {
	// ActionStarted is called just before a runs.
	ActionStarted(a *Action)
	// ActionFinished is called when a's own work has ended, successfully
	// or not (before the actions of its expansion, if any, run).
	ActionFinished(a *Action)
}

// ExitError reports a failed build. Action is the first action that
// failed; it is nil when the build stopped because the context passed to
// Execute was done, in which case Code is 1 and Err is ctx.Err() (the
// caller decides how to report an interrupt, e.g. exit status 130).
type ExitError struct {
	Action *Action
	Code   int   // the child's exit status, 128+signal if it was killed, else 1
	Err    error // the underlying error
}

// Error returns a one-line message in the style of clang's
// "linker command failed with exit code 1 (use -v to see invocation)".
func (e *ExitError) Error() string {
	if e.Action == nil {
		return fmt.Sprintf("build interrupted: %v", e.Err)
	}
	// clang names a failed tool by its short name: "ptxas", not the
	// NVPTX::Assembler of -ccc-print-bindings.
	what := e.Action.ToolName()
	if len(e.Action.Command) > 0 {
		what = toolchain.ToolName(e.Action.Command[0])
	}
	switch k := e.Action.Kind; {
	case k == DeviceLink && e.Action.parent == nil && target.IsAMDGPU(e.Action.Target.Triple):
		// One of clang's own jobs: its AMDGCN::Linker (HIP's lld).
		what = "amdgcn-link"
	case k.InLinkStage():
		what = "linker"
	case k.IsClangCompile():
		what = "clang frontend"
	}
	var ee *exec.ExitError
	switch {
	case errors.As(e.Err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("%s command failed due to signal %d (use -v to see invocation)", what, int(ws.Signal()))
		}
		return fmt.Sprintf("%s command failed with exit code %d (use -v to see invocation)", what, e.Code)
	default:
		return e.Err.Error()
	}
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// Crashed reports whether the failed command crashed as clang's driver
// judges it: killed by a signal, or exit status 70 (a fatal error) or above
// 128. clang then exits with status 1.
func (e *ExitError) Crashed() bool {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true
		}
	}
	return e.Code == 70 || e.Code > 128
}

// CommandFailed reports whether the failure is an external command that
// ran and exited non-zero (it has printed its own diagnostics).
func (e *ExitError) CommandFailed() bool {
	var ee *exec.ExitError
	return errors.As(e.Err, &ee)
}

// Execute runs the actions of g, each after every action writing one of its
// inputs has finished, through sh. Among ready actions the one with the
// longest remaining path (by Cost) starts first, ties in planning order. At
// most opt.Jobs run at once, and with a jobserver every action beyond the
// first running one holds a token.
//
// With opt.Memory, an action that runs a command here and misses the
// cache also waits until Memory admits it: among those waiting, the first
// in that order that it admits starts, and with none holding a
// reservation the best one starts anyway. An action that Memory says was
// killed for want of memory runs once more, alone: its first failure is
// neither printed nor told to the cache.
//
// An action with Expand runs it once its inputs exist; the actions it
// returns are added to g and run under the same limits, and the expanded
// action finishes when they all have.
//
// With opt.Jobs > 1 each action's output is collected and printed whole,
// in the graph's order (clang's job order, the order clang's driver prints
// it in), once the actions before it have ended; with opt.Jobs == 1 it
// streams, unless opt.StopAfterFailure or opt.Memory is set. In a dry run
// (sh.DryRun) every action's Command is printed in order and nothing runs.
//
// When an action fails, as clang's driver does, the actions that depend on
// it never start and the others go on; Execute returns an *ExitError for
// the first failure once nothing runs any more. When ctx is done, nothing
// new starts, every running child's process group gets SIGTERM (SIGKILL
// after 2 s), in-process actions are cancelled through their context, the
// output of killed actions is discarded, and Execute returns an *ExitError
// with a nil Action.
func Execute(ctx context.Context, g *Graph, sh *Shell, opt Options) error {
	if sh.DryRun() {
		for _, a := range g.Actions {
			sh.ShowCommand(a.Command)
		}
		return nil
	}
	if opt.Jobs < 1 {
		opt.Jobs = 1
	}
	e := &executor{sh: sh, opt: opt, g: g, nodes: map[*Action]*node{}}
	if opt.Trace != nil {
		opt.Trace.start(opt.Jobs)
	}
	return e.run(ctx)
}

type nodeState uint8

const (
	stWaiting   nodeState = iota // for its inputs
	stReady                      // in the ready heap
	stRunning                    // a goroutine runs it
	stExpanding                  // its expansion's actions are running
	stMemory                     // it waits for memory (in memWait or alone)
	stDone
	stFailed
)

// node is the executor's state for one action.
type node struct {
	a        *Action
	index    int // in the graph: the tie-break
	prio     float64
	pending  int // unfinished producers of inputs
	children int // unfinished actions of its expansion
	users    []*node
	state    nodeState
	started  bool   // ActionStarted was called (a remote try counts)
	local    bool   // a remote try gave it back: run it here
	farmNote string // why, for the trace
	run      *localRun
	race     *race // while a local run may race its remote run, or does
	// top is the index in the graph of the action whose expansion added
	// this one (its own for the graph's own actions): with index, its
	// place in the graph's order (see after).
	top int
	// cancel cancels the context the action runs under.
	cancel context.CancelFunc
	// What the trace says the action waited, ready, before the run that
	// counts started: waited in all, memWaited of it held back by
	// Options.Memory. waitSince is set while it waits, memSince while
	// Memory holds it back (see wait).
	waitSince, memSince time.Time
	waited, memWaited   time.Duration
}

// beginWait notes that n waits from now on: for a slot, for memory or for
// both.
func (n *node) beginWait(now time.Time) {
	if n.waitSince.IsZero() {
		n.waitSince = now
	}
}

// holdMemory notes that Options.Memory holds n back from now on: it
// refused n, or n waits to run again alone.
func (n *node) holdMemory(now time.Time) {
	n.beginWait(now)
	if n.memSince.IsZero() {
		n.memSince = now
	}
}

// releaseMemory notes that Memory no longer holds n back: memory may have
// come free, or n starts.
func (n *node) releaseMemory(now time.Time) {
	if !n.memSince.IsZero() {
		n.memWaited += now.Sub(n.memSince)
		n.memSince = time.Time{}
	}
}

// endWait notes that a run of n starts now and returns how long n has
// waited, ready, for a slot (a local slot, a jobserver token, a remote
// slot) and for memory, summed over its waits so far: a command that
// missed the cache under Options.Memory waits once for its lookup's slot
// and again for memory and a slot.
func (n *node) endWait(now time.Time) (slotWait, memWait time.Duration) {
	n.releaseMemory(now)
	if !n.waitSince.IsZero() {
		n.waited += now.Sub(n.waitSince)
		n.waitSince = time.Time{}
	}
	return max(n.waited-n.memWaited, 0), n.memWaited
}

// localRun is a command that Options.Memory schedules, between its cache
// lookup (a miss) and its end: what runs it, and what the trace and the
// cache are told when it ends.
type localRun struct {
	sh             *Shell        // the action's Shell (capturing for the cache)
	out, errOut    *bytes.Buffer // its collected output
	cached         CachedRun     // nil without a cache
	status         string        // the cache's status, for the trace
	capOut, capErr *bytes.Buffer // the copy for the cache, nil without one
	res            Reservation   // while it runs
	retried        bool          // killed for want of memory, it runs again alone
	claim          *raceClaim    // when it races a remote run: claims the result, instead of cached
}

// reset forgets the output of a run that is tried again.
func (lr *localRun) reset() {
	for _, b := range []*bytes.Buffer{lr.out, lr.errOut, lr.capOut, lr.capErr} {
		if b != nil {
			b.Reset()
		}
	}
}

type executor struct {
	sh    *Shell
	opt   Options
	g     *Graph
	nodes map[*Action]*node
	ready readyHeap
	slots *slots
	// The run's state: its context (cancelled to stop the build), the
	// channel its actions report on, whether it was stopped, and its
	// first failure.
	runCtx    context.Context
	cancel    context.CancelFunc
	results   chan result
	cancelled bool
	first     *ExitError
	// Collected output is printed in the graph's order (clang's job
	// order), as clang's driver, which runs its jobs one after another,
	// prints it: device diagnostics before the host's. top lists the
	// graph's own actions in order, printed how many have printed, and
	// held the output of actions (an expansion's under its top action)
	// that waits for earlier ones.
	top     []*node
	printed int
	held    map[*node][]result
	// With Options.Memory: the actions that missed the cache and wait for
	// memory, whether the last try admitted none of them (they wait for a
	// reservation's end or Memory.Wake), how many local actions hold a
	// reservation, the actions waiting to run again alone and whether one
	// runs. memBlocked: with none of this build's actions holding a
	// reservation, Memory refused the best one (other offcc processes
	// hold the budget); nothing starts until Memory.Wake.
	memWait      readyHeap
	memHeld      bool
	memBlocked   bool
	reserved     int
	alone        readyHeap
	aloneRunning bool
	// With Options.StopAfterFailure: the first failed action in the
	// graph's order so far; nothing after it runs or prints.
	stopAt *node
	// With a Remote that implements RemoteDeadlines: the actions whose
	// remote run may yet be raced, and the timer that wakes the loop (on
	// raceWake, nil when unarmed) when the next of them becomes slow or
	// passes its deadline.
	races     []*node
	raceTimer *time.Timer
	raceWake  <-chan time.Time
}

// result is what an action's goroutine reports.
type result struct {
	n           *node
	slot        slot // the local slot it ran in
	err         error
	code        int
	out, errOut *bytes.Buffer
	children    []*Action
	start       time.Time
	end         time.Time
	slotWait    time.Duration // how long it waited, ready, for a slot (see node.endWait)
	cache       string        // the cache's status for the action, "" without a cache
	hit         bool
	remote      bool        // it ran (or tried to run) on Remote
	requeue     bool        // Remote gave it back: run it locally
	why         string      // why it gave it back
	info        *RemoteInfo // a remote run's facts
	won         bool        // of a raced action: this run claimed its result
	raced       string      // of a raced action's result: the side that won ("local", "remote")
	// With Options.Memory: the action missed the cache and now waits for
	// memory; the usage of its command; the executor's answer to whether
	// it runs again alone (the command has ended, the cache not yet been
	// told); and what the trace shows.
	wantMemory bool
	usage      Usage
	decide     chan bool
	mem        *MemoryInfo
}

// readyHeap orders ready nodes by priority, then planning order.
type readyHeap []*node

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(a, b int) bool { return nodeLess(h[a], h[b]) }

func (h readyHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *readyHeap) Push(x any)   { *h = append(*h, x.(*node)) }
func (h *readyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// nodeLess reports whether a starts before b: a longer remaining path, or
// an equal one and an earlier place in the plan.
func nodeLess(a, b *node) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	return a.index < b.index
}

// addNodes makes nodes for actions (already in the graph, in graph order),
// links them to their producers' nodes and sets their priorities: own cost
// plus the largest priority among users, plus base.
func (e *executor) addNodes(actions []*Action, base float64) {
	fresh := make([]*node, len(actions))
	for i, a := range actions {
		n := &node{a: a, index: e.g.Index(a)}
		n.top = n.index
		if a.parent != nil {
			n.top = e.nodes[a.parent].top
		}
		e.nodes[a] = n
		fresh[i] = n
		for _, d := range a.Deps() {
			dn := e.nodes[d]
			if dn.state == stDone {
				continue
			}
			dn.users = append(dn.users, n)
			n.pending++
		}
	}
	// Users come after producers in graph order, so a reverse walk sees
	// every user's priority first.
	for i := len(fresh) - 1; i >= 0; i-- {
		n := fresh[i]
		best := base
		for _, u := range n.users {
			best = max(best, u.prio)
		}
		n.prio = n.a.cost() + best
	}
	for _, n := range fresh {
		if n.pending == 0 {
			e.makeReady(n)
		}
	}
}

// makeReady puts n, its inputs written, in the ready heap; with
// Options.Memory, no cache to ask first and no Remote that could take it,
// one that runs a command goes straight to wait for memory.
func (e *executor) makeReady(n *node) {
	if e.dropped(n) {
		n.state = stFailed
		return
	}
	n.beginWait(time.Now())
	if e.reserves(n) && e.opt.Cache == nil && (e.opt.Remote == nil || n.local || !e.remotable(n)) {
		n.run = e.newRun(n)
		e.waitMemory(n)
		return
	}
	n.state = stReady
	heap.Push(&e.ready, n)
}

// reserves reports whether n is an action that Options.Memory admits: one
// that runs a process here. In-process actions use offcc's own memory,
// and remote ones another machine's; a cache hit is served before this
// matters (runAction asks the cache first).
func (e *executor) reserves(n *node) bool {
	return e.opt.Memory != nil && n.a.Expand == nil && n.a.Run == nil
}

// newRun returns the localRun of n with its output collected, before any
// cache lookup.
func (e *executor) newRun(n *node) *localRun {
	lr := &localRun{out: new(bytes.Buffer), errOut: new(bytes.Buffer)}
	lr.sh = e.sh.forAction(lr.out, lr.errOut)
	return lr
}

// waitMemory makes n, whose localRun is set, wait for memory.
func (e *executor) waitMemory(n *node) {
	n.state = stMemory
	n.beginWait(time.Now())
	heap.Push(&e.memWait, n)
	e.memHeld = false
}

// memoryFreed notes that memory may have come free (a reservation ended,
// or Memory's Wake said so): the actions Memory refused wait, from now on,
// to be asked again, that is for a slot.
func (e *executor) memoryFreed() {
	now := time.Now()
	for _, n := range e.memWait {
		n.releaseMemory(now)
	}
}

// run runs the graph: it starts ready actions while slots are free, and
// handles what comes back (a finished action, a jobserver token, the end
// of ctx) until nothing runs any more.
func (e *executor) run(ctx context.Context) error {
	e.addNodes(e.g.Actions, 0)
	for _, a := range e.g.Actions {
		e.top = append(e.top, e.nodes[a])
	}
	e.held = map[*node][]result{}
	defer e.release(true)
	e.runCtx, e.cancel = context.WithCancel(ctx)
	defer e.cancel() // also ends any token read (derived from runCtx)
	e.slots = newSlots(e.opt.Jobs, e.opt.Jobserver, e.opt.Remote)
	defer e.slots.close()
	defer func() {
		if e.raceTimer != nil {
			e.raceTimer.Stop()
		}
	}()
	e.results = make(chan result)
	ctxDone := ctx.Done()
	for {
		if !e.cancelled && ctx.Err() != nil {
			e.stop()
		}
		if !e.cancelled {
			e.startReady()
		}
		e.slots.stopAcquiring(e.wantSlot())
		if e.slots.idle() && (!e.memBlocked || e.cancelled) {
			break
		}
		e.release(false)
		var wake <-chan struct{}
		if (e.memBlocked || e.memHeld && e.memWait.Len() > 0) && !e.cancelled {
			wake = e.opt.Memory.Wake()
		}
		raceWake := e.raceWake
		if e.cancelled {
			raceWake = nil
		}
		select {
		case r := <-e.results:
			if r.decide != nil {
				e.decide(r)
			} else {
				e.finished(r)
			}
		case err := <-e.slots.tokenReady():
			if sl, ok := e.slots.tokenArrived(err, e.wantSlot()); ok && !e.startLocal(sl) {
				e.slots.releaseLocal(sl)
			}
		case <-wake:
			e.memHeld, e.memBlocked = false, false
			e.memoryFreed()
		case <-raceWake:
			e.raceWake = nil // startReady races what is due, and rearms it
		case <-ctxDone:
			ctxDone = nil
			e.stop()
		}
	}
	if e.cancelled {
		return &ExitError{Code: 1, Err: ctx.Err()}
	}
	if e.first != nil {
		return e.first
	}
	for _, n := range e.nodes {
		if n.state != stDone {
			return fmt.Errorf("actions: %s never became ready", n.a.Label())
		}
	}
	return nil
}

// stop stops the build: nothing new starts and running actions are
// cancelled.
func (e *executor) stop() {
	if !e.cancelled {
		e.cancelled = true
		e.cancel()
	}
}

// wantSlot reports whether a ready action waits for a local slot: with
// Options.Memory, also one that waits for memory and may be admitted now,
// but none while an action waits to run alone and others run, or runs.
func (e *executor) wantSlot() bool {
	switch {
	case e.cancelled:
		return false
	case e.opt.Memory == nil:
		return e.ready.Len() > 0
	case e.aloneRunning, e.memBlocked:
		return false
	case e.alone.Len() > 0:
		return e.slots.running == 0
	}
	return e.ready.Len() > 0 || e.memWait.Len() > 0 && !e.memHeld
}

// startReady starts ready actions while slots are free: on e.opt.Remote
// those it accepts, then the others locally, then local runs of actions
// whose remote runs are due to be raced (see queueRaces).
func (e *executor) startReady() {
	if e.opt.Remote != nil {
		// Slots is asked only when a ready action could go.
		for {
			i := e.bestReady(e.remotable)
			if i < 0 || !e.slots.acquireRemote() {
				break
			}
			e.startRemote(heap.Remove(&e.ready, i).(*node))
		}
	}
	e.startLocalReady()
	for len(e.races) > 0 && e.queueRaces(time.Now()) {
		e.startLocalReady()
	}
}

// startLocalReady starts actions in local slots while one waits for a slot
// and a slot is free.
func (e *executor) startLocalReady() {
	for e.wantSlot() {
		sl, ok := e.slots.acquireLocal(e.runCtx)
		if !ok {
			break
		}
		if !e.startLocal(sl) {
			e.slots.releaseLocal(sl)
			break
		}
	}
}

// startLocal starts an action in local slot sl: the one popLocal picks,
// or with Options.Memory the one startMemory picks. It reports false when
// none may start (sl is then to be given back).
func (e *executor) startLocal(sl slot) bool {
	if e.opt.Memory != nil {
		return e.startMemory(sl)
	}
	if n := e.popLocal(); racing(n) {
		e.startRacer(sl, n)
	} else {
		e.startLookup(sl, n)
	}
	return true
}

// startLookup runs n in local slot sl: its cache lookup and, unless n is
// admitted by memory (then it comes back to wait for it), its work.
func (e *executor) startLookup(sl slot, n *node) {
	n.state = stRunning
	e.announce(n)
	ctx := e.actionContext(n)
	slotWait, _ := n.endWait(time.Now())
	go func() {
		r := e.runAction(ctx, n, false, nil)
		r.slot, r.slotWait = sl, slotWait
		e.results <- r
	}()
}

// startMemory starts in local slot sl, under Options.Memory, what may
// start: an action waiting to run alone once no other local action runs
// (and nothing beside it); otherwise, in critical-path order, a ready
// action (its cache lookup first) or an action waiting for memory that
// Memory admits, and when none is admitted and no local action holds a
// reservation, the best one waiting for memory anyway.
func (e *executor) startMemory(sl slot) bool {
	mem := e.opt.Memory
	if e.aloneRunning {
		return false
	}
	if e.alone.Len() > 0 {
		if e.slots.running > 1 { // sl counts
			return false
		}
		n := heap.Pop(&e.alone).(*node)
		res, ok := mem.Reserve(n.a, 0)
		if !ok && mem.Wake() != nil {
			// Other processes hold the memory it needs: wait for them.
			n.holdMemory(time.Now())
			heap.Push(&e.alone, n)
			e.memBlocked = true
			return false
		}
		if !ok {
			res = nil
		}
		e.aloneRunning = true
		e.startReserved(sl, n, res, true)
		return true
	}
	var best *node // the ready action popLocal would take
	bestAt := -1
	yield := false // it could go to a Remote with free slots: those waiting come first
	if e.ready.Len() > 0 {
		bestAt = e.localIndex()
		best = e.ready[bestAt]
		yield = e.opt.Remote != nil && e.remotable(best) && e.opt.Remote.Slots() > 0
	}
	if !e.memHeld {
		var refused []*node
		defer func() {
			for _, n := range refused {
				heap.Push(&e.memWait, n)
			}
		}()
		for e.memWait.Len() > 0 && (best == nil || yield || nodeLess(e.memWait[0], best)) {
			n := heap.Pop(&e.memWait).(*node)
			res, ok := mem.Reserve(n.a, e.reserved)
			switch {
			case ok:
				e.startReserved(sl, n, res, false)
				return true
			case e.reserved == 0 && mem.Wake() != nil:
				// Other processes hold the budget: wait for Wake.
				n.holdMemory(time.Now())
				refused = append(refused, n)
				e.memBlocked = true
				return false
			case e.reserved == 0:
				e.startReserved(sl, n, nil, false)
				return true
			}
			// This build's running actions hold the memory it needs.
			n.holdMemory(time.Now())
			refused = append(refused, n)
		}
		if e.memWait.Len() == 0 {
			e.memHeld = len(refused) > 0
		}
	}
	if best != nil {
		e.startLookup(sl, heap.Remove(&e.ready, bestAt).(*node))
		return true
	}
	if e.reserved == 0 && e.memWait.Len() > 0 {
		// With none of this build's running, Reserve refuses only while
		// other processes hold the budget, and then Wake tells when to
		// try again; without a Wake, start it whatever it said.
		n := heap.Pop(&e.memWait).(*node)
		res, ok := mem.Reserve(n.a, 0)
		if !ok && mem.Wake() != nil {
			n.holdMemory(time.Now())
			heap.Push(&e.memWait, n)
			e.memBlocked = true
			return false
		}
		if !ok {
			res = nil
		}
		e.startReserved(sl, n, res, false)
		return true
	}
	e.memHeld = true
	return false
}

// startReserved runs the command of n, which has missed the cache and
// holds the reservation res (nil if Memory gave none), in local slot sl;
// alone says it runs again alone. When the command has ended, its result
// comes back for decide, which says whether it goes no further (it runs
// again alone, or it raced a remote run and is dropped); if not, the cache
// is told (for a racing run, when it won) and the result comes back for
// finished.
func (e *executor) startReserved(sl slot, n *node, res Reservation, alone bool) {
	lr := n.run
	lr.res = res
	slotWait, memWait := n.endWait(time.Now())
	info := &MemoryInfo{Wait: memWait, RetriedAlone: alone}
	mon := &procMonitor{}
	if res != nil {
		e.reserved++
		info.Expected = res.Expected()
		mon.started = res.Started
	}
	n.state = stRunning
	e.announce(n)
	var ctx context.Context
	if racing(n) {
		ctx = e.racerContext(n)
	} else {
		ctx = e.actionContext(n)
	}
	go func() {
		r := result{n: n, slot: sl, slotWait: slotWait, out: lr.out, errOut: lr.errOut, cache: lr.status, mem: info, start: time.Now()}
		r.err = runLocal(ctx, n.a, lr.sh, mon)
		if r.err == nil && lr.claim == nil {
			r.err = finishDeps(n.a)
		}
		if r.err != nil {
			r.code = exitCode(r.err)
		}
		r.usage = mon.usage
		r.usage.MemoryWait = memWait
		info.Peak = r.usage.PeakRSS
		r.decide = make(chan bool, 1)
		e.results <- r
		if <-r.decide {
			return
		}
		r.decide = nil
		switch {
		case lr.claim != nil:
			winLocal(ctx, lr.claim, &r)
		case lr.cached != nil:
			lr.cached.Done(lr.capOut.Bytes(), lr.capErr.Bytes(), r.err)
		}
		r.end = time.Now()
		e.results <- r
	}()
}

// decide ends the reservation of a command that has ended and tells its
// goroutine whether it runs again alone: when Memory says it was killed
// for want of memory, the first time. Its output is then forgotten, and
// it waits until no other local action runs. A run that raced a remote
// run still in flight, or that lost, is cancelled instead: it does not
// claim the action's result.
func (e *executor) decide(r result) {
	n, lr := r.n, r.n.run
	retry := false
	if lr.res != nil {
		retry = lr.res.Done(r.usage, r.err)
		lr.res = nil
		e.reserved--
		e.memoryFreed()
	}
	e.memHeld = false
	retry = retry && r.err != nil && !lr.retried && !e.cancelled && !e.dropped(n)
	if rc := n.race; retry && rc != nil && (rc.remote || rc.won != nil) {
		rc.cancelLocal()
		retry = false
	}
	r.decide <- retry
	if !retry {
		return
	}
	e.slots.releaseLocal(r.slot)
	if rc := n.race; rc != nil {
		// The action's only run now: it runs again alone.
		rc.cancelLocal()
		rc.local = localQueued
	}
	lr.retried = true
	lr.reset()
	// It waits for the others to end: Memory holds it back.
	n.holdMemory(time.Now())
	n.state = stMemory
	heap.Push(&e.alone, n)
}

// startRemote runs n on e.opt.Remote, in a remote slot already taken; a
// local run may race it (see RemoteDeadlines).
func (e *executor) startRemote(n *node) {
	n.state = stRunning
	e.announce(n)
	ctx := e.actionContext(n)
	var claim *raceClaim
	if rc, rctx := e.newRace(n, ctx); rc != nil {
		n.race, ctx, claim = rc, rctx, rc.claim
	}
	slotWait, _ := n.endWait(time.Now())
	go func() {
		r := e.runAction(ctx, n, true, claim)
		r.slotWait = slotWait
		e.results <- r
	}()
}

// announce shows n's command and tells the observer, once per action (a
// remote try and the local run after it count as one).
func (e *executor) announce(n *node) {
	if n.started {
		return
	}
	n.started = true
	if n.a.Expand == nil {
		e.sh.ShowCommand(n.a.Command)
	}
	if e.opt.Observer != nil {
		e.opt.Observer.ActionStarted(n.a)
	}
}

// finished handles an action's result: it gives back its slot, waits for
// the other run of a raced action, requeues an action Remote gave back,
// reports and traces it, and expands, finishes or fails it.
func (e *executor) finished(r result) {
	n := r.n
	if r.wantMemory {
		e.endContext(n)
		e.slots.releaseLocal(r.slot)
		if e.cancelled || e.dropped(n) {
			n.state = stFailed
			return
		}
		e.waitMemory(n)
		return
	}
	if r.mem != nil && r.mem.RetriedAlone {
		e.aloneRunning = false
	}
	if r.remote {
		e.slots.releaseRemote()
	} else {
		e.slots.releaseLocal(r.slot)
	}
	if n.race != nil {
		var over bool
		if r, over = e.raceRunEnded(r); !over {
			return
		}
	}
	e.endContext(n)
	if r.requeue && !e.cancelled {
		n.local, n.farmNote = true, r.why
		e.makeReady(n)
		return
	}
	if e.opt.Observer != nil {
		if ho, ok := e.opt.Observer.(HitObserver); ok && r.hit {
			ho.ActionHit(n.a)
		}
		e.opt.Observer.ActionFinished(n.a)
	}
	if e.opt.Trace != nil {
		e.opt.Trace.add(Event{Action: n.a, Start: r.start, End: r.end, Slot: r.slot.index, Code: r.code, Err: r.err, Cache: r.cache, Remote: r.info, GivenBack: n.farmNote, Memory: r.mem, Raced: r.raced, CPU: r.usage.CPU, SlotWait: r.slotWait})
	}
	if e.cancelled || e.dropped(n) {
		// Killed, or finished while the build was being stopped, or
		// after a failure before it: its output no longer matters.
		n.state = stFailed
		return
	}
	e.hold(r)
	if r.err == nil && r.children != nil {
		r.err = e.expand(n, r.children)
		if r.err != nil {
			r.code = 1
		}
	}
	if r.err != nil {
		n.state = stFailed
		if e.opt.StopAfterFailure {
			e.stopAfter(n)
		}
		if e.first == nil || e.stopAt == n {
			e.first = &ExitError{Action: n.a, Code: r.code, Err: r.err}
		}
		return
	}
	if n.state != stExpanding {
		e.finish(n)
	}
}

// remotable reports whether n may run on e.opt.Remote: not a local run
// racing its remote one, nor one given back.
func (e *executor) remotable(n *node) bool {
	return !n.local && n.race == nil && n.a.Expand == nil && n.a.Run == nil && e.opt.Remote.Accepts(n.a)
}

// bestReady returns the index in the ready heap of the ready action of
// highest priority for which keep is true, or -1.
func (e *executor) bestReady(keep func(*node) bool) int {
	best := -1
	for i, n := range e.ready {
		if keep(n) && (best < 0 || e.ready.Less(i, best)) {
			best = i
		}
	}
	return best
}

// popLocal removes from the ready heap, and returns, the action a local
// slot runs next (see localIndex).
func (e *executor) popLocal() *node {
	return heap.Remove(&e.ready, e.localIndex()).(*node)
}

// localIndex returns the index in the non-empty ready heap of the action
// a local slot runs next: the ready action of highest priority, except
// that while it could go to a Remote with free slots, the best one that
// only this machine can run comes first.
func (e *executor) localIndex() int {
	if e.opt.Remote != nil {
		// Index 0 is the best of all: i > 0 means that one could go.
		if i := e.bestReady(func(n *node) bool { return !e.remotable(n) }); i > 0 && e.opt.Remote.Slots() > 0 {
			return i
		}
	}
	return 0
}

// expand adds an expanded action's children to the graph.
func (e *executor) expand(n *node, children []*Action) error {
	for _, c := range children {
		if err := e.g.add(c, n.a); err != nil {
			return err
		}
	}
	n.state = stExpanding
	n.children = len(children)
	e.addNodes(children, n.prio-n.a.cost())
	if n.children == 0 {
		e.finish(n)
	}
	return nil
}

// finish marks n done and readies its users; the last child of an
// expansion finishes its parent.
func (e *executor) finish(n *node) {
	n.state = stDone
	for _, u := range n.users {
		u.pending--
		if u.pending == 0 && u.state == stWaiting {
			e.makeReady(u)
		}
	}
	if p := n.a.parent; p != nil {
		pn := e.nodes[p]
		pn.children--
		if pn.children == 0 && pn.state == stExpanding {
			e.finish(pn)
		}
	}
}

// hold keeps an action's collected output until the actions before its
// top action in the graph have printed theirs.
func (e *executor) hold(r result) {
	if r.out == nil || r.out.Len() == 0 && r.errOut.Len() == 0 {
		return
	}
	a := r.n.a
	for a.parent != nil {
		a = a.parent
	}
	top := e.nodes[a]
	e.held[top] = append(e.held[top], r)
}

// release prints held output in graph order, up to the first top action
// that has not ended; all of it when all is set (the build is over).
func (e *executor) release(all bool) {
	for ; e.printed < len(e.top); e.printed++ {
		n := e.top[e.printed]
		if !all && n.state != stDone && n.state != stFailed {
			return
		}
		for _, r := range e.held[n] {
			if !e.dropped(r.n) {
				e.sh.flush(r.out.Bytes(), r.errOut.Bytes())
			}
		}
		delete(e.held, n)
	}
}

// after reports whether a comes after b in the graph's order: the order
// of their top actions, and within one expansion the order its actions
// were added in.
func after(a, b *node) bool {
	if a.top != b.top {
		return a.top > b.top
	}
	return a.index > b.index
}

// dropped reports whether n comes after the first failure of a build that
// stops after failures: it neither runs nor prints.
func (e *executor) dropped(n *node) bool {
	return e.stopAt != nil && after(n, e.stopAt)
}

// stopAfter makes the failed action n the first failure unless one before
// it failed: what comes after it is dropped, those running cancelled and
// those ready or waiting for memory never started.
func (e *executor) stopAfter(n *node) {
	if e.stopAt != nil && after(n, e.stopAt) {
		return
	}
	e.stopAt = n
	for _, m := range e.nodes {
		if e.dropped(m) && m.cancel != nil {
			m.cancel()
		}
	}
	for _, h := range []*readyHeap{&e.ready, &e.memWait, &e.alone} {
		kept := (*h)[:0]
		for _, m := range *h {
			if e.dropped(m) {
				if m.race != nil {
					// A queued local run: its remote run, if any,
					// is cancelled and reports.
					m.race.local = localNone
					if m.race.remote {
						continue
					}
				}
				m.state = stFailed
			} else {
				kept = append(kept, m)
			}
		}
		*h = kept
		heap.Init(h)
	}
}

// actionContext returns a new context for n to run under, cancelled when
// it is dropped or has ended.
func (e *executor) actionContext(n *node) context.Context {
	e.endContext(n)
	ctx, cancel := context.WithCancel(e.runCtx)
	n.cancel = cancel
	return ctx
}

// endContext cancels the context n ran under, if any: its runs are over.
func (e *executor) endContext(n *node) {
	if n.cancel != nil {
		n.cancel()
		n.cancel = nil
	}
}

// runAction runs one action in its own goroutine, on e.opt.Remote when
// remote is set; claim, when not nil, is the raced action's (see race).
func (e *executor) runAction(ctx context.Context, n *node, remote bool, claim *raceClaim) (r result) {
	r.n = n
	r.remote = remote
	a := n.a
	reserves := !remote && e.reserves(n)
	var sh *Shell
	if reserves {
		n.run = e.newRun(n)
		r.out, r.errOut, sh = n.run.out, n.run.errOut, n.run.sh
	} else if e.opt.Jobs == 1 && !remote && e.opt.Memory == nil && !e.opt.StopAfterFailure {
		sh = e.sh.forAction(e.sh.opt.Stdout, e.sh.opt.Stderr)
	} else {
		r.out, r.errOut = new(bytes.Buffer), new(bytes.Buffer)
		sh = e.sh.forAction(r.out, r.errOut)
	}
	r.start = time.Now()
	defer func() { r.end = time.Now() }()
	var cached CachedRun
	if e.opt.Cache != nil && a.Expand == nil {
		cached = e.opt.Cache.Begin(ctx, a)
		r.cache = cached.Status()
		if out, errOut, ok := cached.Hit(); ok {
			r.hit = true
			if claim != nil {
				_, r.won = claim.take(ctx, false)
			}
			sh.Stdout().Write(out)
			sh.Stderr().Write(errOut)
			return r
		}
		if claim != nil {
			claim.setCached(cached)
		}
		// Keep a copy of what the action prints, for the cache.
		capOut, capErr := new(bytes.Buffer), new(bytes.Buffer)
		sh = sh.forAction(io.MultiWriter(sh.Stdout(), capOut), io.MultiWriter(sh.Stderr(), capErr))
		defer func() {
			// A raced action's result is told by the run that won.
			if !r.requeue && !r.wantMemory && (claim == nil || r.won) {
				cached.Done(capOut.Bytes(), capErr.Bytes(), r.err)
			}
		}()
		if reserves {
			lr := n.run
			lr.sh, lr.cached, lr.status, lr.capOut, lr.capErr = sh, cached, r.cache, capOut, capErr
		}
	}
	if f, ok := e.opt.Cache.(Flusher); ok {
		// The action may read outputs the cache restored for hits.
		if err := f.Flush(); err != nil {
			r.err, r.code = err, 1
			return r
		}
	}
	if reserves {
		// Its command runs once Memory admits it (startReserved).
		r.wantMemory = true
		return r
	}
	switch {
	case a.Expand != nil:
		r.err = inProcess(func() error {
			var err error
			r.children, err = a.Expand(ctx, sh)
			if err == nil && r.children == nil {
				r.children = []*Action{}
			}
			return err
		})
	case a.Run != nil:
		r.err = inProcess(func() error { return a.Run(ctx, sh) })
	case remote:
		dsh, flush := sh.forDiagnostics(a)
		info, err := e.opt.Remote.Run(ctx, a, dsh.Stdout(), dsh.Stderr())
		flush()
		if errors.Is(err, ErrRunLocally) && ctx.Err() == nil {
			r.requeue = true
			r.why = strings.TrimPrefix(err.Error(), ErrRunLocally.Error()+": ")
			return r
		}
		r.err = err
		if info.Worker != "" {
			r.info = &info
		}
		if claim != nil && r.err == nil {
			// A run that lost leaves the dependency files alone.
			if _, r.won = claim.take(ctx, false); !r.won {
				r.err, r.code = errLost, 1
				return r
			}
		}
		if r.err == nil {
			r.err = finishDeps(a)
		}
	default:
		mon := &procMonitor{}
		r.err = runLocal(ctx, a, sh, mon)
		r.usage.CPU = mon.usage.CPU
		if r.err == nil {
			r.err = finishDeps(a)
		}
	}
	if r.err != nil {
		r.code = exitCode(r.err)
	}
	return r
}

// runLocal runs a's command here through sh, followed by mon when not nil
// (finishDeps then reads the dependency files it wrote).
func runLocal(ctx context.Context, a *Action, sh *Shell, mon *procMonitor) error {
	dsh, flush := sh.forDiagnostics(a)
	err := dsh.runCommand(ctx, a, mon)
	flush()
	return err
}

// finishDeps finishes the dependency files of a, whose run succeeded (see
// FinishDepFiles), and sets a.Discovered from its DepFile.
func finishDeps(a *Action) error {
	err := FinishDepFiles(a)
	if err == nil && a.DepFile != "" {
		a.Discovered, err = ReadDiscovered(a)
	}
	return err
}

// inProcess runs f, turning a panic into an error.
func inProcess(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return f()
}

// exitCode maps an error to an exit status: the child's status, 128+signal
// for a signalled child, the ExitCode() of an error that has one, else 1.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		if c := ee.ExitCode(); c > 0 {
			return c
		}
		return 1
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		if c := ec.ExitCode(); c > 0 {
			return c
		}
	}
	return 1
}
