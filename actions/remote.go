package actions

import (
	"context"
	"errors"
	"io"
	"time"
)

// Remote runs some actions on other machines (package farm implements it
// with Redis and offcc workers). Execute asks it, besides its local slots,
// which ready actions it takes: an action it accepts runs there without a
// local slot, through the same cache calls as a local run. Execute knows
// nothing of workers, queues or transfers.
type Remote interface {
	// Slots returns how many actions may run remotely at once now. It is
	// called from the scheduling goroutine, only while a ready action
	// could go (so a Remote may set itself up on the first call), and must
	// not block for long.
	Slots() int
	// Accepts reports whether a can run remotely: its inputs can all be
	// named and its tool is one that workers run. It must not block.
	Accepts(a *Action) bool
	// Run runs a remotely. On return its outputs (and DepFile) are written
	// as a local run would write them, and what the tool printed has gone
	// to stdout and stderr. An error that wraps ErrRunLocally means that
	// a did not run (or failed there) and nothing was written: Execute
	// then runs it locally. A remote failure is never the build's. When
	// ctx ends, Run returns promptly and leaves a's outputs alone: a local
	// run that raced it (see RemoteDeadlines) may have written them.
	Run(ctx context.Context, a *Action, stdout, stderr io.Writer) (RemoteInfo, error)
}

// RemoteDeadlines is implemented by a Remote whose runs Execute may race
// with local runs of the same actions (Bazel's dynamic execution): the
// first run to end with the action's result wins, and the other is
// cancelled through its context and its result dropped.
type RemoteDeadlines interface {
	// Deadlines returns, for a remote run of a about to start, after how
	// long it counts as slow (a local slot that would otherwise idle then
	// races it) and its deadline (a local run of a is then made ready, to
	// take a local slot by its priority like any other action, while the
	// remote run goes on); 0 means never. It is called from the
	// scheduling goroutine and must not block.
	Deadlines(a *Action) (slow, deadline time.Duration)
}

// ErrRunLocally is wrapped by Remote.Run's error when an action is to run
// locally after all (no worker took it in time, the worker died, refused
// or failed it, the server failed).
var ErrRunLocally = errors.New("run locally")

// RemoteInfo describes one remote run, for traces.
type RemoteInfo struct {
	// Worker names the worker that ran the action.
	Worker string
	// BytesUp and BytesDown are the bytes sent (inputs the server lacked)
	// and received (outputs).
	BytesUp, BytesDown int64
	// Transfer is the time spent sending inputs and receiving outputs;
	// Queue the time until a worker took the job; Run the time the tool
	// ran on the worker.
	Transfer, Queue, Run time.Duration
}
