package driver

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/toolchain"
)

func frontEnd(kind actions.Kind, argv ...string) *actions.Action {
	return &actions.Action{Kind: kind, Offload: actions.OpenMP, Command: argv}
}

func TestStabilizeRelative(t *testing.T) {
	s := stableNames{cwd: "/w/proj", runDir: "/tmp/x/stable-names/d", options: []string{"-fopenmp"}}
	host := frontEnd(actions.HostFrontend, "clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc",
		"-I", "include", "-o", "/tmp/x/m.bc", "-x", "c", "src/m.c")
	dev := frontEnd(actions.DeviceCompile, "clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-fopenmp-is-target-device",
		"-fopenmp-host-ir-file-path", "/tmp/x/m.bc", "-fprofile-instrument-use-path=prof.profdata",
		"-dependency-file", "m.d", "-o", "/tmp/x/d.o", "-x", "c", "src/m.c")
	other := &actions.Action{Kind: actions.Backend, Offload: actions.OpenMP, Command: []string{"clang", "-cc1", "-o", "m.o", "-x", "ir", "/tmp/x/m.bc"}}
	g := &actions.Graph{Actions: []*actions.Action{host, dev, other}}
	if why := s.stabilize(g, "/tmp/x"); why != "" {
		t.Fatalf("stabilize: %s", why)
	}
	body := s.prefix("src/m.c")
	p := body + "//"
	maps := []string{"-fdebug-prefix-map=" + body + "=.", "-fdebug-prefix-map=" + body + "/=./", "-fdebug-prefix-map=" + p + "="}
	macroMaps := []string{"-fmacro-prefix-map=" + p + "=", "-fmacro-prefix-map=" + body + "/=./"}
	want := slices.Concat([]string{"clang", "-cc1"}, maps, []string{"-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc", "-I", p + "include",
		"-o", "/tmp/x/m.bc"}, macroMaps, []string{"-fsanitize-undefined-strip-path-components=17",
		"-working-directory", "/w/proj", "-x", "c", p + "src/m.c"})
	if !slices.Equal(host.Command, want) {
		t.Errorf("host front end:\n got %q\nwant %q", host.Command, want)
	}
	// Files clang opens outside its file manager are named absolutely.
	wantDev := slices.Concat([]string{"clang", "-cc1"}, maps, []string{"-triple", "x86_64-pc-linux-gnu", "-fopenmp-is-target-device",
		"-fopenmp-host-ir-file-path", "/tmp/x/m.bc", "-fprofile-instrument-use-path=/w/proj/prof.profdata",
		"-dependency-file", "/w/proj/m.d", "-o", "/tmp/x/d.o"}, macroMaps,
		[]string{"-fsanitize-undefined-strip-path-components=17", "-working-directory", "/w/proj", "-x", "c", p + "src/m.c"})
	if !slices.Equal(dev.Command, wantDev) {
		t.Errorf("device compile:\n got %q\nwant %q", dev.Command, wantDev)
	}
	for _, a := range []*actions.Action{host, dev} {
		if a.Dir != s.runDir || !slices.Equal(a.FileNames, actions.NameMap{{From: p, To: ""}, {From: body + "/", To: "./"}}) {
			t.Errorf("%s: Dir %q FileNames %q", a.Kind, a.Dir, a.FileNames)
		}
	}
	if other.Dir != "" || slices.Contains(other.Command, "-working-directory") {
		t.Errorf("the backend was rewritten: %q", other.Command)
	}
}

