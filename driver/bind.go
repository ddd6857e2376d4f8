package driver

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/linkerwrapper"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/target"
)

// This file binds the jobs every offload kind shares (compiles, the
// assemblers, the packager and the link stage) to typed actions. Each
// input and output comes from the option that names it.

// bindCC1 adds a clang -cc1 job as an action of the given kind.
func (p *planner) bindCC1(j *clangJob, c *cc1Job, kind actions.Kind) error {
	a := &actions.Action{
		Kind: kind, Offload: p.offload, Device: c.device(),
		Target:  target.Target{Triple: c.triple},
		Command: append([]string(nil), j.argv...),
		Cost:    cc1Cost(kind, c),
	}
	if a.Device && target.IsGPU(c.triple) {
		a.Target.Arch = c.targetID()
	}
	if !a.Device && p.plan.HostTriple == "" {
		p.plan.HostTriple = c.triple
	}
	in, err := p.input(j, c.input)
	if err != nil {
		return err
	}
	a.Inputs = append(a.Inputs, in)
	if c.hostIR != "" {
		hostIR, err := p.input(j, c.hostIR)
		if err != nil {
			return err
		}
		a.Inputs = append(a.Inputs, hostIR)
	}
	if a.Reads, err = p.inputs(j, c.reads); err != nil {
		return err
	}
	if (kind == actions.Backend || kind == actions.Compile) && !a.Device && c.mode == "-emit-obj" && len(c.embed) > 0 {
		return p.bindSplitEmbed(j, c, a)
	}
	blobs, err := p.inputs(j, c.embed)
	if err != nil {
		return err
	}
	a.Reads = append(a.Reads, blobs...)
	if c.output != "" {
		out, err := p.output(j, c.output)
		if err != nil {
			return err
		}
		a.Outputs = append(a.Outputs, out)
	}
	if err := p.bindDepFile(j, c, a); err != nil {
		return err
	}
	if (p.offload == actions.HIP || p.offload == actions.CUDA) && !a.Device && c.mode == "-emit-obj" && c.gpuBinary != "" {
		return p.bindFatbinEmbed(j, c, a)
	}
	return p.add(j, a)
}

// bindDepFile makes the compile list the headers it reads. The host compile
// keeps the user's dependency file and offcc reads it back; every other
// compile that preprocesses writes one to the temporary directory. A
// user's file that leaves out system headers (-MMD) stays clang's, and the
// compile also writes an include graph for offcc (see bindIncludeGraph).
// Device compiles never write the user's file (clang 22 still lets the
// device compile for the host's own triple write it).
func (p *planner) bindDepFile(j *clangJob, c *cc1Job, a *actions.Action) error {
	if c.depFile != "" && a.Device {
		a.Command = withoutDepOptions(a.Command)
		c.depFile = ""
	}
	if c.depFile != "" {
		f, err := p.output(j, c.depFile)
		if err != nil {
			return err
		}
		a.Outputs = append(a.Outputs, f)
		// (clang writes one dependency file per compile, and the
		// user's wins.)
		switch {
		case c.depFile == "-" || strings.HasPrefix(c.depFile, "/dev/"):
			if c.preprocesses() {
				a.UnknownReads = "its headers go to a dependency file offcc cannot read back"
			}
		case !slices.Contains(a.Command, "-sys-header-deps") && c.preprocesses():
			a.DepFile = c.depFile
			p.bindIncludeGraph(c, a)
		default:
			a.DepFile = c.depFile
		}
		return nil
	}
	if !c.preprocesses() {
		return nil
	}
	d := p.temp(depLike(c), ".d")
	a.Outputs = append(a.Outputs, d)
	a.DepFile = d.Path
	a.Command = beforeInput(a.Command, "-dependency-file", d.Path, "-MT", depLike(c), "-sys-header-deps")
	return nil
}

// depLike is the name offcc's files for a compile are named after: its
// output, or its input's object.
func depLike(c *cc1Job) string {
	if c.output != "" {
		return c.output
	}
	return c.input + ".o"
}

