package actions

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTraceCPU runs a busy command and a sleeping one and checks that the
// trace gives each its own CPU time (the busy one's, not the sleeper's
// wall time), in its line and in WriteTotals.
func TestTraceCPU(t *testing.T) {
	dir := t.TempDir()
	var g Graph
	busy := g.MustAdd(&Action{Kind: DeviceCompile, Tool: "busy", Outputs: []*Artifact{NewArtifact(filepath.Join(dir, "b.o"))},
		Command: []string{"sh", "-c", `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; : > "$1"`, "sh", filepath.Join(dir, "b.o")}})
	idle := g.MustAdd(&Action{Kind: DeviceCompile, Tool: "idle", Outputs: []*Artifact{NewArtifact(filepath.Join(dir, "i.o"))},
		Command: []string{"sh", "-c", `sleep 0.3; : > "$1"`, "sh", filepath.Join(dir, "i.o")}})
	var lines bytes.Buffer
	trace := &Trace{Lines: &lines}
	if err := Execute(context.Background(), &g, quietShell(), Options{Jobs: 2, Trace: trace}); err != nil {
		t.Fatal(err)
	}
	cpu := map[*Action]time.Duration{}
	for _, ev := range trace.Events() {
		cpu[ev.Action] = ev.CPU
	}
	if cpu[busy] < 20*time.Millisecond {
		t.Errorf("busy command: CPU %v, want the time its loop took (at least 20ms)", cpu[busy])
	}
	if cpu[idle] >= 100*time.Millisecond {
		t.Errorf("sleeping command: CPU %v, want far below its 300ms of sleep", cpu[idle])
	}
	if !strings.Contains(lines.String(), "job busy ") || !strings.Contains(lines.String(), " cpu=") {
		t.Errorf("trace lines without cpu=: %q", lines.String())
	}

	var totals bytes.Buffer
	self, queries := 30*time.Millisecond, 7*time.Millisecond
	children := cpu[busy] + cpu[idle] + queries
	trace.WriteTotals(&totals, self, children)
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	want := ""
	if cpu[busy] > 0 {
		want += fmt.Sprintf("cpu busy jobs=1 cpu=%s\n", ms(cpu[busy]))
	}
	if cpu[idle] > 0 {
		want += fmt.Sprintf("cpu idle jobs=1 cpu=%s\n", ms(cpu[idle]))
	}
	want += fmt.Sprintf("cpu offcc self=30ms queries=7ms total=%s\n", ms(self+children))
	if totals.String() != want {
		t.Errorf("totals:\n%s\nwant:\n%s", totals.String(), want)
	}
}
