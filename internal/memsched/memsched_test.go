package memsched

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/target"
)

const mib = 1 << 20

// fakeBudget is a machine whose free memory, OOM-kill count and process
// peaks the test sets.
type fakeBudget struct {
	mu       sync.Mutex
	headroom int64 // < 0: unknown
	kills    int
	noKills  bool
	peaks    map[int]int64
}

func (b *fakeBudget) Headroom() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.headroom
}

func (b *fakeBudget) OOMKills() (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.kills, !b.noKills
}

func (b *fakeBudget) PeakOf(pid int) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.peaks[pid]
	return p, ok
}

func (b *fakeBudget) set(f func(b *fakeBudget)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(b)
}

// fakeLedger is a shared ledger where other processes hold others bytes.
type fakeLedger struct {
	mu             sync.Mutex
	others, mine   int64
	reserveCalls   int
	forcedReserves int
}

func (l *fakeLedger) Reserve(bytes, budget int64, force bool) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserveCalls++
	if force {
		l.forcedReserves++
	} else if l.others+l.mine+bytes > budget {
		return false, nil
	}
	l.mine += bytes
	return true, nil
}

func (l *fakeLedger) Release(bytes int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mine -= bytes
	return nil
}

func (l *fakeLedger) Others() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.others
}

func (l *fakeLedger) reserved() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mine
}

// fakePeaks is the store of learned peaks.
type fakePeaks struct {
	mu sync.Mutex
	m  map[string]int64
}

func (p *fakePeaks) Peak(key string) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[key]
	return v, ok
}

func (p *fakePeaks) RecordPeak(key string, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[key] = bytes
}

func (p *fakePeaks) Time(key string) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m["time\t"+key]
	return time.Duration(v), ok
}

func (p *fakePeaks) RecordTime(key string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m["time\t"+key] = int64(d)
}

func (p *fakePeaks) RecordRun(key string, bytes int64, d time.Duration) {
	if bytes > 0 {
		p.RecordPeak(key, bytes)
	}
	if d > 0 {
		p.RecordTime(key, d)
	}
}

func (p *fakePeaks) get(key string) (int64, bool) { return p.Peak(key) }

const wd = "/src/proj"

// deviceCompile is the device compile of wd/src for arch.
func deviceCompile(src, arch string) *actions.Action {
	return &actions.Action{
		Kind: actions.DeviceCompile, Device: true,
		Target:  target.Target{Triple: "amdgcn-amd-amdhsa", Arch: arch},
		Command: []string{"/usr/lib/llvm-22/bin/clang-22", "-cc1", "-triple", "amdgcn-amd-amdhsa"},
		Inputs:  []*actions.Artifact{actions.NewArtifact(filepath.Join(wd, src))},
	}
}

func key(src, arch string) string {
	return "clang-22\tdevice-compile\tamdgcn-amd-amdhsa-" + arch + "\t" + src
}

func newGov(t *testing.T, limit int64, b *fakeBudget, l *fakeLedger, p *fakePeaks) *Governor {
	t.Helper()
	cfg := Config{Limit: limit, Source: "test", WorkDir: wd, TempDir: "/tmp/offcc-1", SampleEvery: 5 * time.Millisecond}
	if b != nil {
		cfg.Budget, cfg.PeakOf = b, b.PeakOf
	}
	if l != nil {
		cfg.Ledger = l
	}
	if p != nil {
		cfg.Peaks = p
	}
	g := New(cfg)
	t.Cleanup(g.Close)
	return g
}

func mustReserve(t *testing.T, g *Governor, a *actions.Action, running int) actions.Reservation {
	t.Helper()
	r, ok := g.Reserve(a, running)
	if !ok {
		t.Fatalf("Reserve(%s, %d) refused; want it admitted", a.Label(), running)
	}
	return r
}

