package options

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// lldSynthetic are the IDs of LLD's records that are not in lld's ELF
// option table (lldDriverRecords).
var lldSynthetic = map[string]bool{"flavor": true, "plugin_opt": true}

// lldHelpName returns the option column --help shows for o, as
// llvm::opt::OptTable's getOptionHelpName writes it.
func lldHelpName(o *Option) string {
	meta := o.MetaVar
	if meta == "" {
		meta = "<value>"
	}
	switch o.Kind {
	case Separate, JoinedOrSeparate:
		return o.Spelling() + " " + meta
	case Joined, CommaJoined:
		return o.Spelling() + meta
	}
	return o.Spelling()
}

// lldHelp runs ld.lld --help and returns the option column of each of its
// option lines, in order.
func lldHelp(t *testing.T, lld string) []string {
	t.Helper()
	out, err := exec.Command(lld, "--help").Output()
	if err != nil {
		t.Fatalf("%s --help: %v", lld, err)
	}
	_, body, ok := strings.Cut(string(out), "\nOPTIONS:\n")
	if !ok {
		t.Fatalf("%s --help shows no OPTIONS:\n%s", lld, out)
	}
	body, _, _ = strings.Cut(body, "\n\n")
	lines := strings.Split(body, "\n")
	// Help texts start in one column; a name too long for the column
	// stands alone, its help text on the next line.
	col := 0
	for _, l := range lines {
		if n := len(l) - len(strings.TrimLeft(l, " ")); n > 2 && (col == 0 || n < col) {
			col = n
		}
	}
	var names []string
	for i, l := range lines {
		if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ") {
			continue
		}
		alone := i+1 < len(lines) && strings.HasPrefix(lines[i+1], strings.Repeat(" ", col))
		if alone || len(l) <= col {
			names = append(names, strings.TrimSpace(l))
		} else {
			names = append(names, strings.TrimSpace(l[:col]))
		}
	}
	if len(names) < 100 {
		t.Fatalf("%s --help shows %d options; the parse of its output is wrong:\n%s", lld, len(names), out)
	}
	return names
}

// TestLLDTableMatchesInstalled checks the table against the installed
// ld.lld's --help: every option it shows must be a record that --help
// would show the same way (prefix, name, kind and value name), and the
// records must come in the order --help lists them, which is lld's
// table's.
func TestLLDTableMatchesInstalled(t *testing.T) {
	checkLLDHelp(t, LLD(), llvmtest.Tool(t, "ld.lld"))
}

// checkLLDHelp is TestLLDTableMatchesInstalled for the table of the
// ld.lld at path lld.
func checkLLDHelp(t *testing.T, table *Table, lld string) {
	t.Helper()
	opts := table.Options()
	pos := map[string]int{} // help name -> index in opts
	for i, o := range opts {
		if _, dup := pos[lldHelpName(o)]; !dup {
			pos[lldHelpName(o)] = i
		}
	}
	var bad []string
	last, lastName := -1, ""
	for _, h := range lldHelp(t, lld) {
		i, ok := pos[h]
		if !ok {
			bad = append(bad, "  "+h+": "+lldNear(opts, h))
			continue
		}
		if i < last {
			bad = append(bad, "  "+h+": the table has it before "+lastName+", --help after")
		}
		last, lastName = i, h
	}
	if len(bad) > 0 {
		t.Errorf("ld.lld --help (%s) disagrees with the table:\n%s", lld, strings.Join(bad, "\n"))
	}
}

// lldNear describes the records spelled like the help name h, for a
// mismatch.
func lldNear(opts []*Option, h string) string {
	tok, _, _ := strings.Cut(h, " ")
	var near []string
	for _, o := range opts {
		for _, p := range o.Prefixes {
			s := p + o.Name
			if s == tok || strings.HasPrefix(tok, s) && o.Kind == Joined && len(o.Name) > 1 {
				near = append(near, o.ID+" ("+o.Kind.String()+", shown as "+strings.TrimSpace(lldHelpName(o))+")")
				break
			}
		}
	}
	if len(near) == 0 {
		return "no record of the table is spelled so"
	}
	return "the table has " + strings.Join(near, "; ")
}

// lldProbeArgs returns the words that spell o with prefix p and the value
// "0".
func lldProbeArgs(o *Option, p string) []string {
	s := p + o.Name
	switch o.Kind {
	case Joined:
		return []string{s + "0"}
	case Separate, JoinedOrSeparate:
		return []string{s, "0"}
	}
	return []string{s}
}

