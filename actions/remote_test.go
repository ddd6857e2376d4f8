package actions

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeRemote runs accepted actions by writing "remote" to their output,
// after a delay; it gives back the actions named in back.
type fakeRemote struct {
	slots   int
	back    map[string]bool
	delay   time.Duration
	mu      sync.Mutex
	running int
	most    int
	ran     atomic.Int32
	asked   int // Slots calls
}

func (f *fakeRemote) Slots() int             { f.asked++; return f.slots }
func (f *fakeRemote) Accepts(a *Action) bool { return a.Kind == DeviceCompile }
func (f *fakeRemote) Run(ctx context.Context, a *Action, stdout, stderr io.Writer) (RemoteInfo, error) {
	f.mu.Lock()
	f.running++
	f.most = max(f.most, f.running)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if f.back[filepath.Base(a.Outputs[0].Path)] {
		return RemoteInfo{}, fmt.Errorf("%w: refused", ErrRunLocally)
	}
	time.Sleep(f.delay)
	f.ran.Add(1)
	fmt.Fprintf(stderr, "from the worker\n")
	return RemoteInfo{Worker: "w1", BytesUp: 10}, os.WriteFile(a.Outputs[0].Path, []byte("remote"), 0o644)
}

// TestRemote: the executor runs accepted actions on the Remote beside its
// local slot (no more at once than its slots), runs the ones it gives back
// and the ones it does not accept locally, and traces each where it ran.
func TestRemote(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	var devices []*Action
	for i := 0; i < 5; i++ {
		out := filepath.Join(dir, fmt.Sprintf("d%d", i))
		devices = append(devices, g.MustAdd(&Action{Kind: DeviceCompile, Offload: HIP,
			Command: []string{"/bin/sh", "-c", "sleep 0.1; echo local > " + out},
			Outputs: []*Artifact{NewArtifact(out)}}))
	}
	host := filepath.Join(dir, "host")
	link := &Action{Kind: Backend, Command: []string{"/bin/sh", "-c", "echo local > " + host},
		Outputs: []*Artifact{NewArtifact(host)}}
	for _, d := range devices {
		link.Inputs = append(link.Inputs, d.Outputs[0])
	}
	g.MustAdd(link)
	remote := &fakeRemote{slots: 2, back: map[string]bool{"d0": true}, delay: 100 * time.Millisecond}
	trace := &Trace{}
	var stderr syncBuffer
	err := Execute(context.Background(), &g, NewShell(ShellOptions{Stdout: io.Discard, Stderr: &stderr}),
		Options{Jobs: 1, Remote: remote, Trace: trace})
	if err != nil {
		t.Fatal(err)
	}
	if remote.most > 2 {
		t.Errorf("%d actions ran remotely at once, over the 2 slots", remote.most)
	}
	remoteRuns := 0
	for _, ev := range trace.Events() {
		data, _ := os.ReadFile(ev.Action.Outputs[0].Path)
		where := string(data)
		switch {
		case ev.Remote != nil:
			remoteRuns++
			if where != "remote" || ev.Remote.Worker != "w1" {
				t.Errorf("%s traced on %q but its output is %q", ev.Action.Label(), ev.Remote.Worker, where)
			}
		case where != "local\n":
			t.Errorf("%s traced as local but its output is %q", ev.Action.Label(), where)
		}
	}
	for _, ev := range trace.Events() {
		if filepath.Base(ev.Action.Outputs[0].Path) == "d0" && ev.GivenBack != "refused" {
			t.Errorf("d0 traced with GivenBack %q, want %q", ev.GivenBack, "refused")
		}
	}
	if len(trace.Events()) != 6 {
		t.Errorf("%d events, want 6 (a given-back action is traced once)", len(trace.Events()))
	}
	if remoteRuns == 0 || int(remote.ran.Load()) != remoteRuns {
		t.Errorf("%d remote events, %d remote runs", remoteRuns, remote.ran.Load())
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "d0")); string(data) != "local\n" {
		t.Errorf("the given-back action's output is %q, want the local run's", data)
	}
	if got := stderr.String(); remoteRuns > 0 && !containsCount(got, "from the worker\n", remoteRuns) {
		t.Errorf("the workers' diagnostics were not all printed:\n%s", got)
	}
}

func containsCount(s, sub string, n int) bool {
	c := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			c++
		}
	}
	return c == n
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// TestRemoteNotAsked: a build with nothing the Remote accepts never asks
// it for slots (a farm client sets itself up on that first call).
func TestRemoteNotAsked(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	for i := 0; i < 3; i++ {
		out := filepath.Join(dir, fmt.Sprintf("b%d", i))
		g.MustAdd(&Action{Kind: Backend, Command: []string{"/bin/sh", "-c", "echo local > " + out},
			Outputs: []*Artifact{NewArtifact(out)}})
	}
	remote := &fakeRemote{slots: 2}
	if err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 2, Remote: remote}); err != nil {
		t.Fatal(err)
	}
	if remote.asked != 0 || remote.ran.Load() != 0 {
		t.Errorf("Slots asked %d times, %d remote runs, for a build the Remote accepts nothing of", remote.asked, remote.ran.Load())
	}
}