func TestAdmissionSumsExpectedPeaks(t *testing.T) {
	peaks := &fakePeaks{m: map[string]int64{}}
	archs := []string{"gfx906", "gfx90a", "gfx1030", "gfx1100"}
	for _, arch := range archs {
		peaks.m[key("k.c", arch)] = 400 * mib // expected 440 MiB each
	}
	l := &fakeLedger{}
	g := newGov(t, 1000*mib, nil, l, peaks)
	r0 := mustReserve(t, g, deviceCompile("k.c", archs[0]), 0)
	mustReserve(t, g, deviceCompile("k.c", archs[1]), 1)
	if _, ok := g.Reserve(deviceCompile("k.c", archs[2]), 2); ok {
		t.Fatalf("a third 440 MiB job admitted beside two in 1000 MiB")
	}
	if got := l.reserved(); got != 880*mib {
		t.Errorf("ledger holds %d MiB; want 880", got/mib)
	}
	r0.Done(actions.Usage{PeakRSS: 380 * mib}, nil)
	mustReserve(t, g, deviceCompile("k.c", archs[2]), 1)

	// Other offcc processes' share counts.
	l2 := &fakeLedger{others: 200 * mib}
	g2 := newGov(t, 1000*mib, nil, l2, peaks)
	mustReserve(t, g2, deviceCompile("k.c", archs[0]), 0)
	if _, ok := g2.Reserve(deviceCompile("k.c", archs[1]), 1); ok {
		t.Errorf("admitted 440+440 MiB beside 200 MiB of other processes in 1000 MiB")
	}
}

// TestNothingRunningAdmitsUnlessOthersHoldTheBudget: with none of its own
// jobs running, a build waits while other offcc processes (make -jN) hold
// the budget its job would fit in alone, and is woken to try again; a job
// that fits in no budget, or a budget nobody else holds, is admitted with
// force (the build must make progress).
func TestNothingRunningAdmitsUnlessOthersHoldTheBudget(t *testing.T) {
	l := &fakeLedger{others: 900 * mib}
	g := newGov(t, 1000*mib, &fakeBudget{headroom: 10 * mib}, l, nil)
	if _, ok := g.Reserve(deviceCompile("k.c", "gfx90a"), 0); ok {
		t.Fatalf("a 512 MiB job admitted while other processes hold 900 of 1000 MiB")
	}
	select {
	case <-g.Wake():
	case <-time.After(5 * time.Second):
		t.Fatal("no Wake while a job is held for other processes")
	}
	l.mu.Lock()
	l.others = 0
	l.mu.Unlock()
	r := mustReserve(t, g, deviceCompile("k.c", "gfx90a"), 0)
	r.Done(actions.Usage{PeakRSS: 100 * mib}, nil)

	// Larger than the whole budget: it runs (alone), others or not.
	l = &fakeLedger{others: 900 * mib}
	g = newGov(t, 300*mib, &fakeBudget{headroom: 10 * mib}, l, nil)
	r = mustReserve(t, g, deviceCompile("k.c", "gfx90a"), 0)
	if l.forcedReserves != 1 || l.reserved() != DefaultLarge {
		t.Errorf("the lone job is not recorded in the ledger with force: %d forced, %d MiB", l.forcedReserves, l.reserved()/mib)
	}
	r.Done(actions.Usage{PeakRSS: 100 * mib}, nil)
	if l.reserved() != 0 {
		t.Errorf("ledger still holds %d MiB after Done", l.reserved()/mib)
	}
}

func TestHeadroomCountsMemoryOutsideOffcc(t *testing.T) {
	peaks := &fakePeaks{m: map[string]int64{key("k.c", "gfx906"): 200 * mib, key("k.c", "gfx90a"): 200 * mib}}
	b := &fakeBudget{headroom: 300 * mib}
	g := newGov(t, 4000*mib, b, nil, peaks)
	mustReserve(t, g, deviceCompile("k.c", "gfx906"), 0) // 220 MiB reserved, none used yet
	if _, ok := g.Reserve(deviceCompile("k.c", "gfx90a"), 1); ok {
		t.Fatalf("admitted 220 MiB with 300 MiB free of which 220 are promised")
	}
	b.set(func(b *fakeBudget) { b.headroom = 500 * mib })
	mustReserve(t, g, deviceCompile("k.c", "gfx90a"), 1)
}

