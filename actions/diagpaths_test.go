package actions

import (
	"os"
	"path/filepath"
	"testing"
)

// testNames renames as a stable-names front end of an absolute source
// /b/src/main.c compiled in /w does.
var testNames = NameMap{{From: ".//./../b/src/", To: "/b/src/"}, {From: ".//./", To: ""}}

func TestRewriteDiagnosticLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{".//./src/k.h:3:7: warning: unused variable 'x' [-Wunused-variable]\n", "src/k.h:3:7: warning: unused variable 'x' [-Wunused-variable]\n"},
		{"In file included from .//./../b/src/main.c:3:\n", "In file included from /b/src/main.c:3:\n"},
		{"\x1b[1m.//./src/k.h:3:7: \x1b[0m\x1b[0;1;35mwarning: \x1b[0m", "\x1b[1msrc/k.h:3:7: \x1b[0m\x1b[0;1;35mwarning: \x1b[0m"},
		{".//././k.h:1:1: error: x\n", "./k.h:1:1: error: x\n"},
		{".//./../b/src/../inc/u.h:2:1: note: here\n", "/b/src/../inc/u.h:2:1: note: here\n"},
		// A name the command did not give: another spelling stays.
		{"./k.h:1:1: error: x\n", "./k.h:1:1: error: x\n"},
		// Absolute names, clang's own and source lines stay.
		{"/usr/include/stdio.h:1:1: warning: w\n", "/usr/include/stdio.h:1:1: warning: w\n"},
		{"<built-in>:1:9: note: previous definition\n", "<built-in>:1:9: note: previous definition\n"},
		{"    3 |   int x: 1;\n", "    3 |   int x: 1;\n"},
		{"1 warning generated.\n", "1 warning generated.\n"},
	} {
		if got := string(testNames.RewriteDiagnosticLine([]byte(tc.in))); got != tc.want {
			t.Errorf("RewriteDiagnosticLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDiagnosticWriterSplitsLines(t *testing.T) {
	var out []byte
	w := &diagnosticWriter{names: testNames, w: writerFunc(func(p []byte) (int, error) { out = append(out, p...); return len(p), nil })}
	for _, part := range []string{".//./sr", "c/a.c:1:2: error: e\n.//./../b/src/b", ".c:3:4: note: n"} {
		w.Write([]byte(part))
	}
	w.Close()
	if want := "src/a.c:1:2: error: e\n/b/src/b.c:3:4: note: n"; string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestFormatDepFile(t *testing.T) {
	// What clang 22 writes for these files (-MD -MP -MT main.o).
	files := []string{"src/main.c", "/usr/lib/llvm-22/lib/clang/22/include/llvm_libc_wrappers/stdio.h",
		"src/my file.h", "src/a#b$.h"}
	got := string(FormatDepFile(DepFileOptions{Targets: []string{"main.o"}, Phony: true, Input: "src/main.c"}, files))
	want := "main.o: src/main.c \\\n" +
		"  /usr/lib/llvm-22/lib/clang/22/include/llvm_libc_wrappers/stdio.h \\\n" +
		"  src/my\\ file.h src/a\\#b$$.h\n" +
		"/usr/lib/llvm-22/lib/clang/22/include/llvm_libc_wrappers/stdio.h:\n" +
		"src/my\\ file.h:\n" +
		"src/a\\#b$$.h:\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRewriteDepFile(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "m.d")
	os.WriteFile(d, []byte("m.o: .//./src/m.c .//./src/k.h .//./../b/src/k.h /usr/include/stdio.h\n"), 0o644)
	argv := []string{"clang", "-cc1", "-dependency-file", d, "-MT", "m.o", "-x", "c", ".//./src/m.c"}
	if err := rewriteDepFile(d, argv, testNames); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(d)
	want := "m.o: src/m.c src/k.h /b/src/k.h /usr/include/stdio.h\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
