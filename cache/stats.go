package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/offcc/offcc/internal/atomicfile"
)

// Stats are the cache's counters, per action kind.
type Stats struct {
	Kinds map[string]*KindStats `json:"kinds"`
	// Remote counts the use of the shared cache (OFFCC_REMOTE_CACHE).
	Remote RemoteStats `json:"remote"`
}

// KindStats counts one kind of action.
type KindStats struct {
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	// Uncacheable counts actions never looked up, by reason.
	Uncacheable map[string]int64 `json:"uncacheable,omitempty"`
	// NotStored counts misses whose results were not kept, by reason.
	NotStored     map[string]int64 `json:"not_stored,omitempty"`
	SavedMillis   int64            `json:"saved_ms"`
	StoredBytes   int64            `json:"stored_bytes"`
	RestoredBytes int64            `json:"restored_bytes"`
}

func (k *KindStats) uncacheable(why string) { addReason(&k.Uncacheable, why, 1) }

func (k *KindStats) notStored(why string) { addReason(&k.NotStored, why, 1) }

// addReason adds n to a count by reason, making the map if need be.
func addReason(m *map[string]int64, why string, n int64) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[why] += n
}

// add adds o's counts to k.
func (k *KindStats) add(o *KindStats) {
	k.Hits += o.Hits
	k.Misses += o.Misses
	k.SavedMillis += o.SavedMillis
	k.StoredBytes += o.StoredBytes
	k.RestoredBytes += o.RestoredBytes
	for r, n := range o.Uncacheable {
		addReason(&k.Uncacheable, r, n)
	}
	for r, n := range o.NotStored {
		addReason(&k.NotStored, r, n)
	}
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	if s.Kinds == nil {
		s.Kinds = map[string]*KindStats{}
	}
	for name, k := range o.Kinds {
		if s.Kinds[name] == nil {
			s.Kinds[name] = &KindStats{}
		}
		s.Kinds[name].add(k)
	}
	s.Remote.add(o.Remote)
}

func (s *Stats) clone() Stats {
	var c Stats
	c.Add(*s)
	return c
}

// Total returns the counts of all kinds together.
func (s *Stats) Total() KindStats {
	var t KindStats
	for _, k := range s.Kinds {
		t.add(k)
	}
	return t
}

// statsShards: each process adds its counts to one of this many files
// (chosen by its pid, as ccache does), under that file's lock, so that
// parallel builds rarely wait for each other.
const statsShards = 16

func (c *Cache) statsDir() string { return filepath.Join(c.Dir, "stats") }

// addStats adds a build's counts to the cache's statistics (best effort:
// statistics never fail a build).
func (c *Cache) addStats(st Stats) {
	if len(st.Kinds) == 0 && st.Remote == (RemoteStats{}) || c.Mode == Off {
		return
	}
	dir := c.statsDir()
	if os.MkdirAll(dir, 0o777) != nil {
		return
	}
	name := filepath.Join(dir, strconv.Itoa(os.Getpid()%statsShards))
	lock, err := os.OpenFile(name+".lock", os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	defer lock.Close()
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX) != nil {
		return
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	// The shard is rewritten in place, under its lock (readers take it
	// shared): a new file and a rename cost more than the rest of a
	// build that hits. The counts only grow, and shorter JSON is padded
	// with spaces to the old length, so one write replaces the whole.
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	var cur Stats
	old, _ := io.ReadAll(f)
	if fast, ok := fastStats(old); ok {
		cur = *fast
	} else {
		json.Unmarshal(old, &cur) // a damaged file starts again from zero
	}
	cur.Add(st)
	data, ok := appendStats(nil, &cur)
	if !ok {
		data, _ = json.Marshal(cur)
	}
	if n := len(old) - len(data); n > 0 {
		data = append(data, bytes.Repeat([]byte{' '}, n)...)
	}
	f.WriteAt(data, 0)
}

// readShard reads a statistics shard under its lock, shared (see
// addStats).
func readShard(name string) ([]byte, error) {
	if lock, err := os.Open(name + ".lock"); err == nil {
		defer lock.Close()
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_SH) == nil {
			defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		}
	}
	return os.ReadFile(name)
}

