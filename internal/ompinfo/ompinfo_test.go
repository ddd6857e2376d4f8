package ompinfo

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// base is host IR as llvm-dis prints it (trimmed): two target regions, a
// declare target variable and an indirect function.
const base = `; ModuleID = 'a.c'
source_filename = "a.c"
target triple = "x86_64-pc-linux-gnu"

@gcount = global i32 3, align 4

define dso_local i32 @host_only(i32 %x) #0 {
entry:
  %mul = mul nsw i32 %x, 3, !dbg !9
  ret i32 %mul
}

attributes #0 = { nounwind }

!omp_offload.info = !{!0, !1, !2, !3}
!llvm.module.flags = !{!4, !5}
!llvm.ident = !{!6}

!0 = !{i32 0, i32 65024, i32 9977947, !"k1", i32 17, i32 0, i32 3}
!1 = !{i32 0, i32 65024, i32 9977947, !"k2", i32 21, i32 0, i32 2}
!2 = !{i32 1, !"__omp_offloading_fe00_98405b_ifn_l10", i32 8, i32 1}
!3 = !{i32 1, !"gcount", i32 0, i32 0}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 7, !"openmp", i32 51}
!6 = !{!"Debian clang version 22.1.8 (1~deb12u1)"}
!9 = !{}
`

// renumbered is base after a host-only change: more metadata, other node
// numbers, another module flag, other code.
const renumbered = `; ModuleID = 'a.c'
source_filename = "a.c"
target triple = "x86_64-pc-linux-gnu"

@banner = global [4 x i8] c"hi!\00", align 1
@gcount = global i32 3, align 4

define dso_local i32 @host_only(i32 %x) #0 {
entry:
  %mul = mul nsw i32 %x, 5, !tbaa !20
  ret i32 %mul
}

!llvm.module.flags = !{!0, !1, !2}
!omp_offload.info = !{!13, !11, !12, !10}
!llvm.ident = !{!3}
!omp_offload.info.other = !{!0}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 7, !"openmp", i32 45}
!2 = !{i32 7, !"uwtable", i32 2}
!3 = !{!"Debian clang version 22.1.8 (1~deb12u1)"}
!10 = !{i32 1, !"gcount", i32 0, i32 0}
!11 = !{i32 0, i32 65024, i32 9977947, !"k2", i32 21, i32 0, i32 2}
!12 = !{i32 1, !"__omp_offloading_fe00_98405b_ifn_l10", i32 8, i32 1}
!13 = !{i32 0, i32 65024, i32 9977947, !"k1", i32 17, i32 0, i32 3}
!20 = !DILocation(line: 3, scope: !21)
`

func digestOf(t *testing.T, text string) string {
	t.Helper()
	d, err := DigestText(strings.NewReader(text))
	if err != nil {
		t.Fatalf("DigestText: %v", err)
	}
	if len(d) != 64 {
		t.Fatalf("DigestText = %q, want 64 hex digits", d)
	}
	return d
}

func TestRenumberedSameDigest(t *testing.T) {
	// renumbered lists k1, k2, ifn, gcount as !13, !11, !12, !10: the same
	// entries in the same order as base's !0..!3.
	if a, b := digestOf(t, base), digestOf(t, renumbered); a != b {
		t.Errorf("digest changed with node numbers and host-only metadata:\n%s\n%s", a, b)
		ca, _ := Canonical(strings.NewReader(base))
		cb, _ := Canonical(strings.NewReader(renumbered))
		t.Logf("canonical:\n%s\n%s", ca, cb)
	}
}

func TestCanonicalText(t *testing.T) {
	got, err := Canonical(strings.NewReader(base))
	if err != nil {
		t.Fatal(err)
	}
	want := Version + "\n[" +
		`{i32:0,i32:65024,i32:9977947,s"k1",i32:17,i32:0,i32:3},` +
		`{i32:0,i32:65024,i32:9977947,s"k2",i32:21,i32:0,i32:2},` +
		`{i32:1,s"__omp_offloading_fe00_98405b_ifn_l10",i32:8,i32:1},` +
		`{i32:1,s"gcount",i32:0,i32:0}]` + "\n"
	if got != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", got, want)
	}
}

