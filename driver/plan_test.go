package driver

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
)

// fakeSteps records nothing and does nothing: plan tests never run jobs.
type fakeSteps struct{}

func (fakeSteps) Package(context.Context, []string, io.Writer, io.Writer) error { return nil }
func (fakeSteps) Embed(context.Context, string, string, []string) error         { return nil }
func (fakeSteps) Link(context.Context, []string, io.Writer, io.Writer) error    { return nil }
func (fakeSteps) LinkArgsPrefix() []string                                      { return nil }

// cannedJobs is clang 22's -### output for
// "clang -fopenmp --offload-arch=gfx906,gfx90a -nogpulib m.c -o m", shortened
// to the arguments the planner reads.
const cannedJobs = `Debian clang version 22.1.8 (1~deb12u1)
Target: x86_64-pc-linux-gnu
Thread model: posix
InstalledDir: /usr/lib/llvm-22/bin
 "/usr/lib/llvm-22/bin/clang" "-cc1" "-triple" "x86_64-pc-linux-gnu" "-emit-llvm-bc" "-disable-llvm-passes" "--offload-targets=amdgcn-amd-amdhsa" "-o" "TMP/m-38ae8c.bc" "-x" "c" "m.c"
 "/usr/lib/llvm-22/bin/clang" "-cc1" "-triple" "amdgcn-amd-amdhsa" "-aux-triple" "x86_64-pc-linux-gnu" "-emit-llvm-bc" "-fopenmp-is-target-device" "-fopenmp-host-ir-file-path" "TMP/m-38ae8c.bc" "-target-cpu" "gfx906" "-o" "TMP/m-gfx906-e224e3.bc" "-x" "c" "m.c"
 "/usr/lib/llvm-22/bin/clang" "-cc1" "-triple" "amdgcn-amd-amdhsa" "-aux-triple" "x86_64-pc-linux-gnu" "-emit-llvm-bc" "-fopenmp-is-target-device" "-fopenmp-host-ir-file-path" "TMP/m-38ae8c.bc" "-target-cpu" "gfx90a" "-o" "TMP/m-gfx90a-dd5aa2.bc" "-x" "c" "m.c"
 "/usr/lib/llvm-22/bin/llvm-offload-binary" "-o" "TMP/m-b4498b.out" "--image=file=TMP/m-gfx906-e224e3.bc,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp" "--image=file=TMP/m-gfx90a-dd5aa2.bc,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=openmp"
 "/usr/lib/llvm-22/bin/clang" "-cc1" "-triple" "x86_64-pc-linux-gnu" "-emit-obj" "-fembed-offload-object=TMP/m-b4498b.out" "-o" "TMP/m-0a76f1.o" "-x" "ir" "TMP/m-38ae8c.bc"
 "/usr/lib/llvm-22/bin/clang-linker-wrapper" "--host-triple=x86_64-pc-linux-gnu" "--linker-path=/usr/bin/ld" "-o" "m" "TMP/m-0a76f1.o" "-lomp" "-lomptarget"
`

func fakeClang(t *testing.T, tmp string) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "canned.txt")
	if err := os.WriteFile(out, []byte(strings.ReplaceAll(cannedJobs, "TMP", tmp)), 0o644); err != nil {
		t.Fatal(err)
	}
	clang := filepath.Join(dir, "clang")
	script := "#!/bin/sh\ncat " + out + " >&2\n"
	if err := os.WriteFile(clang, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return clang
}

