package driver

import (
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
)

func frontEnd(kind actions.Kind, argv ...string) *actions.Action {
	return &actions.Action{Kind: kind, Offload: actions.OpenMP, Command: argv}
}

func TestStabilizeRelative(t *testing.T) {
	s := stableNames{cwd: "/w/proj", base: "/w/proj", runDir: "/tmp/x/stable-names/d"}
	host := frontEnd(actions.HostFrontend, "clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc",
		"-I", "include", "-o", "/tmp/x/m.bc", "-x", "c", "src/m.c")
	dev := frontEnd(actions.DeviceCompile, "clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-fopenmp-is-target-device",
		"-fopenmp-host-ir-file-path", "/tmp/x/m.bc", "-fprofile-instrument-use-path=prof.profdata",
		"-dependency-file", "m.d", "-o", "/tmp/x/d.o", "-x", "c", "src/m.c")
	other := &actions.Action{Kind: actions.Backend, Offload: actions.OpenMP, Command: []string{"clang", "-cc1", "-o", "m.o", "-x", "ir", "/tmp/x/m.bc"}}
	g := &actions.Graph{Actions: []*actions.Action{host, dev, other}}
	if why := s.stabilize(g); why != "" {
		t.Fatalf("stabilize: %s", why)
	}
	want := []string{"clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc", "-I", "include",
		"-o", "/tmp/x/m.bc", "-working-directory", "/w/proj", "-x", "c", "src/m.c"}
	if !slices.Equal(host.Command, want) {
		t.Errorf("host front end:\n got %q\nwant %q", host.Command, want)
	}
	// Files clang opens outside its file manager are named absolutely.
	wantDev := []string{"clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-fopenmp-is-target-device",
		"-fopenmp-host-ir-file-path", "/tmp/x/m.bc", "-fprofile-instrument-use-path=/w/proj/prof.profdata",
		"-dependency-file", "/w/proj/m.d", "-o", "/tmp/x/d.o", "-working-directory", "/w/proj", "-x", "c", "src/m.c"}
	if !slices.Equal(dev.Command, wantDev) {
		t.Errorf("device compile:\n got %q\nwant %q", dev.Command, wantDev)
	}
	for _, a := range []*actions.Action{host, dev} {
		if a.Dir != s.runDir || a.DiagnosticDir != "" {
			t.Errorf("%s: Dir %q DiagnosticDir %q", a.Kind, a.Dir, a.DiagnosticDir)
		}
	}
	if other.Dir != "" || slices.Contains(other.Command, "-working-directory") {
		t.Errorf("the backend was rewritten: %q", other.Command)
	}
}

func TestStabilizeBaseDir(t *testing.T) {
	s := stableNames{cwd: "/w/proj/build", base: "/w/proj", runDir: "/r"}
	host := frontEnd(actions.HostFrontend, "clang", "-cc1", "-I/w/proj/include", "-I", "gen",
		"-isystem", "/usr/include/x", "-fmacro-prefix-map=/w/proj/src=SRC", "-o", "k.bc", "-x", "c++", "/w/proj/src/k.cpp")
	g := &actions.Graph{Actions: []*actions.Action{host}}
	if why := s.stabilize(g); why != "" {
		t.Fatalf("stabilize: %s", why)
	}
	got := strings.Join(host.Command, " ")
	for _, want := range []string{
		// Paths under the base directory become relative to it; the
		// command's relative ones too; others stay.
		"-Iinclude", "-I build/gen", "-isystem /usr/include/x", "-x c++ src/k.cpp",
		"-working-directory /w/proj", "-o /w/proj/build/k.bc",
		// __FILE__ and the debug information map back; the user's map
		// also maps the relative name, after (so it wins).
		"-cc1 -fdebug-prefix-map==/w/proj/ -fdebug-prefix-map=/=/ -I",
		"-fmacro-prefix-map=/w/proj/src=SRC -fmacro-prefix-map=src=SRC", "-fmacro-prefix-map=/=/ -fmacro-prefix-map==/w/proj/ -working-directory",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the command lacks %q:\n%s", want, got)
		}
	}
	if host.DiagnosticDir != "/w/proj" {
		t.Errorf("DiagnosticDir %q, want the base directory", host.DiagnosticDir)
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
		why := s.stabilize(&actions.Graph{Actions: []*actions.Action{good, bad}})
		if !strings.Contains(why, tc.why) {
			t.Errorf("%s: why %q, want it to mention %q", tc.name, why, tc.why)
		}
		if !slices.Equal(good.Command, before) || good.Dir != "" {
			t.Errorf("%s: one front end was rewritten although another cannot be: %q", tc.name, good.Command)
		}
	}
}

func TestClangMajor(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   int
	}{
		{[]string{"Debian clang version 22.1.8 (1~deb12u1)", "Target: x86_64-pc-linux-gnu"}, 22},
		{[]string{"clang version 19.1.7"}, 19},
		{[]string{"Target: x86_64-pc-linux-gnu"}, 0},
	} {
		if got := clangMajor(tc.header); got != tc.want {
			t.Errorf("clangMajor(%q) = %d, want %d", tc.header, got, tc.want)
		}
	}
}

// TestStabilizeUserMapsBase: a user map of the base directory itself
// replaces offcc's, with the separator clang's absolute path had.
func TestStabilizeUserMapsBase(t *testing.T) {
	s := stableNames{cwd: "/w/proj/build", base: "/w/proj", runDir: "/r"}
	for _, tc := range []struct{ user, want string }{
		{"-ffile-prefix-map=/w/proj=.", "=./"},
		{"-ffile-prefix-map=/w/proj/=", "="},
		{"-ffile-prefix-map=/w/proj/=x/", "=x/"},
	} {
		_, mapping, _ := strings.Cut(tc.user, "=")
		host := frontEnd(actions.HostFrontend, "clang", "-cc1", "-fdebug-prefix-map="+mapping, "-fmacro-prefix-map="+mapping,
			"-o", "k.bc", "-x", "c", "/w/proj/src/k.c")
		if why := s.stabilize(&actions.Graph{Actions: []*actions.Action{host}}); why != "" {
			t.Fatal(why)
		}
		got := strings.Join(host.Command, " ")
		// The user's map of the base directory comes after offcc's
		// (-fdebug-prefix-map: the last match wins), with "/" mapped to
		// itself after it; before offcc's (-fmacro-prefix-map: the first
		// of equal prefixes wins).
		for _, want := range []string{
			"-fdebug-prefix-map==/w/proj/ -fdebug-prefix-map=/=/ -fdebug-prefix-map=" + mapping + " -fdebug-prefix-map=" + tc.want +
				" -fdebug-prefix-map=/=/ -fdebug-prefix-map=" + mapping + " ",
			"-fmacro-prefix-map=" + mapping + " -fmacro-prefix-map=" + tc.want + " -o /w/proj/build/k.bc -fmacro-prefix-map=/=/ -fmacro-prefix-map==/w/proj/ ",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: no %q: %s", tc.user, want, got)
			}
		}
	}
}
