package actions

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/target"
)

// TestFormatLine: an OFFCC_TRACE line names what ran (kind, offload side,
// target, arch) and labels every value, the exit status included.
func TestFormatLine(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hip := &Action{Kind: DeviceCompile, Offload: HIP, Device: true, Target: target.Target{Triple: "amdgcn-amd-amdhsa", Arch: "gfx90a:xnack+"}}
	host := &Action{Kind: HostFrontend, Offload: OpenMP, Target: target.Target{Triple: "x86_64-pc-linux-gnu"}}
	omp := &Action{Kind: DeviceCompile, Offload: OpenMP, Device: true, Target: target.Target{Triple: "x86_64-pc-linux-gnu"}}
	plain := &Action{Kind: Compile, Target: target.Target{Triple: "x86_64-pc-linux-gnu"}}
	wrap := &Action{Kind: Wrap, Offload: CUDA}
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{Event{Action: hip, Start: t0, End: t0.Add(1582 * time.Millisecond), Code: 1, CPU: 1500 * time.Millisecond, SlotWait: 20 * time.Millisecond, Cache: "miss",
			Memory: &MemoryInfo{Expected: 300 << 20, Peak: 280 << 20, Wait: 3 * time.Second, RetriedAlone: true}},
			"job clang kind=device-compile offload=device-hip target=amdgcn-amd-amdhsa arch=gfx90a:xnack+ status=1 wall=1.582s cpu=1.5s slot_wait=20ms cache=miss mem_expected=300MiB mem_peak=280MiB mem_wait=3s retried_alone=true"},
		{Event{Action: host, Start: t0, End: t0.Add(2 * time.Millisecond), Cache: "uncacheable: reads /dev/stdin"},
			"job clang kind=host-frontend offload=host-openmp target=x86_64-pc-linux-gnu status=0 wall=2ms slot_wait=0s cache=uncacheable:_reads_/dev/stdin"},
		{Event{Action: omp, Start: t0, End: t0.Add(time.Second), Remote: &RemoteInfo{Worker: "w1"}, Raced: "remote", SlotWait: time.Millisecond},
			"job clang kind=device-compile offload=device-openmp target=x86_64-pc-linux-gnu status=0 wall=1s slot_wait=1ms worker=w1 raced=remote"},
		{Event{Action: plain, Start: t0, End: t0.Add(time.Second), Code: 134, GivenBack: `no "lld" here`},
			`job clang kind=compile target=x86_64-pc-linux-gnu status=134 wall=1s slot_wait=0s local="no \"lld\" here"`},
		{Event{Action: wrap, Start: t0, End: t0},
			"job Offload::Wrapper kind=wrap offload=host-cuda status=0 wall=0s slot_wait=0s"},
	} {
		if got := FormatLine(tc.ev); got != tc.want {
			t.Errorf("FormatLine:\n got %s\nwant %s", got, tc.want)
		}
	}
}

