package cache

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// KindPeak is a job's learned peak memory: the resident set size its
// runs reached, kept by Cache.RecordPeak and read by Cache.Peak, under a
// key that names what predicts it (PeakKey). Machine-local: never
// exported, imported or shared.
const KindPeak Kind = "peak"

// peakRecord is the record of a KindPeak entry.
type peakRecord struct {
	// Key is the key text the entry is stored under (for stats).
	Key string `json:"key"`
	// Peak is the estimate Peak returns, in bytes.
	Peak int64 `json:"peak"`
	// Last is the measurement that last changed the estimate, in bytes.
	Last int64 `json:"last"`
	// MS is the job's learned wall time, in milliseconds (0: none), kept
	// by RecordTime as peaks are: the build farm's deadlines derive
	// from it.
	MS int64 `json:"ms,omitempty"`
}

// PeakKey returns the key of a job's learned peak: the tool that runs it,
// the job kind, the target and the source (or its cache key), the things
// that predict how much memory it takes. Stats shows them apart; any other
// string is a key too, shown whole as the source.
func PeakKey(tool, kind, target, source string) string {
	return strings.Join([]string{tool, kind, target, source}, "\t")
}

// peakEntryKey is where key's peak is stored.
func peakEntryKey(key string) Sum { return SumBytes([]byte("offcc peak v1\x00" + key)) }

// peaksOn reports whether c keeps peaks: an open cache not turned off.
func (c *Cache) peaksOn() bool { return c != nil && c.Store != nil && c.Mode != Off }

// Peak returns the peak resident memory, in bytes, learned for the job
// key names, and false when none is (no run recorded, or the cache off).
// It costs one small file read.
func (c *Cache) Peak(key string) (int64, bool) {
	if !c.peaksOn() {
		return 0, false
	}
	rec, ok := c.readPeak(key)
	if !ok {
		return 0, false
	}
	return rec.Peak, true
}

func (c *Cache) readPeak(key string) (peakRecord, bool) {
	rec, ok := c.readRecord(key)
	return rec, ok && rec.Peak > 0
}

// readRecord reads key's record, whether it has a peak or a time only.
func (c *Cache) readRecord(key string) (peakRecord, bool) {
	e, err := c.Store.Get(peakEntryKey(key))
	if err != nil || e.Kind != KindPeak {
		return peakRecord{}, false
	}
	var rec peakRecord
	if json.Unmarshal(e.Record, &rec) != nil || rec.Key != key || rec.Peak < 0 || rec.MS < 0 {
		return peakRecord{}, false
	}
	return rec, true
}

// peakDecay is the share of the old estimate a lower measurement keeps:
// the estimate becomes max(measured, old×peakDecay). Too low an estimate
// gets a job killed for want of memory and run again alone, too high one
// only costs parallelism; a run that happened to peak lower (a machine
// under less pressure, an allocator's luck) must not undo what a high one
// taught, while a job that really shrank is believed within a few runs
// (seven halve it). A higher measurement is taken at once.
const peakDecay = 0.9

// learn returns the estimate after measuring v where the estimate was old
// (0: none), max(v, old×peakDecay), and whether it is worth writing: it
// rose, or fell by 1/32 of itself or more.
func learn(old, v int64) (est int64, changed bool) {
	if old <= 0 {
		return v, true
	}
	est = max(v, int64(float64(old)*peakDecay))
	return est, est > old || old-est >= old/32
}

// RecordPeak records a run of the job key names that peaked at bytes of
// resident memory (best effort: nothing fails a build). Read-only caches
// and caches turned off record nothing, nor does a measurement of 0 or
// less (unknown).
//
// The entry is rewritten whole (atomically, as every entry is) when the
// estimate rises, or falls by 1/32 of itself or more: smaller falls are
// not worth the write.
func (c *Cache) RecordPeak(key string, bytes int64) { c.RecordRun(key, bytes, 0) }

// Time returns the wall time learned for the job key names (see
// RecordTime), and false when none is.
func (c *Cache) Time(key string) (time.Duration, bool) {
	if !c.peaksOn() {
		return 0, false
	}
	rec, ok := c.readRecord(key)
	if !ok || rec.MS <= 0 {
		return 0, false
	}
	return time.Duration(rec.MS) * time.Millisecond, true
}