// beforeInput returns the cc1 command argv with args inserted before the
// "-x LANG INPUT" it ends with.
func beforeInput(argv []string, args ...string) []string {
	n := len(argv)
	out := make([]string, 0, n+len(args))
	out = append(out, argv[:n-3]...)
	out = append(out, args...)
	return append(out, argv[n-3:]...)
}

// bindIncludeGraph makes a compile whose dependency file (the user's, as
// -MMD writes it) leaves out system headers also write an include graph
// (-dependency-dot) to the temporary directory: with the dependency file
// it names every file the compile reads (see actions.IncludeGraph). clang
// 22's other list, -header-include-file (-H's), leaves out system headers
// as the dependency file does unless -sys-header-deps, which would change
// the user's file. The user's file is clang's, byte for byte, and is
// restored as written on a hit. The compile stays uncacheable where the
// graph cannot be had or does not cover its reads.
func (p *planner) bindIncludeGraph(c *cc1Job, a *actions.Action) {
	n := len(a.Command)
	args, err := p.env.optionTables().ClangCC1().Parse(a.Command[2 : n-3])
	if err != nil {
		a.UnknownReads = "-MMD (its dependency file leaves out system headers): " + err.Error()
		return
	}
	g := &actions.IncludeGraph{Sysroot: "/"}
	var forced []string
	for _, arg := range args {
		switch {
		case arg.Is("dependency_dot"):
			a.UnknownReads = "-MMD (its dependency file leaves out system headers) with -dependency-dot"
			return
		case arg.Is("include_pch") || arg.Is("fmodule_file"):
			// clang lists the headers a precompiled header or module
			// was built from in the dependency file only; the system
			// ones nowhere under -MMD.
			a.UnknownReads = "-MMD (its dependency file leaves out system headers) with a precompiled header or module"
			return
		case arg.Is("isysroot"):
			g.Sysroot = arg.Value()
		case arg.Is("include") || arg.Is("imacros"):
			forced = append(forced, arg.Value())
		}
	}
	dirs := options.HeaderSearchDirs(args)
	for _, f := range forced {
		g.Forced = append(g.Forced, f)
		if filepath.IsAbs(f) {
			continue
		}
		for _, d := range dirs {
			g.Forced = append(g.Forced, filepath.Join(d, f))
		}
	}
	dot := p.temp(depLike(c), ".dot")
	g.Path = dot.Path
	a.Outputs = append(a.Outputs, dot)
	a.IncludeGraph = g
	a.Command = beforeInput(a.Command, "-dependency-dot", dot.Path)
}

// withoutDepOptions removes the dependency-file options from a cc1
// command line.
func withoutDepOptions(argv []string) []string {
	out := make([]string, 0, len(argv))
	for i := 0; i < len(argv); i++ {
		switch argv[i] {
		case "-dependency-file", "-MT", "-MQ":
			i++
		case "-sys-header-deps", "-MP":
		default:
			out = append(out, argv[i])
		}
	}
	return out
}

