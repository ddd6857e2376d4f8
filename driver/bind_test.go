package driver

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/llvmtest"
)

// planArgs plans clang's real jobs for args (which name files by absolute
// paths) with the builder of kind; it returns the plan and the private
// temporary directory.
func planArgs(t *testing.T, kind actions.OffloadKind, args ...string) (*Plan, string) {
	t.Helper()
	clang := llvmtest.Clang(t)
	tempDir := t.TempDir()
	inv := &Invocation{Argv0: "offcc", Env: os.Environ(), Stderr: io.Discard}
	_, jobs, err := clangJobs(context.Background(), inv, clang, args, tempDir, nil, nil)
	if err != nil {
		t.Fatalf("clang -###: %v", err)
	}
	env := &planEnv{tempDir: tempDir, self: "/bin/offcc", steps: &steps{clang: clang},
		cuid: func(string) (string, bool) { return "1234abcd", false }}
	plan, err := newPlanner(env, kind).build(jobs)
	if err != nil {
		t.Fatal(err)
	}
	return plan, tempDir
}

// writeTree writes files (name to text) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// mmdTree is a C++ source that reads, besides the C++ library, a header
// with #pragma once and one with an include guard (each included twice),
// a system header that #include_nexts another, a header that #pragma GCC
// system_header makes a system header (and what it includes), an #embed
// file, and a -include file found in a system directory that includes
// nothing (which only the dependency file lists, under -MD).
var mmdTree = map[string]string{
	"m.cpp": `#include "once.h"
#include "once.h"
#include "guard.h"
#include "guard.h"
#include <s.h>
#include "quiet.h"
#include <vector>
static const char blob[] = {
#embed <data.bin>
};
int main() { std::vector<int> v{ONCE, GUARD, S1, S2, QUIET, FORCED}; return v.size() + sizeof blob; }
`,
	"inc/once.h":       "#pragma once\n#define ONCE 1\n",
	"inc/guard.h":      "#ifndef GUARD_H\n#define GUARD_H\n#define GUARD 2\n#endif\n",
	"inc/quiet.h":      "#pragma GCC system_header\n#include \"quiet_impl.h\"\n",
	"inc/quiet_impl.h": "#define QUIET 5\n",
	"inc/data.bin":     "abc",
	"sys/s.h":          "#include_next <s.h>\n#define S1 3\n",
	"sys/forced.h":     "#define FORCED 6\n",
	"sys2/s.h":         "#define S2 4\n",
}

// mmdArgs are the flags of the compile of mmdTree under dir, before the
// dependency options.
func mmdArgs(dir string) []string {
	return []string{"-std=c++23", "-Wno-c23-extensions", "-I" + filepath.Join(dir, "inc"),
		"-isystem", filepath.Join(dir, "sys"), "-isystem", filepath.Join(dir, "sys2"),
		"--embed-dir=" + filepath.Join(dir, "inc"), "-include", "forced.h",
		"-c", filepath.Join(dir, "m.cpp"), "-o", filepath.Join(dir, "m.o")}
}

// TestBindMMDIncludeGraph plans a plain C++ -MMD compile: clang writes the
// user's dependency file as it does without offcc (byte for byte), and
// with the include graph offcc adds the compile lists every file the
// -sys-header-deps dependency file of -MD lists (the C++ library, system
// headers after #include_next and #pragma GCC system_header, the system
// -include file).
func TestBindMMDIncludeGraph(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	writeTree(t, dir, mmdTree)
	userDep := filepath.Join(dir, "m.d")
	flags := append(mmdArgs(dir), "-MMD", "-MP", "-MF", userDep, "-MT", "custom target")

	// clang's own dependency file for the command.
	run(t, clang, flags...)
	want, err := os.ReadFile(userDep)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(want, []byte("/usr/include")) || bytes.Contains(want, []byte("quiet_impl.h")) {
		t.Fatalf("clang's -MMD file lists system headers:\n%s", want)
	}
	os.Remove(userDep)

	plan, tempDir := planArgs(t, actions.None, flags...)
	if len(plan.Graph.Actions) != 1 {
		t.Fatalf("kinds %q, want one compile", kinds(plan.Graph))
	}
	a := plan.Graph.Actions[0]
	g := a.IncludeGraph
	if g == nil || a.DepFile != userDep || a.UnknownReads != "" {
		t.Fatalf("compile: dependency file %q, include graph %+v, unknown reads %q", a.DepFile, g, a.UnknownReads)
	}
	if !strings.HasPrefix(g.Path, tempDir+"/") || g.Sysroot != "/" || !slices.Contains(a.Command, g.Path) ||
		!slices.ContainsFunc(a.Outputs, func(f *actions.Artifact) bool { return f.Path == g.Path }) ||
		!slices.ContainsFunc(a.Outputs, func(f *actions.Artifact) bool { return f.Path == userDep }) {
		t.Errorf("compile: include graph %+v, outputs %v, command %q", g, a.Outputs, a.Command)
	}
	if slices.Contains(a.Command, "-sys-header-deps") || !a.PrivateOutput(g.Path) {
		t.Errorf("compile: command %q", a.Command)
	}
	if !slices.Contains(g.Forced, filepath.Join(dir, "sys", "forced.h")) {
		t.Errorf("forced files %q: no %s", g.Forced, filepath.Join(dir, "sys", "forced.h"))
	}

	run(t, a.Command[0], a.Command[1:]...)
	got, err := os.ReadFile(userDep)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the dependency file differs from clang's:\n--- offcc's compile:\n%s--- clang:\n%s", got, want)
	}
	discovered, err := actions.ReadDiscovered(a)
	if err != nil {
		t.Fatal(err)
	}

	// What -MD lists.
	full := filepath.Join(dir, "full.d")
	run(t, clang, append(mmdArgs(dir), "-MD", "-MF", full)...)
	text, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	listed := actions.ParseDepFile(string(text))
	var found []os.FileInfo
	for _, f := range discovered {
		if fi, err := os.Stat(f); err == nil {
			found = append(found, fi)
		}
	}
	for _, name := range []string{"vector", "/usr/include/features.h", "quiet_impl.h", "sys2/s.h", "forced.h", "data.bin"} {
		if !slices.ContainsFunc(listed, func(f string) bool { return strings.HasSuffix(f, name) }) {
			t.Errorf("clang's -MD file lists no %s:\n%s", name, text)
		}
	}
	for _, f := range listed {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatalf("%s, listed by -MD: %v", f, err)
		}
		if !slices.ContainsFunc(found, func(d os.FileInfo) bool { return os.SameFile(d, fi) }) {
			t.Errorf("%s, which -MD lists, is not among the files the -MMD compile read: %q", f, discovered)
		}
	}
}

