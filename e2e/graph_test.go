package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// traceDoc is the part of a Chrome trace the tests read.
type traceDoc struct {
	TraceEvents []struct {
		Name string `json:"name"`
		Ph   string `json:"ph"`
		Ts   int64  `json:"ts"`
		Dur  int64  `json:"dur"`
		Tid  int    `json:"tid"`
		Args struct {
			Kind    string   `json:"kind"`
			Arch    string   `json:"arch"`
			Command []string `json:"command"`
			Inputs  []string `json:"inputs"`
			Outputs []string `json:"outputs"`
			Status  int      `json:"status"`
		} `json:"args"`
	} `json:"traceEvents"`
	DisplayTimeUnit string `json:"displayTimeUnit"`
}

func readTrace(t *testing.T, path string) traceDoc { t.Helper(); return readJSON[traceDoc](t, path) }

// span is when a traced job ran: start and end, in microseconds.
type span [2]int64

// overlaps reports whether two jobs ran at the same time.
func (a span) overlaps(b span) bool { return a[0] < b[1] && b[0] < a[1] }

// spans returns the spans of a trace's jobs of the given kind, in order.
func spans(t *testing.T, path, kind string) []span {
	t.Helper()
	var out []span
	for _, ev := range readTrace(t, path).TraceEvents {
		if ev.Ph == "X" && ev.Args.Kind == kind {
			out = append(out, span{ev.Ts, ev.Ts + ev.Dur})
		}
	}
	return out
}

// TestJobTrace builds a program in one step with --job-trace and checks
// the Chrome trace: one complete event per job, the link stage's device
// link and registration included, each with its command, complete inputs
// (the headers and -include file it read) and outputs, in slots below -j.
func TestJobTrace(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "--job-trace is an offcc option")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	for _, f := range []string{"headers.c", "scale.h", "config.h"} {
		copyFile(t, srcPath(t, "headers/"+f), filepath.Join(dir, f))
	}
	trace := filepath.Join(dir, "trace.json")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
		args: args(openmpHost, "-j2", "--job-trace="+trace, "-include", "config.h", "headers.c", "-o", "prog")}.mustRun(t)
	runOffloadProgram(t, filepath.Join(dir, "prog"))

	doc := readTrace(t, trace)
	if doc.DisplayTimeUnit == "" {
		t.Error("displayTimeUnit missing")
	}
	seen := map[string]int{}
	for _, ev := range doc.TraceEvents {
		if ev.Ph != "X" {
			continue
		}
		k := ev.Args.Kind
		seen[k]++
		if ev.Tid < 0 || ev.Tid >= 2 || ev.Dur < 0 || ev.Ts < 0 || ev.Args.Status != 0 {
			t.Errorf("event %q: slot %d, ts %d, dur %d, status %d", ev.Name, ev.Tid, ev.Ts, ev.Dur, ev.Args.Status)
		}
		if len(ev.Args.Outputs) == 0 && k != "link" {
			t.Errorf("event %q has no outputs", ev.Name)
		}
		switch k {
		case "host-frontend", "device-compile":
			for _, want := range []string{"headers.c", "scale.h", "config.h", "/omp.h", "/stdio.h"} {
				if !slices.ContainsFunc(ev.Args.Inputs, func(in string) bool { return strings.HasSuffix(in, want) }) {
					t.Errorf("%s lists no input ending in %s: %q", k, want, ev.Args.Inputs)
				}
			}
			if len(ev.Args.Command) == 0 || ev.Args.Command[1] != "-cc1" {
				t.Errorf("%s command %q", k, ev.Args.Command)
			}
		case "device-link":
			if !slices.Contains(ev.Args.Command, "--target="+offloadHost) {
				t.Errorf("device link command %q", ev.Args.Command)
			}
		}
	}
	for _, k := range []string{"host-frontend", "device-compile", "package", "backend", "embed", "link", "extract", "device-link", "wrap", "host-link"} {
		if seen[k] == 0 {
			t.Errorf("no %s event in the trace (saw %v)", k, seen)
		}
	}
}

// TestJobTraceEnvAndFailure checks OFFCC_JOB_TRACE and that a failed build
// still writes its trace, with the failing job's status.
func TestJobTraceEnvAndFailure(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "OFFCC_JOB_TRACE is an offcc variable")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	trace := filepath.Join(dir, "t.json")
	r := cmdSpec{dir: dir, env: []string{tmp, "OFFCC_JOB_TRACE=" + trace}, name: c.cc,
		args: args("-fopenmp", "--offload-arch=gfx906,gfx90a", "-nogpulib", "-c", srcPath(t, "two_errors.c"), "-o", "x.o")}.run(t)
	if r.code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", r.code, r)
	}
	failed := 0
	for _, ev := range readTrace(t, trace).TraceEvents {
		if ev.Ph == "X" && ev.Args.Status != 0 {
			failed++
			if ev.Args.Kind != "device-compile" {
				t.Errorf("failed job %q of kind %s", ev.Name, ev.Args.Kind)
			}
		}
	}
	if failed != 2 {
		t.Errorf("%d failed jobs in the trace, want both device compiles", failed)
	}
}

