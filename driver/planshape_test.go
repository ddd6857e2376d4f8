package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// Tests of one plan per command shape: a plan learned from one file is
// filled in for another compiled with the same flags, and must then be
// exactly what clang's -### prints for it (modulo the private temporary
// names' random part and the compile unit ID, which the planner puts in
// per source, see setCUID). Helpers are prefixed ps.

// psFiles are the sources of the shape tests, by name under the build
// directory.
var psFiles = []string{
	"a.c", "b.c", "sub/c.c", "a.cpp", "b.cpp", "sub/c.cpp", "a.cu", "b.cu", "sub/c.cu",
	"a.hip", "b.hip", "sub/c.hip", "a.s", "b.s", "sub/c.s",
	"c.c", "pic.c", "x.c", "y.c", "xy.c", "gen/a.c", "gen/b.c",
}

// psTree writes the sources into dir, with the directory out for outputs.
func psTree(t *testing.T, dir string) {
	t.Helper()
	for _, name := range append(psFiles, "out/.keep") {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		text := "int f(void) { return 1; }\n"
		switch filepath.Ext(name) {
		case ".cu", ".hip":
			text = "__attribute__((global)) void k(void) {}\n"
		case ".s":
			text = ".text\nnop\n"
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// psNormal masks what may differ between a plan from the cache and
// clang's -### for one command: the names of the private temporary files
// (numbered in the order they first appear, so that which jobs share a
// file is compared) and the compile unit ID (see pcNormal).
func psNormal(out, tmp string) string {
	names := map[string]string{}
	out = regexp.MustCompile(regexp.QuoteMeta(tmp)+`/[^",]*`).ReplaceAllStringFunc(out, func(name string) string {
		if _, ok := names[name]; !ok {
			names[name] = fmt.Sprintf("TMP/%d%s", len(names), filepath.Ext(name))
		}
		return names[name]
	})
	return regexp.MustCompile(`-cuid=[0-9a-f]+`).ReplaceAllString(out, "-cuid=X")
}

// psCUDA is Debian's CUDA installation (make deps-cuda).
const psCUDA = "/usr/lib/cuda"

// psDir returns a new directory whose path offcc can template: a test's
// TempDir has its name, which may hold ',' or '='.
func psDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "offcc-shape-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// psCommand is one file's command: its source and its -o. A source
// ABS/NAME is NAME in the build directory, named by its absolute path,
// OTHER/NAME in another directory; BUILD is the build directory's name.
type psCommand struct{ src, out string }

// TestPlanShapeRealClang learns each model's plan from one file's
// command and fills it in for other files' (another name, another
// directory for the source and the output): every hit must be the jobs
// clang prints for that command, and every command of another shape (a
// source of another language) or whose names clang's jobs name in a way
// offcc does not template must miss.
func TestPlanShapeRealClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	omp := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"}
	hip := []string{"-x", "hip", "--offload-arch=gfx90a,gfx1030", "-nogpulib", "-nogpuinc"}
	cuda := []string{"--cuda-gpu-arch=sm_70", "-x", "cuda", "--cuda-path=" + psCUDA, "-nocudainc"}
	cat := func(lists ...[]string) []string {
		var all []string
		for _, l := range lists {
			all = append(all, l...)
		}
		return all
	}
	// objects is the usual run: learned from a → a.o, filled in for
	// b → b.o and sub/c → out/c.o.
	objects := func(ext, outExt string) []psCommand {
		return []psCommand{{"a" + ext, "a" + outExt}, {"b" + ext, "b" + outExt}, {"sub/c" + ext, "out/c" + outExt}}
	}
	// programs are compile and link commands.
	programs := func(ext string) []psCommand {
		return []psCommand{{"a" + ext, "proga"}, {"b" + ext, "progb"}, {"sub/c" + ext, "out/progc"}, {"b" + ext, "b"}}
	}
	tests := []struct {
		name string
		// flags are the command's flags; out is the -o value (for
		// -MF OUT.d and the like).
		flags func(out string) []string
		cmds  []psCommand // the first is learned, the others must hit
		// miss are commands that must not hit.
		miss []psCommand
		cuda bool // needs the CUDA toolkit
	}{
		{name: "C -c", flags: func(string) []string { return []string{"-O2", "-Wall", "-c"} }, cmds: objects(".c", ".o"),
			miss: []psCommand{{"b.cpp", "b.o"}, {"b.cu", "b.o"}, {"b.c", "b.s"}, {"b.c", "out/../b.o"}, {"ABS/b.c", "b.o"}}},
		{name: "sources out of the build directory", flags: func(string) []string { return []string{"-O2", "-g", "-c"} },
			cmds: []psCommand{{"gen/../a.c", "a.o"}, {"b.c", "b.o"}, {"./sub/c.c", "out/c.o"}, {"../BUILD/sub/c.c", "c.o"}}},
		{name: "C++ -c", flags: func(string) []string { return []string{"-std=c++17", "-c"} }, cmds: objects(".cpp", ".o"),
			miss: []psCommand{{"b.c", "b.o"}}},
		{name: "-S", flags: func(string) []string { return []string{"-O1", "-S"} }, cmds: objects(".c", ".s")},
		{name: "-E", flags: func(string) []string { return []string{"-E", "-DX=1"} }, cmds: objects(".c", ".i")},
		{name: "-MD -MF", flags: func(out string) []string {
			return []string{"-MD", "-MT", out, "-MF", out + ".d", "-c"}
		}, cmds: objects(".c", ".o")},
		{name: "-MD", flags: func(string) []string { return []string{"-g", "-MD", "-c"} }, cmds: objects(".c", ".o")},
		{name: "-gsplit-dwarf", flags: func(string) []string { return []string{"-g", "-gsplit-dwarf", "-c"} }, cmds: objects(".c", ".o")},
		{name: "compile and link", flags: func(string) []string { return []string{"-g", "-O2"} }, cmds: objects(".c", "")},
		{name: "compile and link, other names", flags: func(string) []string { return []string{"-g", "-O2"} }, cmds: programs(".c")},
		{name: "compile and link, split DWARF", flags: func(string) []string { return []string{"-g", "-gsplit-dwarf"} },
			cmds: programs(".c")},
		{name: "names that differ", flags: func(string) []string { return []string{"-c"} },
			cmds: []psCommand{{"x.c", "y.o"}, {"y.c", "x.o"}, {"a.c", "xy.o"}, {"xy.c", "out/a.o"}, {"gen/b.c", "b.o"}}},
		{name: "absolute sources", flags: func(out string) []string { return []string{"-g", "-MD", "-c"} },
			cmds: []psCommand{{"ABS/a.c", "a.o"}, {"ABS/b.c", "b.o"}, {"ABS/sub/c.c", "out/c.o"}, {"OTHER/sub/c.c", "out/c.o"}},
			miss: []psCommand{{"b.c", "b.o"}, {"ABS/b.cpp", "b.o"}}},
		{name: "absolute HIP sources", flags: func(out string) []string { return cat(hip, []string{"-c"}) },
			cmds: []psCommand{{"OTHER/a.hip", "a.o"}, {"ABS/b.hip", "b.o"}, {"ABS/sub/c.hip", "out/c.o"}}},
		{name: "CMake's names", flags: func(out string) []string {
			return []string{"-O2", "-MD", "-MT", out, "-MF", out + ".d", "-c"}
		}, cmds: []psCommand{{"a.c", "CMakeFiles/x.dir/a.c.o"}, {"b.c", "CMakeFiles/x.dir/b.c.o"}, {"sub/c.c", "CMakeFiles/x.dir/sub/c.c.o"}, {"b.c", "CMakeFiles/x.dir/b.o"}}},
		{name: "assembly", flags: func(string) []string { return []string{"-g", "-c"} }, cmds: objects(".s", ".o")},
		{name: "OpenMP host offload -c", flags: func(string) []string { return cat(omp, []string{"-O2", "-c"}) }, cmds: objects(".c", ".o"),
			miss: []psCommand{{"b.cpp", "b.o"}}},
		{name: "OpenMP host offload compile and link", flags: func(string) []string { return cat(omp, []string{"-MD"}) }, cmds: programs(".c")},
		{name: "OpenMP AMD", flags: func(string) []string {
			return []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-c"}
		}, cmds: objects(".c", ".o")},
		{name: "OpenMP NVPTX", cuda: true, flags: func(string) []string {
			return []string{"-fopenmp", "--offload-arch=sm_80", "--cuda-path=" + psCUDA, "-nogpulib", "-c"}
		}, cmds: objects(".c", ".o")},
		{name: "HIP", flags: func(string) []string { return cat(hip, []string{"-O2", "-MD", "-c"}) }, cmds: objects(".hip", ".o"),
			miss: []psCommand{{"b.cu", "b.o"}}},
		{name: "HIP, extension .cpp", flags: func(string) []string { return cat(hip, []string{"-c"}) }, cmds: objects(".cpp", ".o")},
		{name: "HIP -fgpu-rdc", flags: func(string) []string { return cat(hip, []string{"-fgpu-rdc", "-c"}) }, cmds: objects(".hip", ".o")},
		{name: "HIP new driver", flags: func(string) []string { return cat(hip, []string{"--offload-new-driver", "-c"}) }, cmds: objects(".hip", ".o")},
		{name: "HIP, ROCm's flags", flags: func(string) []string { return cat(llvmtest.ROCmHIPFlags(), []string{"-O2", "-c"}) },
			cmds: objects(".hip", ".o")},
		{name: "HIP -fuse-cuid=random", flags: func(string) []string { return cat(hip, []string{"-fuse-cuid=random", "-c"}) },
			cmds: objects(".hip", ".o")[:1], miss: []psCommand{{"b.hip", "b.o"}}},
		{name: "HIP -cuid=", flags: func(string) []string { return cat(hip, []string{"-cuid=fixed", "-c"}) }, cmds: objects(".hip", ".o")},
		{name: "CUDA", cuda: true, flags: func(string) []string { return cat(cuda, []string{"-c"}) }, cmds: objects(".cu", ".o"),
			miss: []psCommand{{"b.hip", "b.o"}}},
		{name: "CUDA -fgpu-rdc", cuda: true, flags: func(string) []string { return cat(cuda, []string{"-fgpu-rdc", "-c"}) }, cmds: objects(".cu", ".o")},
		{name: "SYCL", flags: func(string) []string { return []string{"-fsycl", "-c"} }, cmds: objects(".cpp", ".o")},
		{name: "SYCL -MD", flags: func(out string) []string { return []string{"-fsycl", "-MD", "-MF", out + ".d", "-c"} }, cmds: objects(".cpp", ".o")},

		// Learning refused: the source's stem is a word of clang's jobs
		// ("-x c", "-mrelocation-model pic"), the output's directory is
		// one of clang's paths, or a name derived from them is one offcc
		// does not template.
		{name: "stem c", flags: func(string) []string { return []string{"-c"} },
			cmds: []psCommand{{"c.c", "c.o"}}, miss: []psCommand{{"b.c", "b.o"}}},
		{name: "stem pic", flags: func(string) []string { return []string{"-c"} },
			cmds: []psCommand{{"pic.c", "pic.o"}}, miss: []psCommand{{"b.c", "b.o"}}},
		{name: "--coverage", flags: func(string) []string { return []string{"--coverage", "-c"} },
			cmds: []psCommand{{"a.c", "a.o"}}, miss: []psCommand{{"b.c", "b.o"}}},
		{name: "-ftime-trace", flags: func(string) []string { return []string{"-ftime-trace", "-c"} },
			cmds: []psCommand{{"a.c", "a.o"}}, miss: []psCommand{{"b.c", "b.o"}}},
		{name: "a dependency file named after the source", flags: func(string) []string { return []string{"-MD", "-MF", "a.d", "-c"} },
			cmds: []psCommand{{"a.c", "a.o"}}, miss: []psCommand{{"b.c", "b.o"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(psCUDA, "nvvm/libdevice")); tt.cuda && err != nil {
				llvmtest.CUDA(t) // fails under OFFCC_REQUIRE_CUDA=1
				t.Skipf("no CUDA installation in %s", psCUDA)
			}
			dir, other := psDir(t), psDir(t)
			psTree(t, dir)
			psTree(t, other)
			t.Chdir(dir)
			c := pcNew(filepath.Join(t.TempDir(), "cache"))
			run := func(cmd psCommand, store bool) (got, want string, hit bool) {
				src := strings.ReplaceAll(cmd.src, "BUILD", filepath.Base(dir))
				if rest, ok := strings.CutPrefix(src, "ABS/"); ok {
					src = filepath.Join(dir, rest)
				} else if rest, ok := strings.CutPrefix(src, "OTHER/"); ok {
					src = filepath.Join(other, rest)
				}
				args := append(tt.flags(cmd.out), src, "-o", cmd.out, "-###")
				q, ok := c.query(clang, "clang", args, []string{"A=1"}, dir, "")
				if !ok {
					t.Fatal("no key")
				}
				tmp := t.TempDir()
				got, hit = c.lookup(q, tmp)
				want = pcHashHashHash(t, clang, dir, tmp, args)
				if store {
					c.save(q, tmp, want)
				}
				return psNormal(got, tmp), psNormal(want, tmp), hit
			}
			if _, _, hit := run(tt.cmds[0], true); hit {
				t.Fatal("hit in an empty cache")
			}
			for _, cmd := range tt.cmds[1:] {
				got, want, hit := run(cmd, false)
				switch {
				case !hit:
					t.Errorf("%s -o %s: miss, want a hit", cmd.src, cmd.out)
				case got != want:
					t.Errorf("%s -o %s: wrong plan from the cache:\n%s\nclang prints\n%s", cmd.src, cmd.out, got, want)
				}
			}
			for _, cmd := range tt.miss {
				if got, want, hit := run(cmd, false); hit {
					t.Errorf("%s -o %s: hit, want a miss (plan right: %v)", cmd.src, cmd.out, got == want)
				}
			}
		})
	}
}

// TestPlanShapeKeyed checks which commands have a shape, and that
// commands of one shape share its key while the exact and the places'
// keys stay apart.
func TestPlanShapeKeyed(t *testing.T) {
	shape := func(args ...string) *planShape {
		p := newPlanPlaces(newestTables(), append(args, "-###"), "/w/b", "")
		return newPlanShape(p, append(args, "-###"))
	}
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"-c", "a.c", "-o", "a.o"}, true},
		{[]string{"-c", "sub/a.cu", "-o", "obj/a.o"}, true},
		{[]string{"-c", "/w/src/a.c", "-o", "a.o"}, true},
		{[]string{"a.c", "-o", "prog"}, true},
		{[]string{"-c", "a.c"}, false},                     // no -o
		{[]string{"-c", "a.c", "b.c", "-o", "a.o"}, false}, // two sources
		{[]string{"a.c", "x.o", "-o", "prog"}, false},
		{[]string{"-c", "a", "-o", "a.o"}, false},     // no extension
		{[]string{"-c", "a.o", "-o", "b.o"}, false},   // not a source
		{[]string{"-c", "a b.c", "-o", "a.o"}, false}, // quoted by nobody, but not plain
		{[]string{"-c", "a$b.c", "-o", "a.o"}, false}, // escaped by clang
		{[]string{"-c", "-", "-o", "a.o"}, false},     // standard input
		{[]string{"-c", "@a.c", "-o", "a.o"}, false},  // a response file
		{[]string{"-c", ".c", "-o", "a.o"}, false},    // no stem
		{[]string{"-x", "c", "-c", "-", "-o", "a.o"}, false},
		{[]string{"-fuse-cuid=random", "-x", "hip", "-c", "a.hip", "-o", "a.o"}, false},
		{[]string{"-fuse-cuid=hash", "-x", "hip", "-c", "a.hip", "-o", "a.o"}, true},
	} {
		if s := shape(tt.args...); (s != nil) != tt.ok {
			t.Errorf("%q: shape %v, want %v", tt.args, s != nil, tt.ok)
		}
	}
	// Directories: relative ones are placeholders, others keyed.
	for _, tt := range []struct {
		src, out         string
		srcMoved, outDir bool
	}{
		{"a.c", "a.o", true, true},
		{"sub/x/a.c", "obj/a.o", true, true},
		{"../src/a.c", "../obj/a.o", true, false},
		{"/w/src/a.c", "/w/b/a.o", true, false},
		{"/w/b/a.c", "a.o", true, true},
		{"/w/src/../a.c", "a.o", true, true},
		{"./a.c", "./a.o", true, false},
	} {
		s := shape("-c", tt.src, "-o", tt.out)
		if s == nil {
			t.Errorf("%s -o %s: no shape", tt.src, tt.out)
			continue
		}
		if s.srcDirMoved != tt.srcMoved || s.outDirMoved != tt.outDir {
			t.Errorf("%s -o %s: source directory templated %v (want %v), output's %v (want %v)", tt.src, tt.out, s.srcDirMoved, tt.srcMoved, s.outDirMoved, tt.outDir)
		}
	}

	dir := t.TempDir()
	t.Chdir(dir)
	clang := filepath.Join(dir, "clang")
	if err := os.WriteFile(clang, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := func(args ...string) *planQuery {
		q, ok := (&planCache{}).query(clang, "offcc", append(args, "-###"), nil, dir, "")
		if !ok {
			t.Fatal("no key")
		}
		return q
	}
	a, b, c := key("-O2", "-c", "a.c", "-o", "a.o"), key("-O2", "-c", "b.c", "-o", "b.o"), key("-O2", "-c", "sub/c.c", "-o", "out/c.o")
	if a.shape == "" || a.shape != b.shape || a.shape != c.shape {
		t.Errorf("a.c, b.c and sub/c.c have shapes %q, %q, %q; want one", a.shape, b.shape, c.shape)
	}
	if a.shape == a.moved || a.shape == a.exact || a.moved == b.moved {
		t.Error("the shape key is another key, or a.c and b.c share the places' key")
	}
	// clang's driver edits its arguments under CCC_OVERRIDE_OPTIONS ("s/b.c/x.c/"
	// for one file and not another): the exact key only.
	if q, _ := (&planCache{}).query(clang, "offcc", []string{"-c", "a.c", "-o", "a.o", "-###"}, []string{"CCC_OVERRIDE_OPTIONS=s/b.c/x.c/"}, dir, ""); q.moved != "" || q.shape != "" {
		t.Error("CCC_OVERRIDE_OPTIONS: a key without places, or a shape")
	}
	if abs, other := key("-O2", "-c", "/w/src/a.c", "-o", "a.o"), key("-O2", "-c", "/x/b.c", "-o", "b.o"); abs.shape == "" || abs.shape != other.shape || abs.shape == a.shape {
		t.Error("sources in absolute directories: not one shape, or the shape of relative ones")
	}
	for _, other := range [][]string{
		{"-O2", "-c", "a.cpp", "-o", "a.o"},
		{"-O2", "-c", "a.c", "-o", "a.obj"},
		{"-O1", "-c", "a.c", "-o", "a.o"},
		{"-O2", "-c", "/w/a.c", "-o", "a.o"},
		{"-O2", "-S", "a.c", "-o", "a.o"},
	} {
		if q := key(other...); q.shape == a.shape {
			t.Errorf("%q shares the shape of -O2 -c a.c -o a.o", other)
		}
	}
}

