package actions

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Event is one action that ran.
type Event struct {
	Action     *Action
	Start, End time.Time
	// Slot is the concurrency slot the action ran in, from 0 to Jobs-1.
	Slot int
	// Code is the exit status (0 on success) and Err the failure.
	Code int
	Err  error
	// Cache is the cache's status for the action: "hit", "miss",
	// "uncacheable: REASON", or "" when the build had no cache.
	Cache string
	// Remote, when not nil, says the action ran on another machine (Slot
	// is then meaningless).
	Remote *RemoteInfo
	// GivenBack, when set, says why the Remote gave the action back to
	// run here.
	GivenBack string
	// Memory, when not nil, is what memory scheduling (Options.Memory)
	// knew of an action that ran a command here.
	Memory *MemoryInfo
	// Raced, when set, says a local run raced the action's remote run
	// (RemoteDeadlines) and names the side that won, whose run this is:
	// "local" or "remote".
	Raced string
	// CPU is the user and system time of the command the action ran
	// here (0 for a cache hit, an in-process step or a remote run).
	CPU time.Duration
	// SlotWait is how long the action waited, ready (its inputs
	// written), for a slot to run in: a local slot (Options.Jobs, a
	// jobserver token) or a remote one. Waiting for memory is not in it
	// (Memory.Wait).
	SlotWait time.Duration
}

// MemoryInfo is what memory scheduling knew of one command run.
type MemoryInfo struct {
	// Expected is the peak Memory expected, in bytes (0 when it gave no
	// reservation); Peak the measured peak resident set, 0 if unknown.
	Expected, Peak int64
	// Wait is how long Memory held the action back, ready: from its
	// refusal until memory may have come free (a reservation ended, or
	// Memory's Wake), and while it waited to run again alone. Waiting
	// for a slot is not in it (Event.SlotWait).
	Wait time.Duration
	// RetriedAlone says it was killed for want of memory and this is its
	// second run, alone.
	RetriedAlone bool
}

// Trace records the actions a build runs, expanded ones included. Its
// events are written as Chrome trace JSON (WriteChrome), which Perfetto
// and chrome://tracing load.
type Trace struct {
	// Lines, when non-nil, receives one line per finished action (see
	// FormatLine).
	Lines io.Writer

	mu     sync.Mutex
	t0     time.Time
	jobs   int
	events []Event
}

func (t *Trace) start(jobs int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.t0.IsZero() {
		t.t0 = time.Now()
	}
	t.jobs = max(t.jobs, jobs)
}

func (t *Trace) add(ev Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, ev)
	if t.Lines != nil {
		io.WriteString(t.Lines, FormatLine(ev)+"\n")
	}
}