func TestDefaultsAndInProcessActions(t *testing.T) {
	g := newGov(t, 8000*mib, nil, nil, &fakePeaks{m: map[string]int64{}})
	if got := mustReserve(t, g, deviceCompile("k.c", "gfx90a"), 0).Expected(); got != 512*mib {
		t.Errorf("device compile with no history expects %d MiB; want 512", got/mib)
	}
	pkg := &actions.Action{Kind: actions.Package, Command: []string{"/usr/bin/llvm-offload-binary", "-o", "x"},
		Inputs: []*actions.Artifact{actions.NewArtifact("/src/proj/a.o")}}
	if got := mustReserve(t, g, pkg, 1).Expected(); got != 128*mib {
		t.Errorf("packager expects %d MiB; want 128", got/mib)
	}
	step := &actions.Action{Kind: actions.Embed, Command: []string{"offcc", "offload-embed"}, Run: func(context.Context, *actions.Shell) error { return nil }}
	r, ok := g.Reserve(step, 50)
	if !ok || r.Expected() != 0 {
		t.Errorf("in-process step: admitted %v, expected %d; want admitted with nothing reserved", ok, r.Expected())
	}
}

func TestLearnedPeakWithMarginAndKey(t *testing.T) {
	peaks := &fakePeaks{m: map[string]int64{key("src/k.c", "gfx90a"): 260 * mib}}
	g := newGov(t, 600*mib, nil, nil, peaks)
	r := mustReserve(t, g, deviceCompile("src/k.c", "gfx90a"), 0)
	if got, want := r.Expected(), withMargin(260*mib); got != want {
		t.Errorf("expected %d; want learned 260 MiB × %.2f = %d", got, Margin, want)
	}
	// Two such jobs fit in 600 MiB.
	mustReserve(t, g, deviceCompile("src/k.c", "gfx90a"), 1)
	r.Done(actions.Usage{PeakRSS: 250 * mib}, nil)
	if got, _ := peaks.get(key("src/k.c", "gfx90a")); got != 250*mib {
		t.Errorf("learned %d MiB under %q; want the measured 250", got/mib, key("src/k.c", "gfx90a"))
	}
	// A job that failed teaches nothing.
	r2 := mustReserve(t, g, deviceCompile("src/k.c", "gfx1030"), 0)
	r2.Done(actions.Usage{PeakRSS: 5 * mib}, errors.New("exit status 1"))
	if v, ok := peaks.get(key("src/k.c", "gfx1030")); ok {
		t.Errorf("a failed compile's peak was learned: %d", v)
	}
	// A source in the build's temporary directory has no stable key.
	tmp := deviceCompile("x", "gfx90a")
	tmp.Inputs[0] = actions.NewArtifact("/tmp/offcc-1/k-3812f3.bc")
	mustReserve(t, g, tmp, 0).Done(actions.Usage{PeakRSS: 70 * mib}, nil)
	if len(peaks.m) != 1 {
		t.Errorf("learned a peak for a temporary: %v", peaks.m)
	}
}

func TestSiblingsEstimateEachOther(t *testing.T) {
	g := newGov(t, 600*mib, nil, nil, &fakePeaks{m: map[string]int64{}})
	r := mustReserve(t, g, deviceCompile("k.c", "gfx906"), 0)
	if got := r.Expected(); got != DefaultLarge {
		t.Fatalf("first arch expects %d MiB; want the default", got/mib)
	}
	if _, ok := g.Reserve(deviceCompile("k.c", "gfx90a"), 1); ok {
		t.Fatalf("second arch admitted at the 512 MiB default in 600 MiB")
	}
	r.Done(actions.Usage{PeakRSS: 260 * mib}, nil)
	a := mustReserve(t, g, deviceCompile("k.c", "gfx90a"), 0)
	b := mustReserve(t, g, deviceCompile("k.c", "gfx1030"), 1)
	if want := withMargin(260 * mib); a.Expected() != want || b.Expected() != want {
		t.Errorf("siblings expect %d and %d; want 260 MiB × margin = %d", a.Expected(), b.Expected(), want)
	}
	// Another source is no sibling.
	if got := mustReserve(t, g, deviceCompile("other.c", "gfx90a"), 0).Expected(); got != DefaultLarge {
		t.Errorf("another source expects %d MiB; want the default", got/mib)
	}
}

