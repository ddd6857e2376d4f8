package cache

import (
	"strings"
	"testing"
	"time"
)

func TestSizeZeroIsNoLimit(t *testing.T) {
	cfg, err := ConfigFromEnv(func(k string) string {
		return map[string]string{"OFFCC_CACHE_SIZE": "0", "OFFCC_CACHE_DIR": t.TempDir()}[k]
	})
	if err != nil || cfg.MaxSize != 0 || cfg.Mode != ReadWrite {
		t.Fatalf("OFFCC_CACHE_SIZE=0: %+v, %v; want a read-write cache without limit", cfg, err)
	}
	c := Open(cfg)
	putEntry(t, c.Store, SumBytes([]byte("a")), "rec a", strings.Repeat("x", 4096))
	putEntry(t, c.Store, SumBytes([]byte("b")), "rec b", strings.Repeat("y", 4096))
	res, err := c.Trim(time.Now())
	if err != nil || res.RemovedEntries != 0 || res.Entries != 2 {
		t.Errorf("Trim without a limit: %+v, %v; want both entries kept", res, err)
	}
	// A limit does trim: the same cache with 1 byte keeps nothing.
	c.MaxSize = 1
	if res, _ := c.Trim(time.Now()); res.Entries != 0 {
		t.Errorf("Trim to 1 byte kept %d entries", res.Entries)
	}
}

func TestBadCacheSizeNamesSettingAndExample(t *testing.T) {
	_, err := ConfigFromEnv(func(k string) string {
		return map[string]string{"OFFCC_CACHE_SIZE": "garbage"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), "OFFCC_CACHE_SIZE=garbage") || !strings.Contains(err.Error(), "such as 10G") {
		t.Errorf("err %v", err)
	}
}

func TestStatsZeroedRecordsTime(t *testing.T) {
	c := Open(Config{Dir: t.TempDir(), MaxSize: DefaultMaxSize})
	if _, ok := c.StatsZeroed(); ok {
		t.Errorf("a new cache's statistics were zeroed")
	}
	c.addStats(Stats{Kinds: map[string]*KindStats{"compile": {Hits: 1}}})
	before := time.Now().Add(-time.Second)
	if err := c.ZeroStats(); err != nil {
		t.Fatal(err)
	}
	at, ok := c.StatsZeroed()
	if !ok || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("StatsZeroed = %v, %v; want about now", at, ok)
	}
	if st := c.ReadStats(); len(st.Kinds) != 0 {
		t.Errorf("counters left: %v", st.Kinds)
	}
	if st := c.ReadStats(); st.Remote != (RemoteStats{}) {
		t.Errorf("remote counters left")
	}
}
