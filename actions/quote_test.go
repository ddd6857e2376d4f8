package actions

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// The table of DRIVER.md §3.5.
var quoteTable = []struct{ arg, hash, verbose string }{
	{`X=a b`, `"X=a b"`, `"X=a b"`},
	{`Y="q"`, `"Y=\"q\""`, `"Y=\"q\""`},
	{`Z=$H`, `"Z=\$H"`, `"Z=\$H"`},
	{`W=back\slash`, `"W=back\\slash"`, `"W=back\\slash"`},
	{`V=it's`, `"V=it's"`, `V=it's`},
	{``, `""`, ``},
	{"tab\there", "\"tab\there\"", "tab\there"},
	{"nl\nhere", "\"nl\nhere\"", "nl\nhere"},
	{`-O2`, `"-O2"`, `-O2`},
}

func TestQuote(t *testing.T) {
	for _, tc := range quoteTable {
		if got := QuoteHash(tc.arg); got != tc.hash {
			t.Errorf("QuoteHash(%q) = %q, want %q", tc.arg, got, tc.hash)
		}
		if got := QuoteVerbose(tc.arg); got != tc.verbose {
			t.Errorf("QuoteVerbose(%q) = %q, want %q", tc.arg, got, tc.verbose)
		}
	}
}

func TestFormat(t *testing.T) {
	args := []string{"/usr/bin/clang", "-cc1", "", "X=a b", `V=it's`}
	if got, want := FormatHash(args), ` "/usr/bin/clang" "-cc1" "" "X=a b" "V=it's"`; got != want {
		t.Errorf("FormatHash = %q, want %q", got, want)
	}
	if got, want := FormatVerbose(args), ` "/usr/bin/clang" -cc1  "X=a b" V=it's`; got != want {
		t.Errorf("FormatVerbose = %q, want %q", got, want)
	}
	if FormatHash(nil) != "" || FormatVerbose(nil) != "" {
		t.Error("empty argv should format as empty string")
	}
}

func TestSplitHash(t *testing.T) {
	good := []struct {
		line string
		want []string
	}{
		{``, nil},
		{` `, nil},
		{` "a" "b"`, []string{"a", "b"}},
		{` "a\"b" "c\\d" "\$x" ""` + "\n", []string{`a"b`, `c\d`, `$x`, ``}},
		{` "in\xner"`, []string{`inxner`}},
		{"\"a\"\t\"b\"\r\n", []string{"a", "b"}},
	}
	for _, tc := range good {
		got, err := SplitHash(tc.line)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("SplitHash(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
	bad := []string{` (in-process)`, ` "a`, ` "a\`, ` "a"b`, ` a`, ` "a" b`}
	for _, line := range bad {
		if got, err := SplitHash(line); err == nil || !errors.Is(err, ErrSyntax) {
			t.Errorf("SplitHash(%q) = %q, %v; want ErrSyntax", line, got, err)
		}
	}
	// Round trip of the table.
	var args []string
	for _, tc := range quoteTable {
		args = append(args, tc.arg)
	}
	got, err := SplitHash(FormatHash(args))
	if err != nil || !slices.Equal(got, args) {
		t.Errorf("round trip: %q, %v; want %q", got, err, args)
	}
}

func FuzzSplitHash(f *testing.F) {
	for _, tc := range quoteTable {
		f.Add(FormatHash([]string{tc.arg, "x"}))
		f.Add(tc.arg)
	}
	f.Add(` "a\`)
	f.Add("a\x00b\x00\x00\"\\$ ")
	f.Fuzz(func(t *testing.T, s string) {
		// Any line: no panic; what parses re-formats to an equivalent line.
		if args, err := SplitHash(s); err == nil {
			again, err := SplitHash(FormatHash(args))
			if err != nil || !slices.Equal(again, args) {
				t.Fatalf("reparse of %q: %q, %v; want %q", s, again, err, args)
			}
		}
		// Any argv (NUL-separated): FormatHash then SplitHash is the identity.
		args := strings.Split(s, "\x00")
		got, err := SplitHash(FormatHash(args))
		if err != nil || !slices.Equal(got, args) {
			t.Fatalf("round trip of %q: %q, %v", args, got, err)
		}
	})
}
