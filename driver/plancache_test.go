package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// countingClang is a fake clang that prints the canned job list and appends
// a line to a counter file each time it runs.
func countingClang(t *testing.T, tmpDir string) (clang, counter string) {
	t.Helper()
	dir := t.TempDir()
	canned := filepath.Join(dir, "canned.txt")
	// The script writes the canned jobs with the TMPDIR it was given, as
	// clang names its temporaries.
	if err := os.WriteFile(canned, []byte(cannedJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	// The counter lives outside clang's directory: that directory's mtime is
	// part of the cache key.
	counter = filepath.Join(t.TempDir(), "runs")
	clang = filepath.Join(dir, "clang")
	script := "#!/bin/sh\necho run >> " + counter + "\nsed \"s|TMP|$TMPDIR|g\" " + canned + " >&2\n"
	if err := os.WriteFile(clang, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return clang, counter
}

func runs(t *testing.T, counter string) int {
	data, _ := os.ReadFile(counter)
	return strings.Count(string(data), "run")
}

func TestPlanCache(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	if err := os.WriteFile("m.c", []byte("int main(void){return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clang, counter := countingClang(t, work)
	cache := &planCache{dir: filepath.Join(t.TempDir(), "plans"), maxEntries: 10}
	plan := func(env ...string) *Plan {
		t.Helper()
		tmp := t.TempDir() // a new private directory each build
		p := &Planner{Clang: clang, Argv0: "offcc", Self: "/bin/offcc", TempDir: tmp, Env: env, Steps: fakeSteps{}, Cache: cache}
		pl, err := p.Plan(context.Background(), []string{"-fopenmp", "--offload-arch=gfx906,gfx90a", "m.c", "-o", "m"})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range pl.Graph.Jobs {
			for _, o := range j.Outputs {
				if o != "m" && !strings.HasPrefix(o, tmp+"/") {
					t.Errorf("output %s is not in this build's temporary directory %s", o, tmp)
				}
			}
		}
		return pl
	}
	first := plan("A=1")
	second := plan("A=1", "MAKEFLAGS=-j4 --jobserver-auth=3,4")
	if n := runs(t, counter); n != 1 {
		t.Fatalf("clang ran %d times for two identical builds, want 1", n)
	}
	if len(first.Graph.Jobs) != len(second.Graph.Jobs) {
		t.Fatalf("cached plan has %d jobs, want %d", len(second.Graph.Jobs), len(first.Graph.Jobs))
	}
	plan("A=2") // another environment is another plan
	if n := runs(t, counter); n != 2 {
		t.Fatalf("clang ran %d times, want 2 after an environment change", n)
	}
	os.Remove("m.c") // a missing source must reach clang, which reports it
	plan("A=1")
	if n := runs(t, counter); n != 3 {
		t.Fatalf("clang ran %d times, want 3 after the source disappeared", n)
	}
}

func TestPlanCachePrune(t *testing.T) {
	c := &planCache{dir: t.TempDir(), maxEntries: 4}
	for i := 0; i < 6; i++ {
		c.store(strings.Repeat(string(rune('a'+i)), 4), "/tmp/x", "out")
	}
	entries, _ := os.ReadDir(c.dir)
	if len(entries) > 4 {
		t.Errorf("%d entries after pruning, want at most 4", len(entries))
	}
}

func TestPlanCacheDisabled(t *testing.T) {
	if newPlanCache(func(k string) string {
		if k == "OFFCC_PLAN_CACHE" {
			return "0"
		}
		return ""
	}) != nil {
		t.Error("OFFCC_PLAN_CACHE=0 did not disable the plan cache")
	}
}
