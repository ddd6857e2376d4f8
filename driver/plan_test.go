package driver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/internal/llvmtest"
)

const ompSource = `#include <omp.h>
int main(void) {
  int x = 0;
#pragma omp target map(tofrom: x)
  x = omp_is_initial_device() ? 1 : 2;
  return x == 2 ? 0 : 1;
}
`

// planFor plans clang's real jobs for an OpenMP command line args (which
// name m.c): see planSource.
func planFor(t *testing.T, args ...string) (*Plan, string, error) {
	t.Helper()
	return planSource(t, actions.OpenMP, "m.c", ompSource, args...)
}

// planSource writes text to a file named name in a temporary directory,
// plans clang's real jobs for args (where name stands for that file) with
// the builder of kind, and returns the plan and the private temporary
// directory. Compile unit IDs are "1234abcd".
func planSource(t *testing.T, kind actions.OffloadKind, name, text string, args ...string) (*Plan, string, error) {
	t.Helper()
	clang := llvmtest.Clang(t)
	src := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == name {
			args[i] = src
		}
	}
	tempDir := t.TempDir()
	inv := &Invocation{Argv0: "offcc", Env: os.Environ(), Stderr: io.Discard}
	_, jobs, err := clangJobs(context.Background(), inv, clang, args, tempDir, nil, nil)
	if err != nil {
		t.Fatalf("clang -###: %v", err)
	}
	env := &planEnv{tempDir: tempDir, self: "/bin/offcc", steps: &steps{clang: clang},
		cuid: func(string) (string, bool) { return "1234abcd", false }}
	plan, err := newPlanner(env, kind).build(jobs)
	return plan, tempDir, err
}

// kinds returns "kind[ arch]" for every action.
func kinds(g *actions.Graph) []string {
	var out []string
	for _, a := range g.Actions {
		s := a.Kind.String()
		if a.Device {
			s += " " + a.Target.Arch
		}
		out = append(out, s)
	}
	return out
}

func has(argv []string, prefix string) bool {
	return slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(a, prefix) })
}