// TestBindDepFileKinds checks which compiles get an include graph: an
// -MMD compile's (the host front end's, for OpenMP offload: the device
// compile keeps a -sys-header-deps file of offcc's own), not -MD's, and
// none where the graph would not cover the reads or would change what the
// user asked for.
func TestBindDepFileKinds(t *testing.T) {
	llvmtest.Clang(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"m.c": ompSource, "p.h": "#define P 1\n"})
	src, obj, dep := filepath.Join(dir, "m.c"), filepath.Join(dir, "m.o"), filepath.Join(dir, "m.d")

	plan, tempDir := planArgs(t, actions.OpenMP, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", src, "-o", obj, "-MMD", "-MF", dep)
	front, dev := plan.Graph.Actions[0], plan.Graph.Actions[1]
	if front.Kind != actions.HostFrontend || front.DepFile != dep || front.IncludeGraph == nil || front.UnknownReads != "" {
		t.Errorf("host front end: dependency file %q, include graph %+v, unknown reads %q", front.DepFile, front.IncludeGraph, front.UnknownReads)
	}
	if dev.Kind != actions.DeviceCompile || slices.Contains(dev.Command, dep) || !strings.HasPrefix(dev.DepFile, tempDir+"/") ||
		dev.IncludeGraph != nil || !slices.Contains(dev.Command, "-sys-header-deps") {
		t.Errorf("device compile: dependency file %q, include graph %+v, command %q", dev.DepFile, dev.IncludeGraph, dev.Command)
	}

	for _, tc := range []struct {
		name    string
		args    []string
		graph   bool
		unknown string
	}{
		{"-MD", []string{"-MD", "-MF", dep}, false, ""},
		{"-MMD -H", []string{"-MMD", "-MF", dep, "-H"}, false, ""},
		{"-MMD to stdout", []string{"-MMD", "-MF", "-"}, false, "its headers go to a dependency file offcc cannot read back"},
		{"-MMD -dependency-dot", []string{"-MMD", "-MF", dep, "-Xclang", "-dependency-dot", "-Xclang", filepath.Join(dir, "x.dot")}, false, "-MMD (its dependency file leaves out system headers) with -dependency-dot"},
		{"-MMD -include-pch", []string{"-MMD", "-MF", dep, "-include-pch", filepath.Join(dir, "p.h.pch")}, false, "-MMD (its dependency file leaves out system headers) with a precompiled header or module"},
		{"-MMD -isysroot", []string{"-MMD", "-MF", dep, "-isysroot", dir}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, _ := planArgs(t, actions.None, append([]string{"-c", src, "-o", obj}, tc.args...)...)
			a := plan.Graph.Actions[0]
			if (a.IncludeGraph != nil) != tc.graph || a.UnknownReads != tc.unknown {
				t.Errorf("include graph %+v, unknown reads %q; want graph %v, unknown reads %q", a.IncludeGraph, a.UnknownReads, tc.graph, tc.unknown)
			}
			if tc.graph && a.IncludeGraph.Sysroot != "/" && a.IncludeGraph.Sysroot != dir {
				t.Errorf("sysroot %q", a.IncludeGraph.Sysroot)
			}
		})
	}
}

// run runs name with args (in the test's working directory: a relative
// name the compile writes is relative to it, as to offcc's) and fails the
// test unless it succeeds.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
