package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDirStoreEvictOlderThan(t *testing.T) {
	s := NewDirStore(t.TempDir())
	now := time.Now()
	// Entry i last used i days ago.
	var keys []Sum
	for i := 0; i < 6; i++ {
		k := testKey(fmt.Sprintf("age %d", i))
		keys = append(keys, k)
		putEntry(t, s, k, fmt.Sprintf("record %d", i), strings.Repeat("y", 500))
		setUsed(t, s, k, now.Add(-time.Duration(i)*24*time.Hour-time.Hour))
	}
	var size int64
	s.Walk(func(k Sum, e *Entry) error {
		size = e.DiskSize()
		return nil
	})
	// A damaged entry, however old, is left to a trim.
	damaged := testKey("damaged")
	putEntry(t, s, damaged, "x", "x")
	os.Remove(filepath.Join(s.EntryDir(damaged), indexName))
	old := now.Add(-30 * 24 * time.Hour)
	os.Chtimes(s.EntryDir(damaged), old, old)

	// Entry 4 is hit by a build while the eviction looks at it: kept.
	s.evictFound = func(k Sum) {
		if k == keys[4] {
			if _, err := s.Get(k); err != nil {
				t.Errorf("Get: %v", err)
			}
		}
	}
	res, err := s.EvictOlderThan(now.Add(-3 * 24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := EvictResult{Entries: 4, Bytes: 4 * size, RemovedEntries: 2, RemovedBytes: 2 * size}
	if res != want {
		t.Errorf("EvictOlderThan = %+v, want %+v", res, want)
	}
	for i, k := range keys {
		_, err := os.Stat(s.EntryDir(k))
		if gone := i == 3 || i == 5; gone != os.IsNotExist(err) {
			t.Errorf("entry %d (used %d days ago): removed %v, want %v", i, i, os.IsNotExist(err), gone)
		}
	}
	if _, err := os.Stat(s.EntryDir(damaged)); err != nil {
		t.Errorf("the damaged entry was removed: %v", err)
	}
	if l := leftovers(t, s.Dir); len(l) > 0 {
		t.Errorf("leftovers: %v", l)
	}

	// A cache that does not exist has nothing to evict.
	if res, err := NewDirStore(filepath.Join(t.TempDir(), "none")).EvictOlderThan(now); err != nil || res != (EvictResult{}) {
		t.Errorf("missing cache: %+v, %v", res, err)
	}
}