// bindSplitEmbed replaces a host job (OpenMP's backend, the host compile
// of SYCL, HIP and CUDA with -fgpu-rdc) that embeds offload binaries
// (-fembed-offload-object) by one that embeds an empty one
// (-fembed-offload-object=/dev/null) and an embed step after it that fills
// the empty section in place: the job would otherwise wait for every device
// image only to copy it into a section. It now runs beside the device
// compiles, and the object is the one clang writes.
func (p *planner) bindSplitEmbed(j *clangJob, c *cc1Job, backend *actions.Action) error {
	final, err := p.output(j, c.output)
	if err != nil {
		return err
	}
	hostOnly := p.temp(c.output, ".o")
	var args []string
	embedded := false
	for i, arg := range j.argv {
		switch {
		case strings.HasPrefix(arg, "-fembed-offload-object="):
			// An empty .llvm.offloading section where clang puts it,
			// filled by the embed step.
			if !embedded {
				args = append(args, "-fembed-offload-object=/dev/null")
				embedded = true
			}
			continue
		case i == c.outputArg:
			arg = hostOnly.Path
		}
		args = append(args, arg)
	}
	backend.Command = args
	backend.Outputs = []*actions.Artifact{hostOnly}
	embed := &actions.Action{
		Kind: actions.Embed, Offload: p.offload, Target: backend.Target,
		Inputs:  []*actions.Artifact{hostOnly},
		Outputs: []*actions.Artifact{final},
		Command: []string{p.env.self, "offload-embed", "-o", final.Path, hostOnly.Path},
		Cost:    0.02,
	}
	blobFiles, err := p.inputs(j, c.embed)
	if err != nil {
		return err
	}
	embed.Inputs = append(embed.Inputs, blobFiles...)
	embed.Command = append(embed.Command, c.embed...)
	blobs := c.embed
	// The original job names the files of both actions.
	if err := p.checkBound(j, backend.Inputs, backend.Reads, embed.Inputs, embed.Outputs); err != nil {
		return err
	}
	// A host compile from source (SYCL) keeps its dependency file.
	if err := p.bindDepFile(j, c, backend); err != nil {
		return err
	}
	if err := p.plan.Graph.Add(backend); err != nil {
		return unrecognized(j, "%v", err)
	}
	steps := p.env.steps
	out, obj := final.Path, hostOnly.Path
	embed.Run = func(_ context.Context, sh *actions.Shell) error {
		return steps.embed(sh, out, obj, blobs)
	}
	if err := p.plan.Graph.Add(embed); err != nil {
		return unrecognized(j, "%v", err)
	}
	return nil
}

// cc1Cost estimates a compile's cost relative to a device compile, from
// measurements of clang 22 on OpenMP code: the host front end without LLVM
// passes is about a fifth of a device compile, the host backend a bit more
// than one.
func cc1Cost(kind actions.Kind, c *cc1Job) float64 {
	switch {
	case kind == actions.Preprocess:
		return 0.1
	case c.disablePasses:
		return 0.2
	case kind == actions.Backend:
		return 1.3
	}
	return 1
}

// bindAssemble adds a clang -cc1as job.
func (p *planner) bindAssemble(j *clangJob) error {
	c, err := parseCC1as(p.env.optionTables(), j.argv)
	if err != nil {
		return unrecognized(j, "%v", err)
	}
	a := &actions.Action{
		Kind: actions.Assemble, Offload: p.offload, Device: target.IsGPU(c.triple),
		Target: target.Target{Triple: c.triple}, Command: j.argv, Cost: 0.1,
	}
	in, err := p.input(j, c.input)
	if err != nil {
		return err
	}
	out, err := p.output(j, c.output)
	if err != nil {
		return err
	}
	a.Inputs, a.Outputs = []*actions.Artifact{in}, []*actions.Artifact{out}
	return p.add(j, a)
}

// bindPtxas adds a ptxas job (NVPTX::Assembler).
func (p *planner) bindPtxas(j *clangJob) error {
	x, err := parsePtxas(j.argv)
	if err != nil {
		return unrecognized(j, "%v", err)
	}
	in, err := p.input(j, x.input)
	if err != nil {
		return err
	}
	triple := "nvptx64-nvidia-cuda"
	if prod := in.Producer(); prod != nil {
		triple = prod.Target.Triple
	}
	out, err := p.output(j, x.output)
	if err != nil {
		return err
	}
	return p.add(j, &actions.Action{
		Kind: actions.DeviceAssemble, Offload: p.offload, Device: true,
		Target: target.Target{Triple: triple, Arch: x.gpu}, Command: j.argv, Cost: 0.5,
		Inputs: []*actions.Artifact{in}, Outputs: []*actions.Artifact{out},
	})
}

