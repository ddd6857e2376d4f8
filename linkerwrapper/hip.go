package linkerwrapper

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/bundler"
	"github.com/offcc/offcc/target"
)

// hipFatbin plans the bundling of a HIP link's device images into the fat
// binary the HIP runtime reads, as clang-linker-wrapper 22 runs
// clang-offload-bundler: -type=o -bundle-align=4096, a host entry with no
// data, then one hip-<triple>--<arch> entry per image, images in
// descending (triple, arch) order. offcc's bundler runs in-process
// (--compress links are LLVM's wrapper's: see Plan). out is the artifact
// to write (nil: a temporary <output>.hipfb).
func (l *linkPlan) hipFatbin(devs []*deviceLink, out *actions.Artifact) *actions.Action {
	sorted := clangImageOrder(devs)
	if out == nil {
		out = actions.NewArtifact(l.tempName(l.outBase, "hipfb"))
	}
	args := []string{"-type=o", "-bundle-align=4096"}
	targets := []string{"host-x86_64-unknown-linux-gnu"}
	inputs := []string{"-input=/dev/null"}
	a := &actions.Action{
		Kind: actions.FatBinary, Offload: actions.HIP, Target: target.Target{Triple: l.o.hostTriple},
		Outputs: []*actions.Artifact{out}, Cost: 0.05,
	}
	for _, d := range sorted {
		targets = append(targets, fmt.Sprintf("hip-%s--%s", d.g.id.Triple, d.arch))
		inputs = append(inputs, "-input="+d.link.Outputs[0].Path)
		a.Inputs = append(a.Inputs, d.link.Outputs[0])
	}
	args = append(args, "-targets="+strings.Join(targets, ","))
	args = append(args, inputs...)
	args = append(args, "-output="+out.Path)
	a.Command = append([]string{"offcc", "offload-bundler"}, args...)
	a.Run = func(_ context.Context, sh *actions.Shell) error {
		if rc := bundler.Main("offcc offload-bundler", args, os.Getenv, sh.Stdout(), sh.Stderr()); rc != 0 {
			return fmt.Errorf("bundling the HIP fat binary failed")
		}
		return nil
	}
	return a
}

// fatbinWrapActions plans the registration of a HIP or CUDA fat binary: an
// in-process action writing the registration module, and the llc command
// that compiles it.
func (l *linkPlan) fatbinWrapActions(fatbin *actions.Artifact, rt fatbinRuntime) (wrap, compile *actions.Action) {
	offload := actions.HIP
	if rt.prefix == "cuda" {
		offload = actions.CUDA
	}
	wrap, compile = l.wrapperActions(offload)
	wrap.Inputs = []*actions.Artifact{fatbin}
	printIR, triple, path, irFile := l.o.printWrapped, l.o.hostTriple, fatbin.Path, wrap.Outputs[0].Path
	wrap.Run = func(_ context.Context, sh *actions.Shell) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return writeModule(sh, irFile, fatbinWrapperIR(triple, rt, data), printIR)
	}
	return wrap, compile
}

// cudaFatbin plans NVIDIA's fatbinary over a CUDA link's device images, as
// clang-linker-wrapper 22 runs it: "fatbinary -64 --create OUT" and one
// --image3=kind=elf,sm=N,file=IMG per image, in descending (triple, arch)
// order. fatbinary is taken from --cuda-path's bin directory (/bin without
// --cuda-path, as LLVM's wrapper forms it), else PATH;
// when neither has it the link fails now, before any device link runs
// (under --dry-run it prints the bare name, as LLVM's wrapper does).
func (l *linkPlan) cudaFatbin(devs []*deviceLink) (*actions.Action, error) {
	tool := "fatbinary"
	// clang-linker-wrapper looks in --cuda-path's "/bin" first, and
	// clang's driver passes no --cuda-path: then that is "/bin" itself.
	if p := l.o.cudaPath + "/bin/" + tool; fileExists(p) {
		tool = p
	} else if p, err := exec.LookPath(tool); err == nil {
		tool = p
	} else if !l.o.dryRun {
		return nil, fmt.Errorf("cannot find 'fatbinary' (NVIDIA's fat binary tool), which CUDA links need: install the CUDA toolkit and pass --cuda-path=DIR (or put its bin directory on PATH)")
	}
	out := actions.NewArtifact(l.tempName(l.outBase, "fatbin"))
	a := &actions.Action{
		Kind: actions.FatBinary, Offload: actions.CUDA, Target: target.Target{Triple: l.o.hostTriple}, Tool: "fatbinary",
		Outputs: []*actions.Artifact{out}, Cost: 0.1,
		Command: []string{tool, "-64", "--create", out.Path},
	}
	for _, d := range clangImageOrder(devs) {
		sm := strings.TrimPrefix(d.arch, "sm_")
		a.Command = append(a.Command, fmt.Sprintf("--image3=kind=elf,sm=%s,file=%s", sm, d.link.Outputs[0].Path))
		a.Inputs = append(a.Inputs, d.link.Outputs[0])
	}
	return a, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// clangImageOrder returns device links in the order clang-linker-wrapper 22
// sorts linked images before bundling and wrapping them: descending
// triple, then descending arch.
func clangImageOrder(devs []*deviceLink) []*deviceLink {
	sorted := append([]*deviceLink(nil), devs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].g.id, sorted[j].g.id
		if a.Triple != b.Triple {
			return a.Triple > b.Triple
		}
		return sorted[i].arch > sorted[j].arch
	})
	return sorted
}
