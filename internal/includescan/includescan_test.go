package includescan

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/llvmtest"
)

// writeTree writes files (relative path -> text) under a new temporary
// directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cc1Line returns a cc1 line compiling main.c as C with the options opts
// and no system directories.
func cc1Line(opts ...string) []string {
	args := []string{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-nostdsysteminc", "-nobuiltininc",
		"-main-file-name", "main.c", "-o", "-Ibogus", "-MT", "-Ibogus2"}
	args = append(args, opts...)
	return append(args, "-x", "c", "main.c")
}

// relTo returns files relative to dir ("" for those outside it).
func relTo(t *testing.T, dir string, files []string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		if !filepath.IsAbs(f) || filepath.Clean(f) != f {
			t.Errorf("%q is not absolute and clean", f)
		}
		r, err := filepath.Rel(dir, f)
		if err != nil || strings.HasPrefix(r, "..") {
			r = f
		}
		out = append(out, r)
	}
	return out
}

// TestScanner scans small trees: the lookups, the directives, what
// fails a scan.
func TestScanner(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		opts    []string
		want    []string // must be in the result
		notWant []string // must not be
		bad     string   // when set, Scan must fail with a reason containing it
	}{{
		name: "quoted and angled",
		files: map[string]string{
			"main.c":   "#include \"q.h\"\n#include <a.h>\n",
			"q.h":      "",
			"a.h":      "", // not searched for <a.h>: the includer's directory is for "" only
			"inc/q.h":  "",
			"inc/a.h":  "#include \"a2.h\"\n",
			"inc/a2.h": "",
		},
		opts:    []string{"-I", "inc"},
		want:    []string{"main.c", "q.h", "inc/q.h", "inc/a.h", "inc/a2.h"},
		notWant: []string{"a.h"},
	}, {
		name: "iquote",
		files: map[string]string{
			"main.c":   "#include \"iq.h\"\n#include <iq2.h>\n",
			"qd/iq.h":  "",
			"qd/iq2.h": "", // -iquote is not searched for <>
			"id/iq.h":  "",
		},
		opts:    []string{"-iquote", "qd", "-isystem", "id"},
		want:    []string{"main.c", "qd/iq.h", "id/iq.h"},
		notWant: []string{"qd/iq2.h"},
	}, {
		name: "include_next takes every candidate",
		files: map[string]string{
			"main.c":      "#include <x.h>\n",
			"d1/x.h":      "#include_next <x.h>\n",
			"d2/x.h":      "#include_next <x.h>\n#include \"d2only.h\"\n",
			"d3/x.h":      "",
			"d2/d2only.h": "",
		},
		opts: []string{"-I", "d1", "-internal-isystem", "d2", "-internal-externc-isystem", "d3"},
		want: []string{"main.c", "d1/x.h", "d2/x.h", "d3/x.h", "d2/d2only.h"},
	}, {
		name: "has_include with literal names",
		files: map[string]string{
			"main.c": "#if __has_include(<only.h>) && __has_include_next( \"next.h\" )\n#endif\n" +
				"#ifdef __has_include\n#endif\n#if defined(__has_include) || defined __has_include_next\n#endif\n" +
				"#ifndef __has_embed\n#define __has_include(x) 0\n#endif\n#undef __has_include\n",
			"inc/only.h":     "#include \"fromonly.h\"\n",
			"inc/fromonly.h": "",
			"next.h":         "",
		},
		opts: []string{"-I", "inc"},
		want: []string{"main.c", "inc/only.h", "inc/fromonly.h", "next.h"},
	}, {
		name:  "computed include",
		files: map[string]string{"main.c": "#include \"ok.h\"\n", "ok.h": "\n\n#  include HEADER_NAME\n"},
		bad:   "ok.h:3: #include computed (HEADER_NAME is a macro)",
	}, {
		name:  "computed include_next",
		files: map[string]string{"main.c": "#include_next MACRO\n"},
		bad:   "#include_next computed (MACRO",
	}, {
		name:  "computed has_include",
		files: map[string]string{"main.c": "#define H(x) __has_include(x)\n"},
		bad:   "__has_include computed (x is a macro)",
	}, {
		name: "has_include through aliases",
		files: map[string]string{
			"main.c": "#include \"defs.h\"\n#if HAS(<a.h>) && HAS2(\"b.h\") && CMDLINE(<c.h>) && EMB(\"d.bin\")\n#endif\n" +
				"#ifdef HAS\n#endif\n#if defined(HAS2)\n#endif\n#if NOT_AN_ALIAS(FOO) || NOT_AN_ALIAS(\"e.h\")\n#endif\n",
			// As glibc 2.28-2.32's sys/cdefs.h does for __glibc_has_include.
			"defs.h":  "#define HAS __has_include\n#define HAS2 HAS\n#define EMB __has_embed\n#define NOT_AN_ALIAS(x) x\n",
			"inc/a.h": "",
			"b.h":     "",
			"inc/c.h": "",
			"d.bin":   "",
			"e.h":     "",
		},
		opts:    []string{"-I", "inc", "-D", "CMDLINE=__has_include_next"},
		want:    []string{"main.c", "defs.h", "inc/a.h", "b.h", "inc/c.h", "d.bin"},
		notWant: []string{"e.h"},
	}, {
		name:  "alias of has_include with a macro",
		files: map[string]string{"main.c": "#if HAS(FOO)\n#endif\n", "defs.h": "#define HAS __has_include\n"},
		opts:  []string{"-include", "defs.h"},
		bad:   "main.c:1: HAS, an alias of __has_include or __has_embed, used without a header name",
	}, {
		name:  "alias of has_include passed on",
		files: map[string]string{"main.c": "#define HAS __has_include\n#define APPLY(f, x) f(x)\n#if APPLY(HAS, <a.h>)\n#endif\n"},
		bad:   "HAS, an alias",
	}, {
		name:  "has_include through a -D macro",
		files: map[string]string{"main.c": ""},
		opts:  []string{"-DH(x)=__has_include(x)"},
		bad:   "uses __has_include",
	}, {
		name:  "has_include used bare",
		files: map[string]string{"main.c": "#define APPLY(f, x) f(x)\n#if APPLY(__has_include, <a.h>)\n#endif\n"},
		bad:   "__has_include without (",
	}, {
		name:  "computed embed",
		files: map[string]string{"main.c": "const char d[] = {\n#embed DATA\n};\n"},
		bad:   "#embed computed",
	}, {
		name: "embed",
		files: map[string]string{
			"main.c":        "const char d[] = {\n#embed \"data.bin\" limit(4)\n};\n#if __has_embed(<blob.bin>)\n#endif\n",
			"data.bin":      "#include NOT_SCANNED\n",
			"edir/blob.bin": "#include NOT_SCANNED\n",
		},
		opts: []string{"--embed-dir=edir"},
		want: []string{"main.c", "data.bin", "edir/blob.bin"},
	}, {
		name: "comments and literals",
		files: map[string]string{
			"main.c": "// #include LINE_COMMENT \\\n   #include STILL_COMMENT\n" +
				"/* #include BLOCK\n#include IN_BLOCK */ #include \"after_block.h\"\n" +
				"int x; /*\n*/ # include \"not_a_directive.h\"\n" +
				"const char *s = \"/*\"; \n#include \"after_string.h\"\n" +
				"const char *r = R\"x(/* \" )x\"; \n#include \"after_raw.h\"\n" +
				"int n = 1'000'000; char c = '\"';\n#include \"after_number.h\"\n" +
				"#include /* comment */ \"commented.h\" // trailing\n" +
				"#include <a//b.h>\n",
			"after_block.h":     "",
			"not_a_directive.h": "",
			"after_string.h":    "",
			"after_raw.h":       "",
			"after_number.h":    "",
			"commented.h":       "",
			"inc/a//b.h":        "",
		},
		opts: []string{"-I", "inc"},
		want: []string{"main.c", "after_block.h", "after_string.h", "after_raw.h", "after_number.h", "commented.h", "inc/a/b.h"},
	}, {
		name: "CRLF, continuations, digraphs, pragma dependency",
		files: map[string]string{
			"main.c": "#include \"crlf.h\"\r\n#\\\r\n  include \\\n <spliced.h>\r\n  %:  import \"digraph.h\"\n" +
				"#pragma GCC dependency \"dep.txt\"\n#__include_macros \"macros.h\"\n",
			"crlf.h":    "",
			"spliced.h": "",
			"digraph.h": "",
			"dep.txt":   "",
			"macros.h":  "",
		},
		opts: []string{"-I", "."},
		want: []string{"main.c", "crlf.h", "spliced.h", "digraph.h", "dep.txt", "macros.h"},
	}, {
		name: "relative dirs and dot-dot",
		files: map[string]string{
			"main.c":        "#include <r.h>\n#include \"sub/x/../../up.h\"\n",
			"sub/inc/r.h":   "#include \"sib.h\"\n",
			"sub/inc/sib.h": "",
			"up.h":          "",
			"sub/x/keep":    "",
		},
		opts: []string{"-Isub/x/../inc", "-iquote", "sub/inc"},
		want: []string{"main.c", "sub/inc/r.h", "sub/inc/sib.h", "up.h"},
	}, {
		name:  "missing headers are skipped",
		files: map[string]string{"main.c": "#include \"nothere.h\"\n#include <nor_here.h>\n#if __has_include(<absent.h>)\n#endif\n"},
		opts:  []string{"-I", "missing_dir"},
		want:  []string{"main.c"},
	}, {
		name: "forced includes",
		files: map[string]string{
			"main.c":       "",
			"pre.h":        "#include \"pre2.h\"\n",
			"pre2.h":       "",
			"inc/macros.h": "",
		},
		opts: []string{"-include", "pre.h", "-imacros", "macros.h", "-I", "inc"},
		want: []string{"main.c", "pre.h", "pre2.h", "inc/macros.h"},
	}, {
		name:  "forced include not found",
		files: map[string]string{"main.c": ""},
		opts:  []string{"-include", "absent.h"},
		bad:   "forced include absent.h not found",
	}, {
		name:  "extra dependencies",
		files: map[string]string{"main.c": "", "ign.txt": "", "pl.txt": ""},
		opts:  []string{"-fsanitize-ignorelist=ign.txt", "-fprofile-list=pl.txt", "-fdepfile-entry=absent.txt"},
		want:  []string{"main.c", "ign.txt", "pl.txt"},
	}, {
		// Every spelling of the options that add directories, as clang's
		// cc1 table has them: joined or separate, and "-I-", which cc1
		// reads as -I with the directory "-".
		name: "directory options in every spelling",
		files: map[string]string{
			"main.c": "#include <a1.h>\n#include <a2.h>\n#include <a3.h>\n#include <a4.h>\n#include <a5.h>\n" +
				"#include <a6.h>\n#include <a7.h>\n#include <a8.h>\n#include \"q1.h\"\n#include \"q2.h\"\n#include <dash.h>\n",
			"d1/a1.h": "", "d2/a2.h": "", "d3/a3.h": "", "d4/a4.h": "", "d5/a5.h": "", "d6/a6.h": "",
			"d7/a7.h": "", "d8/a8.h": "", "q1/q1.h": "", "q2/q2.h": "", "-/dash.h": "",
		},
		opts: []string{"-isystemd1", "-isystem", "d2", "-objcxx-isystem", "d3", "-cxx-isystem", "d4",
			"-c-isystem", "d5", "-objc-isystem", "d6", "-idirafterd7", "-I", "d8", "-iquoteq1", "-iquote", "q2", "-I-"},
		want: []string{"main.c", "d1/a1.h", "d2/a2.h", "d3/a3.h", "d4/a4.h", "d5/a5.h", "d6/a6.h", "d7/a7.h", "d8/a8.h",
			"q1/q1.h", "q2/q2.h", "-/dash.h"},
	}, {
		name:  "forced includes in every spelling",
		files: map[string]string{"main.c": "", "f1.h": "", "f2.h": "", "f3.h": "", "f4.h": ""},
		opts:  []string{"-includef1.h", "--include", "f2.h", "-imacrosf3.h", "--imacros", "f4.h"},
		want:  []string{"main.c", "f1.h", "f2.h", "f3.h", "f4.h"},
	}, {
		name:  "options that do not touch header search",
		files: map[string]string{"main.c": ""},
		opts: []string{"-inline-asm=att", "-init-only", "-nostdinc++", "--system-header-prefix=x/", "-U", "X",
			"-main-file-name", "-fmodules", "-mllvm", "-fmodule-file=x", "-plugin-arg-x", "-I="},
		want: []string{"main.c"},
	}, {
		name:  "header map",
		files: map[string]string{"main.c": "", "x.hmap": ""},
		opts:  []string{"-I", "x.hmap"},
		bad:   "not a directory",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			files, ok, why := New().Scan(cc1Line(tc.opts...), dir)
			if tc.bad != "" {
				if ok || !strings.Contains(why, tc.bad) {
					t.Fatalf("Scan = %v, %v, %q; want a failure with %q", files, ok, why, tc.bad)
				}
				return
			}
			if !ok {
				t.Fatalf("Scan failed: %s", why)
			}
			got := relTo(t, dir, files)
			for _, w := range tc.want {
				if !slices.Contains(got, filepath.Clean(w)) {
					t.Errorf("%s missing from %q", w, got)
				}
			}
			for _, w := range tc.notWant {
				if slices.Contains(got, w) {
					t.Errorf("%s in %q", w, got)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestScannerOptions checks the options Scan refuses, and the
// values of options that it must not take for options or inputs.
func TestScannerOptions(t *testing.T) {
	dir := writeTree(t, map[string]string{"main.c": "#include \"h.h\"\n", "h.h": "", "pch": ""})
	for _, tc := range []struct {
		args []string
		bad  string
	}{
		{cc1Line("-fmodules"), "-fmodules"},
		{cc1Line("-fmodule-map-file=m.modulemap"), "-fmodule-map-file"},
		{cc1Line("-fimplicit-module-maps"), "-fimplicit-module-maps"},
		{cc1Line("-fmodule-file=x.pcm"), "-fmodule-file"},
		{cc1Line("-include-pch", "pch"), "-include-pch"},
		{cc1Line("-iprefix", "p"), "-iprefix"},
		{cc1Line("-iwithprefix", "p"), "-iwithprefix"},
		{cc1Line("-iwithprefixbefore", "p"), "-iwithprefixbefore"},
		{cc1Line("-iwithsysroot", "p"), "-iwithsysroot"},
		{cc1Line("-F", "fw"), "-F"},
		{cc1Line("-Ffw"), "-Ffw"},
		{cc1Line("-iframework", "fw"), "-iframework"},
		{cc1Line("-iframeworkwithsysroot", "fw"), "-iframeworkwithsysroot"},
		{cc1Line("-internal-iframework", "fw"), "-internal-iframework"},
		{cc1Line("-ivfsoverlay", "o.yaml"), "-ivfsoverlay"},
		{cc1Line("-I=/usr/include"), "sysroot-relative"},
		{cc1Line("-isystem", "$SYSROOT/usr/include"), "sysroot-relative"},
		{cc1Line("-fms-compatibility"), "-fms-compatibility"},
		{cc1Line("-index-header-map"), "-index-header-map"},
		{cc1Line("-fbuild-session-timestamp=1"), "-fbuild-session-timestamp=1 is not modelled"},
		{cc1Line("-fprebuilt-module-path=p"), "-fprebuilt-module-path=p is not modelled"},
		{cc1Line("-fapinotes-modules"), "-fapinotes-modules is not modelled"},
		{cc1Line("-iapinotes-modules", "p"), "-iapinotes-modules p is not modelled"},
		{cc1Line("-vfsoverlay", "o.yaml"), "-vfsoverlay o.yaml is not modelled"},
		{cc1Line("-ivfsoverlayo.yaml"), "-ivfsoverlayo.yaml is not modelled"},
		{cc1Line("-remap-file", "a;b"), "-remap-file"},
		{cc1Line("-load", "p.so"), "-load"},
		{cc1Line("-iquote="), "sysroot-relative"},
		{cc1Line("--embed-dir="), "empty directory for --embed-dir"},
		{cc1Line("-isystem", ""), "empty directory for -isystem"},
		{cc1Line("-Xclang", "-I", "-Xclang", "x"), "clang -cc1 has no option -Xclang"},
		{cc1Line("-include"), "option -include lacks its value"},
		{[]string{"-cc1", "-nostdsysteminc", "-nobuiltininc", "-plugin-arg-x", "-x", "c", "main.c"}, "lacks its value"},
		{[]string{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-nostdsysteminc", "-nobuiltininc", "main.c"}, "-x LANG FILE"},
		{[]string{"-cc1", "-nostdsysteminc", "-nobuiltininc", "-x", "c", "main.c", "-x", "c", "other.c"}, "positional"},
		{[]string{"-cc1", "-nostdsysteminc", "-nobuiltininc", "-mllvm", "-x", "c", "main.c"}, "lacks its value"},
		{[]string{"-cc1", "-nostdsysteminc", "-nobuiltininc", "-x", "c", "absent.c"}, "main input"},
		{[]string{"-cc1", "-nostdsysteminc", "-x", "c", "main.c"}, "-resource-dir"},
		{[]string{"-cc1", "-nostdsysteminc", "-nobuiltininc", "-x", "ast", "main.c"}, "language"},
		{[]string{"-triple", "x", "-x", "c", "main.c"}, "not a clang -cc1"},
	} {
		files, ok, why := New().Scan(tc.args, dir)
		if ok || !strings.Contains(why, tc.bad) {
			t.Errorf("Scan(%q) = %v, %v, %q; want a failure with %q", tc.args, files, ok, why, tc.bad)
		}
	}
	// Values of separate options are not options, -x in the middle is
	// fine, -working-directory moves the base, -x ir is not preprocessed.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o777); err != nil {
		t.Fatal(err)
	}
	files, ok, why := New().Scan([]string{"-cc1", "-nostdsysteminc", "-nobuiltininc", "-mllvm", "-fmodules",
		"-x", "c", "-working-directory", "..", "-plugin-arg-foo", "-F", "-x", "c", "main.c"}, sub)
	if !ok || len(files) != 2 {
		t.Errorf("Scan = %v, %v, %q; want main.c and h.h", files, ok, why)
	}
	files, ok, why = New().Scan([]string{"-cc1", "-nostdsysteminc", "-nobuiltininc", "-x", "ir", "main.c"}, dir)
	if !ok || len(files) != 1 {
		t.Errorf("Scan(-x ir) = %v, %v, %q; want main.c alone", files, ok, why)
	}
}

// TestScannerMemo checks that a header's directives and a
// directory's listing are memoised while their stamps stay, and read again
// when they change.
func TestScannerMemo(t *testing.T) {
	dir := writeTree(t, map[string]string{"main.c": "#include \"h.h\"\n#include <new.h>\n", "h.h": "#include \"a.h\"\n",
		"a.h": "", "b.h": "", "longer.h": "", "inc/other.h": ""})
	h := filepath.Join(dir, "h.h")
	s := New()
	scan := func(want ...string) {
		t.Helper()
		files, ok, why := s.Scan(cc1Line("-I", "inc"), dir)
		if !ok {
			t.Fatal(why)
		}
		if got := relTo(t, dir, files); !slices.Equal(got, want) {
			t.Fatalf("Scan = %q, want %q", got, want)
		}
	}
	memo := func() *memoHeader {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.memo[h]
	}
	// Files changed just now are read again by every scan.
	scan("main.c", "h.h", "a.h")
	first := memo()
	scan("main.c", "h.h", "a.h")
	if first.stable || memo() == first {
		t.Fatalf("a header written just now was trusted")
	}

	// Files left alone for s.racy are trusted while their stamps stay.
	s.racy = 50 * time.Millisecond
	old := time.Now().Add(-time.Hour)
	setH := func(text string) {
		t.Helper()
		if err := os.WriteFile(h, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(h, old, old); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * s.racy)
	}
	if err := os.Chtimes(filepath.Join(dir, "inc"), old, old); err != nil {
		t.Fatal(err)
	}
	setH("#include \"a.h\"\n")
	scan("main.c", "h.h", "a.h")
	first = memo()
	scan("main.c", "h.h", "a.h")
	if !first.stable || memo() != first {
		t.Fatalf("a settled header was read again")
	}
	// Same size, same mtime (as cp -p would leave it): the ctime tells.
	setH("#include \"b.h\"\n")
	scan("main.c", "h.h", "b.h")
	setH("#include \"longer.h\"\n")
	scan("main.c", "h.h", "longer.h")
	// A header created in a directory listed before is found.
	if err := os.WriteFile(filepath.Join(dir, "inc/new.h"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	scan("main.c", "h.h", "inc/new.h", "longer.h")
}

// TestScannerConcurrent runs scans of different trees at once on
// one scanner (run it with -race).
func TestScannerConcurrent(t *testing.T) {
	dir := writeTree(t, map[string]string{"main.c": "#include \"h.h\"\n#include <s.h>\n", "h.h": "#include \"g.h\"\n", "g.h": "", "inc/s.h": ""})
	s := New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				files, ok, why := s.Scan(cc1Line("-I", "inc"), dir)
				if !ok || len(files) != 4 {
					t.Errorf("Scan = %v, %v, %q", files, ok, why)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestScannerSymlinkDotDot checks that a path whose ".." follows a
// symlink, which names another file than its clean form, fails the scan.
func TestScannerSymlinkDotDot(t *testing.T) {
	dir := writeTree(t, map[string]string{"main.c": "#include <x.h>\n", "real/a/b/x.h": "", "sub/x.h": ""})
	if err := os.Symlink(filepath.Join(dir, "real/a/b"), filepath.Join(dir, "sub/link")); err != nil {
		t.Skip(err)
	}
	// sub/link/.. is real/a (no x.h there: skipped); sub/link/../b is
	// real/a/b, whose x.h is not sub/b/x.h.
	files, ok, why := New().Scan(cc1Line("-I", "sub/link/..", "-I", "sub/link/../b"), dir)
	if ok || !strings.Contains(why, "clean path") {
		t.Fatalf("Scan = %v, %v, %q; want a failure about the clean path", files, ok, why)
	}
}

// clangCC1Lines returns the cc1 argument lists (argv[1:]) clang's driver
// writes for args, run in dir.
func clangCC1Lines(t testing.TB, clang, dir string, args ...string) [][]string {
	t.Helper()
	cmd := exec.Command(clang, append([]string{"-###"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clang -###: %v\n%s", err, out)
	}
	var lines [][]string
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, " \"") {
			continue
		}
		argv, err := actions.SplitHash(line)
		if err != nil {
			t.Fatalf("parsing %q: %v", line, err)
		}
		if len(argv) > 1 && argv[1] == "-cc1" {
			lines = append(lines, argv[1:])
		}
	}
	return lines
}

// clangDeps runs cc1 as a dependency-only preprocessor pass, as
// Client.scan does, and returns the files it lists (absolute and clean)
// and how long it took.
func clangDeps(t *testing.T, clang, dir string, cc1 []string) ([]string, time.Duration) {
	t.Helper()
	d := filepath.Join(t.TempDir(), "deps.d")
	args := append(slices.Clone(cc1), "-Eonly", "-dependency-file", d, "-MT", "x", "-sys-header-deps")
	cmd := exec.Command(clang, args...)
	cmd.Dir = dir
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clang %q: %v\n%s", args, err, out)
	}
	took := time.Since(start)
	deps, err := actions.ReadDepFile(d)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range deps {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		deps[i] = filepath.Clean(p)
	}
	return deps, took
}

// TestScannerSupersetOfClang checks Scan against clang's own
// dependency list for real cc1 lines, and logs how long each took.
func TestScannerSupersetOfClang(t *testing.T) {
	clang := llvmtest.Tool(t, "clang")
	hip, err := filepath.Abs("../../testdata/hip")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src, text string
		args            []string
		pick            string // a substring of the -triple of the cc1 line to use
	}{
		{name: "c", src: "m.c", text: "#include <stdio.h>\n#include <stdlib.h>\n#include <math.h>\nint main(void) { printf(\"%f\\n\", sqrt(2.0)); return 0; }\n",
			args: []string{"-c", "m.c"}},
		{name: "c++", src: "m.cpp", text: "#include <vector>\n#include <algorithm>\n#include <iostream>\n#include <memory>\n#include <cmath>\nint main() { std::vector<int> v{3, 1, 2}; std::sort(v.begin(), v.end()); std::cout << std::sqrt(2.0) << v[0]; }\n",
			args: []string{"-c", "m.cpp"}},
		{name: "openmp offload device", src: "omp.c", text: "#include <stdio.h>\n#include <omp.h>\n#include <math.h>\nint main(void) {\n#pragma omp target\n  { }\n  return 0;\n}\n",
			args: []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-c", "omp.c"}, pick: "amdgcn"},
		{name: "hip device", args: []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-c", "kernels.hip"}, pick: "amdgcn"},
		{name: "hip host", args: []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-c", "kernels.hip"}, pick: "x86_64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := hip
			if tc.src != "" {
				dir = writeTree(t, map[string]string{tc.src: tc.text})
			}
			var cc1 []string
			for _, l := range clangCC1Lines(t, clang, dir, tc.args...) {
				if i := slices.Index(l, "-triple"); tc.pick == "" || i >= 0 && strings.Contains(l[i+1], tc.pick) {
					cc1 = l
					break
				}
			}
			if cc1 == nil {
				t.Fatalf("no cc1 line for %s", tc.pick)
			}
			deps, clangTook := clangDeps(t, clang, dir, cc1)
			s := New()
			start := time.Now()
			files, ok, why := s.Scan(cc1, dir)
			cold := time.Since(start)
			if !ok {
				t.Fatalf("Scan failed: %s", why)
			}
			start = time.Now()
			const n = 20
			for range n {
				again, ok, why := s.Scan(cc1, dir)
				if !ok {
					t.Fatalf("warm Scan failed: %s", why)
				}
				if !slices.Equal(again, files) {
					t.Fatalf("warm Scan returned %d files, cold %d", len(again), len(files))
				}
			}
			warm := time.Since(start) / n
			for _, d := range deps {
				if !slices.Contains(files, d) {
					t.Errorf("clang reads %s, Scan misses it", d)
				}
			}
			t.Logf("clang lists %d files in %v; Scan returns %d, cold %v, warm %v", len(deps), clangTook, len(files), cold, warm)
		})
	}
}

// BenchmarkIncludeScan measures a warm and a cold scan of a C++ file
// including common libstdc++ headers.
func BenchmarkIncludeScan(b *testing.B) {
	clang := llvmtest.Tool(b, "clang")
	dir := b.TempDir()
	src := "#include <vector>\n#include <algorithm>\n#include <iostream>\n#include <memory>\n#include <cmath>\n"
	if err := os.WriteFile(filepath.Join(dir, "m.cpp"), []byte(src), 0o666); err != nil {
		b.Fatal(err)
	}
	cc1 := clangCC1Lines(b, clang, dir, "-c", "m.cpp")[0]
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, ok, why := New().Scan(cc1, dir); !ok {
				b.Fatal(why)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		s := New()
		s.Scan(cc1, dir)
		for b.Loop() {
			if _, ok, why := s.Scan(cc1, dir); !ok {
				b.Fatal(why)
			}
		}
	})
}

// FuzzIncludeDirectives feeds arbitrary bytes as a header to the directive
// parser: it must not panic, the names it finds are single-line, and its
// fast path agrees with lexing every token.
func FuzzIncludeDirectives(f *testing.F) {
	for _, seed := range []string{
		"#include <a.h>\n#include \"b.h\"\n",
		"#if __has_include(<x>) && defined(__has_include)\n#endif\n",
		"/* #include X */ // \\\n#include Y\n#include \\\r\n\"z\"",
		"R\"d(#include A)d\" u8\"s\" L'c' 1'0 .5e+3 %:include <q> #embed \"e\" limit(1)",
		"#pragma GCC dependency \"f\"\n#define __has_include(x) 0\n#include_next <",
		"\\", "#", "\"", "R\"", "/*", "#include \"", "__has_include(", "%:%:",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := parseDirectives(data)
		for _, r := range p.refs {
			if strings.ContainsAny(r.name, "\n\r") {
				t.Fatalf("name %q spans lines", r.name)
			}
		}
		// The fast path over lines that are not directives finds what
		// lexing every token finds.
		if slow := parseDirectivesWith(data, false); !reflect.DeepEqual(p, slow) {
			t.Fatalf("fast parse %+v; token by token %+v", p, slow)
		}
	})
}