// TestPlanShapeTemplate templates -### outputs written for the test, and
// checks the refusals that real clang does not show.
func TestPlanShapeTemplate(t *testing.T) {
	job := func(argv ...string) string { return renderHash(argv) + "\n" }
	const header = "clang version 22.1.8\nTarget: x86_64-pc-linux-gnu\n"
	const tmp = tempPlaceholder
	cc1 := func(src string, extra ...string) string {
		return job(append(append([]string{"/usr/bin/clang", "-cc1", "-main-file-name", filepath.Base(src)}, extra...), "-x", "c", src)...)
	}
	tests := []struct {
		name    string
		args    []string // learned (the source is k.c, the output k.o)
		out     string
		args2   []string // filled in for, when the template is made
		want2   string
		refused bool
	}{
		{name: "temporaries and the source", args: []string{"-c", "src/k.c", "-o", "obj/k.o"},
			out:   header + cc1("src/k.c", "-o", tmp+"/k-123456.bc") + job("/usr/bin/tool", "--image=file="+tmp+"/k-654321.o,kind=x", "-o", "obj/k.o"),
			args2: []string{"-c", "m.c", "-o", "m.o"},
			want2: header + cc1("m.c", "-o", tmp+"/m-123456.bc") + job("/usr/bin/tool", "--image=file="+tmp+"/m-654321.o,kind=x", "-o", "m.o")},
		{name: "a temporary not named after the source", args: []string{"-c", "k.c", "-o", "k.o"},
			out: header + cc1("k.c", "-o", tmp+"/other-123456.bc"), refused: true},
		{name: "a temporary named after a longer stem", args: []string{"-c", "k.c", "-o", "a.o"},
			out: header + cc1("k.c", "-o", tmp+"/kk-123456.bc"), refused: true},
		{name: "the source elsewhere", args: []string{"-c", "k.c", "-o", "a.o"},
			out: header + cc1("k.c", "-include", "k.c"), refused: true},
		{name: "a name derived from the source", args: []string{"-c", "k.c", "-o", "a.o"},
			out: header + cc1("k.c", "-fsomething=k.json"), refused: true},
		{name: "the source's directory", args: []string{"-c", "sub/k.c", "-o", "a.o"},
			out: header + cc1("sub/k.c", "-I", "sub/"), refused: true},
		{name: "the output's directory", args: []string{"-c", "k.c", "-o", "obj/a.o"},
			out: header + cc1("k.c", "-fdir=obj/"), refused: true},
		{name: "a warning naming the source", args: []string{"-c", "k.c", "-o", "a.o"},
			out: header + "clang: warning: k.c: unused\n" + cc1("k.c"), refused: true},
		{name: "a compile unit ID outside HIP and CUDA", args: []string{"-c", "k.c", "-o", "a.o"},
			out: header + cc1("k.c", "-cuid=1234"), refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(tt.args, "-###")
			p := newPlanPlaces(newestTables(), args, "/w/b", "")
			s := newPlanShape(p, args)
			if s == nil {
				t.Fatalf("no shape for %q", tt.args)
			}
			moved, ok := p.template(tt.out)
			if !ok {
				t.Fatalf("the places refused:\n%s", tt.out)
			}
			shaped, ok := s.template(moved)
			if tt.refused {
				if ok {
					t.Errorf("templated, want a refusal:\n%q", shaped)
				}
				return
			}
			if !ok {
				t.Fatalf("refused:\n%q", moved)
			}
			if got := p.fill(s.fill(shaped), tmp); got != tt.out {
				t.Errorf("filled in for itself:\n%q\nwant\n%q", got, tt.out)
			}
			args2 := append(tt.args2, "-###")
			p2 := newPlanPlaces(newestTables(), args2, "/w/b", "")
			s2 := newPlanShape(p2, args2)
			if got := p2.fill(s2.fill(shaped), tmp); got != tt.want2 {
				t.Errorf("filled in for %q:\n%q\nwant\n%q", tt.args2, got, tt.want2)
			}
			if strings.Join(s.keyArgs, " ") != strings.Join(s2.keyArgs, " ") {
				t.Errorf("keyed arguments differ: %q and %q", s.keyArgs, s2.keyArgs)
			}
		})
	}
}

// TestPlanShapeMissingSource fills a shape in for a source that does not
// exist: the plan is found, and clangJobs' check that its sources exist
// refuses it, so that clang says what is missing.
func TestPlanShapeMissingSource(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := psDir(t)
	psTree(t, dir)
	t.Chdir(dir)
	c := pcNew(filepath.Join(t.TempDir(), "cache"))
	flags := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c"}
	learn := append(append([]string{}, flags...), "a.c", "-o", "a.o", "-###")
	q, _ := c.query(clang, "clang", learn, nil, dir, "")
	tmp := t.TempDir()
	c.save(q, tmp, pcHashHashHash(t, clang, dir, tmp, learn))
	q, _ = c.query(clang, "clang", append(append([]string{}, flags...), "gone.c", "-o", "gone.o", "-###"), nil, dir, "")
	out, hit := c.lookup(q, tmp)
	if !hit {
		t.Fatal("no plan for gone.c")
	}
	_, jobs, err := parseHashHashHash(out, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sourcesExist(jobs, tmp) {
		t.Error("the plan of a source that does not exist passed the check that its sources exist")
	}
}