func TestChangesChangeDigest(t *testing.T) {
	ref := digestOf(t, base)
	for _, tc := range []struct{ name, old, new string }{
		{"line", `!"k1", i32 17,`, `!"k1", i32 18,`},
		{"parent name", `!"k2"`, `!"k3"`},
		{"file ID", `i32 9977947, !"k2"`, `i32 9977948, !"k2"`},
		{"device ID", `i32 65024, i32 9977947, !"k1"`, `i32 65025, i32 9977947, !"k1"`},
		{"order", `i32 21, i32 0, i32 2}`, `i32 21, i32 0, i32 4}`},
		{"count", `i32 21, i32 0, i32 2}`, `i32 21, i32 1, i32 2}`},
		{"global name", `!"gcount"`, `!"gcount2"`},
		{"global flags", `!"gcount", i32 0,`, `!"gcount", i32 1,`},
		{"entry added", `!{!0, !1, !2, !3}`, `!{!0, !1, !2, !3, !4}`},
		{"entry removed", `!{!0, !1, !2, !3}`, `!{!0, !1, !2}`},
		{"entries reordered", `!{!0, !1, !2, !3}`, `!{!1, !0, !2, !3}`},
		{"distinct", `!0 = !{i32 0,`, `!0 = distinct !{i32 0,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := strings.Replace(base, tc.old, tc.new, 1)
			if changed == base {
				t.Fatalf("test bug: %q not in base", tc.old)
			}
			if digestOf(t, changed) == ref {
				t.Errorf("digest unchanged after %s change", tc.name)
			}
		})
	}
}

func TestHostOnlyChangesKeepDigest(t *testing.T) {
	ref := digestOf(t, base)
	for _, tc := range []struct{ name, old, new string }{
		{"code", "mul nsw i32 %x, 3", "mul nsw i32 %x, 7"},
		{"module flag", `!"openmp", i32 51`, `!"openmp", i32 45`},
		{"ident", `!"Debian clang`, `!"Other clang`},
		{"module ID", `; ModuleID = 'a.c'`, `; ModuleID = '/tmp/x/a.c'`},
		{"spaces in list", `!{!0, !1, !2, !3}`, `!{ !0,!1 ,  !2, !3 }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := strings.Replace(base, tc.old, tc.new, 1)
			if changed == base {
				t.Fatalf("test bug: %q not in base", tc.old)
			}
			if got := digestOf(t, changed); got != ref {
				t.Errorf("digest changed after host-only %s change", tc.name)
			}
		})
	}
}

func TestNoInfoIsEmptyList(t *testing.T) {
	none := digestOf(t, "; ModuleID = 'a.c'\n!llvm.ident = !{!0}\n!0 = !{!\"clang\"}\n")
	empty := digestOf(t, "!omp_offload.info = !{}\n")
	nothing := digestOf(t, "")
	if none != empty || none != nothing {
		t.Errorf("no info %s, empty info %s, empty module %s: want equal", none, empty, nothing)
	}
	if none == digestOf(t, base) {
		t.Error("empty list has the digest of a non-empty one")
	}
}

func TestNestedDistinctAndCycles(t *testing.T) {
	a := `!omp_offload.info = !{!0}
!0 = distinct !{i32 0, !1, !2, null, i1 true, i64 -1}
!1 = !{!2, !"x"}
!2 = distinct !{!2, !1}
`
	// The same graph with other numbers and definition order.
	b := `!omp_offload.info = !{!7}
!5 = distinct !{!5, !6}
!6 = !{!5, !"x"}
!7 = distinct !{i32 0, !6, !5, null, i1 true, i64 -1}
`
	if da, db := digestOf(t, a), digestOf(t, b); da != db {
		ca, _ := Canonical(strings.NewReader(a))
		cb, _ := Canonical(strings.NewReader(b))
		t.Errorf("renumbered graph: different digests\n%s%s", ca, cb)
	}
	// !2 no longer points at itself but at !1.
	c := strings.Replace(a, "!2 = distinct !{!2, !1}", "!2 = distinct !{!1, !1}", 1)
	if digestOf(t, a) == digestOf(t, c) {
		t.Error("changed cycle kept the digest")
	}
	got, err := Canonical(strings.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	want := Version + "\n[" + `d{i32:0,{d{^0,^1},s"x"},d{^0,{^1,s"x"}},null,i1:true,i64:-1}` + "]\n"
	if got != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", got, want)
	}
}