// RecordTime records a successful run of the job key names that took d,
// beside its peak and by the same rule: a longer run is taken at once, a
// shorter one lowers the estimate by a tenth at most (a deadline set too
// short only races a job locally early; one set too long waits on a stuck
// worker longer).
func (c *Cache) RecordTime(key string, d time.Duration) { c.RecordRun(key, 0, d) }

// RecordRun records a run's peak (bytes, 0 for none) and wall time (d, 0
// for none) as RecordPeak and RecordTime do, with one read of the entry
// and at most one write: a cold build records both for every job it runs.
func (c *Cache) RecordRun(key string, bytes int64, d time.Duration) {
	ms := d.Milliseconds()
	if !c.peaksOn() || c.Mode != ReadWrite || bytes <= 0 && ms <= 0 {
		return
	}
	old, _ := c.readRecord(key)
	rec, changed := old, false
	if bytes > 0 {
		var ch bool
		rec.Peak, ch = learn(old.Peak, bytes)
		if ch {
			rec.Last, changed = bytes, true
		}
	}
	if ms > 0 {
		var ch bool
		rec.MS, ch = learn(old.MS, ms)
		changed = changed || ch
	}
	if !changed {
		return
	}
	rec.Key = key
	data, _ := json.Marshal(rec)
	c.Store.Replace(peakEntryKey(key), &Entry{Kind: KindPeak, Record: data}) // best effort
}

// LearnedPeak is one job's learned peak, as stats shows it.
type LearnedPeak struct {
	// Tool, Kind, Target and Source are the parts of its key (PeakKey);
	// a key of another form is all Source.
	Tool   string `json:"tool,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Target string `json:"target,omitempty"`
	Source string `json:"source"`
	// Peak is the estimate, Last the measurement that last changed it,
	// in bytes.
	Peak int64 `json:"peak"`
	Last int64 `json:"last"`
}

// PeakSummary is what stats shows of the learned peaks.
type PeakSummary struct {
	// Jobs is how many jobs have a learned peak.
	Jobs int64 `json:"jobs"`
	// Largest are the largest learned peaks, largest first.
	Largest []LearnedPeak `json:"largest"`
}

// learnedPeak reads a KindPeak entry's record.
func learnedPeak(e *Entry) (LearnedPeak, bool) {
	var rec peakRecord
	if json.Unmarshal(e.Record, &rec) != nil || rec.Peak <= 0 {
		return LearnedPeak{}, false
	}
	p := LearnedPeak{Source: rec.Key, Peak: rec.Peak, Last: rec.Last}
	if f := strings.SplitN(rec.Key, "\t", 4); len(f) == 4 {
		p.Tool, p.Kind, p.Target, p.Source = f[0], f[1], f[2], f[3]
	}
	return p, true
}

// UsageAndPeaks returns what Usage returns and the learned peaks, the top
// largest of them listed, in one walk over the store.
func (c *Cache) UsageAndPeaks(top int) (map[Kind][2]int64, PeakSummary, error) {
	u := map[Kind][2]int64{}
	ps := PeakSummary{Largest: []LearnedPeak{}}
	err := c.Store.Walk(func(_ Sum, e *Entry) error {
		v := u[e.Kind]
		v[0]++
		v[1] += e.DiskSize()
		u[e.Kind] = v
		if e.Kind != KindPeak {
			return nil
		}
		p, ok := learnedPeak(e)
		if !ok {
			return nil
		}
		ps.Jobs++
		if top <= 0 {
			return nil
		}
		i := sort.Search(len(ps.Largest), func(i int) bool { return ps.Largest[i].Peak < p.Peak })
		if i < top {
			ps.Largest = append(ps.Largest, LearnedPeak{})
			copy(ps.Largest[i+1:], ps.Largest[i:])
			ps.Largest[i] = p
			if len(ps.Largest) > top {
				ps.Largest = ps.Largest[:top]
			}
		}
		return nil
	})
	return u, ps, err
}