// TestPlanOpenMPEdges checks the typed plan of clang 22's real jobs for
// OpenMP offload to two AMD GPUs: every edge follows from a file, the
// device compiles read the host IR, and the host backend no longer waits
// for them.
func TestPlanOpenMPEdges(t *testing.T) {
	plan, tempDir, err := planFor(t, "-fopenmp", "--offload-arch=gfx906,gfx90a", "-nogpulib", "m.c", "-o", "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"host-frontend", "device-compile gfx906", "device-compile gfx90a", "package", "backend", "embed", "link"}
	if got := kinds(plan.Graph); !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	if plan.HostTriple != "x86_64-pc-linux-gnu" {
		t.Errorf("host triple %q", plan.HostTriple)
	}
	a := plan.Graph.Actions
	front, dev1, dev2, pack, backend, embed, link := a[0], a[1], a[2], a[3], a[4], a[5], a[6]
	deps := func(x *actions.Action) []*actions.Action { return x.Deps() }
	for _, d := range []*actions.Action{dev1, dev2} {
		if !slices.Equal(deps(d), []*actions.Action{front}) || len(d.Inputs) != 2 || d.Inputs[1] != front.Outputs[0] {
			t.Errorf("%s: inputs %v, deps %v; want the source and the host IR", d.Label(), d.Inputs, deps(d))
		}
		if d.Target.Triple != "amdgcn-amd-amdhsa" || d.Offload != actions.OpenMP || d.SideName() != "device-openmp" {
			t.Errorf("%s: target %+v side %s", d.Label(), d.Target, d.SideName())
		}
	}
	if !slices.Equal(deps(pack), []*actions.Action{dev1, dev2}) || pack.Run == nil || pack.Command[1] != "offload-binary" {
		t.Errorf("packager: deps %v, in-process %v, command %q", deps(pack), pack.Run != nil, pack.Command)
	}
	// The backend embeds an empty offload binary (the embed step fills
	// it), never a device image.
	if !slices.Equal(deps(backend), []*actions.Action{front}) || !slices.Contains(backend.Command, "-fembed-offload-object=/dev/null") ||
		slices.ContainsFunc(backend.Command, func(a string) bool {
			return strings.HasPrefix(a, "-fembed-offload-object=") && a != "-fembed-offload-object=/dev/null"
		}) {
		t.Errorf("host backend: deps %v, command %q", deps(backend), backend.Command)
	}
	if !slices.Equal(deps(embed), []*actions.Action{backend, pack}) || embed.Run == nil || !filepath.IsAbs(embed.Outputs[0].Path) {
		t.Errorf("embed: deps %v, outputs %v", deps(embed), embed.Outputs)
	}
	if !slices.Equal(deps(link), []*actions.Action{embed}) || link.Expand == nil || link.Outputs[0].Path != "m" {
		t.Errorf("link: deps %v, outputs %v, expands %v", deps(link), link.Outputs, link.Expand != nil)
	}
	// Every compile that reads headers writes a dependency file of its own
	// to the temporary directory.
	for _, c := range []*actions.Action{front, dev1, dev2} {
		if !strings.HasPrefix(c.DepFile, tempDir+"/") || !slices.Contains(c.Command, c.DepFile) || !slices.Contains(c.Command, "-sys-header-deps") {
			t.Errorf("%s: dependency file %q, command %q", c.Label(), c.DepFile, c.Command)
		}
	}
	if backend.DepFile != "" {
		t.Errorf("the backend reads IR, yet has a dependency file")
	}
	// The plan is a valid graph in clang's order.
	for i, x := range a {
		for _, d := range x.Deps() {
			if plan.Graph.Index(d) >= i {
				t.Errorf("%s depends on a later action", x.Label())
			}
		}
	}
}

// TestPlanTargets checks the targets the plan records: ptxas after the
// NVPTX compile, and the arch the packager files the host device's image
// under.
func TestPlanTargets(t *testing.T) {
	plan, _, err := planFor(t, "-fopenmp", "--offload-arch=sm_70,gfx90a:xnack+", "-nogpulib", "-c", "m.c", "-o", "m.o")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"host-frontend", "device-compile gfx90a:xnack+", "device-compile sm_70", "device-assemble sm_70", "package", "backend", "embed"}
	if got := kinds(plan.Graph); !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	ptxas := plan.Graph.Actions[3]
	if d := ptxas.Deps(); len(d) != 1 || d[0] != plan.Graph.Actions[2] || ptxas.ToolName() != "NVPTX::Assembler" {
		t.Errorf("ptxas deps %v tool %s", d, ptxas.ToolName())
	}

	host, _, err := planFor(t, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "m.c", "-o", "m.o")
	if err != nil {
		t.Fatal(err)
	}
	dev := host.Graph.Actions[1]
	if dev.Kind != actions.DeviceCompile || dev.Target.Arch != "generic" || dev.Target.Triple != "x86_64-pc-linux-gnu" {
		t.Errorf("host device compile: %s %+v", dev.Kind, dev.Target)
	}
}

// TestPlanDependencyFiles checks that the user's -MD file stays the host
// compile's: clang 22 also gives it to the device compile for the host's
// own triple, which offcc changes to a file of its own.
func TestPlanDependencyFiles(t *testing.T) {
	dir := t.TempDir()
	userDep := filepath.Join(dir, "m.d")
	plan, tempDir, err := planFor(t, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "m.c", "-o", "m.o", "-MD", "-MF", userDep)
	if err != nil {
		t.Fatal(err)
	}
	front, dev := plan.Graph.Actions[0], plan.Graph.Actions[1]
	if front.Kind != actions.HostFrontend || front.DepFile != userDep || !slices.ContainsFunc(front.Outputs, func(f *actions.Artifact) bool { return f.Path == userDep }) {
		t.Errorf("host front end: dependency file %q, outputs %v", front.DepFile, front.Outputs)
	}
	if dev.Kind != actions.DeviceCompile || slices.Contains(dev.Command, userDep) || !strings.HasPrefix(dev.DepFile, tempDir+"/") {
		t.Errorf("device compile: dependency file %q, command %q", dev.DepFile, dev.Command)
	}
}