func TestEscapedStrings(t *testing.T) {
	mk := func(s string) string {
		return "!omp_offload.info = !{!0}\n!0 = !{i32 1, !\"" + s + "\", i32 0, i32 0}\n"
	}
	q := digestOf(t, mk(`a\22b, !{c}`))
	if q == digestOf(t, mk(`a\22c, !{c}`)) {
		t.Error("different escaped strings, same digest")
	}
	if q == digestOf(t, mk(`a\5Cb, !{c}`)) {
		t.Error("different escapes, same digest")
	}
	got, err := Canonical(strings.NewReader(mk(`a\22b, !{c}`)))
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{i32:1,s"a\22b, !{c}",i32:0,i32:0}]`; !strings.Contains(got, want) {
		t.Errorf("Canonical = %q, want it to contain %q", got, want)
	}
}

func TestUnexpectedFormsAreErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"undefined node", "!omp_offload.info = !{!0, !1}\n!0 = !{i32 0}\n", "!1 is undefined"},
		{"specialised node", "!omp_offload.info = !{!0}\n!0 = !DILocation(line: 1, scope: !1)\n", "not a generic node"},
		{"pointer operand", "!omp_offload.info = !{!0}\n!0 = !{ptr @x}\n", "unsupported operand"},
		{"float operand", "!omp_offload.info = !{!0}\n!0 = !{float 1.0}\n", "unsupported operand"},
		{"bad int", "!omp_offload.info = !{!0}\n!0 = !{i32 x}\n", "unsupported i32 value"},
		{"inline node", "!omp_offload.info = !{!0}\n!0 = !{!{i32 1}}\n", "unsupported operand"},
		{"inline node in list", "!omp_offload.info = !{!{i32 1}}\n", "not a node reference"},
		{"list form", "!omp_offload.info = !0\n", "want !{...}"},
		{"unterminated string", "!omp_offload.info = !{!0}\n!0 = !{!\"abc}\n", "unterminated string"},
		{"bad escape", "!omp_offload.info = !{!0}\n!0 = !{!\"a\\2\"}\n", "bad escape"},
		{"missing comma", "!omp_offload.info = !{!0}\n!0 = !{i32 1 i32 2}\n", "want ',' or '}'"},
		{"trailing text", "!omp_offload.info = !{!0}\n!0 = !{i32 1}, !1\n", "unexpected text"},
		{"duplicate named", "!omp_offload.info = !{}\n!omp_offload.info = !{}\n", "more than once"},
		{"duplicate node", "!omp_offload.info = !{!0}\n!0 = !{i32 1}\n!0 = !{i32 2}\n", "!0 is defined more than once"},
		{"bad node line", "!omp_offload.info = !{!0}\n!0 := !{i32 1}\n", "unexpected form"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DigestText(strings.NewReader(tc.text))
			if err == nil {
				t.Fatalf("DigestText = %s, want an error", d)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestUnreachableNodesIgnored(t *testing.T) {
	// Forms the parser rejects are fine where omp_offload.info does not
	// reach them.
	text := base + "!30 = !DIFile(filename: \"a.c\", directory: \"/tmp\")\n!31 = !{ptr @gcount, float 1.0}\n"
	if digestOf(t, text) != digestOf(t, base) {
		t.Error("unreachable nodes changed the digest")
	}
}

func TestDeepNesting(t *testing.T) {
	var b strings.Builder
	b.WriteString("!omp_offload.info = !{!0}\n")
	for i := 0; i < maxDepth+5; i++ {
		b.WriteString("!" + itoa(i) + " = !{!" + itoa(i+1) + "}\n")
	}
	b.WriteString("!" + itoa(maxDepth+5) + " = !{}\n")
	if _, err := DigestText(strings.NewReader(b.String())); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("err = %v, want a nesting error", err)
	}
}

func TestSharedSubtreesBounded(t *testing.T) {
	// Each node references the next twice: 2^60 expansions unless the
	// canonicaliser memoises (it does) or bounds the text (it does too).
	var b strings.Builder
	b.WriteString("!omp_offload.info = !{!0}\n")
	for i := 0; i < 60; i++ {
		b.WriteString("!" + itoa(i) + " = !{!" + itoa(i+1) + ", !" + itoa(i+1) + "}\n")
	}
	b.WriteString("!60 = !{i32 1}\n")
	_, err := DigestText(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("err = %v, want a size error", err)
	}
}

func TestLongLines(t *testing.T) {
	// Lines longer than the reader's buffer, both skipped and kept.
	long := "@big = global [1 x i8] c\"" + strings.Repeat("x", 1<<20) + "\"\n"
	name := strings.Repeat("n", 600<<10)
	text := long + "!omp_offload.info = !{!0}\n" + long +
		"!0 = !{i32 1, !\"" + name + "\", i32 0, i32 0}\n" + long
	got, err := Canonical(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `s"`+name+`"`) {
		t.Error("long string lost")
	}
	other := strings.Replace(text, name+`"`, name+`m"`, 1)
	if digestOf(t, text) == digestOf(t, other) {
		t.Error("long strings differing at the end, same digest")
	}
}

func TestCRLF(t *testing.T) {
	crlf := strings.ReplaceAll(base, "\n", "\r\n")
	if digestOf(t, crlf) != digestOf(t, base) {
		t.Error("CRLF line ends changed the digest")
	}
}

func TestDigestToolErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Digest(ctx, filepath.Join(dir, "no-such-llvm-dis"), "x.bc"); err == nil {
		t.Error("missing tool: no error")
	}
	// A fake llvm-dis that fails with a message.
	fake := filepath.Join(dir, "llvm-dis")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'error: Invalid bitcode signature' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Digest(ctx, fake, "x.bc")
	if err == nil || !strings.Contains(err.Error(), "Invalid bitcode signature") {
		t.Errorf("err = %v, want the tool's stderr", err)
	}
	// A fake that prints text.
	ok := filepath.Join(dir, "llvm-dis-ok")
	script := "#!/bin/sh\n[ \"$1 $2 $3\" = '--materialize-metadata -o -' ] || exit 3\ncase \"$4\" in -*) exit 4;; esac\ncat <<'EOF'\n" + base + "EOF\n"
	if err := os.WriteFile(ok, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Digest(ctx, ok, "-host.bc")
	if err != nil {
		t.Fatal(err)
	}
	if want := digestOf(t, base); got != want {
		t.Errorf("Digest = %s, want %s", got, want)
	}
	// Output the canonicaliser rejects.
	bad := filepath.Join(dir, "llvm-dis-bad")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho '!omp_offload.info = !{!0}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Digest(ctx, bad, "h.bc"); err == nil || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("err = %v, want undefined node", err)
	}
	// A cancelled context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Digest(cctx, ok, "h.bc"); err == nil {
		t.Error("cancelled context: no error")
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

var longRef = regexp.MustCompile(`![0-9]{10,}`)

func FuzzDigestText(f *testing.F) {
	f.Add(base)
	f.Add(renumbered)
	f.Add("!omp_offload.info = !{!0}\n!0 = distinct !{!0, !\"a\\22\"}\n")
	f.Add("!omp_offload.info = !{}\n")
	f.Fuzz(func(t *testing.T, text string) {
		if longRef.MatchString(text) {
			return // node numbers that overflow when shifted
		}
		d1, err1 := DigestText(strings.NewReader(text))
		d2, err2 := DigestText(strings.NewReader(text))
		if (err1 == nil) != (err2 == nil) || d1 != d2 {
			t.Fatalf("not deterministic: %s %v / %s %v", d1, err1, d2, err2)
		}
		if err1 != nil {
			return
		}
		// Shifting every node number keeps the digest.
		shifted := shiftNodes(text, 1000)
		d3, err := DigestText(strings.NewReader(shifted))
		if err != nil || d3 != d1 {
			t.Fatalf("renumbering changed the result: %s %v, was %s\n%q", d3, err, d1, shifted)
		}
	})
}

// shiftNodes adds k to every node number !N outside strings, on the lines
// that start with '!'.
func shiftNodes(text string, k int) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if !strings.HasPrefix(line, "!") {
			out.WriteString(line)
			continue
		}
		inStr := false
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case inStr:
				if c == '"' {
					inStr = false
				}
				out.WriteByte(c)
			case c == '!' && i+1 < len(line) && line[i+1] == '"':
				inStr = true
				out.WriteString(`!"`)
				i++
			case c == '!' && i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9':
				j := i + 1
				n := 0
				for j < len(line) && line[j] >= '0' && line[j] <= '9' && n < 1<<40 {
					n = n*10 + int(line[j]-'0')
					j++
				}
				out.WriteString("!" + itoa(n+k))
				i = j - 1
			default:
				out.WriteByte(c)
			}
		}
	}
	return out.String()
}