func TestNewArchEstimatedFromLearnedSibling(t *testing.T) {
	peaks := &fakePeaks{m: map[string]int64{key("k.c", "gfx906"): 200 * mib}}
	g := newGov(t, 600*mib, nil, nil, peaks)
	mustReserve(t, g, deviceCompile("k.c", "gfx906"), 0)
	if got := mustReserve(t, g, deviceCompile("k.c", "gfx1100"), 1).Expected(); got != withMargin(200*mib) {
		t.Errorf("an arch new to the store expects %d MiB beside one learned at 200; want 220", got/mib)
	}
}

func TestOOMKillRetriedAloneOnceWithRaisedPeak(t *testing.T) {
	peaks := &fakePeaks{m: map[string]int64{key("k.c", "gfx90a"): 100 * mib}}
	b := &fakeBudget{headroom: -1}
	g := newGov(t, 600*mib, b, nil, peaks)
	a := deviceCompile("k.c", "gfx90a")
	r := mustReserve(t, g, a, 0)
	b.set(func(b *fakeBudget) { b.kills++ })
	if !r.Done(actions.Usage{PeakRSS: 150 * mib, Signaled: 9}, errors.New("signal: killed")) {
		t.Fatalf("an OOM-killed job is not retried alone")
	}
	if got, _ := peaks.get(key("k.c", "gfx90a")); got != 2*withMargin(100*mib) {
		want := 2 * withMargin(100*mib)
		t.Errorf("raised peak %d; want twice the expected, %d", got, want)
	}
	r = mustReserve(t, g, a, 0)
	b.set(func(b *fakeBudget) { b.kills++ })
	if r.Done(actions.Usage{PeakRSS: 500 * mib, Signaled: 9}, errors.New("signal: killed")) {
		t.Errorf("an action was retried alone twice")
	}
}

func TestSIGKILLWithoutOOMIsNotRetried(t *testing.T) {
	peaks := &fakePeaks{m: map[string]int64{}}
	b := &fakeBudget{headroom: -1}
	g := newGov(t, 600*mib, b, nil, peaks)
	r := mustReserve(t, g, deviceCompile("k.c", "gfx90a"), 0)
	if r.Done(actions.Usage{PeakRSS: 50 * mib, Signaled: 9}, errors.New("signal: killed")) {
		t.Errorf("a SIGKILL with no OOM kill counted is retried")
	}
	if len(peaks.m) != 0 {
		t.Errorf("a killed job's peak was learned: %v", peaks.m)
	}
	// Without a cgroup count, a kill near the budget is the OOM killer's.
	b.set(func(b *fakeBudget) { b.noKills = true })
	r = mustReserve(t, g, deviceCompile("k.c", "gfx1030"), 0)
	if r.Done(actions.Usage{PeakRSS: 50 * mib, Signaled: 9}, errors.New("signal: killed")) {
		t.Errorf("a SIGKILL far from the budget, with no cgroup count, is retried")
	}
	r = mustReserve(t, g, deviceCompile("k.c", "gfx1100"), 0)
	if !r.Done(actions.Usage{PeakRSS: 580 * mib, Signaled: 9}, errors.New("signal: killed")) {
		t.Errorf("a SIGKILL at 580 of 600 MiB, with no cgroup count, is not retried")
	}
}

