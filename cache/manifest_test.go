package cache

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestShadowPaths(t *testing.T) {
	root := t.TempDir()
	p := func(rel string) string { return filepath.Join(root, rel) }
	mk := func(rel string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p(rel), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// -I a -I b -I c -I c2, the source in src; a/x.h exists (a header of
	// that name found in c means it was included by a path a/x.h does
	// not fit, as with #include_next, or a/x.h appeared since: either
	// way it is not a path that "would shadow" if created).
	const name = "offcc_shadow_test.h"
	for _, f := range []string{"src/m.c", "a/" + name, "c/" + name, "c/sub/y.h", "c2/z.h", "b/other.h"} {
		mk(f)
	}
	dirs := []string{p("a"), p("b"), p("c"), p("c2"), p("d"), "/usr/include"}
	source := []string{p("src/m.c")}
	headers := []string{p("c/" + name), p("c/sub/y.h"), p("c2/z.h"), "/usr/include/" + name, p("b/other.h")}
	got := shadowPaths(source, headers, dirs, exists)

	for _, want := range []string{
		p("b/" + name),   // an earlier -I directory
		p("src/" + name), // the source's directory (quoted includes)
		p("a/sub/y.h"), p("b/sub/y.h"), p("src/sub/y.h"),
		p("c/sub/sub/y.h"),                               // y.h's own directory includes too
		p("a/z.h"), p("b/z.h"), p("c/z.h"), p("src/z.h"), // found in the fourth directory
		p("c2/" + name), p("d/" + name), // the system header: every -I before it
		p("c2/other.h"), p("c2/sub/y.h"), // z.h's directory: z.h may include them
		p("a/other.h"), // found in the second directory: only the first is earlier
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s", want)
		}
	}
	for _, not := range []string{
		p("a/" + name), // exists
		p("c/" + name), // the header itself
		p("d/other.h"), // d is searched after b, where other.h was found, and includes nothing
		p("d/sub/y.h"),
		"/usr/include/z.h", // a system header's directory is not an includer
		"/usr/include/sub/y.h",
		"/usr/include/other.h",
	} {
		if slices.Contains(got, not) {
			t.Errorf("has %s", not)
		}
	}
	seen := map[string]bool{}
	for _, g := range got {
		if seen[g] {
			t.Errorf("%s listed twice", g)
		}
		seen[g] = true
		if _, err := os.Lstat(g); err == nil {
			t.Errorf("%s exists", g)
		}
		if g != filepath.Clean(g) {
			t.Errorf("%s is not clean", g)
		}
	}
	// Once a shadowing path exists, it is no longer listed (and the
	// candidate that listed it no longer fits).
	mk("b/" + name)
	if again := shadowPaths(source, headers, dirs, exists); slices.Contains(again, p("b/"+name)) {
		t.Errorf("existing %s listed", p("b/"+name))
	}
}

func TestShadowPathsDirectoryPrefix(t *testing.T) {
	// inc is not the directory of inc2/x.h: a prefix of the name is not a
	// parent directory.
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "inc"), filepath.Join(root, "inc2")}
	got := shadowPaths(nil, []string{filepath.Join(root, "inc2", "x.h")}, dirs, exists)
	want := []string{filepath.Join(root, "inc2", "x.h"), filepath.Join(root, "inc", "x.h")}
	// inc2/x.h is listed only because it does not exist in this test.
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A header in no search directory (included by a relative path)
	// gives only its includers' paths: none here.
	if got := shadowPaths(nil, []string{filepath.Join(root, "elsewhere", "x.h")}, dirs, exists); len(got) != 0 {
		t.Errorf("header outside the search directories: %q", got)
	}
	// No headers, nothing to shadow.
	if got := shadowPaths([]string{filepath.Join(root, "m.c")}, nil, dirs, exists); len(got) != 0 {
		t.Errorf("no headers: %q", got)
	}
}

// TestResultKeyNotManifestKey: a compile that reads no header has an empty
// header set; its result must not be stored under its first-level key,
// where its manifest goes (it was, and the manifest overwrote it).
func TestResultKeyNotManifestKey(t *testing.T) {
	ak := &actionKey{text: "version x\n"}
	ak.sum = SumBytes([]byte(ak.text))
	if rk, _ := resultKey(ak, nil, nil, false); rk == ak.sum {
		t.Fatal("resultKey with no headers equals the manifest key")
	}
}

// TestAbsentPathsKeepsOnlyAbsence: the build's memo of shadowing probes
// keeps a path found absent (a file created there later is still listed
// in the header set, and every lookup probes it), never one found
// present: a path that then disappears must be listed as absent, or a
// file created there later would not invalidate the set.
func TestAbsentPathsKeepsOnlyAbsence(t *testing.T) {
	dir := t.TempDir()
	gone, there := filepath.Join(dir, "gone.h"), filepath.Join(dir, "there.h")
	if err := os.WriteFile(there, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var a absentPaths
	if a.exists(gone) || !a.exists(there) {
		t.Fatalf("exists: %s %v, %s %v", gone, a.exists(gone), there, a.exists(there))
	}
	if err := os.Rename(there, gone); err != nil {
		t.Fatal(err)
	}
	if a.exists(there) {
		t.Errorf("%s was removed but still counts as present", there)
	}
	got := shadowPaths(nil, []string{filepath.Join(dir, "inc", "x.h")}, []string{dir, filepath.Join(dir, "inc")}, a.exists)
	if want := filepath.Join(dir, "x.h"); !slices.Contains(got, want) {
		t.Errorf("shadowPaths = %q, want %s in it", got, want)
	}
}