// lldUnknown runs ld.lld with args in dir and returns the arguments it
// reports as unknown, and its standard error.
func lldUnknown(t *testing.T, lld, dir string, args ...string) ([]string, string) {
	t.Helper()
	cmd := exec.Command(lld, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", lld, err)
	}
	var unknown []string
	for _, m := range regexp.MustCompile(`unknown argument '([^']*)'`).FindAllStringSubmatch(stderr.String(), -1) {
		unknown = append(unknown, m[1])
	}
	return unknown, stderr.String()
}

// TestLLDSpellingsKnownToInstalled runs every spelling of the table, with
// every prefix, through the installed ld.lld (with --help, which stops it
// before it acts on any of them) and fails for each one it reports as an
// unknown argument: the reverse of TestLLDTableMatchesInstalled, for the
// options --help does not show too.
func TestLLDSpellingsKnownToInstalled(t *testing.T) {
	checkLLDSpellings(t, LLD(), llvmtest.Tool(t, "ld.lld"))
}

// checkLLDSpellings is TestLLDSpellingsKnownToInstalled for the table of
// the ld.lld at path lld.
func checkLLDSpellings(t *testing.T, table *Table, lld string) {
	t.Helper()
	args := []string{"--help", "--error-limit=0"}
	for _, o := range table.Options() {
		if lldSynthetic[o.ID] {
			continue
		}
		for _, p := range o.Prefixes {
			args = append(args, lldProbeArgs(o, p)...)
		}
	}
	if unknown, stderr := lldUnknown(t, lld, t.TempDir(), args...); len(unknown) > 0 {
		t.Errorf("ld.lld reports spellings of the table as unknown: %q\n%s", unknown, stderr)
	}
}

// lldParse parses argv with LLD, failing the test on an error.
func lldParse(t *testing.T, argv ...string) []*Arg {
	t.Helper()
	args, err := LLD().Parse(argv)
	if err != nil {
		t.Fatalf("parse %q: %v", argv, err)
	}
	return args
}

func TestLLDScriptSpellings(t *testing.T) {
	for _, argv := range [][]string{
		{"-T", "x"}, {"-Tx"}, {"--script", "x"}, {"-script", "x"}, {"--script=x"}, {"-script=x"},
	} {
		args := lldParse(t, argv...)
		if len(args) != 1 || !args[0].Is("script") || args[0].Value() != "x" || args[0].Count != len(argv) {
			t.Errorf("%q parses to %+v, want one --script x", argv, args)
			continue
		}
		o := args[0].Option
		if o.Value != ReadFile || o.NoRemote == "" || o.Uncacheable != "" {
			t.Errorf("%q: --script is %v, NoRemote %q, Uncacheable %q", argv, o.Value, o.NoRemote, o.Uncacheable)
		}
		if got := args[0].Render(); len(got) != 2 || got[1] != "x" || got[0] != "--script" && got[0] != "-script" {
			t.Errorf("%q renders as %q", argv, got)
		}
	}
}

