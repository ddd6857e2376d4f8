package cache

import (
	"bytes"
	"os"
	"testing"
	"time"
)

const mb = 1 << 20

// TestPeakLearned: a recorded peak is what a later process reads for the
// same job, and no other job's.
func TestPeakLearned(t *testing.T) {
	dir := t.TempDir()
	c := Open(Config{Dir: dir})
	key := PeakKey("clang", "device-compile", "amdgcn-amd-amdhsa gfx90a", "/src/k.c")
	if _, ok := c.Peak(key); ok {
		t.Fatal("a peak is known before any run")
	}
	c.RecordPeak(key, 300*mb)
	later := Open(Config{Dir: dir})
	if got, ok := later.Peak(key); !ok || got != 300*mb {
		t.Errorf("Peak = %d, %v after a run of 300 MiB; want 300 MiB", got/mb, ok)
	}
	if _, ok := later.Peak(PeakKey("clang", "device-compile", "amdgcn-amd-amdhsa gfx942", "/src/k.c")); ok {
		t.Error("another arch's job has the peak of gfx90a's")
	}
}

// TestPeakLowRunKeepsHigh: one low run lowers the estimate by a tenth at
// most; a higher run raises it at once; a job that really shrank is
// believed after a few runs.
func TestPeakLowRunKeepsHigh(t *testing.T) {
	c := Open(Config{Dir: t.TempDir()})
	key := PeakKey("clang", "backend", "nvptx64-nvidia-cuda sm_80", "k.cu")
	c.RecordPeak(key, 1000*mb)
	c.RecordPeak(key, 100*mb)
	if got, _ := c.Peak(key); got != 900*mb {
		t.Errorf("after 1000 MiB then 100 MiB, Peak = %d MiB, want 900", got/mb)
	}
	c.RecordPeak(key, 1200*mb)
	if got, _ := c.Peak(key); got != 1200*mb {
		t.Errorf("after a run of 1200 MiB, Peak = %d MiB, want 1200", got/mb)
	}
	for i := 0; i < 30; i++ {
		c.RecordPeak(key, 100*mb)
	}
	if got, _ := c.Peak(key); got > 110*mb || got < 100*mb {
		t.Errorf("after 30 runs of 100 MiB, Peak = %d MiB, want about 100", got/mb)
	}
	// A fall too small to be worth a write leaves the entry as it was.
	c.RecordPeak(key, 500*mb)
	e, _ := c.Store.Get(peakEntryKey(key))
	c.RecordPeak(key, 495*mb)
	e2, _ := c.Store.Get(peakEntryKey(key))
	if !bytes.Equal(e.Record, e2.Record) {
		t.Errorf("a 1%% lower run rewrote the entry: %s -> %s", e.Record, e2.Record)
	}
}

// TestPeakReadOnlyAndOff: a read-only cache reads peaks and writes none;
// with the cache off nothing is read or written.
func TestPeakReadOnlyAndOff(t *testing.T) {
	dir := t.TempDir()
	Open(Config{Dir: dir}).RecordPeak("k", 64*mb)
	ro := Open(Config{Dir: dir, Mode: ReadOnly})
	if got, ok := ro.Peak("k"); !ok || got != 64*mb {
		t.Errorf("read-only cache: Peak = %d, %v; want 64 MiB", got, ok)
	}
	ro.RecordPeak("k2", 64*mb)
	if _, ok := Open(Config{Dir: dir}).Peak("k2"); ok {
		t.Error("a read-only cache recorded a peak")
	}

	offDir := t.TempDir()
	off := Open(Config{Dir: offDir, Mode: Off}) // nil: OFFCC_CACHE=0
	off.RecordPeak("k", 64*mb)
	if _, ok := off.Peak("k"); ok {
		t.Error("Peak answered with the cache off")
	}
	// The subcommands open the cache whatever the mode: still no peaks.
	offOpen := &Cache{Config: Config{Dir: offDir, Mode: Off}, Store: NewDirStore(offDir)}
	offOpen.RecordPeak("k", 64*mb)
	if names, _ := os.ReadDir(offDir); len(names) != 0 {
		t.Errorf("the cache off wrote %d files", len(names))
	}
	if _, ok := offOpen.Peak("k"); ok {
		t.Error("Peak answered with the cache off")
	}
}