// bindPackage adds an llvm-offload-binary job as offcc's in-process
// packager, byte-identical to LLVM's.
func (p *planner) bindPackage(j *clangJob) error {
	var out string
	var specs []string
	for i := 1; i < len(j.argv); i++ {
		switch a := j.argv[i]; {
		case a == "-o" && i+1 < len(j.argv):
			out = j.argv[i+1]
			i++
		case strings.HasPrefix(a, "--image="):
			specs = append(specs, strings.TrimPrefix(a, "--image="))
		default:
			return unrecognized(j, "unexpected packager argument %q", a)
		}
	}
	if out == "" || len(specs) == 0 {
		return unrecognized(j, "packager job without -o or --image")
	}
	a := &actions.Action{
		Kind: actions.Package, Offload: p.offload, Target: target.Target{Triple: p.hostTriple()},
		Command: append([]string{p.env.self, "offload-binary"}, j.argv[1:]...), Cost: 0.05,
	}
	var images []packager.FileImage
	for _, spec := range specs {
		file, kind, strs, err := packager.ParseImageSpec(spec)
		if err != nil {
			return unrecognized(j, "%v", err)
		}
		for _, path := range strings.Split(file, ",") {
			in, err := p.input(j, path)
			if err != nil {
				return err
			}
			a.Inputs = append(a.Inputs, in)
			images = append(images, packager.FileImage{Path: path, Offload: packager.ParseOffloadKind(kind), Strings: strs})
			for _, kv := range strs {
				if kv.Key == "arch" {
					setDeviceArch(in, kv.Value)
				}
			}
		}
	}
	o, err := p.output(j, out)
	if err != nil {
		return err
	}
	a.Outputs = []*actions.Artifact{o}
	steps := p.env.steps
	a.Run = func(_ context.Context, sh *actions.Shell) error {
		return steps.pack(sh, out, images)
	}
	return p.add(j, a)
}

// setDeviceArch records the arch the packager files an image under on the
// device actions that produced it (the compile, and ptxas after it).
func setDeviceArch(f *actions.Artifact, arch string) {
	for a := f.Producer(); a != nil && a.Device; {
		a.Target.Arch = arch
		var next *actions.Action
		for _, in := range a.Inputs {
			if pr := in.Producer(); pr != nil && pr.Device && pr.Target.Triple == a.Target.Triple {
				next = pr
				break
			}
		}
		a = next
	}
}

// bindLink adds the clang-linker-wrapper job as offcc's link stage. Its
// device links, registration and host link are planned when it runs, from
// the images its inputs hold, and join the same graph.
func (p *planner) bindLink(j *clangJob) error {
	args := j.argv[1:]
	cl, err := linkerwrapper.ParseReleaseCommandLine(p.env.steps.release, args)
	if err != nil {
		return unrecognized(j, "%v", err)
	}
	host := cl.HostTriple()
	if p.plan.HostTriple == "" {
		p.plan.HostTriple = host
	}
	a := &actions.Action{
		Kind: actions.Link, Offload: p.offload, Target: target.Target{Triple: host},
		Command: append(append([]string{p.env.self, "linker-wrapper"}, p.env.linkPrefix...), args...),
		Cost:    1,
	}
	// Inputs are what the build and the user give the link; the files
	// clang's toolchain adds (crt objects, the dynamic loader) are Reads.
	for _, path := range cl.Inputs() {
		_, earlier := p.files[path]
		in, err := p.input(j, path)
		if err != nil {
			return err
		}
		if earlier && in.Producer() != nil || p.env.userInputs[path] {
			a.Inputs = append(a.Inputs, in)
		} else {
			a.Reads = append(a.Reads, in)
		}
	}
	out, err := p.output(j, cl.Output())
	if err != nil {
		return err
	}
	a.Outputs = []*actions.Artifact{out}
	steps := p.env.steps
	llvmWrapper := j.argv[0]
	a.Expand = func(ctx context.Context, sh *actions.Shell) ([]*actions.Action, error) {
		return steps.link(sh, llvmWrapper, cl, out)
	}
	return p.add(j, a)
}
