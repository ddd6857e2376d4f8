package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/cache"
)

// TestCacheStatsPeaks: stats shows how many jobs have a learned peak and
// the largest, in text and JSON, and counts them among the entries.
func TestCacheStatsPeaks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c := cache.Open(cache.Config{Dir: dir})
	archs := []string{"gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201"}
	for i, arch := range archs {
		c.RecordPeak(cache.PeakKey("clang", "device-compile", "amdgcn-amd-amdhsa "+arch, "/src/kernel.c"), int64(100+10*i)<<20)
	}
	vars := []string{"OFFCC_CACHE_DIR=" + dir}
	rc, out, errs := runCache(t, vars, "stats", "--json")
	if rc != 0 {
		t.Fatalf("stats --json: %d %s", rc, errs)
	}
	var st cacheStatsJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Peaks.Jobs != 7 || len(st.Peaks.Largest) != peaksShown || st.EntryKinds["peak"].Entries != 7 {
		t.Fatalf("stats --json: peaks %+v, entry kinds %+v; want 7 jobs, %d listed", st.Peaks, st.EntryKinds, peaksShown)
	}
	if p := st.Peaks.Largest[0]; p.Kind != "device-compile" || p.Target != "amdgcn-amd-amdhsa gfx1201" || p.Source != "/src/kernel.c" || p.Peak != 160<<20 {
		t.Errorf("the largest learned peak is %+v, want gfx1201's 160 MiB", p)
	}
	rc, out, _ = runCache(t, vars, "stats")
	for _, want := range []string{"learned peaks    7 jobs", "160.0 MiB", "clang device-compile", "amdgcn-amd-amdhsa gfx1201", "/src/kernel.c", "  peak  ", "learned peak memory"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats text lacks %q:\n%s", want, out)
		}
	}
	t.Logf("stats:\n%s", out)
	if strings.Contains(out, "gfx942") {
		t.Errorf("stats lists more than the %d largest:\n%s", peaksShown, out)
	}
}