// TestPrintJobGraph checks --print-job-graph: JSON whose edges point from
// each file to the job that writes it, and dot; nothing runs or is written.
func TestPrintJobGraph(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "--print-job-graph is an offcc option")
	dir := t.TempDir()
	tmpDir, tmp := tmpEnv(t)
	copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "x.c"))
	r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
		args: []string{"-fopenmp", "--offload-arch=gfx906,gfx90a", "-nogpulib", "--print-job-graph=json", "x.c", "-o", "x"}}.mustRun(t)
	var doc struct {
		Actions []struct {
			ID      int
			Kind    string
			Offload string
			Arch    string
			Command []string
			Inputs  []struct {
				Path     string
				Producer *int
			}
			Outputs []string
			Deps    []int
			Expands bool
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	var kinds []string
	for i, a := range doc.Actions {
		kinds = append(kinds, a.Kind)
		for _, in := range a.Inputs {
			if in.Producer == nil {
				continue
			}
			p := doc.Actions[*in.Producer]
			if !slices.Contains(p.Outputs, in.Path) || !slices.Contains(a.Deps, *in.Producer) || *in.Producer >= i {
				t.Errorf("action %d (%s) reads %s from action %d, which does not write it", i, a.Kind, in.Path, *in.Producer)
			}
		}
	}
	want := []string{"host-frontend", "device-compile", "device-compile", "package", "backend", "embed", "link"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds %q, want %q", kinds, want)
	}
	if a := doc.Actions[2]; a.Arch != "gfx90a" || a.Offload != "device-openmp" {
		t.Errorf("device compile: arch %q offload %q", a.Arch, a.Offload)
	}
	if !doc.Actions[6].Expands {
		t.Error("the link does not say it expands")
	}

	d := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, "--print-job-graph=dot", "x.c")}.mustRun(t)
	if !strings.HasPrefix(d.stdout, "digraph offcc {") || strings.Count(d.stdout, "->") < 6 {
		t.Errorf("dot output:\n%s", d.stdout)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("printing the graph wrote files: %v", ents)
	}
	if ents, _ := os.ReadDir(tmpDir); len(ents) != 0 {
		t.Errorf("printing the graph left temporaries: %v", ents)
	}
}

// TestStdinSource compiles a program from standard input, which every
// compile of the translation unit reads (clang's own driver gives the
// device compile an empty input), and checks diagnostics name <stdin>.
func TestStdinSource(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "clang 22 gives the device compile an empty standard input")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	src, err := os.ReadFile(srcPath(t, "basic.c"))
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "prog")
	cmd := cmdSpec{dir: dir, env: []string{tmp}, name: "sh",
		args: []string{"-c", `exec "$0" "$@" < "$SRC"`, c.cc, "-fopenmp", "-fopenmp-targets=" + offloadHost, "-x", "c", "-", "-o", prog}}
	cmd.env = append(cmd.env, "SRC="+srcPath(t, "basic.c"))
	cmd.mustRun(t)
	runOffloadProgram(t, prog)

	bad := filepath.Join(dir, "bad.c")
	os.WriteFile(bad, append(src, []byte("\nint broken(void) { return undeclared_thing; }\n")...), 0o644)
	r := cmdSpec{dir: dir, env: []string{tmp, "SRC=" + bad}, name: "sh",
		args: []string{"-c", `exec "$0" "$@" < "$SRC"`, c.cc, "-fopenmp", "-fopenmp-targets=" + offloadHost, "-x", "c", "-", "-c", "-o", "bad.o"}}.run(t)
	if r.code != 1 || !strings.Contains(r.stderr, "<stdin>:") {
		t.Errorf("want exit 1 and a diagnostic naming <stdin>:\n%s", r)
	}
}