func TestSamplingGrowsReservationAndWakes(t *testing.T) {
	peaks := &fakePeaks{m: map[string]int64{key("k.c", "gfx906"): 100 * mib, key("k.c", "gfx90a"): 100 * mib,
		key("k.c", "gfx1030"): 100 * mib}}
	b := &fakeBudget{headroom: -1, peaks: map[int]int64{}}
	l := &fakeLedger{}
	g := newGov(t, 400*mib, b, l, peaks)
	r := mustReserve(t, g, deviceCompile("k.c", "gfx906"), 0)
	r.Started(4242)
	b.set(func(b *fakeBudget) { b.peaks[4242] = 300 * mib })
	deadline := time.Now().Add(5 * time.Second)
	for l.reserved() < 300*mib {
		if time.Now().After(deadline) {
			t.Fatalf("reservation did not grow to the sampled 300 MiB: %d MiB", l.reserved()/mib)
		}
		time.Sleep(time.Millisecond)
	}
	// 300 + 110 > 400: held, and woken while held.
	if _, ok := g.Reserve(deviceCompile("k.c", "gfx90a"), 1); ok {
		t.Fatalf("admitted beside a job sampled at 300 MiB of 400")
	}
	select {
	case <-g.Wake():
	case <-time.After(5 * time.Second):
		t.Fatalf("no wake while a job was held")
	}
	r.Done(actions.Usage{PeakRSS: 310 * mib}, nil)
	if l.reserved() != 0 {
		t.Errorf("ledger holds %d MiB after the grown job ended", l.reserved()/mib)
	}
	// The running sibling's samples raise, never lower, the estimate.
	if got := mustReserve(t, g, deviceCompile("k.c", "gfx1030"), 0).Expected(); got != 110*mib {
		t.Errorf("learned job expects %d MiB; want 110", got/mib)
	}
}

func TestParseLimitAndOff(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		off  bool
	}{{"600M", 600 * mib, false}, {"1G", 1024 * mib, false}, {"0", 0, false}, {"off", 0, true}, {"OFF", 0, true}} {
		n, off, err := ParseLimit(tc.in)
		if err != nil || n != tc.want || off != tc.off {
			t.Errorf("ParseLimit(%q) = %d, %v, %v; want %d, %v", tc.in, n, off, err, tc.want, tc.off)
		}
	}
	if _, _, err := ParseLimit("lots"); err == nil || err.Error() != "invalid memory size 'lots': expected a size such as 600M or 'off'" {
		t.Errorf("ParseLimit(lots): %v", err)
	}
}

func TestNote(t *testing.T) {
	g := New(Config{Limit: 600 * mib, Source: "cgroup /ci memory.limit_in_bytes"})
	defer g.Close()
	if got, want := g.Note(), "memory budget 600 MiB (cgroup /ci memory.limit_in_bytes); device jobs admitted by expected peak"; got != want {
		t.Errorf("Note() = %q\nwant %q", got, want)
	}
}

func withMargin(p int64) int64 { return int64(float64(p) * Margin) }

// TestExpectAndLearnForTheFarm: a job sent to the farm is told the peak a
// local run would be admitted by, and the peak its worker measured is
// learned as a local run's is, for it and its siblings.
func TestExpectAndLearnForTheFarm(t *testing.T) {
	peaks := &fakePeaks{m: map[string]int64{}}
	g := newGov(t, 600*mib, nil, nil, peaks)
	a := deviceCompile("k.c", "gfx906")
	if got := g.Expect(a); got != DefaultLarge {
		t.Errorf("Expect before anything is known: %d MiB, want the default", got/mib)
	}
	g.Learn(a, 200*mib)
	if got, _ := peaks.get(key("k.c", "gfx906")); got != 200*mib {
		t.Errorf("learned %d MiB from the worker, want 200", got/mib)
	}
	learned := int64(200 * mib)
	want := int64(float64(learned) * Margin)
	if got := g.Expect(deviceCompile("k.c", "gfx90a")); got != want {
		t.Errorf("a sibling expects %d MiB, want %d", got/mib, want/mib)
	}
	if r := mustReserve(t, g, a, 0); r.Expected() != want {
		t.Errorf("reserved %d MiB after learning 200", r.Expected()/mib)
	}
}