// TestIdentityPrefix: the prefix names the working directory, and it
// differs for two sources, two working directories or two sets of
// options; under a base directory it depends on places relative to it.
func TestIdentityPrefix(t *testing.T) {
	s := stableNames{cwd: "/w/a", options: []string{"-fopenmp", "-D SCALE=1"}}
	p := s.prefix("foo.c")
	if strings.Trim(p, "./") != "" || filepath.Clean(p+"//x") != "x" || filepath.Clean(p+"/../x") != "../x" {
		t.Errorf("prefix %q does not name the directory it is put before", p)
	}
	if n := strings.Count(p, "."); n != prefixComponents {
		t.Errorf("prefix %q has %d components, want %d", p, n, prefixComponents)
	}
	if p != s.prefix("foo.c") || p != s.prefix("/w/a/foo.c") || p != s.prefix("./foo.c") {
		t.Error("one source has two prefixes")
	}
	other := map[string]string{
		"another source":          s.prefix("bar.c"),
		"the same name elsewhere": stableNames{cwd: "/w/b", options: s.options}.prefix("foo.c"),
		"other macros":            stableNames{cwd: "/w/a", options: []string{"-fopenmp", "-D SCALE=100"}}.prefix("foo.c"),
	}
	for what, q := range other {
		if q == p {
			t.Errorf("%s: the same prefix %q", what, p)
		}
	}
	// The same source from another directory: the same identity.
	if (stableNames{cwd: "/w/b", options: s.options}).prefix("../a/foo.c") != p {
		t.Error("one source named from two directories: two prefixes")
	}
	// Two checkouts under their base directories: the same places.
	one := stableNames{cwd: "/c1/proj/build", base: "/c1/proj", options: s.options}
	two := stableNames{cwd: "/c2/x/proj/build", base: "/c2/x/proj", options: s.options}
	if one.prefix("../src/k.c") != two.prefix("../src/k.c") {
		t.Error("two checkouts under base directories: different prefixes")
	}
	if one.prefix("../src/k.c") == one.prefix("../src2/k.c") {
		t.Error("two sources under one base directory: one prefix")
	}
	// Include directories by their places: -Iinc from two directories
	// names two, -I../inc from build and from build2 the same one.
	opts := func(cwd string, a ...string) []string {
		o, err := Parse(a)
		if err != nil {
			t.Fatal(err)
		}
		return stableNames{cwd: cwd, base: "/c"}.semanticOptions(o.Args)
	}
	if slices.Equal(opts("/c/a", "-Iinc", "-c", "k.c"), opts("/c/b", "-Iinc", "-c", "k.c")) {
		t.Error("-Iinc in two directories: the same options")
	}
	if !slices.Equal(opts("/c/build", "-I../inc", "-c", "k.c"), opts("/c/build2", "-I../inc", "-c", "k.c")) {
		t.Error("-I../inc from two build directories: different options")
	}
}

// TestSemanticOptions: what decides a translation unit's code is in its
// identity; outputs, dependency files and the choice of devices are not.
func TestSemanticOptions(t *testing.T) {
	parse := func(args ...string) []string {
		t.Helper()
		o, err := Parse(args)
		if err != nil {
			t.Fatal(err)
		}
		return stableNames{cwd: "/w"}.semanticOptions(o.Args)
	}
	base := parse("-fopenmp", "-DS=1", "-O2", "-c", "k.c")
	for _, same := range [][]string{
		{"-fopenmp", "-DS=1", "-O2", "-c", "k.c", "-o", "/x/k2.o", "-MD", "-MF", "k.d", "-MT", "k.o"},
		{"-fopenmp", "-D", "S=1", "-O2", "-c", "k.c", "--offload-arch=gfx90a,gfx942", "-fopenmp-targets=amdgcn-amd-amdhsa"},
		{"-fopenmp", "-DS=1", "-O2", "-c", "other.c", "-fcolor-diagnostics", "--offload-jobs=3", "-Xopenmp-target=amdgcn-amd-amdhsa", "--offload-arch=gfx90a"},
	} {
		if got := parse(same...); !slices.Equal(got, base) {
			t.Errorf("%q: %q, want %q", same, got, base)
		}
	}
	for _, other := range [][]string{
		{"-fopenmp", "-DS=100", "-O2", "-c", "k.c"},
		{"-fopenmp", "-DS=1", "-O3", "-c", "k.c"},
		{"-fopenmp", "-DS=1", "-O2", "-c", "k.c", "-Xopenmp-target=amdgcn-amd-amdhsa", "-DDEV"},
		{"-fopenmp", "-DS=1", "-O2", "-c", "k.c", "-Iinc"},
	} {
		if got := parse(other...); slices.Equal(got, base) {
			t.Errorf("%q: the same options as %q", other, base)
		}
	}
}