// FormatLine returns the OFFCC_TRACE line of a finished action: "job
// TOOL", then key=value fields, each given where it applies:
//
//	kind=KIND          what the action did (device-compile, backend, ...)
//	offload=SIDE       host-openmp, device-hip, ... (builds that offload)
//	target=TRIPLE      the triple it compiled or linked for (host jobs:
//	                   the host's)
//	arch=ARCH          the offload arch (target ID), for device jobs
//	                   that have one
//	status=N           its exit status, 0 on success
//	wall=TIME          its wall time
//	cpu=TIME           the CPU time of its command here
//	slot_wait=TIME     how long it waited, ready, for a slot (a local
//	                   slot, a jobserver token, a remote slot)
//	cache=STATUS       hit, miss or uncacheable:_REASON (with a cache)
//	worker=NAME        the farm worker it ran on
//	local="REASON"     why the farm gave it back to run here
//	raced=SIDE         a raced action: the side that won (local, remote)
//	mem_expected=SIZE  under memory scheduling, a command run here: its
//	mem_peak=SIZE      expected and measured peak, and how long the
//	mem_wait=TIME      memory governor held it back
//	retried_alone=true it ran again alone, killed for want of memory
//
// Values have no spaces except local's, which is quoted (Go syntax).
func FormatLine(ev Event) string {
	a := ev.Action
	var b strings.Builder
	b.WriteString("job " + a.ToolName())
	field := func(key, value string) {
		b.WriteString(" " + key + "=" + value)
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	field("kind", a.Kind.String())
	if side := a.SideName(); side != "" {
		field("offload", side)
	}
	if a.Target.Triple != "" {
		field("target", a.Target.Triple)
	}
	if a.Target.Arch != "" {
		field("arch", a.Target.Arch)
	}
	field("status", fmt.Sprint(ev.Code))
	field("wall", ms(ev.End.Sub(ev.Start)))
	if ev.CPU > 0 {
		field("cpu", ms(ev.CPU))
	}
	field("slot_wait", ms(ev.SlotWait))
	if ev.Cache != "" {
		field("cache", strings.ReplaceAll(ev.Cache, " ", "_"))
	}
	if ev.Remote != nil {
		field("worker", ev.Remote.Worker)
	}
	if ev.GivenBack != "" {
		field("local", fmt.Sprintf("%q", ev.GivenBack))
	}
	if ev.Raced != "" {
		field("raced", ev.Raced)
	}
	if m := ev.Memory; m != nil {
		field("mem_expected", mib(m.Expected))
		field("mem_peak", mib(m.Peak))
		field("mem_wait", ms(m.Wait))
		if m.RetriedAlone {
			field("retried_alone", "true")
		}
	}
	return b.String()
}

// mib spells a size in bytes in whole MiB, as "260MiB".
func mib(b int64) string {
	return fmt.Sprintf("%dMiB", (b+1<<19)>>20)
}

// Events returns the recorded events in the order the actions finished.
func (t *Trace) Events() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Event(nil), t.events...)
}