// TestDiagnosticsLikeClang checks offcc's messages against clang's for a
// failed link (as offcc++), an output directory that does not exist, and
// two device compiles that fail.
func TestDiagnosticsLikeClang(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	undef := filepath.Join(dir, "undef.cpp")
	os.WriteFile(undef, []byte("extern int missing_symbol();\nint main() {\n#pragma omp target\n  {}\n  return missing_symbol();\n}\n"), 0o644)

	t.Run("link failure as offcc++", func(t *testing.T) {
		r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx, args: args(openmpHost, undef, "-o", filepath.Join(dir, "u"))}.run(t)
		last := lastLine(r.stderr)
		if r.code != 1 || last != "offcc++: error: linker command failed with exit code 1 (use -v to see invocation)" {
			t.Errorf("exit %d, last line %q\n%s", r.code, last, r)
		}
		if !strings.Contains(r.stderr, "missing_symbol") {
			t.Errorf("the linker's message is missing:\n%s", r.stderr)
		}
	})
	t.Run("output directory missing", func(t *testing.T) {
		modes := [][]string{{"-c"}, nil}
		if c.reference {
			modes = modes[:1] // clang's link leaves the message to ld
		}
		for _, mode := range modes {
			out := filepath.Join(dir, "nodir", "out")
			r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, mode, srcPath(t, "basic.c"), "-o", out)}.run(t)
			want := "unable to open output file '" + out + "': 'No such file or directory'"
			if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, ".offcc-") {
				t.Errorf("%v: exit %d, want %q without a temporary name\n%s", mode, r.code, want, r)
			}
		}
	})
	t.Run("two device compiles fail", func(t *testing.T) {
		r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
			args: []string{"-fopenmp", "--offload-arch=gfx906,gfx90a", "-nogpulib", "-c", srcPath(t, "two_errors.c"), "-o", filepath.Join(dir, "two.o")}}.run(t)
		if r.code != 1 {
			t.Errorf("exit status %d, want 1", r.code)
		}
		for _, want := range []string{"offcc-e2e: gfx906 device error", "offcc-e2e: gfx90a device error"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "two.o")); err == nil {
			t.Error("output written after failed device compiles")
		}
	})
	t.Run("no input files", func(t *testing.T) {
		r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: openmpHost}.run(t)
		if r.code != 1 || r.stderr != "offcc: error: no input files\n" {
			t.Errorf("want clang's error and exit 1:\n%s", r)
		}
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestFallbackToClang checks that a job offcc's planner does not know (GNU
// as, with -fno-integrated-as) makes offcc hand the command line to clang,
// saying so under -v: the object is clang's, byte for byte.
func TestFallbackToClang(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "clang needs no fallback")
	if _, err := os.Stat("/usr/bin/as"); err != nil {
		t.Skip("GNU as not installed")
	}
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "x.c"))
	flags := args(openmpHost, "-fno-integrated-as", "-c", "x.c")
	r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(flags, "-v", "-o", "ours.o")}.mustRun(t)
	if !strings.Contains(r.stderr, "offcc: note: handing the command line to clang: offcc's OpenMP planner does not know the tool as") {
		t.Errorf("no fallback note under -v:\n%s", r.stderr)
	}
	q := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(flags, "-o", "quiet.o")}.mustRun(t)
	if strings.Contains(q.stderr, "handing the command line") {
		t.Errorf("the fallback note appears without -v:\n%s", q.stderr)
	}
	cmdSpec{dir: dir, env: []string{tmp}, name: refClang, args: args(flags, "-o", "theirs.o")}.mustRun(t)
	ours, _ := os.ReadFile(filepath.Join(dir, "quiet.o"))
	theirs, _ := os.ReadFile(filepath.Join(dir, "theirs.o"))
	if len(ours) == 0 || !bytes.Equal(ours, theirs) {
		t.Errorf("the fallback object (%d bytes) differs from clang's (%d bytes)", len(ours), len(theirs))
	}

	// offcc's own outputs describe the fallback as a plan of one action:
	// --print-job-graph prints it (and builds nothing), --job-trace records
	// it; clang runs under offcc's name, so offcc++ still links C++.
	g := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(flags, "-o", "g.o", "--print-job-graph=json")}.mustRun(t)
	var doc struct{ Actions []struct{ Kind string } }
	if err := json.Unmarshal([]byte(g.stdout), &doc); err != nil || len(doc.Actions) != 1 || doc.Actions[0].Kind != "fallback" {
		t.Errorf("job graph of a fallback: %v\n%s", err, g.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "g.o")); err == nil {
		t.Error("--print-job-graph built the object")
	}
	os.WriteFile(filepath.Join(dir, "s.cpp"), []byte("#include <string>\nint main() {\n#pragma omp target\n  {}\n  return std::string(\"ab\").size() - 2;\n}\n"), 0o644)
	trace := filepath.Join(dir, "fallback.json")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx,
		args: args(openmpHost, "-fno-integrated-as", "--job-trace="+trace, "s.cpp", "-o", "s")}.mustRun(t)
	var kinds []string
	for _, ev := range readTrace(t, trace).TraceEvents {
		if ev.Ph == "X" {
			kinds = append(kinds, ev.Args.Kind)
		}
	}
	if !slices.Equal(kinds, []string{"fallback"}) {
		t.Errorf("trace of a fallback build: %q", kinds)
	}
}

// TestLTOOffloadProgram builds with -flto at compile and link time (what
// CMake's interprocedural optimization does): the objects are bitcode, and
// the program must keep its device code.
func TestLTOOffloadProgram(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	objs := compileTUs(t, c, dir, tmp, "-O2", "-flto")
	prog := filepath.Join(dir, "lto")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, "-O2", "-flto", objs, "-o", prog)}.mustRun(t)
	runOffloadProgram(t, prog)
}
