// Package memsched is the memory governor of one build: it implements
// actions.Memory, admitting each local job that runs a process only while
// the expected peaks of the running jobs (this build's and, through a
// ledger, other offcc processes') plus its own fit the memory budget, and
// it learns each job's peak for the next build.
//
// A job's expected peak is its learned peak (the build cache's store)
// with a margin; else the largest peak seen of a sibling in this build
// (the same kind of job on the same source for another target); else a
// default for its kind. Running jobs are sampled, so a reservation grows
// when a job uses more than expected, and a job killed by the OOM killer
// is run again alone, once, with its learned peak raised.
package memsched

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/config"
	"github.com/offcc/offcc/internal/membudget"
)

// Budget is what the governor reads of the machine's memory while a build
// runs (membudget's).
type Budget interface {
	// Headroom returns the memory free now for new jobs, below 0 when it
	// cannot be read.
	Headroom() int64
	// OOMKills returns how many processes the OOM killer has killed in
	// the process's memory cgroup; ok is false without a cgroup count.
	OOMKills() (n int, ok bool)
}

// Ledger is the budget shared with the other offcc processes that use the
// same memory (membudget's ledger).
type Ledger interface {
	// Reserve records bytes for this process when everyone's reservations
	// plus bytes fit in budget, or whatever they come to when force. When
	// the shared file cannot be used it answers for this process's
	// reservations alone, and says why in err.
	Reserve(bytes, budget int64, force bool) (ok bool, err error)
	// Release gives back bytes this process reserved.
	Release(bytes int64) error
	// Others returns what the other live processes have reserved.
	Others() int64
}

// Peaks is the store of learned peaks (the build cache's).
type Peaks interface {
	// Peak returns the peak learned for key.
	Peak(key string) (bytes int64, ok bool)
	// RecordPeak records a measured peak for key.
	RecordPeak(key string, bytes int64)
	// Time returns the wall time learned for key.
	Time(key string) (d time.Duration, ok bool)
	// RecordTime records the wall time of a successful run for key.
	RecordTime(key string, d time.Duration)
	// RecordRun records a successful run's peak and wall time for key
	// at once (one write where RecordPeak and RecordTime take two).
	RecordRun(key string, bytes int64, d time.Duration)
}

// Config is what New needs to govern one build.
type Config struct {
	// Limit is the memory budget in bytes (> 0).
	Limit int64
	// Source says where Limit comes from, for -v ("cgroup /ci
	// memory.limit_in_bytes", "--offload-mem").
	Source string
	// Budget, when non-nil, is read for headroom and OOM kills.
	Budget Budget
	// PeakOf, when non-nil, samples the peak resident memory of a
	// running process (membudget.PeakOf).
	PeakOf func(pid int) (bytes int64, ok bool)
	// Ledger, when non-nil, is shared with other offcc processes; nil
	// keeps the budget to this build.
	Ledger Ledger
	// Peaks, when non-nil, holds the peaks learned in earlier builds.
	Peaks Peaks
	// WorkDir is the directory source paths in keys are relative to.
	WorkDir string
	// TempDir is the build's temporary directory: jobs whose source lies
	// there have names that change from build to build, so no peak is
	// learned for them.
	TempDir string
	// SampleEvery is how often running jobs are sampled (0: 100 ms).
	SampleEvery time.Duration
}

// Margin is the factor a learned or sibling peak is raised by: the same
// job's peak varies by a few percent from run to run, and the store
// already leans high (it lets a low run lower a high one only slowly).
// With 10%, two 260 MB compiles still fit in 600 MB.
const Margin = 1.10

// The defaults for a job with neither a learned peak nor a sibling seen.
// A clang compile of a large TU, a device link with LTO and ptxas on a
// big kernel take hundreds of MiB; 512 MiB lets a first build under a
// small limit start with one such job and run more as soon as the first
// sibling has measured what they really take. The small tools (bundlers,
// packagers, the assembler) stay well under 128 MiB.
const (
	DefaultLarge int64 = 512 << 20
	DefaultSmall int64 = 128 << 20
)

// ParseLimit reads --offload-mem= or offload_mem: a size as config's
// (600M; 0: no explicit limit) or "off", which turns memory scheduling
// off.
func ParseLimit(v string) (bytes int64, off bool, err error) {
	if strings.EqualFold(strings.TrimSpace(v), "off") {
		return 0, true, nil
	}
	n, err := config.ParseSize(v)
	if err != nil {
		return 0, false, fmt.Errorf("invalid memory size '%s': expected a size such as 600M or 'off'", v)
	}
	return n, false, nil
}

