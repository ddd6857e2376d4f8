package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// traceLine is one OFFCC_TRACE line: "job TOOL key=value ...".
type traceLine struct {
	tool   string
	fields map[string]string
	line   string
}

// get returns the value of key ("" when the line has none).
func (l traceLine) get(key string) string { return l.fields[key] }

// parseTraceLines returns the OFFCC_TRACE job lines of a build's stderr.
// A value in double quotes (local="...") is unquoted; a line that is not
// "job TOOL" followed by key=value fields is no job line.
func parseTraceLines(stderr string) []traceLine {
	var out []traceLine
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, "job ")
		if !ok {
			continue
		}
		tool, rest, _ := strings.Cut(rest, " ")
		l := traceLine{tool: tool, fields: map[string]string{}, line: line}
		for ok && rest != "" {
			var key string
			key, rest, ok = strings.Cut(rest, "=")
			if !ok || key == "" || strings.Contains(key, " ") {
				ok = false
				break
			}
			var value string
			if strings.HasPrefix(rest, `"`) {
				q, err := strconv.QuotedPrefix(rest)
				if err != nil {
					ok = false
					break
				}
				value, _ = strconv.Unquote(q)
				rest = strings.TrimPrefix(rest[len(q):], " ")
			} else {
				value, rest, _ = strings.Cut(rest, " ")
			}
			l.fields[key] = value
		}
		if ok && l.get("status") != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestTraceLinesNameJobs: with OFFCC_TRACE=1 every job's line names what
// ran (kind, offload side, target triple and, for device jobs that have
// one, the offload arch) and labels its exit status, wall time and slot
// wait; the job trace's events carry target, arch, status and
// slot_wait_ms too. A failing device compile says status=1.
func TestTraceLinesNameJobs(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "OFFCC_TRACE is offcc's")
	_, tmp := tmpEnv(t)
	dir := t.TempDir()
	hip := []string{"-x", "hip", "--offload-arch=gfx906,gfx90a", "-nogpuinc", "-nogpulib", "-I" + srcPath(t, "../hip")}
	files := map[string]string{
		"omp.c":   "int f(int *x, int n) {\n#pragma omp target teams distribute parallel for map(tofrom: x[0:n])\n  for (int i = 0; i < n; i++) x[i] *= 2;\n  return x[0];\n}\n",
		"k.hip":   "#include \"hip_min.h\"\n__global__ void k(float *x) { x[0] = 1.0f; }\n",
		"bad.hip": "#include \"hip_min.h\"\n__global__ void k(float *x) { x[0] = 1.0f }\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{tmp, "OFFCC_TRACE=1", "OFFCC_CACHE=0", "OFFCC_JOB_TRACE="}

	// OpenMP offload to the host's triple: host and device jobs alike
	// have target=x86_64-pc-linux-gnu, told apart by offload=.
	trace := filepath.Join(dir, "omp.json")
	r := cmdSpec{dir: dir, env: env, name: c.cc, args: args(openmpHost, "--job-trace="+trace, "-O2", "-c", "omp.c", "-o", "omp.o")}.mustRun(t)
	lines := parseTraceLines(r.stderr)
	var dev, host int
	for _, l := range lines {
		if l.get("status") != "0" || l.get("wall") == "" || l.get("slot_wait") == "" || l.get("kind") == "" {
			t.Errorf("OpenMP job line %q: want status=0, wall=, slot_wait= and kind=", l.line)
		}
		switch {
		case l.get("kind") == "device-compile" && l.get("offload") == "device-openmp" && l.get("target") == offloadHost:
			dev++
		case l.get("kind") == "host-frontend" && l.get("offload") == "host-openmp" && l.get("target") == offloadHost:
			host++
		}
	}
	if dev != 1 || host != 1 {
		t.Errorf("OpenMP to %s: %d device compile and %d host front end lines naming their side and target, want 1 and 1:\n%s", offloadHost, dev, host, r.stderr)
	}
	evs := readTraceArgs(t, trace)
	if !slices.ContainsFunc(evs, func(a map[string]any) bool {
		return a["kind"] == "device-compile" && a["target"] == offloadHost && a["status"] == 0.0 && a["slot_wait_ms"] != nil
	}) {
		t.Errorf("job trace: no device compile with target %s, status 0 and slot_wait_ms: %v", offloadHost, evs)
	}

	// HIP for two archs: a device compile line per arch.
	trace = filepath.Join(dir, "hip.json")
	r = cmdSpec{dir: dir, env: env, name: c.cxx, args: args(hip, "--job-trace="+trace, "-O2", "-c", "k.hip", "-o", "k.o")}.mustRun(t)
	var archs []string
	for _, l := range parseTraceLines(r.stderr) {
		if l.get("kind") == "device-compile" {
			if l.get("target") != "amdgcn-amd-amdhsa" || l.get("offload") != "device-hip" || l.get("status") != "0" {
				t.Errorf("HIP device compile line %q: want target=amdgcn-amd-amdhsa offload=device-hip status=0", l.line)
			}
			archs = append(archs, l.get("arch"))
		}
	}
	slices.Sort(archs)
	if !slices.Equal(archs, []string{"gfx906", "gfx90a"}) {
		t.Errorf("HIP device compile lines name archs %q, want gfx906 and gfx90a:\n%s", archs, r.stderr)
	}
	var traced []string
	for _, a := range readTraceArgs(t, trace) {
		if a["kind"] == "device-compile" && a["target"] == "amdgcn-amd-amdhsa" && a["status"] == 0.0 {
			traced = append(traced, a["arch"].(string))
		}
	}
	slices.Sort(traced)
	if !slices.Equal(traced, []string{"gfx906", "gfx90a"}) {
		t.Errorf("job trace: HIP device compiles for %q, want gfx906 and gfx90a", traced)
	}

	// A syntax error: the failing job's line says so.
	r = cmdSpec{dir: dir, env: env, name: c.cxx, args: args(hip, "-O2", "-c", "bad.hip", "-o", "bad.o")}.run(t)
	if r.code == 0 {
		t.Fatalf("bad.hip compiled:\n%s", r)
	}
	failed := slices.IndexFunc(parseTraceLines(r.stderr), func(l traceLine) bool {
		return l.get("kind") == "device-compile" && l.get("status") == "1" && strings.HasPrefix(l.get("arch"), "gfx90")
	})
	if failed < 0 {
		t.Errorf("no device compile line with status=1 and its arch for a syntax error:\n%s", r.stderr)
	}
}

// readTraceArgs returns the arguments of the jobs (complete events) of a
// --job-trace file.
func readTraceArgs(t *testing.T, path string) []map[string]any {
	t.Helper()
	type doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	var out []map[string]any
	for _, ev := range readJSON[doc](t, path).TraceEvents {
		if ev.Ph == "X" {
			out = append(out, ev.Args)
		}
	}
	return out
}