// TestPeakStats: the learned peaks are counted as entries of kind peak,
// the largest listed first with their key's parts, and trimmed with the
// rest.
func TestPeakStats(t *testing.T) {
	c := Open(Config{Dir: t.TempDir()})
	for i, arch := range []string{"gfx90a", "gfx942", "gfx1030", "gfx1100"} {
		c.RecordPeak(PeakKey("clang", "device-compile", "amdgcn-amd-amdhsa "+arch, "/src/k.c"), int64(100+100*i)*mb)
	}
	c.RecordPeak("opaque key", 50*mb)
	u, ps, err := c.UsageAndPeaks(2)
	if err != nil {
		t.Fatal(err)
	}
	if u[KindPeak][0] != 5 {
		t.Errorf("%d entries of kind peak, want 5", u[KindPeak][0])
	}
	if ps.Jobs != 5 || len(ps.Largest) != 2 {
		t.Fatalf("summary %+v: want 5 jobs, the largest 2 listed", ps)
	}
	want := LearnedPeak{Tool: "clang", Kind: "device-compile", Target: "amdgcn-amd-amdhsa gfx1100", Source: "/src/k.c", Peak: 400 * mb, Last: 400 * mb}
	if ps.Largest[0] != want || ps.Largest[1].Peak != 300*mb {
		t.Errorf("largest = %+v, want %+v then gfx1030's 300 MiB", ps.Largest, want)
	}
	if _, ps, _ := c.UsageAndPeaks(10); ps.Largest[4].Source != "opaque key" || ps.Largest[4].Tool != "" {
		t.Errorf("a key not made by PeakKey is listed as %+v, want all of it the source", ps.Largest[4])
	}
	if _, err := c.Store.Trim(0, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Peak("opaque key"); ok {
		t.Error("a trim to nothing kept a learned peak")
	}
}

// TestPeaksNotExported: learned peaks are this machine's: export --all
// leaves them out.
func TestPeaksNotExported(t *testing.T) {
	c := Open(Config{Dir: t.TempDir()})
	c.RecordPeak("k", 64*mb)
	var buf bytes.Buffer
	n, err := c.Export(&buf, nil)
	if err != nil || n != 0 {
		t.Errorf("export --all of a cache holding only a peak wrote %d entries (%v), want 0", n, err)
	}
}

// TestTimeLearned: a job's run time is kept beside its peak, by the same
// rule (a longer run at once, a shorter one a tenth at most), and neither
// record loses the other.
func TestTimeLearned(t *testing.T) {
	dir := t.TempDir()
	c := Open(Config{Dir: dir})
	key := PeakKey("clang", "device-compile", "amdgcn-amd-amdhsa gfx90a", "/src/k.c")
	if _, ok := c.Time(key); ok {
		t.Fatal("a time is known before any run")
	}
	c.RecordTime(key, 2*time.Second)
	c.RecordPeak(key, 300*mb)
	later := Open(Config{Dir: dir})
	if d, ok := later.Time(key); !ok || d != 2*time.Second {
		t.Errorf("Time = %v, %v after a run of 2 s and a peak; want 2s", d, ok)
	}
	later.RecordTime(key, time.Second)
	if d, _ := later.Time(key); d != 1800*time.Millisecond {
		t.Errorf("Time = %v after a 1 s run under 2 s; want 1.8s (a tenth lower)", d)
	}
	later.RecordTime(key, 5*time.Second)
	if d, _ := later.Time(key); d != 5*time.Second {
		t.Errorf("Time = %v after a 5 s run; want 5s", d)
	}
	if p, ok := later.Peak(key); !ok || p != 300*mb {
		t.Errorf("Peak = %d MiB, %v after the times; want 300 MiB", p/mb, ok)
	}
}

// TestRecordRun: a run's peak and time recorded at once are what
// RecordPeak and RecordTime record one after the other, by the same
// rules, in one entry.
func TestRecordRun(t *testing.T) {
	dir := t.TempDir()
	c := Open(Config{Dir: dir})
	key := PeakKey("clang", "device-compile", "amdgcn-amd-amdhsa gfx90a", "/src/k.c")
	c.RecordRun(key, 300*mb, 2*time.Second)
	later := Open(Config{Dir: dir})
	if p, ok := later.Peak(key); !ok || p != 300*mb {
		t.Errorf("Peak = %d MiB, %v; want 300 MiB", p/mb, ok)
	}
	if d, ok := later.Time(key); !ok || d != 2*time.Second {
		t.Errorf("Time = %v, %v; want 2s", d, ok)
	}
	// A lower run lowers both by a tenth at most; a run without a
	// measurement of one leaves it.
	later.RecordRun(key, 100*mb, time.Second)
	later.RecordRun(key, 0, 0)
	if p, _ := later.Peak(key); p != 270*mb {
		t.Errorf("Peak = %d MiB after a 100 MiB run under 300; want 270 MiB", p/mb)
	}
	if d, _ := later.Time(key); d != 1800*time.Millisecond {
		t.Errorf("Time = %v after a 1 s run under 2 s; want 1.8s", d)
	}
	later.RecordRun(key, 0, 5*time.Second)
	if p, _ := later.Peak(key); p != 270*mb {
		t.Errorf("Peak = %d MiB after a run with no peak; want 270 MiB kept", p/mb)
	}
}