// Governor is the actions.Memory of one build. Close it when the build
// has ended.
type Governor struct {
	cfg  Config
	wake chan struct{}

	mu       sync.Mutex
	running  map[*reservation]bool
	seen     map[string]int64           // sibling key → largest peak of a finished job
	seenTime map[string]time.Duration   // sibling key → longest successful run
	sibKeys  map[string]map[string]bool // sibling key → the store keys seen
	retried  map[*actions.Action]bool
	held     bool // a Reserve was refused since the last wake
	sampling bool // the sampling goroutine runs
	stop     chan struct{}
	done     chan struct{}
	closed   bool
	lastUse  int64 // this build's sampled use at the last tick
}

// New returns the governor of a build under cfg.
func New(cfg Config) *Governor {
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = 100 * time.Millisecond
	}
	if cfg.Ledger == nil {
		cfg.Ledger = &localLedger{}
	}
	return &Governor{
		cfg:      cfg,
		wake:     make(chan struct{}, 1),
		running:  map[*reservation]bool{},
		seen:     map[string]int64{},
		seenTime: map[string]time.Duration{},
		sibKeys:  map[string]map[string]bool{},
		retried:  map[*actions.Action]bool{},
		stop:     make(chan struct{}),
	}
}

// Note is the line -v prints when the build starts (without "offcc: note: ").
func (g *Governor) Note() string {
	return fmt.Sprintf("memory budget %s (%s); device jobs admitted by expected peak", membudget.FormatSize(g.cfg.Limit), g.cfg.Source)
}

// Wake implements actions.Memory: while actions are held, it receives
// every sampling period, when other processes' jobs or this build's
// sampled use may have left room.
func (g *Governor) Wake() <-chan struct{} { return g.wake }

