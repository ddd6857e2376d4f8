package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/linkerwrapper"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/target"
	"github.com/offcc/offcc/toolchain"
)

// This file plans -fsyclbin, which clang 22 does not have: only the device
// side of a SYCL build runs. clang's driver plans the device compiles
// (-fsycl --offload-device-only -c); offcc packages each device compile's
// bitcode (kind sycl) and runs its link stage in SYCLBIN mode
// (linker-wrapper --syclbin=STATE), which links or compiles the images and
// writes the .syclbin file. There is no host compile and no host link.

// syclbinBuild is an -fsyclbin command line taken apart.
type syclbinBuild struct {
	// clangArgs is the command line whose jobs are the device compiles;
	// nil when no input is a source file.
	clangArgs []string
	// inputs are the command line's inputs in order; the link stage
	// reads them in that order, sources as their packaged device
	// compiles.
	inputs []syclbinArg
	// output is the .syclbin file to write.
	output string
	state  string
	// version is --syclbin-version (0: not given).
	version int
}

// syclbinArg is an input of an -fsyclbin command line.
type syclbinArg struct {
	path string
	// source is set for a file clang compiles; the others (objects and
	// archives with SYCL images, offload binaries, .syclbin files) go to
	// the link stage as they are.
	source bool
}

// syclbinLinkInputs are the input extensions -fsyclbin hands to the link
// stage instead of compiling them.
var syclbinLinkInputs = map[string]bool{"o": true, "obj": true, "a": true, "lo": true, "syclbin": true, "out": true}

// syclbinConflicts are the options, by ID (aliases resolved), that
// contradict -fsyclbin: they ask for host output or for a compile that
// stops early.
var syclbinConflicts = map[string]bool{"c": true, "S": true, "E": true, "fsyntax_only": true,
	"fsycl_host_only": true, "offload_host_only": true}

// checkSYCLBIN applies -fsyclbin's rules to a parsed command line: it
// returns a warning when -fsycl-device-only takes precedence (and drops
// -fsyclbin), or an error for options that contradict it.
func checkSYCLBIN(opts *Options) (warning string, err error) {
	if opts.SYCLBIN == "" {
		return "", nil
	}
	if slices.ContainsFunc(opts.Args, func(a *options.Arg) bool { return a.Typed().Option.ID == "fsycl_device_only" }) {
		arg := opts.SYCLBINArg
		opts.SYCLBIN, opts.SYCLBINArg = "", ""
		return fmt.Sprintf("argument unused during compilation: '%s' [-Wunused-command-line-argument]", arg), nil
	}
	for _, a := range opts.Args {
		if syclbinConflicts[a.Option.ID] {
			return "", fmt.Errorf("invalid argument '%s' not allowed with '%s'", opts.SYCLBINArg, a.Typed().Spelling)
		}
	}
	switch {
	case opts.PrintPhases:
		return "", fmt.Errorf("-ccc-print-phases does not show -fsyclbin's steps; use -ccc-print-bindings or -###")
	case len(opts.Inputs) == 0:
		return "", fmt.Errorf("no input files")
	case slices.Contains(opts.Inputs, "-"):
		return "", fmt.Errorf("-fsyclbin does not read standard input")
	}
	return "", nil
}

// checkSYCLBINRelease refuses -fsyclbin with an LLVM release whose
// profile says offcc's -fsyclbin cannot work with it
// (toolchain.Profile.SYCLBIN).
func checkSYCLBINRelease(opts *Options, release *toolchain.Profile) error {
	if opts.SYCLBIN == "" || release.SYCLBIN {
		return nil
	}
	return fmt.Errorf("unsupported option '%s' with LLVM %d: its clang has no -fsycl-device-only and it has no clang-sycl-linker", opts.SYCLBINArg, release.Major)
}

// newSYCLBINBuild takes an -fsyclbin command line apart: the output, the
// inputs the link stage reads and the device-only clang command line for
// the sources.
func newSYCLBINBuild(opts *Options) *syclbinBuild {
	b := &syclbinBuild{output: "a.syclbin", state: opts.SYCLBIN, version: opts.SYCLBINVersion}
	var args, sources []string
	hasSYCL := false
	for _, a := range opts.Args {
		switch {
		case a.IsInput():
			in := a.Value()
			src := !syclbinLinkInputs[strings.ToLower(fileExt(in))]
			if src {
				sources = append(sources, in)
			}
			b.inputs = append(b.inputs, syclbinArg{in, src})
			continue
		case a.Option.ID == "o":
			b.output = a.Value()
			continue
		case a.Option.ID == "fsycl":
			hasSYCL = true
		}
		args = append(args, a.Words(opts.ClangArgs)...)
	}
	if len(sources) > 0 {
		if !hasSYCL {
			args = append([]string{"-fsycl"}, args...) // -fsyclbin implies -fsycl
		}
		b.clangArgs = append(append(args, "--offload-device-only", "-c"), sources...)
	}
	return b
}

