package cache

import (
	"os"
	"path/filepath"
	"time"
)

// EvictResult says what an eviction by age did.
type EvictResult struct {
	Entries, Bytes               int64 // kept
	RemovedEntries, RemovedBytes int64
}

// EvictOlderThan removes the entries not used since before cutoff: not
// stored, and not read by a build (a hit, or a lookup of a manifest, plan
// or digest entry), since then. An entry's last use is its index's
// modification time, which Put sets and Get moves forward (at most
// RefreshAge late). Damaged entries and temporaries are left to Trim.
//
// It is safe beside builds: each entry is looked at again just before it
// goes, and kept if a build used it meanwhile; entries are removed whole
// (renamed away, then deleted), so a build sees a miss or reads the blobs
// it opened. Bytes are the entries' on-disk sizes (Entry.DiskSize).
func (s *DirStore) EvictOlderThan(cutoff time.Time) (EvictResult, error) {
	var res EvictResult
	err := s.walk(func(key Sum, dir string, e *Entry, info os.FileInfo) error {
		if e == nil {
			return nil
		}
		size := e.DiskSize()
		old := e.Used.Before(cutoff)
		if old && s.evictFound != nil {
			s.evictFound(key)
		}
		if !old || usedSince(dir, cutoff) {
			res.Entries++
			res.Bytes += size
			return nil
		}
		if s.Remove(key) == nil {
			res.RemovedEntries++
			res.RemovedBytes += size
		}
		return nil
	}, nil)
	return res, err
}

// usedSince says whether the entry in dir was used (its index modified)
// at or after t: a build that hit it since the walk looked.
func usedSince(dir string, t time.Time) bool {
	info, err := os.Stat(filepath.Join(dir, indexName))
	return err == nil && !info.ModTime().Before(t)
}
