package cache

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/options"
)

func TestSearchDirs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"none", []string{"-cc1", "-c", "m.c"}, nil},
		{"order: quote, angled, system, after", []string{
			"-idirafter", "/after",
			"-internal-isystem", "/isys",
			"-I", "/inc",
			"-isystem", "/sys",
			"-iquote", "/quote",
			"-internal-externc-isystem", "/extc",
			"-I", "/inc2",
		}, []string{"/quote", "/inc", "/inc2", "/isys", "/sys", "/extc", "/after"}},
		{"joined forms", []string{"-Iinc", "-iquotequote", "-idirafterafter", "-I/abs"}, []string{"quote", "inc", "/abs", "after"}},
		{"joined and separate mixed", []string{"-Ia", "-I", "b", "-iquote", "q", "-iquoteq2"}, []string{"q", "q2", "a", "b"}},
		{"a directory repeated keeps its first place", []string{"-isystem", "/x", "-I", "/x", "-iquote", "/y", "-I", "/y"}, []string{"/y", "/x"}},
		{"options that only look alike", []string{
			"-isysroot", "/sysroot",
			"-include", "pre.h",
			"-imacros", "mac.h",
			"-internal-isystem-other",
			"-iwithprefix", "/wp",
		}, nil},
		// -isystem-after is the driver's: clang -cc1 reads -isystem "-after".
		{"-isystem-after is not a cc1 option", []string{"-isystem-after", "/late", "-I", "/a"}, []string{"/a", "-after"}},
		{"joined system forms", []string{"-isystemsys", "-objcxx-isystem", "/oc", "-cxx-isystem/cx"}, []string{"sys", "/oc", "/cx"}},
		{"a value that looks like an option", []string{"-I", "-isystem", "/y"}, []string{"-isystem"}},
		{"an option with no value at the end", []string{"-I", "/a", "-I"}, []string{"/a"}},
		{"argv[0] is the program", []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := options.HeaderSearchDirs((&Session{}).commandArgs(append([]string{"/usr/bin/clang-22", "-cc1"}, tt.args...))); !slices.Equal(got, tt.want) {
				t.Errorf("HeaderSearchDirs(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
	if got := options.HeaderSearchDirs((&Session{}).commandArgs([]string{"-I/argv0"})); len(got) != 0 {
		t.Errorf("argv[0] taken as an option: %q", got)
	}
}

// keySetup is a session on a fresh cache with a fake clang (a script: its
// bytes are what the key hashes) and a temporary directory.
type keySetup struct {
	s     *Session
	temp  string
	work  string
	clang string
}

func newKeySetup(t *testing.T, temp string) *keySetup {
	t.Helper()
	k := &keySetup{temp: temp, work: t.TempDir()}
	k.clang = filepath.Join(k.work, "clang-22")
	if err := os.WriteFile(k.clang, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := Open(Config{Dir: t.TempDir(), MaxSize: DefaultMaxSize})
	k.s = c.NewSession(SessionOptions{TempDir: temp, Self: os.Args[0], Env: []string{"PATH=/usr/bin"}})
	return k
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestActionKeyTemporaries: files in the build's temporary directory are
// keyed by role and content, not by their random names, so that the next
// build (another temporary directory, other names) gets the same key.
func TestActionKeyTemporaries(t *testing.T) {
	keyFor := func(t *testing.T, inName, content string, extra ...string) (string, string) {
		temp := t.TempDir()
		k := newKeySetup(t, temp)
		// The same clang in both builds.
		k.clang = "/bin/sh"
		in := writeFile(t, filepath.Join(temp, inName), content)
		out := filepath.Join(temp, strings.TrimSuffix(inName, ".bc")+".o")
		a := &actions.Action{
			Kind: actions.Backend, Inputs: []*actions.Artifact{actions.NewArtifact(in)},
			Outputs: []*actions.Artifact{actions.NewArtifact(out)},
			Command: append([]string{k.clang, "-cc1", "-emit-obj", "-o", out, in}, extra...),
		}
		ak, why := k.s.key(a)
		if why != "" {
			return "", why
		}
		return ak.sum.String(), ""
	}
	k1, why1 := keyFor(t, "m-a1b2c3.bc", "bitcode")
	k2, why2 := keyFor(t, "m-d4e5f6.bc", "bitcode")
	if why1 != "" || why2 != "" {
		t.Fatalf("uncacheable: %s %s", why1, why2)
	}
	if k1 != k2 {
		t.Errorf("two builds of the same bytes under other temporary names: keys differ")
	}
	if k3, _ := keyFor(t, "m-a1b2c3.bc", "other bitcode"); k3 == k1 {
		t.Errorf("other bytes, same key")
	}
	// A temporary the action does not list: its bytes are unknown.
	temp := t.TempDir()
	k := newKeySetup(t, temp)
	in := writeFile(t, filepath.Join(temp, "m.bc"), "bitcode")
	a := &actions.Action{
		Kind: actions.Backend, Inputs: []*actions.Artifact{actions.NewArtifact(in)},
		Outputs: []*actions.Artifact{actions.NewArtifact(filepath.Join(temp, "m.o"))},
		Command: []string{"/bin/sh", "-cc1", "-o", filepath.Join(temp, "m.o"), in, "-fembed-offload-object=" + filepath.Join(temp, "unlisted.out")},
	}
	if _, why := k.s.key(a); !strings.Contains(why, "temporary file") {
		t.Errorf("an unlisted temporary in the command: %q, want uncacheable", why)
	}
	// An input that cannot be read.
	a.Command = a.Command[:5]
	a.Inputs[0] = actions.NewArtifact(filepath.Join(temp, "missing.bc"))
	a.Command[4] = a.Inputs[0].Path
	if _, why := k.s.key(a); !strings.Contains(why, "cannot read") {
		t.Errorf("a missing input: %q, want uncacheable", why)
	}
}

// TestActionKeyCompilationDir: the working directory clang records reaches
// a compile's output only with debug information (or coverage), so only
// then is it keyed.
func TestActionKeyCompilationDir(t *testing.T) {
	k := newKeySetup(t, t.TempDir())
	src := writeFile(t, filepath.Join(k.work, "m.c"), "int x;\n")
	key := func(extra ...string) string {
		a := &actions.Action{
			Kind: actions.Compile, Inputs: []*actions.Artifact{actions.NewArtifact(src)},
			Outputs: []*actions.Artifact{actions.NewArtifact(filepath.Join(k.work, "m.o"))},
			Command: append([]string{k.clang, "-cc1", "-emit-obj", "-o", filepath.Join(k.work, "m.o"), src}, extra...),
		}
		ak, why := k.s.key(a)
		if why != "" {
			t.Fatal(why)
		}
		return ak.sum.String()
	}
	if key("-fdebug-compilation-dir=/a") != key("-fdebug-compilation-dir=/b") {
		t.Error("without debug information, the compilation directory is keyed")
	}
	if key("-debug-info-kind=constructor", "-fdebug-compilation-dir=/a") == key("-debug-info-kind=constructor", "-fdebug-compilation-dir=/b") {
		t.Error("with debug information, the compilation directory is not keyed")
	}
	if key("-fcoverage-mapping", "-fcoverage-compilation-dir=/a") == key("-fcoverage-mapping", "-fcoverage-compilation-dir=/b") {
		t.Error("with coverage mapping, the coverage compilation directory is not keyed")
	}
	if key("-O2") == key("-O3") {
		t.Error("an option is not keyed")
	}
	// The tool's bytes are keyed.
	before := key()
	writeFile(t, k.clang, "#!/bin/sh\nexit 1\n")
	k.s.tools = newToolDigests(nil, false) // a new build
	if key() == before {
		t.Error("another clang, same key")
	}
}

func TestUncacheable(t *testing.T) {
	k := newKeySetup(t, t.TempDir())
	src := writeFile(t, filepath.Join(k.work, "m.c"), "int x;\n")
	obj := filepath.Join(k.work, "m.o")
	compile := func(args ...string) *actions.Action {
		return &actions.Action{
			Kind: actions.Compile, Inputs: []*actions.Artifact{actions.NewArtifact(src)},
			Outputs: []*actions.Artifact{actions.NewArtifact(obj)},
			Command: append([]string{k.clang, "-cc1", "-emit-obj", "-o", obj, src}, args...),
		}
	}
	with := func(f func(a *actions.Action)) *actions.Action { a := compile(); f(a); return a }
	// A clang driver command: options of the driver only (-save-temps,
	// -MJ) are read with the driver's table, not -cc1's.
	driverCmd := func(args ...string) *actions.Action {
		a := compile()
		a.Command = append([]string{k.clang, "-c", "-o", obj, src}, args...)
		return a
	}
	tests := []struct {
		name string
		a    *actions.Action
		why  string // "" for cacheable
	}{
		{"a plain compile", compile("-O2"), ""},
		{"-save-temps", driverCmd("-save-temps"), "-save-temps"},
		{"--save-temps", driverCmd("--save-temps"), "-save-temps"},
		{"-save-temps=obj", compile("-save-temps=obj"), "-save-temps"},
		{"-ftime-trace=", compile("-ftime-trace=t.json"), "-ftime-trace"},
		{"-fmodules", compile("-fmodules"), "clang modules"},
		{"-MJ", driverCmd("-MJ", "m.json"), "-MJ"},
		{"split DWARF", compile("-split-dwarf-output", "m.dwo"), "split DWARF (.dwo) output"},
		{"options only like those", compile("-fmodules-ts-ish=1", "-save-tempsx", "-MJx"), ""},
		{"an option in argv[0]'s place", with(func(a *actions.Action) { a.Command[0] = "-save-temps" }), ""},
		{"the host link", with(func(a *actions.Action) { a.Kind = actions.HostLink }), "host link"},
		{"the link stage", with(func(a *actions.Action) { a.Kind = actions.Link }), "host link"},
		{"clang's own driver", with(func(a *actions.Action) { a.Kind = actions.Fallback }), "run by clang's driver"},
		{"an expansion", with(func(a *actions.Action) {
			a.Expand = func(context.Context, *actions.Shell) ([]*actions.Action, error) { return nil, nil }
		}), "expands into other jobs"},
		{"no command", with(func(a *actions.Action) { a.Command = nil }), "in-process step cheaper to run than to key"},
		{"no output", with(func(a *actions.Action) { a.Outputs = nil }), "no output file"},
		{"standard input", with(func(a *actions.Action) { a.Inputs[0] = actions.NewArtifact("-") }), "input from standard input"},
		{"standard output", with(func(a *actions.Action) { a.Outputs[0] = actions.NewArtifact("-") }), "output to standard output"},
		{"a device file", with(func(a *actions.Action) { a.Outputs[0] = actions.NewArtifact("/dev/null") }), "output to a device file"},
	}
	for _, tt := range tests {
		if got := k.s.uncacheable(tt.a); got != tt.why {
			t.Errorf("%s: uncacheable = %q, want %q", tt.name, got, tt.why)
		}
	}
}

func TestKeyTextQuote(t *testing.T) {
	for _, v := range []string{"", "plain", "with space", "q\"uote", "back\\slash", "tab\t", "nl\n", "\x7f", "\x00", "é", "\xff", "~!@#$%^&*()_+`-={}[]|:;'<>?,./", "😀"} {
		var k keyText
		writeQuoted(&k.Builder, v)
		if got, want := k.String(), strconv.Quote(v); got != want {
			t.Errorf("quote(%q) = %s, want %s", v, got, want)
		}
	}
}

// TestPathProbes checks that the memoised shadowing checks answer as
// exists does, for paths under missing directories, under files, under
// existing directories, relative and at the root.
func TestPathProbes(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"inc/a.h", "inc/sub/b.h", "file"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("inc", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	paths := []string{"inc/a.h", "inc/x.h", "inc/sub/b.h", "inc/sub/c.h", "inc/none/a.h", "inc/none/deeper/a.h",
		"file/a.h", "link/a.h", "link/x.h", "a.h", "file", "/", "/nonexistent-offcc-dir/x.h", "inc/../inc/a.h", "none/../inc/a.h"}
	for _, p := range paths {
		paths = append(paths, filepath.Join(dir, p))
	}
	var pp pathProbes
	for round := 0; round < 2; round++ {
		for _, p := range paths {
			if got, want := pp.present(p), exists(p); got != want {
				t.Errorf("present(%q) = %v, exists says %v", p, got, want)
			}
		}
	}
}

// TestCommandArgsByRelease: a session reads its build's commands with the
// option tables of their LLVM release (SessionOptions.Options): LLVM 19's
// driver has -nogpulib as an option of its own, 22's as an alias of
// --no-offloadlib; without tables it reads them as the newest release's.
func TestCommandArgsByRelease(t *testing.T) {
	t19, err := options.ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	cmd := []string{"/usr/lib/llvm-19/bin/clang", "-nogpulib", "-c", "x.c"}
	ids := func(s *Session) []string {
		var out []string
		for _, a := range s.commandArgs(cmd) {
			out = append(out, a.Option.ID)
		}
		return out
	}
	c := &Cache{Store: NewDirStore(t.TempDir())}
	s19 := c.NewSession(SessionOptions{Options: t19})
	defer s19.Close()
	if got := ids(s19); !slices.Contains(got, "nogpulib") {
		t.Errorf("LLVM 19's session reads %v", got)
	}
	if got := ids(&Session{}); slices.Contains(got, "nogpulib") || !slices.Contains(got, "no_offloadlib") {
		t.Errorf("the default session reads %v", got)
	}
}
