package linkerwrapper

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/llvmtest"
)

// TestPlanTypedActions checks the actions Plan returns for a link of two
// objects with images for the host device: extraction and device link per
// target, registration, host link, each reading what the one before
// writes; and that planning writes nothing.
func TestPlanTypedActions(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.c"), mainSrc)
	writeFile(t, filepath.Join(dir, "k.c"), "#pragma omp declare target\nint k(int x) { return x + 1; }\n#pragma omp end declare target\n")
	clang(t, dir, "-fopenmp", hostTarget, "-c", "m.c", "k.c")
	exe := filepath.Join(dir, "m")
	args := wrapperArgs(t, dir, "-fopenmp", hostTarget, filepath.Join(dir, "m.o"), filepath.Join(dir, "k.o"), "-o", exe)
	tmp := t.TempDir()
	out := actions.NewArtifact(exe)
	cl, err := ParseCommandLine(args)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := Plan(Config{Clang: llvmtest.Clang(t), TempDir: tmp}, cl, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, a := range acts {
		kinds = append(kinds, a.Kind.String())
	}
	if want := []string{"extract", "device-link", "wrap", "wrap", "host-link"}; !slices.Equal(kinds, want) {
		t.Fatalf("actions %q, want %q", kinds, want)
	}
	var g actions.Graph
	for _, a := range acts {
		if err := g.Add(a); err != nil {
			t.Fatal(err)
		}
	}
	ex, dev, wrap, compile, host := acts[0], acts[1], acts[2], acts[3], acts[4]
	if len(ex.Inputs) != 2 || len(ex.Outputs) != 2 || ex.Target.Arch != "generic" || !ex.Device {
		t.Errorf("extract: inputs %v outputs %v target %+v", ex.Inputs, ex.Outputs, ex.Target)
	}
	for _, f := range ex.Outputs {
		if !strings.HasPrefix(f.Path, tmp+"/") || !slices.Contains(dev.Command, f.Path) {
			t.Errorf("extracted image %s not in the temporary directory or not linked", f.Path)
		}
	}
	if d := dev.Deps(); len(d) != 1 || d[0] != ex {
		t.Errorf("device link deps %v", d)
	}
	if d := wrap.Deps(); len(d) != 1 || d[0] != dev {
		t.Errorf("wrap deps %v", d)
	}
	if d := compile.Deps(); len(d) != 1 || d[0] != wrap || compile.ToolName() != "llc" {
		t.Errorf("wrapper compile deps %v tool %s", d, compile.ToolName())
	}
	if d := host.Deps(); len(d) != 1 || d[0] != compile || out.Producer() != host || host.Command[0] != "/usr/bin/ld" {
		t.Errorf("host link deps %v, command %q", d, host.Command)
	}
	if !host.Kind.InLinkStage() || !dev.Kind.InLinkStage() {
		t.Error("link actions are not in the link stage")
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("Plan wrote %d files", len(ents))
	}
	if _, err := os.Stat(exe); err == nil {
		t.Error("Plan wrote the output")
	}
}

// TestLTOBitcodeHandedToLLVM checks that a link with LTO bitcode inputs,
// whose offload images offcc cannot read, goes to LLVM's
// clang-linker-wrapper instead of producing a program without device
// code, and that the program runs offloaded.
func TestLTOBitcodeHandedToLLVM(t *testing.T) {
	requireLLVM(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.c"), mainSrc)
	clang(t, dir, "-fopenmp", hostTarget, "-flto", "-c", "m.c", "-o", "m.o")
	exe := filepath.Join(dir, "m")
	args := wrapperArgs(t, dir, "-fopenmp", hostTarget, "-flto", filepath.Join(dir, "m.o"), "-o", exe)
	wrapper := llvmtest.Tool(t, "clang-linker-wrapper")
	var notes bytes.Buffer
	cl, err := ParseCommandLine(args)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := Plan(Config{Clang: llvmtest.Clang(t), LinkerWrapper: wrapper, Verbose: true}, cl, nil, &notes)
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 1 || acts[0].Command[0] != wrapper || !slices.Equal(acts[0].Command[1:], args) {
		t.Fatalf("plan %v, want one clang-linker-wrapper action with the same arguments", acts)
	}
	if !strings.Contains(notes.String(), "offcc does not read offload images from LLVM bitcode ("+filepath.Join(dir, "m.o")+")") {
		t.Errorf("notes %q", notes.String())
	}
	var stdout, stderr bytes.Buffer
	rc := Main(t.Context(), Config{Clang: llvmtest.Clang(t), LinkerWrapper: wrapper, Jobs: 2, Stdout: &stdout, Stderr: &stderr}, args)
	if rc != 0 {
		t.Fatalf("Main = %d\n%s", rc, stderr.String())
	}
	if got := runOffload(t, exe); !strings.Contains(got, "initial=0 v=42") {
		t.Fatalf("program printed %q, want the region to run on the device", got)
	}
}
