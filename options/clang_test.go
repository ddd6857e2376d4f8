package options_test

// Verification of offcc's copy of clang's option table against the
// installed clang 22 (and clang 19's, clang19_test.go): the committed
// table is what genoptions makes of clang's Options.inc, every option clang's help lists is in the table
// with the kind the help shows, clang reports a missing value where the
// parser does, and the parser holds its invariants on any command line.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/options/internal/gen"
)

// generatedTable is one release's generated clang table: where its
// Options.inc is installed, the variables' prefix and the files.
type generatedTable struct {
	origin, name, records, index string
	// missing skips (or fails) the test when origin is absent.
	missing func(t testing.TB, format string, args ...any)
	pkg     string
}

var generatedTables = []generatedTable{
	{gen.Origin, "clang", "clang_records.go", "clang_index.go", llvmtest.Missing, "libclang-22-dev"},
	{gen.Origin19, "clang19", "clang19_records.go", "clang19_index.go", options.LLVM19Missing, "libclang-19-dev"},
}

// readGenerated parses g's Options.inc, skipping the test where it is not
// installed.
func readGenerated(t *testing.T, g generatedTable, file string) []options.Record {
	t.Helper()
	inc, err := os.ReadFile(g.origin)
	if errors.Is(err, fs.ErrNotExist) {
		g.missing(t, "%s is missing: %s is needed to check %s", g.origin, g.pkg, file)
	}
	if err != nil {
		t.Fatal(err)
	}
	recs, err := gen.Parse(inc)
	if err != nil {
		t.Fatalf("%s: %v", g.origin, err)
	}
	return recs
}

// TestClangIndexIsGenerated checks that clang_index.go (and
// clang19_index.go) is what genoptions makes of the installed Options.inc.
func TestClangIndexIsGenerated(t *testing.T) {
	for _, g := range generatedTables {
		t.Run(g.name, func(t *testing.T) {
			recs := readGenerated(t, g, g.index)
			want, err := gen.IndexSource("options", g.name+"Index", g.name+"Records", g.origin, recs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(g.index)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is not what genoptions makes of %s: run go generate ./options", g.index, g.origin)
			}
		})
	}
}

// TestClangTableIsGenerated checks that clang_records.go (and
// clang19_records.go) is what genoptions makes of the installed
// Options.inc.
func TestClangTableIsGenerated(t *testing.T) {
	for _, g := range generatedTables {
		t.Run(g.name, func(t *testing.T) { checkGenerated(t, g) })
	}
}