// chromeEvent is one entry of the Chrome trace format's traceEvents.
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   int64          `json:"ts"`
	Dur  *int64         `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteChrome writes the trace in the Chrome trace event format: one
// complete ("X") event per action, on the thread of its slot, with the
// fields of its FormatLine as arguments (target, arch, status,
// slot_wait_ms, mem_wait_ms, ...; times in milliseconds) and its command,
// inputs (discovered ones included) and outputs. Times are microseconds
// from the build's start.
func (t *Trace) WriteChrome(w io.Writer, process string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	evs := []chromeEvent{{Name: "process_name", Ph: "M", Pid: 1, Args: map[string]any{"name": process}}}
	slots := t.jobs
	for _, ev := range t.events {
		slots = max(slots, ev.Slot+1)
	}
	for s := 0; s < slots; s++ {
		evs = append(evs, chromeEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: s, Args: map[string]any{"name": fmt.Sprintf("slot %d", s)}})
	}
	// Remote runs go on one thread per worker, after the slots.
	workers := map[string]int{}
	for _, ev := range t.events {
		if ev.Remote == nil {
			continue
		}
		if _, ok := workers[ev.Remote.Worker]; !ok {
			tid := slots + len(workers)
			workers[ev.Remote.Worker] = tid
			evs = append(evs, chromeEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: tid, Args: map[string]any{"name": "worker " + ev.Remote.Worker}})
		}
	}
	for _, ev := range t.events {
		a := ev.Action
		dur := ev.End.Sub(ev.Start).Microseconds()
		args := map[string]any{
			"kind":    a.Kind.String(),
			"tool":    a.ToolName(),
			"inputs":  append(paths(a.AllInputs()), a.Discovered...),
			"outputs": paths(a.Outputs),
			"status":  ev.Code,
			// Waiting for memory is mem_wait_ms.
			"slot_wait_ms": ev.SlotWait.Milliseconds(),
		}
		if a.Offload != None {
			args["offload"] = a.SideName()
		}
		if ev.Cache != "" {
			args["cache"] = ev.Cache
		}
		if a.Target.Triple != "" {
			args["target"] = a.Target.Triple
		}
		if a.Target.Arch != "" {
			args["arch"] = a.Target.Arch
		}
		if a.Command != nil {
			args["command"] = a.Command
		}
		if ev.Err != nil {
			args["error"] = ev.Err.Error()
		}
		if ev.CPU > 0 {
			args["cpu_ms"] = ev.CPU.Milliseconds()
		}
		if m := ev.Memory; m != nil {
			args["mem_expected"] = m.Expected
			args["mem_peak"] = m.Peak
			args["mem_wait_ms"] = m.Wait.Milliseconds()
			if m.RetriedAlone {
				args["retried_alone"] = true
			}
		}
		tid := ev.Slot
		if ev.GivenBack != "" {
			args["given_back"] = ev.GivenBack
		}
		if ev.Raced != "" {
			args["raced"] = ev.Raced
		}
		if r := ev.Remote; r != nil {
			tid = workers[r.Worker]
			args["worker"] = r.Worker
			args["bytes_up"] = r.BytesUp
			args["bytes_down"] = r.BytesDown
			args["transfer_ms"] = r.Transfer.Milliseconds()
			args["queue_ms"] = r.Queue.Milliseconds()
			args["run_ms"] = r.Run.Milliseconds()
		}
		evs = append(evs, chromeEvent{
			Name: eventName(a), Cat: a.Kind.String(), Ph: "X",
			Ts: ev.Start.Sub(t.t0).Microseconds(), Dur: &dur,
			Pid: 1, Tid: tid, Args: args,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(struct {
		TraceEvents     []chromeEvent `json:"traceEvents"`
		DisplayTimeUnit string        `json:"displayTimeUnit"`
	}{evs, "ms"})
}

// eventName names an action in a trace viewer: kind, target and the file
// it works on.
func eventName(a *Action) string {
	s := a.Kind.String()
	switch {
	case a.Target.Arch != "":
		s += " " + a.Target.Arch
	case a.Device:
		s += " " + a.Target.Triple
	}
	var f *Artifact
	switch {
	case len(a.Inputs) > 0 && a.Inputs[0].Producer() == nil:
		f = a.Inputs[0]
	case len(a.Outputs) > 0:
		f = a.Outputs[0]
	}
	if f != nil {
		s += " " + filepath.Base(f.Path)
	}
	return s
}

func paths(fs []*Artifact) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out
}

// WriteTotals writes where a build's CPU time went, after it: one line
// per tool whose commands ran here, "cpu TOOL jobs=N cpu=T" (the tools
// sorted by name), then "cpu offcc self=T queries=T total=T": offcc's
// own process (self), the commands it ran that are no action (clang -###,
// dependency scans: children less the actions' commands; a run that was
// not kept, such as a local run that lost a race, counts there too), and
// all together. self and children are the build's getrusage(2) figures for
// RUSAGE_SELF and RUSAGE_CHILDREN.
func (t *Trace) WriteTotals(w io.Writer, self, children time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	type total struct {
		jobs int
		cpu  time.Duration
	}
	byTool := map[string]*total{}
	var jobs time.Duration
	for _, ev := range t.events {
		if ev.CPU <= 0 {
			continue
		}
		tt := byTool[ev.Action.ToolName()]
		if tt == nil {
			tt = &total{}
			byTool[ev.Action.ToolName()] = tt
		}
		tt.jobs++
		tt.cpu += ev.CPU
		jobs += ev.CPU
	}
	tools := make([]string, 0, len(byTool))
	for name := range byTool {
		tools = append(tools, name)
	}
	sort.Strings(tools)
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	for _, name := range tools {
		fmt.Fprintf(w, "cpu %s jobs=%d cpu=%s\n", name, byTool[name].jobs, ms(byTool[name].cpu))
	}
	fmt.Fprintf(w, "cpu offcc self=%s queries=%s total=%s\n", ms(self), ms(max(children-jobs, 0)), ms(self+children))
}
