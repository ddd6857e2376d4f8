package memsched

import (
	"testing"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/membudget"
)

// TestOtherProcessesShareTheLedger runs the governor on membudget's real
// ledger beside another user of it (a second Ledger on the same file, as
// another offcc process under make -j2 has): that one's share holds this
// build's second job back until it is released, and the held job is
// woken and admitted then.
func TestOtherProcessesShareTheLedger(t *testing.T) {
	dir := t.TempDir()
	other, err := membudget.OpenLedger(dir)
	if err != nil {
		t.Skipf("no ledger here: %v", err)
	}
	defer other.Close()
	mine, err := membudget.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	peaks := &fakePeaks{m: map[string]int64{key("k.c", "gfx906"): 100 * mib, key("k.c", "gfx90a"): 100 * mib}}
	g := New(Config{Limit: 400 * mib, Source: "test", Ledger: mine, Peaks: peaks, WorkDir: wd, SampleEvery: 5 * time.Millisecond})
	defer g.Close()

	if ok, err := other.Reserve(250*mib, 400*mib, false); !ok || err != nil {
		t.Fatalf("other process's reservation: %v %v", ok, err)
	}
	r := mustReserve(t, g, deviceCompile("k.c", "gfx906"), 0) // 110 MiB, forced
	if _, ok := g.Reserve(deviceCompile("k.c", "gfx90a"), 1); ok {
		t.Fatalf("admitted 110 MiB beside 110 of this build's and 250 of another process's in 400")
	}
	other.Release(250 * mib)
	select {
	case <-g.Wake():
	case <-time.After(5 * time.Second):
		t.Fatalf("no wake while a job was held")
	}
	mustReserve(t, g, deviceCompile("k.c", "gfx90a"), 1)
	if got := other.Others(); got != 220*mib {
		t.Errorf("the other process sees %d MiB of this build's; want 220", got/mib)
	}
	r.Done(actions.Usage{PeakRSS: 90 * mib}, nil)
	if got := other.Others(); got != 110*mib {
		t.Errorf("after one job ended the other process sees %d MiB; want 110", got/mib)
	}
}