func TestLLDSemantics(t *testing.T) {
	for _, c := range []struct {
		argv     []string
		id       string
		value    ValueKind
		noRemote bool
		uncache  bool
	}{
		{[]string{"--error-handling-script=/x"}, "error_handling_script", Program, true, false},
		{[]string{"--error-handling-script", "/x"}, "error_handling_script", Program, true, false},
		{[]string{"-plugin-opt=obj-path=/x"}, "lto_obj_path_eq", WriteFile, true, true},
		{[]string{"--lto-obj-path=/x"}, "lto_obj_path_eq", WriteFile, true, true},
		{[]string{"-plugin-opt=-amdgpu-internalize-symbols"}, "plugin_opt_eq_minus", Forward, false, false},
		{[]string{"-plugin-opt=whatever"}, "plugin_opt_eq", Forward, false, false},
		{[]string{"-plugin-opt", "O2"}, "plugin_opt", Forward, false, false},
		{[]string{"-mllvm", "-x"}, "mllvm", Forward, false, false},
		{[]string{"-mllvm=-x"}, "mllvm", Forward, false, false},
		{[]string{"-o", "/x"}, "o", WriteFile, false, false},
		{[]string{"--output=/x"}, "o", WriteFile, false, false},
		{[]string{"-Map", "/x"}, "Map", WriteFile, true, true},
		{[]string{"-Map=/x"}, "Map", WriteFile, true, true},
		{[]string{"-L/x"}, "library_path", SearchDir, true, false},
		{[]string{"--library-path=/x"}, "library_path", SearchDir, true, false},
		{[]string{"--sysroot=/x"}, "sysroot", SearchDir, true, false},
		{[]string{"-lfoo"}, "library", Name, true, false},
		{[]string{"--version-script", "/x"}, "version_script", ReadFile, true, false},
		{[]string{"--reproduce=/x"}, "reproduce", WriteFile, true, true},
		{[]string{"--thinlto-cache-dir=/x"}, "thinlto_cache_dir", WriteDir, true, true},
		{[]string{"--load-pass-plugin=/x.so"}, "load_pass_plugins", Plugin, true, false},
		{[]string{"--plugin", "/x.so"}, "plugin", Name, false, false},
		{[]string{"--thinlto-distributor=/x"}, "thinlto_distributor_eq", Program, true, false},
		{[]string{"--save-temps"}, "save_temps", NoValue, true, true},
		{[]string{"-plugin-opt=save-temps"}, "save_temps", NoValue, true, true},
		{[]string{"--time-trace"}, "time_trace_eq", WriteFile, true, true},
		{[]string{"-z", "now"}, "z", Name, false, false},
		{[]string{"-m", "elf64_amdgpu"}, "m", Name, false, false},
	} {
		args := lldParse(t, c.argv...)
		if len(args) != 1 || !args[0].Is(c.id) {
			t.Errorf("%q parses to %v, want %s", c.argv, args, c.id)
			continue
		}
		o := args[0].Option
		if o.Value != c.value || (o.NoRemote != "") != c.noRemote || (o.Uncacheable != "") != c.uncache {
			t.Errorf("%q (%s): value %v, NoRemote %q, Uncacheable %q; want %v, NoRemote %v, Uncacheable %v",
				c.argv, o.ID, o.Value, o.NoRemote, o.Uncacheable, c.value, c.noRemote, c.uncache)
		}
	}
	// The separate --plugin-opt is --plugin-opt= and its value.
	a := lldParse(t, "-plugin-opt", "obj-path=/x")[0]
	if b := lldParse(t, "--plugin-opt="+a.Value()); !b[0].Is("lto_obj_path_eq") || b[0].Value() != "/x" {
		t.Errorf("--plugin-opt= and %q parse to %v", a.Value(), b)
	}
}

// TestLLDSemanticsCover checks that lldSemantics names options of the
// table and classifies every option that takes a value, its aliases as
// it.
func TestLLDSemanticsCover(t *testing.T) {
	table := LLD()
	for id := range lldSemantics {
		if o := table.Lookup(id); o == nil || o.Alias() != nil {
			t.Errorf("lldSemantics lists %s, which is no option of the table or an alias", id)
		}
	}
	for _, o := range table.Options() {
		u := o.Unaliased()
		if u.Kind != Flag && u.Value == NoValue {
			t.Errorf("%s (%s) takes a value lldSemantics does not classify", u.ID, u.Spelling())
		}
		if o != u && (o.NoRemote != u.NoRemote || o.Uncacheable != u.Uncacheable || o.Kind != Flag && o.Value != u.Value) {
			t.Errorf("alias %s (%s) has other semantics than %s", o.ID, o.Spelling(), u.ID)
		}
	}
}