// TestStabilizeAbsoluteSource: a source named absolutely is given behind
// the prefix relatively, and renamed back, with the files beside it.
func TestStabilizeAbsoluteSource(t *testing.T) {
	s := stableNames{cwd: "/w/proj/build", runDir: "/r"}
	host := frontEnd(actions.HostFrontend, "clang", "-cc1", "-I/usr/include/x", "-I", "gen",
		"-fmacro-prefix-map=/w/proj/src=SRC", "-fdebug-prefix-map=gen=GEN", "-o", "k.bc", "-x", "c++", "/w/proj/src/k.cpp")
	g := &actions.Graph{Actions: []*actions.Action{host}}
	if why := s.stabilize(g, "/t"); why != "" {
		t.Fatalf("stabilize: %s", why)
	}
	body := s.prefix("/w/proj/src/k.cpp")
	p, abs := body+"//", body+"///"
	got := strings.Join(host.Command, " ")
	for _, want := range []string{
		"-I/usr/include/x", "-I " + p + "gen", "-x c++ " + abs + "../src/k.cpp",
		"-working-directory /w/proj/build", "-o /w/proj/build/k.bc",
		// The debug information and __FILE__ map back, the specific
		// map winning; the user's maps also map the names clang has.
		"-cc1 -fdebug-prefix-map=../src=/w/proj/src -fdebug-prefix-map=" + body + "=. -fdebug-prefix-map=" + body + "/=./ -fdebug-prefix-map=" + p + "= -fdebug-prefix-map=" + abs + "../src=/w/proj/src -I",
		"-fmacro-prefix-map=/w/proj/src=SRC -fmacro-prefix-map=" + abs + "../src=SRC -fdebug-prefix-map=gen=GEN -fdebug-prefix-map=" + p + "gen=GEN -o",
		"-fmacro-prefix-map=" + abs + "../src=/w/proj/src -fmacro-prefix-map=" + p + "= -fmacro-prefix-map=" + body + "/=./ ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the command lacks %q:\n%s", want, got)
		}
	}
	wantNames := actions.NameMap{{From: abs + "../src", To: "/w/proj/src"}, {From: p, To: ""}, {From: body + "/", To: "./"},
		{From: "../src/", To: "/w/proj/src/"}}
	if !slices.Equal(host.FileNames, wantNames) {
		t.Errorf("FileNames %q, want %q", host.FileNames, wantNames)
	}
	for name, want := range map[string]string{abs + "../src/k.cpp": "/w/proj/src/k.cpp", abs + "../src/k.h": "/w/proj/src/k.h",
		abs + "../src/sub/../k.h": "/w/proj/src/sub/../k.h", p + "gen/g.h": "gen/g.h", "/usr/include/x/y.h": "/usr/include/x/y.h",
		body + "/k.h": "./k.h",
		// (Dependency files name the files beside the source without
		// the prefix.)
		"../src/k.h": "/w/proj/src/k.h"} {
		if got := host.FileNames.Rename(name); got != want {
			t.Errorf("Rename(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestStabilizeAbsoluteCommand: a command that names all it reads
// absolutely compiles alike in any working directory.
func TestStabilizeAbsoluteCommand(t *testing.T) {
	var cmds [][]string
	for _, cwd := range []string{"/w/a", "/x/y/z"} {
		s := stableNames{cwd: cwd, runDir: "/r"}
		host := frontEnd(actions.HostFrontend, "clang", "-cc1", "-I/w/inc", "-o", "/t/k.bc", "-x", "c", "/w/src/k.c")
		if why := s.stabilize(&actions.Graph{Actions: []*actions.Action{host}}, "/t"); why != "" {
			t.Fatal(why)
		}
		cmds = append(cmds, host.Command)
		if got := host.FileNames.Rename("w/src/k.h"); got != "/w/src/k.h" {
			t.Errorf("a dependency file's w/src/k.h is renamed %q", got)
		}
	}
	if !slices.Equal(cmds[0], cmds[1]) {
		t.Errorf("two working directories, two commands:\n%q\n%q", cmds[0], cmds[1])
	}
	if n := len(cmds[0]); cmds[0][n-4] != "/" {
		t.Errorf("working directory %q, want /", cmds[0][n-4])
	}
}

// TestStabilizeClimbs: names that climb further than the run directory
// lies deep get a deeper one, so that they still name nothing from it.
func TestStabilizeClimbs(t *testing.T) {
	s := stableNames{cwd: "/w", options: nil}
	deep := "../../../../../../../../../../../../../../../x/k.c"
	host := frontEnd(actions.HostFrontend, "clang", "-cc1", "-o", "/t/k.bc", "-x", "c", deep)
	if why := s.stabilize(&actions.Graph{Actions: []*actions.Action{host}}, "/t"); why != "" {
		t.Fatal(why)
	}
	if n := strings.Count(strings.TrimPrefix(host.Dir, "/t"), "/"); n <= 15 {
		t.Errorf("run directory %q is %d deep for a name climbing 15", host.Dir, n)
	}
}

func TestUBSanStripsThePrefix(t *testing.T) {
	s := stableNames{cwd: "/w", runDir: "/r"}
	for _, tc := range []struct{ user, want string }{
		{"", "-fsanitize-undefined-strip-path-components=17"},
		{"-fsanitize-undefined-strip-path-components=2", "-fsanitize-undefined-strip-path-components=19"},
		{"-fsanitize-undefined-strip-path-components=-2", "-fsanitize-undefined-strip-path-components=-2"},
	} {
		argv := []string{"clang", "-cc1", "-fsanitize=alignment"}
		if tc.user != "" {
			argv = append(argv, tc.user)
		}
		host := frontEnd(actions.HostFrontend, append(argv, "-o", "/t/k.bc", "-x", "c", "k.c")...)
		if why := s.stabilize(&actions.Graph{Actions: []*actions.Action{host}}, "/t"); why != "" {
			t.Fatal(why)
		}
		got := strings.Join(host.Command, " ")
		if !strings.Contains(got, tc.want) || strings.Count(got, "strip-path-components") != 1 {
			t.Errorf("%q: %s", tc.user, got)
		}
	}
}

func TestStabilizeAllOrNone(t *testing.T) {
	s := stableNames{cwd: "/w", runDir: "/r"}
	for _, tc := range []struct {
		name string
		argv []string
		why  string
	}{
		{"preprocessed", []string{"clang", "-cc1", "-o", "a.bc", "-x", "cpp-output", "a.i"}, "preprocessed"},
		{"stdin", []string{"clang", "-cc1", "-o", "a.bc", "-x", "c", "-"}, "standard input"},
		{"overlay", []string{"clang", "-cc1", "-ivfsoverlay", "o.yaml", "-o", "a.bc", "-x", "c", "a.c"}, "VFS overlay"},
		{"working-directory", []string{"clang", "-cc1", "-working-directory", "/x", "-o", "a.bc", "-x", "c", "a.c"}, "-working-directory"},
		{"remap", []string{"clang", "-cc1", "-remap-file", "a.c;b.c", "-o", "a.bc", "-x", "c", "a.c"}, "-remap-file"},
	} {
		good := frontEnd(actions.HostFrontend, "clang", "-cc1", "-o", "/t/h.bc", "-x", "c", "a.c")
		bad := frontEnd(actions.DeviceCompile, tc.argv...)
		before := slices.Clone(good.Command)
		why := s.stabilize(&actions.Graph{Actions: []*actions.Action{good, bad}}, "/t")
		if !strings.Contains(why, tc.why) {
			t.Errorf("%s: why %q, want it to mention %q", tc.name, why, tc.why)
		}
		if !slices.Equal(good.Command, before) || good.Dir != "" {
			t.Errorf("%s: one front end was rewritten although another cannot be: %q", tc.name, good.Command)
		}
	}
}

// TestStabilizeByRelease: each release's profile decides whether OpenMP
// kernels get stable names; one whose clang cannot (LLVM 19) keeps
// clang's names, saying so under -v.
func TestStabilizeByRelease(t *testing.T) {
	for _, release := range toolchain.Profiles() {
		opts, err := Parse([]string{"-v", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "m.c"})
		if err != nil {
			t.Fatal(err)
		}
		host := frontEnd(actions.HostFrontend, "clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc", "-o", "/t/m.bc", "-x", "c", "m.c")
		before := slices.Clone(host.Command)
		plan := &Plan{Graph: &actions.Graph{Actions: []*actions.Action{host}}}
		var stderr strings.Builder
		inv := &Invocation{Argv0: "offcc", Stderr: &stderr}
		inv.stabilize(plan, opts, release, t.TempDir())
		renamed := !slices.Equal(host.Command, before)
		note := strings.Contains(stderr.String(), fmt.Sprintf("offcc: note: OpenMP kernels keep clang's names (after the source files' inodes): clang %d names kernels only after inodes", release.Major))
		if renamed != release.StableNames || note == release.StableNames {
			t.Errorf("LLVM %d (stable names %v): renamed %v, stderr %q", release.Major, release.StableNames, renamed, stderr.String())
		}
	}
}