func TestPlanGraph(t *testing.T) {
	tmp := t.TempDir()
	p := &Planner{Clang: fakeClang(t, tmp), Argv0: "offcc", Self: "/bin/offcc", TempDir: tmp, Steps: fakeSteps{}}
	plan, err := p.Plan(context.Background(), []string{"-fopenmp", "--offload-arch=gfx906,gfx90a", "m.c", "-o", "m"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Header) != 4 || !strings.HasPrefix(plan.Header[0], "Debian clang version 22") {
		t.Errorf("header = %q", plan.Header)
	}
	if plan.HostTriple != "x86_64-pc-linux-gnu" {
		t.Errorf("host triple = %q", plan.HostTriple)
	}
	jobs := plan.Graph.Jobs
	var tools []string
	for _, j := range jobs {
		tools = append(tools, j.Tool)
	}
	want := "clang clang clang Offload::Packager clang Offload::Embedder Offload::Linker"
	if got := strings.Join(tools, " "); got != want {
		t.Fatalf("tools = %s, want %s", got, want)
	}
	hostIR, dev1, dev2, pack, backend, embed, link := jobs[0], jobs[1], jobs[2], jobs[3], jobs[4], jobs[5], jobs[6]
	// One host IR for every device; device jobs read it.
	for _, d := range []*actions.Job{dev1, dev2} {
		if len(d.Deps) != 1 || d.Deps[0] != hostIR {
			t.Errorf("device job deps = %v, want the host IR job", d.Deps)
		}
		if d.Triple != "amdgcn-amd-amdhsa" || d.Inputs[0] != "m.c" {
			t.Errorf("device job triple %q inputs %q", d.Triple, d.Inputs)
		}
	}
	// The host backend waits only for host IR, not for the devices.
	if len(backend.Deps) != 1 || backend.Deps[0] != hostIR {
		t.Errorf("host backend deps = %d jobs, want only the host IR job", len(backend.Deps))
	}
	for _, a := range backend.Args {
		if strings.HasPrefix(a, "-fembed-offload-object") {
			t.Errorf("host backend still embeds: %s", a)
		}
	}
	if len(pack.Deps) != 2 || pack.Run == nil || pack.Args[1] != "offload-binary" {
		t.Errorf("packager: %d deps, in-process %v, args %q", len(pack.Deps), pack.Run != nil, pack.Args[:2])
	}
	if len(embed.Deps) != 2 || embed.Outputs[0] != filepath.Join(tmp, "m-0a76f1.o") {
		t.Errorf("embed deps %d outputs %q", len(embed.Deps), embed.Outputs)
	}
	if embed.Args[1] != "offload-embed" || embed.Args[3] != embed.Outputs[0] || embed.Args[4] != backend.Outputs[0] {
		t.Errorf("embed args %q", embed.Args)
	}
	if len(link.Deps) != 1 || link.Deps[0] != embed || link.Args[1] != "linker-wrapper" || link.Run == nil {
		t.Errorf("link job: deps %v args %q", link.Deps, link.Args[:2])
	}
	if err := plan.Graph.Validate(); err != nil {
		t.Error(err)
	}
	// Longest path first: the backend (1.3) outranks a device compile (1.0).
	if backend.Cost <= dev1.Cost || hostIR.Cost >= dev1.Cost {
		t.Errorf("costs: host IR %v, device %v, backend %v", hostIR.Cost, dev1.Cost, backend.Cost)
	}
}

func TestPlanClangError(t *testing.T) {
	dir := t.TempDir()
	clang := filepath.Join(dir, "clang")
	os.WriteFile(clang, []byte("#!/bin/sh\necho 'Debian clang version 22.1.8' >&2\necho \"offcc: error: no such file or directory: 'nope.c'\" >&2\nexit 1\n"), 0o755)
	p := &Planner{Clang: clang, Argv0: "offcc", TempDir: dir, Steps: fakeSteps{}}
	_, err := p.Plan(context.Background(), []string{"nope.c"})
	ce, ok := err.(*ClangError)
	if !ok || ce.Code != 1 || ce.Messages != "offcc: error: no such file or directory: 'nope.c'" {
		t.Fatalf("err = %#v", err)
	}
}

func TestAtomicOutputs(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	final := filepath.Join(dir, "m.o")
	g := &actions.Graph{}
	j := g.Add(&actions.Job{Args: []string{"clang", "-cc1", "-o", final, "x.c"}, Outputs: []string{final}})
	k := g.Add(&actions.Job{Args: []string{"clang", "-cc1", "-o", filepath.Join(tmp, "a.bc")}, Outputs: []string{filepath.Join(tmp, "a.bc")}})
	if err := atomicOutputs(g, tmp); err != nil {
		t.Fatal(err)
	}
	if j.Args[3] == final || len(j.Publish) != 1 || j.Publish[0].To != final || j.Outputs[0] != j.Args[3] {
		t.Errorf("final output not redirected: %q %v", j.Args, j.Publish)
	}
	if filepath.Dir(j.Args[3]) != dir {
		t.Errorf("temporary %s not beside %s", j.Args[3], final)
	}
	if len(k.Publish) != 0 {
		t.Errorf("temporary output got a publish step")
	}
	os.Remove(j.Args[3])
}