func checkGenerated(t *testing.T, g generatedTable) {
	recs := readGenerated(t, g, g.records)
	want, err := gen.Source("options", g.name+"Records", g.origin, recs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(g.records)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	// Each record is one line: list the first lines each side lacks.
	wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	onlyIn := func(a, b []string) []string {
		in := map[string]bool{}
		for _, l := range b {
			in[l] = true
		}
		var out []string
		for _, l := range a {
			if !in[l] && len(out) < 5 {
				out = append(out, "\t"+strings.TrimSpace(l))
			}
		}
		return out
	}
	t.Fatalf("%s is not what %s makes (%d records): run go generate ./options\n"+
		"first records of Options.inc not in %s:\n%s\n"+
		"first lines of %s not from Options.inc:\n%s",
		g.records, g.origin, len(recs), g.records, strings.Join(onlyIn(wantLines, gotLines), "\n"),
		g.records, strings.Join(onlyIn(gotLines, wantLines), "\n"))
}

// runClang runs clang at path in dir, without the environment variables
// that add options (CCC_OVERRIDE_OPTIONS, CPATH...). A clang that exits
// with an error is no error; one that cannot start or runs a minute is.
func runClang(path, dir string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "CCC_") || strings.HasPrefix(kv, "CPATH=")
	})
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil || err != nil && !errors.As(err, new(*exec.ExitError)) {
		return "", "", fmt.Errorf("clang %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), nil
}

// helpEntry is one option of clang's --help: its spelling, the text that
// shows its value, and how: "joined" (-std=<value>), "separate"
// (-o <file>) or "flag".
type helpEntry struct {
	line, spelling, shape string
}

// helpEntries reads clang's help. An option's line starts with two
// spaces and its spelling (llvm::opt::OptTable::printHelp); its value's
// name, if any, follows the spelling (joined) or a space (separate), and
// starts with '<' or '['.
func helpEntries(help string) []helpEntry {
	var out []helpEntry
	for _, line := range strings.Split(help, "\n") {
		rest, ok := strings.CutPrefix(line, "  ")
		if !ok || rest == "" || rest[0] != '-' && rest[0] != '/' {
			continue
		}
		e := helpEntry{line: rest, spelling: rest, shape: "flag"}
		if i := strings.IndexAny(rest, " <["); i >= 0 {
			e.spelling = rest[:i]
			switch after := rest[i:]; {
			case after[0] != ' ':
				e.shape = "joined"
			case strings.HasPrefix(after, " <") || strings.HasPrefix(after, " ["):
				e.shape = "separate"
			}
		}
		out = append(out, e)
	}
	return out
}

// helpName is how clang's help shows an option and its value
// (getOptionHelpName in llvm/lib/Option/OptTable.cpp).
func helpName(o *options.Option) string {
	meta := o.MetaVar
	if meta == "" {
		meta = "<value>"
	}
	switch o.Kind {
	case options.MultiArg:
		if o.MetaVar != "" {
			return o.Spelling() + " " + o.MetaVar
		}
		return o.Spelling() + strings.Repeat(" <value>", o.NumArgs)
	case options.Separate, options.JoinedOrSeparate, options.RemainingArgs, options.RemainingArgsJoined:
		return o.Spelling() + " " + meta
	case options.Joined, options.CommaJoined, options.JoinedAndSeparate:
		return o.Spelling() + meta
	}
	return o.Spelling()
}

// shapeKinds are the kinds an option may have whose help shows its value
// so.
var shapeKinds = map[string][]options.Kind{
	"joined": {options.Joined, options.CommaJoined, options.JoinedAndSeparate},
	"separate": {options.Separate, options.JoinedOrSeparate, options.JoinedAndSeparate,
		options.MultiArg, options.RemainingArgs, options.RemainingArgsJoined},
	"flag": {options.Flag, options.Joined, options.CommaJoined},
}

// TestClangHelpMatchesTable checks every option of clang's help (the
// driver's --help-hidden; cc1 has no --help-hidden, so its --help) against
// the table: the spelling parses to an option spelled so, whose kind
// takes a value as the help shows it, and whose help name (spelling and
// metavar) is the help's.
func TestClangHelpMatchesTable(t *testing.T) {
	checkHelp(t, llvmtest.Clang(t), options.ClangDriver(), options.ClangCC1())
}

// checkHelp is TestClangHelpMatchesTable for the clang at path, whose
// driver and cc1 tables are drv and cc1.
func checkHelp(t *testing.T, path string, drv, cc1 *options.Table) {
	t.Helper()
	for _, c := range []struct {
		tab  *options.Table
		args []string
	}{
		{drv, []string{"--no-default-config", "--help-hidden"}},
		{cc1, []string{"-cc1", "--help"}},
	} {
		stdout, stderr, err := runClang(path, t.TempDir(), c.args...)
		if err != nil {
			t.Fatal(err)
		}
		entries := helpEntries(stdout)
		if len(entries) < 500 {
			t.Fatalf("clang %s: %d options in its help?\n%s", strings.Join(c.args, " "), len(entries), stderr)
		}
		var bad []string
		shapes := map[string]int{}
		for _, e := range entries {
			shapes[e.shape]++
			a, err := c.tab.ParseOne([]string{e.spelling, "v", "v", "v", "v"}, 0)
			if err != nil || a.IsUnknown() || a.IsInput() {
				bad = append(bad, fmt.Sprintf("%s: no option (%v)", e.spelling, err))
				continue
			}
			o := a.Option
			if a.Alias != nil {
				o = a.Alias.Option
			}
			if o.Spelling() != e.spelling {
				bad = append(bad, fmt.Sprintf("%s: parses as %s (%s), spelled %s", e.spelling, o.ID, o.Kind, o.Spelling()))
				continue
			}
			if !slices.Contains(shapeKinds[e.shape], o.Kind) {
				bad = append(bad, fmt.Sprintf("%s: help shows %q (a %s value), the table's %s is %s", e.spelling, short(e.line), e.shape, o.ID, o.Kind))
				continue
			}
			if h := helpName(o); !strings.HasPrefix(e.line, h) || len(e.line) > len(h) && e.line[len(h)] != ' ' {
				bad = append(bad, fmt.Sprintf("%s: help shows %q, the table's %s would show %q", e.spelling, short(e.line), o.ID, h))
			}
		}
		t.Logf("%s (%s): %d options of clang's help checked (by how the help shows a value: %v)", c.tab.Tool, path, len(entries), shapes)
		if len(bad) > 0 {
			t.Errorf("%s %s disagrees with the %s table on %d options:\n\t%s",
				path, strings.Join(c.args, " "), c.tab.Tool, len(bad), strings.Join(bad, "\n\t"))
		}
	}
}

// TestClangProbeKinds asks clang what its help cannot tell: that each
// driver option of kind Separate takes its value from the next argument
// (clang reports it missing at the end of the command line, as the
// parser does) and not joined (spelling+"X" is not that option: clang
// reports it unknown exactly where the parser finds no option).
func TestClangProbeKinds(t *testing.T) {
	probeKinds(t, llvmtest.Clang(t), options.ClangDriver())
}

// probeKinds is TestClangProbeKinds for the clang at path, whose driver
// table is drv.
func probeKinds(t *testing.T, path string, drv *options.Table) {
	t.Helper()
	dir := t.TempDir()
	var probes []*options.Option
	for _, o := range drv.Options() {
		if o.Kind == options.Separate && o.Visibility&options.DefaultVis != 0 {
			probes = append(probes, o)
		}
	}
	if len(probes) < 100 {
		t.Fatalf("%d Separate options in the driver's table?", len(probes))
	}
	if testing.Short() {
		// A deterministic sample of 40.
		step := len(probes) / 40
		var sample []*options.Option
		for i := 0; i < len(probes) && len(sample) < 40; i += step {
			sample = append(sample, probes[i])
		}
		probes = sample
	}
	start := time.Now()
	var (
		mu  sync.Mutex
		bad []string
		wg  sync.WaitGroup
		sem = make(chan struct{}, 4)
	)
	report := func(format string, args ...any) {
		mu.Lock()
		bad = append(bad, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for _, o := range probes {
		sp := o.Spelling()
		// spelling+"X" first, with the words it takes (-Xarch_hostX
		// is -Xarch_ host and a value), then the spelling alone.
		argv := []string{sp + "X", sp}
		joined, _ := drv.ParseOne(argv, 0)
		if joined.Count > 1 {
			argv = append(slices.Repeat([]string{"v"}, joined.Count), sp)
			argv[0] = sp + "X"
		}
		_, perr := drv.Parse(argv)
		var missing *options.MissingValueError
		if !errors.As(perr, &missing) {
			report("%s: the parser says %v, not a missing value", sp, perr)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, stderr, err := runClang(path, dir, append([]string{"--no-default-config", "-###"}, argv...)...)
			if err != nil {
				report("%v", err)
				return
			}
			if want := "error: " + missing.Error(); !strings.Contains(stderr, want) {
				report("%s: clang does not say %q:\n%s", sp, want, stderr)
			}
			unknown := strings.Contains(stderr, "unknown argument: '"+sp+"X'") ||
				strings.Contains(stderr, "unknown argument '"+sp+"X'")
			if unknown != joined.IsUnknown() {
				report("%sX: clang says unknown %v, the parser reads it as %s %q", sp, unknown, joined.Option.ID, joined.Values)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d Separate options probed in %v", len(probes), time.Since(start).Round(time.Millisecond))
	if len(bad) > 0 {
		slices.Sort(bad)
		t.Errorf("clang disagrees on %d Separate options:\n\t%s", len(bad), strings.Join(bad, "\n\t"))
	}
}

// FuzzClangParse parses NUL-separated command lines with the driver's
// and cc1's tables: the parser never panics, the arguments it returns
// take the command line's words in order, each exactly once (up to a
// missing value at the end), and an argument of an option (not an alias,
// nor unknown, nor an input) renders as the words typed, except where
// its render style rewrites them:
//
//   - a JoinedOrSeparate or RemainingArgsJoined option typed joined, or
//     a Joined one with the RenderSeparate flag, renders separate (-Ifoo
//     as -I foo);
//   - a Separate or JoinedOrSeparate option typed separate renders joined
//     where it has the RenderJoined flag;
//   - a CommaJoined option drops empty values (-Wl,a,,b as -Wl,a,b).
//
// There the words rendered, concatenated, are the words typed,
// concatenated (without the empty values).
func FuzzClangParse(f *testing.F) {
	for _, seed := range []string{
		"-cc1\x00-triple\x00x86_64-pc-linux-gnu\x00-emit-obj\x00-o\x00a.o\x00-x\x00c\x00a.c",
		"-c\x00-Iinc\x00-I\x00inc2\x00-DX=1\x00-Wl,-rpath,,/x\x00-Xarch_gfx90a\x00-O3\x00a.c",
		"-isystem-afterdir\x00-objc-isystemd\x00-plugin-arg-p\x00a\x00--\x00x\x00-y",
		"-sectcreate\x00a\x00b\x00-Xclang",
		"-fmodule-file=a=b\x00-save-temps\x00--output=x\x00-o\x00",
		"/link\x00-\x00\x00--sysroot\x00/s",
	} {
		f.Add(seed)
	}
	tables := []*options.Table{options.ClangDriver(), options.ClangCC1()}
	f.Fuzz(func(t *testing.T, line string) {
		argv := strings.Split(line, "\x00")
		for _, tab := range tables {
			args, err := tab.Parse(argv)
			next := 0
			for _, a := range args {
				if a.Index != next || a.Count < 1 || a.Index+a.Count > len(argv) {
					t.Fatalf("%s %q: argument %s at %d+%d, want at %d", tab.Tool, argv, a.Spelling, a.Index, a.Count, next)
				}
				next += a.Count
				checkRender(t, tab, argv, a)
			}
			var missing *options.MissingValueError
			switch {
			case err == nil && next != len(argv):
				t.Fatalf("%s %q: arguments end at %d of %d", tab.Tool, argv, next, len(argv))
			case err != nil && !errors.As(err, &missing):
				t.Fatalf("%s %q: %v", tab.Tool, argv, err)
			case err != nil && (missing.Index != next || next+1+missing.Count <= len(argv)):
				t.Fatalf("%s %q: %v at %d, after arguments ending at %d", tab.Tool, argv, err, missing.Index, next)
			}
		}
	})
}

func checkRender(t *testing.T, tab *options.Table, argv []string, a *options.Arg) {
	t.Helper()
	o := a.Option
	if a.Alias != nil || a.IsUnknown() || a.IsInput() {
		return
	}
	words, rendered := a.Words(argv), a.Render()
	keeps := true
	switch {
	case o.RenderStyle() == options.RenderSeparateStyle && a.Count == 1 && len(a.Values) > 0:
		keeps = false // a value typed joined
	case o.RenderStyle() == options.RenderJoinedStyle && a.Count > 1 &&
		(o.Kind == options.Separate || o.Kind == options.JoinedOrSeparate):
		keeps = false // a value typed separate
	case o.Kind == options.CommaJoined && slices.Contains(strings.Split(words[0][len(a.Spelling):], ","), ""):
		keeps = false
	}
	if keeps {
		if !slices.Equal(words, rendered) {
			t.Fatalf("%s %q: %s renders %q", tab.Tool, words, o.ID, rendered)
		}
		return
	}
	typedText := strings.Join(words, "")
	if o.Kind == options.CommaJoined {
		typedText = a.Spelling + strings.Join(slices.DeleteFunc(strings.Split(typedText[len(a.Spelling):], ","),
			func(s string) bool { return s == "" }), ",")
	}
	if got := strings.Join(rendered, ""); got != typedText {
		t.Fatalf("%s %q: %s renders %q", tab.Tool, words, o.ID, rendered)
	}
}

// short cuts a help line after its first 60 bytes.
func short(line string) string {
	if len(line) > 60 {
		return line[:60] + "..."
	}
	return line
}