// plan binds the device compiles clang printed, then adds a packager per
// device compile and the link stage in SYCLBIN mode, which reads the
// inputs in command-line order.
func (b *syclbinBuild) plan(env *planEnv, jobs []*clangJob) (*Plan, error) {
	p := newPlanner(env, actions.SYCL)
	packs := map[string][]*actions.Artifact{} // by source
	for _, j := range jobs {
		if !j.isCC1() {
			return nil, unrecognized(j, "offcc's -fsyclbin planner does not know the tool %s", j.tool)
		}
		c, err := parseCC1(env.optionTables(), j.argv)
		if err != nil {
			return nil, unrecognized(j, "%v", err)
		}
		if !c.syclDevice {
			return nil, unrecognized(j, "a compile other than a SYCL device compile in an -fsyclbin build")
		}
		kind := syclCompileKind(c)
		final := kind == actions.DeviceCompile && c.mode == "-emit-llvm-bc" && c.outputArg >= 0
		if final && !p.isTemp(c.output) {
			// clang names the device-only output in the working
			// directory; -fsyclbin keeps it private.
			t := p.temp(c.output, ".bc")
			delete(p.files, t.Path)
			j.argv = slices.Clone(j.argv)
			j.argv[c.outputArg] = t.Path
			c.output = t.Path
		}
		if err := p.bindCC1(j, c, kind); err != nil {
			return nil, err
		}
		if final {
			pack, err := p.addSYCLPackage(c)
			if err != nil {
				return nil, err
			}
			packs[c.input] = append(packs[c.input], pack)
		}
	}
	if err := p.addSYCLBINLink(b, packs); err != nil {
		return nil, err
	}
	return p.plan, nil
}

// addSYCLPackage packages one device compile's bitcode as an offload
// binary of kind sycl, as clang's packager job would.
func (p *planner) addSYCLPackage(c *cc1Job) (*actions.Artifact, error) {
	bc := p.files[c.output]
	arch := "generic"
	if id := c.targetID(); id != "" && target.IsGPU(c.triple) && !target.IsSPIRV(c.triple) {
		arch = id
	}
	out := p.temp(c.output, ".out")
	spec := fmt.Sprintf("file=%s,triple=%s,arch=%s,kind=sycl", bc.Path, c.triple, arch)
	a := &actions.Action{
		Kind: actions.Package, Offload: actions.SYCL, Device: false, Target: target.Target{Triple: c.triple, Arch: arch},
		Inputs:  []*actions.Artifact{bc},
		Outputs: []*actions.Artifact{out},
		Command: []string{p.env.self, "offload-binary", "-o", out.Path, "--image=" + spec},
		Cost:    0.05,
	}
	images := []packager.FileImage{{Path: bc.Path, Offload: packager.OffloadSYCL,
		Strings: []packager.KeyValue{{Key: "triple", Value: c.triple}, {Key: "arch", Value: arch}}}}
	steps, path := p.env.steps, out.Path
	a.Run = func(_ context.Context, sh *actions.Shell) error { return steps.pack(sh, path, images) }
	if err := p.plan.Graph.Add(a); err != nil {
		return nil, err
	}
	return out, nil
}

// addSYCLBINLink adds the link stage in SYCLBIN mode, reading the packaged
// device compiles and the inputs given as they are.
func (p *planner) addSYCLBINLink(b *syclbinBuild, packs map[string][]*actions.Artifact) error {
	host := p.plan.HostTriple
	if host == "" {
		host = target.DefaultHostTriple()
		p.plan.HostTriple = host
	}
	args := []string{"--syclbin=" + b.state}
	if b.version != 0 {
		args = append(args, fmt.Sprintf("--syclbin-version=%d", b.version))
	}
	args = append(args, "--host-triple="+host, "-o", b.output)
	a := &actions.Action{
		Kind: actions.Link, Offload: actions.SYCL, Target: target.Target{Triple: host},
		Cost: 1,
	}
	for _, in := range b.inputs {
		if in.source {
			for _, f := range packs[in.path] {
				args = append(args, f.Path)
				a.Inputs = append(a.Inputs, f)
			}
			continue
		}
		args = append(args, in.path)
		f, err := p.input(nil, in.path)
		if err != nil {
			return err
		}
		a.Inputs = append(a.Inputs, f)
	}
	cl, err := linkerwrapper.ParseCommandLine(args)
	if err != nil {
		return err
	}
	out, err := p.output(nil, b.output)
	if err != nil {
		return err
	}
	a.Outputs = []*actions.Artifact{out}
	a.Command = append(append([]string{p.env.self, "linker-wrapper"}, p.env.linkPrefix...), args...)
	steps := p.env.steps
	a.Expand = func(ctx context.Context, sh *actions.Shell) ([]*actions.Action, error) {
		return steps.link(sh, "", cl, out)
	}
	return p.plan.Graph.Add(a)
}