// Reserve implements actions.Memory.
func (g *Governor) Reserve(a *actions.Action, running int) (actions.Reservation, bool) {
	if !runsProcess(a) {
		return noReservation{}, true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key, sib := g.keys(a)
	expected := g.expect(a, key, sib)
	if running > 0 {
		if g.cfg.Budget != nil {
			if h := g.cfg.Budget.Headroom(); h >= 0 && expected+g.outstanding() > h {
				g.hold()
				return nil, false
			}
		}
		// A ledger that cannot be used answers for this process alone:
		// it never fails a build.
		if ok, _ := g.cfg.Ledger.Reserve(expected, g.cfg.Limit, false); !ok {
			g.hold()
			return nil, false
		}
	} else if ok, _ := g.cfg.Ledger.Reserve(expected, g.cfg.Limit, false); !ok {
		// Nothing of this build runs, but other offcc processes hold
		// the budget (make -jN): wait for theirs to end rather than
		// start a job the OOM killer takes, unless this job would not
		// fit even alone, or theirs are gone.
		if g.cfg.Ledger.Others() > 0 && expected <= g.cfg.Limit {
			g.hold()
			return nil, false
		}
		g.cfg.Ledger.Reserve(expected, g.cfg.Limit, true)
	}
	r := &reservation{g: g, a: a, key: key, sib: sib, expected: expected, reserved: expected}
	if g.cfg.Budget != nil {
		r.kills, r.killsOK = g.cfg.Budget.OOMKills()
	}
	g.running[r] = true
	return r, true
}

// Expect returns the peak a is expected to reach, in bytes, without
// reserving it: for a job sent to the build farm, whose worker admits it
// by that peak. 0 for an action that runs no process.
func (g *Governor) Expect(a *actions.Action) int64 {
	if !runsProcess(a) {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key, sib := g.keys(a)
	return g.expect(a, key, sib)
}

// Learn records the peak a reached where it ran elsewhere (a farm
// worker's measurement), as a finished local run's is recorded.
func (g *Governor) Learn(a *actions.Action, peak int64) {
	if !runsProcess(a) || peak <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key, sib := g.keys(a)
	g.seen[sib] = max(g.seen[sib], peak)
	if key != "" && g.cfg.Peaks != nil {
		g.cfg.Peaks.RecordPeak(key, peak)
	}
}

// ExpectTime returns how long a is expected to run, 0 when nothing is
// known: the time learned for it in earlier builds, else the longest a
// sibling took in this one (another arch of the same source).
func (g *Governor) ExpectTime(a *actions.Action) time.Duration {
	if !runsProcess(a) {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key, sib := g.keys(a)
	if key != "" && g.cfg.Peaks != nil {
		if d, ok := g.cfg.Peaks.Time(key); ok && d > 0 {
			return d
		}
	}
	return g.seenTime[sib]
}

// LearnTime records the wall time of a successful run of a elsewhere (a
// farm worker's run), as a finished local run's is recorded.
func (g *Governor) LearnTime(a *actions.Action, d time.Duration) {
	if !runsProcess(a) || d <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.learnTime(a, d)
}

// learnTime records d for a. g.mu is held.
func (g *Governor) learnTime(a *actions.Action, d time.Duration) {
	key, sib := g.keys(a)
	g.seenTime[sib] = max(g.seenTime[sib], d)
	if key != "" && g.cfg.Peaks != nil {
		g.cfg.Peaks.RecordTime(key, d)
	}
}

// Close stops sampling and gives back what is still reserved.
func (g *Governor) Close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	close(g.stop)
	done := g.done
	for r := range g.running {
		g.cfg.Ledger.Release(r.reserved)
		delete(g.running, r)
	}
	g.mu.Unlock()
	if done != nil {
		<-done
	}
}

// hold notes a refusal and makes sure a wake will come. g.mu is held.
func (g *Governor) hold() {
	g.held = true
	g.startSampling()
}

// startSampling starts the sampling goroutine unless it runs. g.mu is
// held.
func (g *Governor) startSampling() {
	if g.sampling || g.closed {
		return
	}
	g.sampling = true
	g.done = make(chan struct{})
	go g.sample(g.done)
}

// sample runs while jobs run or are held: it samples the running jobs,
// grows the reservations of those above their expectation, and wakes the
// executor when actions are held.
func (g *Governor) sample(done chan struct{}) {
	defer close(done)
	t := time.NewTicker(g.cfg.SampleEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		g.mu.Lock()
		var use int64
		for r := range g.running {
			if r.pid > 0 && g.cfg.PeakOf != nil {
				if p, ok := g.cfg.PeakOf(r.pid); ok && p > r.sampled {
					r.sampled = p
				}
			}
			use += r.sampled
			if r.sampled > r.reserved {
				g.cfg.Ledger.Reserve(r.sampled-r.reserved, g.cfg.Limit, true)
				r.reserved = r.sampled
			}
		}
		g.lastUse = use
		wake := g.held
		g.held = false
		if !wake && len(g.running) == 0 {
			g.sampling = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		if wake {
			select {
			case g.wake <- struct{}{}:
			default:
			}
		}
	}
}

// outstanding is what this build's running jobs have reserved and not yet
// used: memory the headroom does not show as taken. g.mu is held.
func (g *Governor) outstanding() int64 {
	var n int64
	for r := range g.running {
		if d := r.reserved - r.sampled; d > 0 {
			n += d
		}
	}
	return n
}

// expect returns a's expected peak. g.mu is held.
func (g *Governor) expect(a *actions.Action, key, sib string) int64 {
	if key != "" {
		if g.sibKeys[sib] == nil {
			g.sibKeys[sib] = map[string]bool{}
		}
		g.sibKeys[sib][key] = true
		if g.cfg.Peaks != nil {
			if p, ok := g.cfg.Peaks.Peak(key); ok && p > 0 {
				return int64(float64(p) * Margin)
			}
		}
	}
	est := defaultPeak(a.Kind)
	if p, ok := g.seen[sib]; ok && p > 0 {
		est = int64(float64(p) * Margin)
	} else if p := g.learnedSibling(sib, key); p > 0 {
		est = int64(float64(p) * Margin)
	}
	// A sibling still running is a lower bound: it only raises the
	// estimate.
	for r := range g.running {
		if r.sib == sib {
			est = max(est, int64(float64(r.sampled)*Margin))
		}
	}
	return est
}

// learnedSibling returns the largest peak learned for a sibling of the
// job keyed key that this build has asked for (the other archs of a TU
// built before for fewer archs), 0 for none. g.mu is held.
func (g *Governor) learnedSibling(sib, key string) int64 {
	var p int64
	if g.cfg.Peaks != nil {
		for k := range g.sibKeys[sib] {
			if v, ok := g.cfg.Peaks.Peak(k); ok && k != key {
				p = max(p, v)
			}
		}
	}
	return p
}

// defaultPeak is the expected peak of a job of kind k with no history.
func defaultPeak(k actions.Kind) int64 {
	switch k {
	case actions.Preprocess, actions.Assemble, actions.Package, actions.Embed,
		actions.Extract, actions.FatBinary, actions.Wrap, actions.SYCLBIN:
		return DefaultSmall
	}
	return DefaultLarge
}

// runsProcess reports whether a runs an external process, the only jobs
// whose memory is governed.
func runsProcess(a *actions.Action) bool {
	return len(a.Command) > 0 && a.Run == nil && a.Expand == nil
}

// keys returns a's key in the store of learned peaks ("" when its source
// is a temporary whose name changes between builds) and its key among its
// siblings in this build: the tool, the kind, the target and the source
// the job compiles (cache.PeakKey, so that offcc cache stats shows them
// apart). g.mu is held.
func (g *Governor) keys(a *actions.Action) (key, sib string) {
	tool := filepath.Base(a.Command[0])
	src, stable := g.source(a)
	sib = tool + "\t" + a.Kind.String() + "\t" + src
	if !stable {
		return "", sib
	}
	return cache.PeakKey(tool, a.Kind.String(), a.Target.String(), src), sib
}

// source returns the file a's work derives from: its first input, followed
// back through the actions that write it to a file that exists before the
// build, relative to WorkDir where it lies under it. stable is false when
// that file is a temporary.
func (g *Governor) source(a *actions.Action) (path string, stable bool) {
	cur := a
	for range 32 {
		if len(cur.Inputs) == 0 {
			return "", true
		}
		in := cur.Inputs[0]
		if p := in.Producer(); p != nil && p != cur {
			cur = p
			continue
		}
		// A relative path is relative to the build's directory, even in
		// an action that runs in a Dir of its own (see Action.Dir).
		path = in.Path
		if g.cfg.TempDir != "" && filepath.IsAbs(path) && under(path, g.cfg.TempDir) {
			return "", false
		}
		if g.cfg.WorkDir != "" && filepath.IsAbs(path) && under(path, g.cfg.WorkDir) {
			if rel, err := filepath.Rel(g.cfg.WorkDir, path); err == nil {
				path = rel
			}
		}
		return path, true
	}
	return "", false
}

// under reports whether path lies in dir.
func under(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// reservation is one running job's share of the budget.
type reservation struct {
	g        *Governor
	a        *actions.Action
	key, sib string
	expected int64
	kills    int
	killsOK  bool

	// Under g.mu:
	reserved int64 // grows when sampling sees more than expected
	sampled  int64 // the largest sample
	pid      int
	started  time.Time // when its process started
	released bool
}

// Started implements actions.Reservation.
func (r *reservation) Started(pid int) {
	g := r.g
	g.mu.Lock()
	defer g.mu.Unlock()
	r.pid, r.started = pid, time.Now()
	if !r.released {
		g.startSampling()
	}
}

// Expected implements actions.Reservation.
func (r *reservation) Expected() int64 { return r.expected }

// Done implements actions.Reservation: it releases the reservation and
// learns what the job used. A job killed by SIGKILL while the cgroup's
// OOM-kill count rose (or, where there is no count, while this build's
// use was within 10% of the budget) is run again alone, once, and the
// peak learned for it is raised to twice what it was expected to take.
func (r *reservation) Done(u actions.Usage, err error) (retryAlone bool) {
	g := r.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.released {
		return false
	}
	r.released = true
	if g.running[r] {
		delete(g.running, r)
		g.cfg.Ledger.Release(r.reserved)
	}
	measured := max(u.PeakRSS, r.sampled)
	if u.Signaled == int(syscall.SIGKILL) {
		if !g.oomKilled(r, measured) {
			return false // killed by someone: its peak says nothing
		}
		raised := max(measured, 2*r.expected)
		if raised > g.seen[r.sib] {
			g.seen[r.sib] = raised
		}
		if r.key != "" && g.cfg.Peaks != nil {
			g.cfg.Peaks.RecordPeak(r.key, raised)
		}
		if g.retried[r.a] {
			return false
		}
		g.retried[r.a] = true
		return true
	}
	// A failed job stopped early: what it used is no estimate of a run
	// that gets through.
	if err != nil || u.Signaled != 0 || measured <= 0 {
		return false
	}
	g.seen[r.sib] = max(g.seen[r.sib], measured)
	var took time.Duration
	if !r.started.IsZero() {
		took = time.Since(r.started)
		g.seenTime[r.sib] = max(g.seenTime[r.sib], took)
	}
	if r.key != "" && g.cfg.Peaks != nil {
		g.cfg.Peaks.RecordRun(r.key, measured, took)
	}
	return false
}

// oomKilled reports whether r's SIGKILL was the OOM killer's. g.mu is
// held.
func (g *Governor) oomKilled(r *reservation, measured int64) bool {
	if r.killsOK && g.cfg.Budget != nil {
		if n, ok := g.cfg.Budget.OOMKills(); ok {
			return n > r.kills
		}
	}
	near := g.cfg.Limit - g.cfg.Limit/10
	return measured >= near || g.lastUse >= near
}

// noReservation is the reservation of a job that runs no process.
type noReservation struct{}

func (noReservation) Started(int)                    {}
func (noReservation) Done(actions.Usage, error) bool { return false }
func (noReservation) Expected() int64                { return 0 }

// localLedger keeps the budget to this build when there is no shared
// ledger.
type localLedger struct {
	mu       sync.Mutex
	reserved int64
}

func (l *localLedger) Reserve(bytes, budget int64, force bool) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !force && l.reserved+bytes > budget {
		return false, nil
	}
	l.reserved += bytes
	return true, nil
}

func (l *localLedger) Others() int64 { return 0 }

func (l *localLedger) Release(bytes int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserved -= bytes
	return nil
}
