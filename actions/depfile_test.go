package actions

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseDepFile(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"simple", "m.o: m.c h.h\n", []string{"m.c", "h.h"}},
		{"continued", "m.o: m.c \\\n  /usr/include/stdio.h \\\n  h.h\n", []string{"m.c", "/usr/include/stdio.h", "h.h"}},
		{"escapes", `m.o: a\ b.h c\#d.h e$$f.h g\\\ h.h` + "\n", []string{"a b.h", "c#d.h", "e$f.h", `g\ h.h`}},
		{"phony targets (-MP)", "m.o: m.c h.h\n\nh.h:\n", []string{"m.c", "h.h"}},
		{"several targets", "m.o m.d: m.c\n", []string{"m.c"}},
		{"crlf and duplicates", "m.o: m.c h.h \\\r\n h.h\r\n", []string{"m.c", "h.h"}},
		{"comment", "# generated\nm.o: m.c\n", []string{"m.c"}},
		{"empty", "", nil},
	} {
		if got := ParseDepFile(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func FuzzParseDepFile(f *testing.F) {
	f.Add("m.o: m.c \\\n  h.h\n\nh.h:\n")
	f.Add(`a\ b: c\#d $$e` + "\n")
	f.Fuzz(func(t *testing.T, text string) {
		deps := ParseDepFile(text)
		seen := map[string]bool{}
		for _, d := range deps {
			if d == "" || seen[d] {
				t.Fatalf("empty or repeated dependency %q in %q", d, deps)
			}
			seen[d] = true
		}
	})
}

func TestParseIncludeGraph(t *testing.T) {
	// As clang 22's -dependency-dot writes it (llvm::DOT::EscapeString).
	text := "digraph \"dependencies\" {\n" +
		"  header_0 [ shape=\"box\", label=\"m.c\"];\n" +
		"  header_1 [ shape=\"box\", label=\"usr/include/stdio.h\"];\n" +
		"  header_2 [ shape=\"box\", label=\"a\\<b\\>\\\"c\\\"\\|d\"];\n" +
		"  header_3 [ shape=\"box\", label=\"back\\\\slash\\nline\"];\n" +
		"  header_4 [ shape=\"box\", label=\"x\\l|y{z}\"];\n" +
		"  header_5 [ shape=\"box\", label=\"with space.h\"];\n" +
		"  header_0 -> header_1;\n" +
		"  header_0 -> header_2;\n" +
		"}\n"
	want := []string{"m.c", "usr/include/stdio.h", `a<b>"c"|d`, "back\\slash\nline", `x\l\|y\{z\}`, "with space.h"}
	if got := ParseIncludeGraph(text); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := ParseIncludeGraph("digraph \"dependencies\" {\n}\n"); len(got) != 0 {
		t.Errorf("empty graph: got %q", got)
	}
}

// writeFiles creates the named files (and their directories) under dir.
func writeFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dotOf returns a graph naming labels, as clang writes it.
func dotOf(labels ...string) string {
	var b strings.Builder
	b.WriteString("digraph \"dependencies\" {\n")
	for i, l := range labels {
		fmt.Fprintf(&b, "  header_%d [ shape=\"box\", label=\"%s\"];\n", i, l)
	}
	b.WriteString("}\n")
	return b.String()
}

func TestIncludeGraphRead(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, "sysroot/usr/include/only_in_sysroot.h", "usr/include/both.h", "sysroot/usr/include/both.h", "src/local.h", "sys/forced.h")
	graph := filepath.Join(root, "g.dot")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(graph, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// clang strips the default sysroot "/" from absolute names.
	abs := strings.TrimPrefix(root, "/")
	write(dotOf(abs+"/src/local.h", abs+"/usr/include/both.h", abs+"/src/local.h", abs+"/gone.h"))
	g := &IncludeGraph{Path: graph, Sysroot: "/"}
	got, err := g.Read(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root + "/src/local.h", root + "/usr/include/both.h", "/" + abs + "/gone.h", abs + "/gone.h"}
	if !slices.Equal(got, want) {
		t.Errorf("sysroot /: got %q, want %q", got, want)
	}

	// Under -isysroot, a name may be the sysroot's or stand for itself
	// (here relative, renamed to names under root).
	sysroot := filepath.Join(root, "sysroot") + "/"
	write(dotOf("usr/include/both.h", "usr/include/only_in_sysroot.h", "src/local.h"))
	g = &IncludeGraph{Path: graph, Sysroot: sysroot, Forced: []string{"forced.h", filepath.Join(root, "src", "forced.h"), filepath.Join(root, "sys", "forced.h")}}
	got, err = g.Read(NameMap{{From: "src/", To: root + "/src/"}, {From: "usr/", To: root + "/usr/"}})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{sysroot + "usr/include/both.h", root + "/usr/include/both.h", sysroot + "usr/include/only_in_sysroot.h", root + "/src/local.h", root + "/sys/forced.h"}
	if !slices.Equal(got, want) {
		t.Errorf("-isysroot: got %q, want %q", got, want)
	}
	if _, err := (&IncludeGraph{Path: filepath.Join(root, "missing.dot"), Sysroot: "/"}).Read(nil); err == nil {
		t.Error("a missing graph: no error")
	}
}

func TestReadDiscovered(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "h.h", "sys/s.h")
	dep := filepath.Join(dir, "m.d")
	if err := os.WriteFile(dep, []byte("m.o: m.c "+dir+"/h.h\n\n"+dir+"/h.h:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	graph := filepath.Join(dir, "m.dot")
	abs := strings.TrimPrefix(dir, "/")
	if err := os.WriteFile(graph, []byte(dotOf(abs+"/h.h", abs+"/sys/s.h")), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &Action{DepFile: dep}
	got, err := ReadDiscovered(a)
	if want := []string{"m.c", dir + "/h.h"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("without a graph: got %q, %v, want %q", got, err, want)
	}
	a.IncludeGraph = &IncludeGraph{Path: graph, Sysroot: "/"}
	got, err = ReadDiscovered(a)
	if want := []string{"m.c", dir + "/h.h", dir + "/sys/s.h"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("with a graph: got %q, %v, want %q", got, err, want)
	}
	if !a.PrivateOutput(graph) || a.PrivateOutput(dep) || a.PrivateOutput("") || (&Action{}).PrivateOutput(graph) {
		t.Error("PrivateOutput: wrong answer")
	}
}