// traceField returns the value of key in an OFFCC_TRACE line, "" when it
// has none.
func traceField(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// waitsBuild runs two blocking actions, a (cost 2) and b (cost 1), under
// Options.Memory m, with jobs slots and, when cache is set, a cache that
// misses. It lets the first that m admits run for hold, then the other,
// and returns the trace's events of the first and the second and its
// lines. (With a cache the lookups run at once, and either may miss
// first.)
func waitsBuild(t *testing.T, jobs int, m *fakeMemory, cache bool, hold time.Duration) (first, second Event, lines string) {
	t.Helper()
	dir := t.TempDir()
	var g Graph
	blocking(&g, dir, "a", 2)
	blocking(&g, dir, "b", 1)
	var buf syncBuffer
	trace := &Trace{Lines: &buf}
	opt := Options{Jobs: jobs, Memory: m, Trace: trace}
	if cache {
		opt.Cache = &memCache{}
	}
	done := executeAsync(&g, quietShell(), opt)
	var names [2]string
	select {
	case names[0] = <-m.started:
	case <-time.After(10 * time.Second):
		t.Fatal("neither a nor b started")
	}
	names[1] = map[string]string{"a": "b", "b": "a"}[names[0]]
	expectNoStart(t, m)
	time.Sleep(hold - 200*time.Millisecond) // expectNoStart waited 200ms
	release(t, dir, names[0])
	expectStart(t, m, names[1])
	release(t, dir, names[1])
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	m.check(t)
	for _, ev := range trace.Events() {
		switch ev.Action.Tool {
		case names[0]:
			first = ev
		case names[1]:
			second = ev
		}
	}
	if first.Action == nil || second.Action == nil || first.Memory == nil || second.Memory == nil {
		t.Fatalf("trace events of a and b, under memory scheduling: %+v, %+v", first, second)
	}
	return first, second, buf.String()
}

// TestTraceSlotWait: with one slot and memory for both, the second job
// waits for the slot the first holds: its wait is slot_wait, and mem_wait
// is 0, with and without a cache lookup before it.
func TestTraceSlotWait(t *testing.T) {
	for _, cache := range []bool{false, true} {
		m := newFakeMemory(1<<30, map[string]int64{"a": 1 << 20, "b": 1 << 20})
		first, second, lines := waitsBuild(t, 1, m, cache, 400*time.Millisecond)
		if second.SlotWait < 300*time.Millisecond || second.Memory.Wait != 0 {
			t.Errorf("cache %v: %s waited for the slot: slot wait %v (want 300ms at least), memory wait %v (want 0)", cache, second.Action.Tool, second.SlotWait, second.Memory.Wait)
		}
		if first.SlotWait > 200*time.Millisecond || first.Memory.Wait != 0 {
			t.Errorf("cache %v: %s started at once: slot wait %v, memory wait %v", cache, first.Action.Tool, first.SlotWait, first.Memory.Wait)
		}
		l := lineOf(lines, second.Action.Tool)
		if traceField(l, "mem_wait") != "0s" || traceField(l, "slot_wait") == "0s" || traceField(l, "status") != "0" {
			t.Errorf("cache %v: the second job's line %q: want slot_wait above 0, mem_wait=0s, status=0", cache, l)
		}
	}
}

// TestTraceMemoryWait: with two slots and memory for one, the second job
// waits while the memory governor holds it back (the first's
// reservation): its wait is mem_wait, not slot_wait, with and without a
// cache lookup before it.
func TestTraceMemoryWait(t *testing.T) {
	for _, cache := range []bool{false, true} {
		m := newFakeMemory(100, map[string]int64{"a": 60, "b": 60})
		_, second, lines := waitsBuild(t, 2, m, cache, 400*time.Millisecond)
		if second.Memory.Wait < 300*time.Millisecond || second.SlotWait > 200*time.Millisecond {
			t.Errorf("cache %v: %s was held back by memory: memory wait %v (want 300ms at least), slot wait %v (want little)", cache, second.Action.Tool, second.Memory.Wait, second.SlotWait)
		}
		l := lineOf(lines, second.Action.Tool)
		if traceField(l, "mem_wait") == "0s" || traceField(l, "slot_wait") == "" {
			t.Errorf("cache %v: the second job's line %q: want mem_wait above 0 and a slot_wait", cache, l)
		}
	}
}

// lineOf returns the trace line of the job whose tool is name.
func lineOf(lines, name string) string {
	for _, l := range strings.Split(lines, "\n") {
		if strings.HasPrefix(l, "job "+name+" ") {
			return l
		}
	}
	return ""
}

// TestTraceMemoryWaitAlone: a job killed for want of memory waits for the
// others to end before it runs again alone: the memory governor holds it
// back, so that wait is mem_wait.
func TestTraceMemoryWaitAlone(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	// b fails at once (killed, says Memory) while a runs; it runs again
	// once a has ended.
	blocking(&g, dir, "a", 2)
	g.MustAdd(&Action{Tool: "b", Cost: 1, Command: []string{"/bin/sh", "-c", "test -e " + dir + "/a"}})
	m := newFakeMemory(1<<30, map[string]int64{"a": 1, "b": 1})
	m.oom["b"] = true
	trace := &Trace{}
	done := executeAsync(&g, quietShell(), Options{Jobs: 2, Memory: m, Trace: trace})
	expectStart(t, m, "a")
	expectStart(t, m, "b")
	time.Sleep(400 * time.Millisecond)
	release(t, dir, "a")
	expectStart(t, m, "b")
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	for _, ev := range trace.Events() {
		if ev.Action.Tool != "b" {
			continue
		}
		if ev.Memory == nil || !ev.Memory.RetriedAlone || ev.Memory.Wait < 300*time.Millisecond || ev.SlotWait > 200*time.Millisecond {
			t.Errorf("b, run again alone after a: memory %+v, slot wait %v; want a memory wait of 300ms at least", ev.Memory, ev.SlotWait)
		}
		return
	}
	t.Errorf("no trace event for b")
}

// TestTraceSlotWaitChrome: the Chrome trace gives each job its target,
// arch, status, slot_wait_ms and, under memory scheduling, mem_wait_ms.
func TestTraceSlotWaitChrome(t *testing.T) {
	t0 := time.Now()
	var tr Trace
	tr.start(2)
	dev := &Action{Kind: DeviceCompile, Offload: HIP, Device: true, Target: target.Target{Triple: "amdgcn-amd-amdhsa", Arch: "gfx906"}}
	tr.add(Event{Action: dev, Start: t0, End: t0.Add(time.Second), Code: 1, Err: errors.New("exit status 1"), SlotWait: 1500 * time.Millisecond,
		Memory: &MemoryInfo{Expected: 1 << 20, Wait: 250 * time.Millisecond}})
	var out bytes.Buffer
	if err := tr.WriteChrome(&out, "offcc"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, ev := range doc.TraceEvents {
		if ev.Ph != "X" {
			continue
		}
		want := map[string]any{"target": "amdgcn-amd-amdhsa", "arch": "gfx906", "status": 1.0, "slot_wait_ms": 1500.0, "mem_wait_ms": 250.0, "offload": "device-hip", "kind": "device-compile"}
		for k, v := range want {
			if ev.Args[k] != v {
				t.Errorf("args[%q] = %v, want %v (args %v)", k, ev.Args[k], v, ev.Args)
			}
		}
		return
	}
	t.Errorf("no job event in %s", out.String())
}