// ReadStats returns the cache's statistics: the sum of its shards.
func (c *Cache) ReadStats() Stats {
	var total Stats
	total.Kinds = map[string]*KindStats{}
	for i := 0; i < statsShards; i++ {
		data, err := readShard(filepath.Join(c.statsDir(), strconv.Itoa(i)))
		if err != nil {
			continue
		}
		if fast, ok := fastStats(data); ok {
			total.Add(*fast)
			continue
		}
		var st Stats
		if json.Unmarshal(data, &st) == nil {
			total.Add(st)
		}
	}
	return total
}

// zeroedMarker, in the statistics directory, holds the time the
// statistics were last zeroed (Unix seconds).
const zeroedMarker = "zeroed"

// StatsZeroed returns when the statistics were last zeroed (ZeroStats,
// Clear), and false when they never were (or the record is unreadable).
func (c *Cache) StatsZeroed() (time.Time, bool) {
	data, err := os.ReadFile(filepath.Join(c.statsDir(), zeroedMarker))
	if err != nil {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// ZeroStats resets the statistics, each shard under its lock (a build
// adding its counts meanwhile adds them to zero), and records the time
// (StatsZeroed) when the cache directory exists.
func (c *Cache) ZeroStats() error {
	if err := c.zeroShards(); err != nil {
		return err
	}
	if _, err := os.Stat(c.Dir); err != nil {
		return nil // no cache: nothing to record
	}
	if err := os.MkdirAll(c.statsDir(), 0o777); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(c.statsDir(), zeroedMarker), []byte(fmt.Sprintf("%d\n", time.Now().Unix())), 0o666)
}

// zeroShards removes the statistics' shards.
func (c *Cache) zeroShards() error {
	for i := 0; i < statsShards; i++ {
		name := filepath.Join(c.statsDir(), strconv.Itoa(i))
		err := func() error {
			lock, err := os.OpenFile(name+".lock", os.O_RDWR, 0)
			if err == nil {
				defer lock.Close()
				if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX) == nil {
					defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
				}
			}
			if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
				return err
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// trimMarker records the time of the last trim.
const trimMarker = "trim.txt"

// MaybeTrim trims the cache to 90% of MaxSize if the last trim is
// TrimInterval ago or more (or unknown, or in the future by more than
// that: a clock set back). The marker is written first, so that the
// processes of a parallel build that get here meanwhile skip theirs.
func (c *Cache) MaybeTrim(now time.Time) {
	marker := filepath.Join(c.Dir, trimMarker)
	if data, err := os.ReadFile(marker); err == nil {
		if sec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
			if d := now.Sub(time.Unix(sec, 0)); d < TrimInterval && d > -TrimInterval {
				return
			}
		}
	}
	if atomicfile.Write(marker, []byte(fmt.Sprintf("%d\n", now.Unix())), 0o666) != nil {
		return
	}
	c.Trim(now)
}

// Trim brings the cache under 90% of MaxSize, least recently used
// entries first. With no limit (MaxSize 0) it removes only what every trim
// removes: damaged entries and the temporaries of writers that died.
func (c *Cache) Trim(now time.Time) (TrimResult, error) {
	if c.MaxSize <= 0 {
		return c.Store.Trim(math.MaxInt64, now)
	}
	return c.Store.Trim(c.MaxSize/10*9, now)
}

// Usage returns the number of entries and the bytes they take on disk,
// by kind.
func (c *Cache) Usage() (map[Kind][2]int64, error) {
	u, err := c.UsageByKind()
	out := map[Kind][2]int64{}
	for k, v := range u {
		out[k] = [2]int64{v.Entries, v.Bytes}
	}
	return out, err
}

// KindUsage is what the entries of one kind take.
type KindUsage struct {
	Entries int64 `json:"entries"`
	// Bytes is what they take on disk: indexes, and blobs as stored
	// (compressed or not; Entry.DiskSize).
	Bytes int64 `json:"bytes"`
	// Uncompressed is what they would take uncompressed
	// (Entry.UncompressedSize).
	Uncompressed int64 `json:"uncompressed_bytes"`
}

// UsageByKind returns the entries of each kind and their sizes, on disk
// and uncompressed.
func (c *Cache) UsageByKind() (map[Kind]KindUsage, error) {
	u := map[Kind]KindUsage{}
	err := c.Store.Walk(func(_ Sum, e *Entry) error {
		v := u[e.Kind]
		v.Entries++
		v.Bytes += e.DiskSize()
		v.Uncompressed += e.UncompressedSize()
		u[e.Kind] = v
		return nil
	})
	return u, err
}
