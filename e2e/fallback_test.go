package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFallbackCountedWithReason checks that a compile offcc hands to
// clang's driver whole says why: in --print-job-graph, in the job trace
// and in offcc cache stats, also when offcc's process becomes clang's.
// A clang configuration file adds arguments clang hashes into a HIP
// compile's unit ID; one that names <CFGDIR> offcc does not read, so it
// cannot know the ID: such a compile is clang's.
func TestFallbackCountedWithReason(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"k.hip":     "#include \"hip_min.h\"\n__global__ void k(int *p) { *p = 1; }\n",
		"extra.cfg": "-I<CFGDIR>/inc\n",
	})
	hip := args("--config="+w.path("extra.cfg"), hipFlags(t), "-c", "k.hip", "-o", "k.o")
	const reason = "offcc cannot tell the compile unit ID clang gives k.hip"

	graph := cmdSpec{dir: w.dir, env: w.env, name: w.c.cc, args: args(hip, "--print-job-graph=json")}.mustRun(t)
	var doc struct {
		Actions []struct {
			Kind     string `json:"kind"`
			Fallback string `json:"fallback"`
			Cache    string `json:"cache"`
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(graph.stdout), &doc); err != nil {
		t.Fatalf("--print-job-graph=json: %v\n%s", err, graph.stdout)
	}
	if len(doc.Actions) != 1 || doc.Actions[0].Kind != "fallback" || doc.Actions[0].Fallback != reason ||
		doc.Actions[0].Cache != "uncacheable: run by clang's driver: "+reason {
		t.Errorf("job graph: %+v, want one fallback action with the reason %q", doc.Actions, reason)
	}

	_, evs := w.build(t, hip...)
	if len(evs) != 1 || evs[0].Cache != "uncacheable: run by clang's driver: "+reason {
		t.Errorf("job trace: %s, want clang's driver, uncacheable with the reason", listEvents(evs))
	}
	// Without a trace, offcc execs clang: counted all the same.
	cmdSpec{dir: w.dir, env: w.env, name: w.c.cc, args: hip}.mustRun(t)
	stats := w.cacheCLI(t, nil, "stats", "--json")
	var st struct {
		Kinds map[string]struct {
			Uncacheable map[string]int64 `json:"uncacheable"`
		} `json:"kinds"`
	}
	if err := json.Unmarshal([]byte(stats.stdout), &st); err != nil {
		t.Fatalf("offcc cache stats --json: %v\n%s", err, stats.stdout)
	}
	if n := st.Kinds["fallback"].Uncacheable["run by clang's driver: "+reason]; n != 2 {
		t.Errorf("offcc cache stats counts %d fallbacks with the reason, want 2:\n%s", n, stats.stdout)
	}
	if text := w.cacheCLI(t, nil, "stats").stdout; !strings.Contains(text, reason) {
		t.Errorf("offcc cache stats does not show the reason:\n%s", text)
	}
}

// TestConfigFilePlanned: a HIP compile with a configuration file of plain
// options is planned (clang hashes the file's arguments into the unit ID,
// and so does offcc), into clang's object byte for byte.
func TestConfigFilePlanned(t *testing.T) {
	t.Parallel()
	w := newCacheWork(t)
	w.write(t, map[string]string{
		"k.hip":   "#include \"hip_min.h\"\n__global__ void k(int *p) { *p = CFG; }\n",
		"hip.cfg": "# project defaults\n-O2 -DCFG=7\n",
	})
	hip := args("--config="+w.path("hip.cfg"), hipFlags(t), "-c", "k.hip", "-o", "k.o")
	cmdSpec{dir: w.dir, env: w.env, name: refClang, args: hip}.mustRun(t)
	want := mustReadTB(t, w.path("k.o"))
	_, evs := w.build(t, hip...)
	if fb := selectEvents(evs, func(e jobEvent) bool { return e.Kind == "fallback" }); len(fb) > 0 {
		t.Errorf("handed to clang: %s", listEvents(evs))
	}
	sameBytes(t, "k.o", w.path("k.o"), want)
}