// TestPlanModes plans the other shapes clang's OpenMP pipeline takes.
func TestPlanModes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"syntax only", []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-fsyntax-only", "m.c"},
			[]string{"device-compile gfx90a", "host-frontend"}},
		{"assembly", []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-S", "m.c", "-o", "m.s"},
			[]string{"host-frontend", "device-compile gfx90a", "package", "backend"}},
		{"LTO bitcode keeps clang's embedding", []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-flto", "-c", "m.c", "-o", "m.o"},
			[]string{"host-frontend", "device-compile gfx90a", "package", "backend"}},
		{"save-temps", []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-save-temps", "-c", "m.c", "-o", "m.o"},
			[]string{"preprocess", "host-frontend", "preprocess gfx90a", "device-compile gfx90a", "backend gfx90a", "package", "backend", "assemble"}},
		{"host only", []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "--offload-host-only", "-c", "m.c", "-o", "m.o"},
			[]string{"compile"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, _, err := planFor(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(plan.Graph); !slices.Equal(got, tc.want) {
				t.Errorf("actions %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlanStdin checks that standard input is an input of every compile
// that reads it.
func TestPlanStdin(t *testing.T) {
	plan, _, err := planFor(t, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-x", "c", "-", "-c", "-o", "s.o")
	if err != nil {
		t.Fatal(err)
	}
	if !plan.ReadsStdin {
		t.Error("ReadsStdin not set")
	}
	front, dev := plan.Graph.Actions[0], plan.Graph.Actions[1]
	if !front.Inputs[0].IsStdin() || front.Inputs[0] != dev.Inputs[0] {
		t.Errorf("inputs %v and %v, want one standard-input artifact", front.Inputs, dev.Inputs)
	}
}

// TestPlanFailsClosed checks that a job offcc cannot plan with certainty
// makes the whole command line go to clang.
func TestPlanFailsClosed(t *testing.T) {
	_, _, err := planFor(t, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-fno-integrated-as", "-c", "m.c", "-o", "m.o")
	var ue *UnrecognizedError
	if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "does not know the tool as") {
		t.Errorf("err = %v, want an UnrecognizedError for GNU as", err)
	}

	tmp := t.TempDir()
	env := &planEnv{tempDir: tmp, self: "/bin/offcc", steps: &steps{}}
	cc1 := func(extra ...string) []string {
		argv := []string{"/usr/bin/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-o", tmp + "/a.o"}
		return append(append(argv, extra...), "-x", "c", "m.c")
	}
	for _, tc := range []struct {
		name string
		jobs [][]string
		want string
	}{
		{"unbound temporary", [][]string{cc1("-main-file-name", tmp+"/x.bin")}, "names a temporary file"},
		{"option clang lacks", [][]string{cc1("-fsome-new-option=" + tmp + "/x.bin")}, "clang -cc1 has no option -fsome-new-option="},
		{"temporary nobody writes", [][]string{cc1("-mlink-builtin-bitcode", tmp+"/lib.bc")}, "no earlier job writes"},
		{"two writers", [][]string{cc1(), cc1()}, "written by two jobs"},
		{"unknown tool", [][]string{{"/usr/bin/fatbinary", "--create", tmp + "/x.fatbin"}}, "does not know the tool fatbinary"},
		{"CUDA device compile", [][]string{cc1("-fcuda-is-device")}, "CUDA, HIP or SYCL device compile"},
		{"compile without -x", [][]string{{"/usr/bin/clang", "-cc1", "-triple", "x", "-o", "y", "m.c"}}, "-x <language> <input>"},
		{"packager option", [][]string{{"/usr/bin/llvm-offload-binary", "-o", tmp + "/p.out", "--archive"}}, "unexpected packager argument"},
		{"no jobs", nil, "no jobs"},
	} {
		var jobs []*clangJob
		for _, argv := range tc.jobs {
			jobs = append(jobs, newClangJob(argv))
		}
		_, err := newPlanner(env, actions.OpenMP).build(jobs)
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want an UnrecognizedError saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := newPlanner(env, actions.CUDA).build(nil); !errors.As(err, &ue) {
		t.Errorf("CUDA without a builder: err = %v", err)
	}
}

func TestPlanClangError(t *testing.T) {
	dir := t.TempDir()
	clang := filepath.Join(dir, "clang")
	os.WriteFile(clang, []byte("#!/bin/sh\necho 'Debian clang version 22.1.8' >&2\necho \"offcc: error: no such file or directory: 'nope.c'\" >&2\nexit 1\n"), 0o755)
	inv := &Invocation{Argv0: "offcc", Stderr: io.Discard}
	_, _, err := clangJobs(context.Background(), inv, clang, []string{"nope.c"}, dir, nil, nil)
	ce, ok := err.(*ClangError)
	if !ok || ce.Code != 1 || ce.Messages != "offcc: error: no such file or directory: 'nope.c'" {
		t.Fatalf("err = %#v", err)
	}
}

// TestClangJobsCache checks that a rebuild takes clang's jobs from the plan
// cache without starting clang, with the new temporary directory put in,
// and that a cached plan whose source is gone is asked of clang again.
func TestClangJobsCache(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644)
	counter := filepath.Join(dir, "runs")
	clang := filepath.Join(dir, "clang")
	script := "#!/bin/sh\necho run >> " + counter + "\n" +
		"echo 'Debian clang version 22.1.8' >&2\n" +
		`echo ' "/usr/bin/clang" "-cc1" "-triple" "x86_64-pc-linux-gnu" "-emit-obj" "-o" "'"$TMPDIR"'/m-abc123.o" "-x" "c" "` + src + `"' >&2` + "\n"
	os.WriteFile(clang, []byte(script), 0o755)
	runs := func() int {
		b, _ := os.ReadFile(counter)
		return strings.Count(string(b), "run")
	}
	plans := &planCache{c: cache.Open(cache.Config{Dir: filepath.Join(dir, "cache"), MaxSize: cache.DefaultMaxSize})}
	inv := &Invocation{Argv0: "offcc", Env: os.Environ(), Stderr: io.Discard}
	for i, tc := range []struct {
		removeSource bool
		wantRuns     int
	}{{false, 1}, {false, 1}, {true, 2}} {
		if tc.removeSource {
			os.Remove(src)
		}
		tmp := t.TempDir()
		header, jobs, err := clangJobs(context.Background(), inv, clang, []string{"-c", src}, tmp, plans, nil)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if runs() != tc.wantRuns {
			t.Errorf("run %d: clang started %d times, want %d", i, runs(), tc.wantRuns)
		}
		if len(header) != 1 || len(jobs) != 1 || !slices.Contains(jobs[0].argv, tmp+"/m-abc123.o") {
			t.Errorf("run %d: header %q jobs %v (temporary dir %s)", i, header, jobs, tmp)
		}
	}
}

// TestPlanHIPEdges plans clang's jobs for a HIP compile without -fgpu-rdc:
// per arch a device compile and its lld link, the in-process bundle of
// their images, and the host compile that embeds it; each compile carries
// the compile unit ID clang's own build uses, not the -### one.
func TestPlanHIPEdges(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "k.hip")
	if err := os.WriteFile(src, []byte(cuidKernel), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-x", "hip", "--offload-arch=gfx906,gfx90a", "-nogpuinc", "-nogpulib", "-c", src, "-o", filepath.Join(dir, "k.o")}
	tempDir := t.TempDir()
	inv := &Invocation{Argv0: "offcc", Env: os.Environ(), Stderr: io.Discard}
	_, jobs, err := clangJobs(context.Background(), inv, clang, args, tempDir, nil, nil)
	if err != nil {
		t.Fatalf("clang -###: %v", err)
	}
	want := clangCUID(src, args)
	env := &planEnv{tempDir: tempDir, self: "/bin/offcc", steps: &steps{clang: clang},
		cuid: func(string) (string, bool) { return want, false }}
	plan, err := newPlanner(env, actions.HIP).build(jobs)
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := []string{"device-compile gfx906", "device-link gfx906", "device-compile gfx90a", "device-link gfx90a", "fatbinary", "compile", "embed"}
	if got := kinds(plan.Graph); !slices.Equal(got, wantKinds) {
		t.Fatalf("kinds %q, want %q", got, wantKinds)
	}
	g := plan.Graph.Actions
	for _, i := range []int{1, 3} {
		if deps := g[i].Deps(); len(deps) != 1 || deps[0] != g[i-1] {
			t.Errorf("%s does not link its own compile", kinds(plan.Graph)[i])
		}
	}
	if deps := g[4].Deps(); len(deps) != 2 || deps[0] != g[1] || deps[1] != g[3] {
		t.Errorf("the bundle does not read both device links")
	}
	// The host compile waits for nothing: it compiles with an empty fat
	// binary, and the embed step puts the bundle in.
	if i := slices.Index(g[5].Command, "-fcuda-include-gpubinary"); len(g[5].Deps()) != 0 || i < 0 || g[5].Command[i+1] != os.DevNull {
		t.Errorf("the host compile waits or reads the fat binary: %q", g[5].Command)
	}
	if deps := g[6].Deps(); len(deps) != 2 || deps[0] != g[5] || deps[1] != g[4] || g[6].Outputs[0].Path != args[len(args)-1] {
		t.Errorf("the embed step does not join the host object and the bundle into -o: %q", g[6].Command)
	}
	// An object ReplaceSection cannot lay out makes the embed step run the
	// original host compile, which reads the bundle and writes -o.
	os.WriteFile(g[5].Outputs[0].Path, []byte("\x7fELF not an object"), 0o644)
	os.WriteFile(g[4].Outputs[0].Path, []byte("bundle"), 0o644)
	sh := actions.NewShell(actions.ShellOptions{Stdout: io.Discard, Stderr: io.Discard, TempDir: tempDir})
	if _, err := g[6].Expand(context.Background(), sh); err == nil {
		t.Errorf("a corrupt host object: no error")
	}
	// An object without .hip_fatbin registers nothing: it is clang's
	// object as it is.
	plain := filepath.Join(dir, "plain.c")
	os.WriteFile(plain, []byte("int x;\n"), 0o644)
	if out, err := exec.Command(clang, "-c", plain, "-o", g[5].Outputs[0].Path).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	more, err := g[6].Expand(context.Background(), sh)
	got, _ := os.ReadFile(g[6].Outputs[0].Path)
	host, _ := os.ReadFile(g[5].Outputs[0].Path)
	if err != nil || len(more) != 0 || !bytes.Equal(got, host) {
		t.Errorf("an object without .hip_fatbin: expansion %v, %v, output equal to the host object %v; want no expansion and the host object", more, err, bytes.Equal(got, host))
	}
	// One whose fat binary wrapper does not point at the end of
	// .hip_fatbin (where an empty fat binary lies) is not laid out: the
	// original host compile runs, reading the bundle and writing -o.
	os.WriteFile(plain, []byte("__attribute__((section(\".hip_fatbin\"))) int x[4] = {1};\n"+
		"struct { int magic, version; const void *data, *unused; } __hip_fatbin_wrapper = {0, 1, x + 1, 0};\n"), 0o644)
	if out, err := exec.Command(clang, "-c", plain, "-o", g[5].Outputs[0].Path).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	more, err = g[6].Expand(context.Background(), sh)
	if err != nil || len(more) != 1 || !slices.Contains(more[0].Command, g[4].Outputs[0].Path) || more[0].Outputs[0] != g[6].Outputs[0] {
		t.Errorf("an object whose wrapper points elsewhere: expansion %v, %v; want the original host compile", more, err)
	}
	for _, i := range []int{0, 2, 5} {
		if !slices.Contains(g[i].Command, "-cuid="+want) {
			t.Errorf("%s lacks -cuid=%s: %q", kinds(plan.Graph)[i], want, g[i].Command)
		}
	}
	// Without a compile unit ID offcc can reproduce, clang runs it.
	env.cuid = func(string) (string, bool) { return "", false }
	var ue *UnrecognizedError
	if _, err := newPlanner(env, actions.HIP).build(jobs); !errors.As(err, &ue) {
		t.Errorf("unknown CUID: err = %v, want an UnrecognizedError", err)
	}
}
