package actions

import "context"

// Cache is consulted by Execute around every action that does work of its
// own (not around expansions' Expand, which the cache sees as
// uncacheable): before the action runs, it may restore the action's
// outputs from an earlier run; after a run, it may keep them. Package
// cache implements it; Execute knows nothing of keys or stores.
type Cache interface {
	// Begin is called when a is about to run, its inputs written. It
	// must not fail: a cache that cannot help reports a miss.
	Begin(ctx context.Context, a *Action) CachedRun
}

// CachedRun is the cache's answer for one action.
type CachedRun interface {
	// Hit reports whether the action's outputs have been restored (and
	// its Discovered set), with the standard output and error of the run
	// that made them, to be printed as if the action had run.
	Hit() (stdout, stderr []byte, ok bool)
	// Status is "hit", "miss" or "uncacheable: REASON", for traces.
	Status() string
	// Done is called after the action ran, with its output and its error
	// (nil when it succeeded). It is not called after a hit.
	Done(stdout, stderr []byte, err error)
}

// Flusher is a Cache that may keep restored outputs in memory, unwritten,
// while only cache hits need them (package cache keeps those in the
// build's temporary directory). Execute calls Flush before it runs an
// action the cache did not serve, expansions included: that action may
// read them. An error fails the action.
type Flusher interface {
	Flush() error
}

// HitObserver is an Observer that is also told which actions were cache
// hits (the progress line counts them).
type HitObserver interface {
	Observer
	// ActionHit is called, before ActionFinished, for an action whose
	// outputs came from the cache.
	ActionHit(a *Action)
}