// TestLLDInstalledBehaviour checks what lld's help does not show against
// the installed ld.lld: "--" is an unknown argument; -flavor is read as
// the first argument only; the separate -plugin-opt is accepted; and
// -plugin-opt=obj-path= and -plugin-opt obj-path= write the file they
// name, as --lto-obj-path= does.
func TestLLDInstalledBehaviour(t *testing.T) {
	lld := llvmtest.Tool(t, "ld.lld")
	dir := t.TempDir()
	if unknown, stderr := lldUnknown(t, lld, dir, "--help", "--"); !slices.Equal(unknown, []string{"--"}) {
		t.Errorf("ld.lld --help -- reports %q unknown, want [--]:\n%s", unknown, stderr)
	}
	if args := lldParse(t, "--", "a.o"); !args[0].IsUnknown() || !args[1].IsInput() {
		t.Errorf("-- a.o parses to %v, want an unknown argument and an input", args)
	}
	if unknown, stderr := lldUnknown(t, lld, dir, "-flavor", "gnu", "--help"); len(unknown) > 0 {
		t.Errorf("ld.lld -flavor gnu --help reports %q unknown:\n%s", unknown, stderr)
	}
	if unknown, _ := lldUnknown(t, lld, dir, "--help", "-flavor", "gnu"); !slices.Equal(unknown, []string{"-flavor"}) {
		t.Errorf("ld.lld --help -flavor gnu reports %q unknown, want [-flavor]", unknown)
	}
	if unknown, stderr := lldUnknown(t, lld, dir, "--help", "-plugin-opt", "O2", "--plugin-opt", "mcpu=x"); len(unknown) > 0 {
		t.Errorf("ld.lld reports the separate -plugin-opt unknown: %q\n%s", unknown, stderr)
	}

	clang := llvmtest.Clang(t)
	src := filepath.Join(dir, "a.c")
	if err := os.WriteFile(src, []byte("int f(void) { return 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bc := filepath.Join(dir, "a.bc")
	if out, err := exec.Command(clang, "--target=x86_64-linux-gnu", "-flto", "-c", src, "-o", bc).CombinedOutput(); err != nil {
		t.Fatalf("clang -flto: %v\n%s", err, out)
	}
	for i, argv := range [][]string{
		{"-plugin-opt=obj-path=" + filepath.Join(dir, "lto0.o")},
		{"-plugin-opt", "obj-path=" + filepath.Join(dir, "lto1.o")},
		{"--lto-obj-path=" + filepath.Join(dir, "lto2.o")},
	} {
		cmd := exec.Command(lld, append([]string{"-shared", bc, "-o", filepath.Join(dir, "a.so")}, argv...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("ld.lld %q: %v\n%s", argv, err, out)
			continue
		}
		obj := filepath.Join(dir, "lto"+string(rune('0'+i))+".o")
		if _, err := os.Stat(obj); err != nil {
			t.Errorf("ld.lld %q wrote no %s: %v", argv, obj, err)
		}
	}
}

// TestLLDDeviceLink parses the device link clang's AMDGPU toolchain runs.
func TestLLDDeviceLink(t *testing.T) {
	argv := strings.Fields("-flavor gnu -m elf64_amdgpu --no-undefined -shared -plugin-opt=-amdgpu-internalize-symbols " +
		"-plugin-opt=mcpu=gfx90a -plugin-opt=O3 --lto-CGO3 -o /tmp/x.out /tmp/a.o /tmp/b.o")
	args := lldParse(t, argv...)
	want := []struct {
		id     string
		values []string
		alias  bool
	}{
		{"flavor", []string{"gnu"}, false},
		{"m", []string{"elf64_amdgpu"}, false},
		{"no_undefined", nil, false},
		{"shared", nil, false},
		{"plugin_opt_eq_minus", []string{"amdgpu-internalize-symbols"}, false},
		{"plugin_opt_mcpu_eq", []string{"gfx90a"}, false},
		{"lto_O", []string{"3"}, true},
		{"lto_CGO", []string{"3"}, false},
		{"o", []string{"/tmp/x.out"}, false},
		{"INPUT", []string{"/tmp/a.o"}, false},
		{"INPUT", []string{"/tmp/b.o"}, false},
	}
	if len(args) != len(want) {
		t.Fatalf("%q parses to %d arguments, want %d: %v", argv, len(args), len(want), args)
	}
	next := 0
	for i, a := range args {
		w := want[i]
		if a.Option.ID != w.id || !slices.Equal(a.Values, w.values) || (a.Alias != nil) != w.alias {
			t.Errorf("argument %d: %s %q (alias %v), want %s %q (alias %v)", i, a.Option.ID, a.Values, a.Alias != nil, w.id, w.values, w.alias)
		}
		if a.Index != next {
			t.Errorf("argument %d (%s) at %d, want %d", i, a.Option.ID, a.Index, next)
		}
		next = a.Index + a.Count
		if a.Option.NoRemote != "" || a.Option.Uncacheable != "" {
			t.Errorf("%s: NoRemote %q, Uncacheable %q", a.Option.ID, a.Option.NoRemote, a.Option.Uncacheable)
		}
	}
	if args[6].String() != "-plugin-opt=O3" || args[6].Spelling != "--lto-O" {
		t.Errorf("-plugin-opt=O3: spelled %q, written %q", args[6].Spelling, args[6].String())
	}
	if args[8].Option.Value != WriteFile {
		t.Errorf("-o is %v", args[8].Option.Value)
	}
}

func TestLLDStrCmpOptionName(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"B", "a", 1}, {"A", "a", -1}, {"a", "a", 0},
		{"script=", "script", -1}, {"script", "script=", 1},
		{"Bsymbolic-functions", "Bsymbolic", -1}, {"lto-CGO", "lto-cs-profile-file=", -1},
		{"M", "mmap-output-file", 1}, {"Ttext-segment=", "Ttext=", -1},
	} {
		if got := lldStrCmpOptionName(c.a, c.b); got != c.want {
			t.Errorf("lldStrCmpOptionName(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestLLDOrder checks that the order does not depend on the records'
// order in lldRecords, and the sentinels and the records' IDs.
func TestLLDOrder(t *testing.T) {
	var want []string
	for i := range LLD().recs {
		o := LLD().option(int32(i))
		want = append(want, o.ID)
	}
	if len(want) < 2 || want[0] != "INPUT" || want[1] != "UNKNOWN" {
		t.Fatalf("the table begins %q, want INPUT, UNKNOWN", want[:min(2, len(want))])
	}
	recs := append(append([]Record(nil), lldRecords...), lldDriverRecords...)
	r := rand.New(rand.NewSource(1))
	for range 5 {
		r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		lldSortRecords(recs)
		for i := range recs {
			if recs[i].ID != want[i] {
				t.Fatalf("a shuffled table sorts %s at %d, LLD has %s", recs[i].ID, i, want[i])
			}
		}
	}
	seen := map[string]bool{}
	for _, rec := range lldRecords {
		if seen[rec.ID] {
			t.Errorf("ID %s is used twice", rec.ID)
		}
		seen[rec.ID] = true
		if rec.Visibility != LLDOption {
			t.Errorf("%s has visibility %v", rec.ID, rec.Visibility)
		}
	}
	for _, rec := range lldRecords {
		if rec.Alias != "" && !seen[rec.Alias] {
			t.Errorf("%s is an alias of %s, which the table lacks", rec.ID, rec.Alias)
		}
	}
}

func FuzzLLDParse(f *testing.F) {
	for _, s := range []string{
		"-flavor\ngnu\n-m\nelf64_amdgpu\n--no-undefined\n-shared\n-plugin-opt=-amdgpu-internalize-symbols\n-plugin-opt=mcpu=gfx90a\n-plugin-opt=O3\n--lto-CGO3\n-o\n/tmp/x.out\n/tmp/a.o\n/tmp/b.o",
		"-T\nx\n-Tx\n--script=x\n-script\nx",
		"--\n-\n-o",
		"-plugin-opt\nO2\n--build-id\n--time-trace\n-(\n-)\n-omagic\n--omagic",
		"-L/x\n-l\nfoo\n--library-path=/y\n-z\nnow\n-zrelro\n--unknown-thing\n",
	} {
		f.Add(s)
	}
	table := LLD()
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\n")
		args, err := table.Parse(argv)
		next := 0
		for _, a := range args {
			if a.Index != next || a.Count < 1 || a.Index+a.Count > len(argv) {
				t.Fatalf("%q: %v at %d+%d, want at %d", argv, a, a.Index, a.Count, next)
			}
			next += a.Count
		}
		var missing *MissingValueError
		switch {
		case err == nil && next != len(argv):
			t.Fatalf("%q: the arguments cover %d words of %d", argv, next, len(argv))
		case err != nil && (!errors.As(err, &missing) || missing.Index != next || len(argv)-next-1 >= missing.Count):
			t.Fatalf("%q: %v after %d words", argv, err, next)
		}
		for _, a := range args {
			if a.Alias != nil {
				continue
			}
			words := a.Render()
			b, err := table.Parse(words)
			if err != nil || len(b) != 1 || b[0].Option != a.Option || !slices.Equal(b[0].Values, a.Values) {
				t.Fatalf("%q: %s %q renders as %q, which parses to %v (%v)", argv, a.Option.ID, a.Values, words, b, err)
			}
		}
	})
}
