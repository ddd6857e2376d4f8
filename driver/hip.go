package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/target"
)

// hipBuilder plans HIP compiles and links.
//
// Without -fgpu-rdc, clang 22's default (old) offload driver runs per arch
// a device compile and an lld device link, which run at once, the fat
// binary bundling their images (in-process), and the host compile that
// embeds it (-fcuda-include-gpubinary). With --offload-new-driver the
// device compiles write bitcode, the packager packs it and a compile-time
// link stage (clang-linker-wrapper --emit-fatbin-only, offcc's) links each
// arch and bundles the fat binary; with -fgpu-rdc too the host compile
// embeds the packaged bitcode instead (-fembed-offload-object, filled in
// after it) and the program's link stage links, bundles and registers it.
// The old driver's -fgpu-rdc compile writes an object bundle; its link
// unbundles each object (host object, per-arch bitcode), links each arch
// with lld at once, bundles the fat binary, assembles it into an object
// (HIP's object generator, text offcc writes as clang's driver would) and
// links the host program.
type hipBuilder struct{}

func (hipBuilder) bind(p *planner, j *clangJob) error {
	switch {
	case j.isCC1():
		c, err := parseCC1(p.env.optionTables(), j.argv)
		if err != nil {
			return unrecognized(j, "%v", err)
		}
		if c.openmpDevice || c.syclDevice || (c.device() && !target.IsAMDGPU(c.triple)) {
			return unrecognized(j, "a device compile other than HIP's in a HIP build")
		}
		if err := p.setCUID(j, c); err != nil {
			return err
		}
		return p.bindCC1(j, c, hipCompileKind(c))
	case j.isCC1as():
		return p.bindAssemble(j)
	case j.tool == "lld" || j.tool == "ld.lld":
		return p.bindDeviceLink(j)
	case j.tool == "clang-offload-bundler":
		return p.bindBundle(j)
	case j.tool == "llvm-offload-binary" || j.tool == "clang-offload-packager":
		return p.bindPackage(j)
	case j.tool == "clang-linker-wrapper":
		// The new offload driver's link stage: at compile time
		// (--emit-fatbin-only, the per-arch device links and the fat
		// binary of a compile without -fgpu-rdc) or the program's link.
		return p.bindLink(j)
	case j.tool == "clang" && j.script != "":
		return p.bindObjectGenerator(j)
	case j.tool == "ld":
		return p.bindHostLink(j)
	}
	return unrecognized(j, "offcc's HIP planner does not know the tool %s", j.tool)
}

// hipCompileKind says what a cc1 job of a HIP build does.
func hipCompileKind(c *cc1Job) actions.Kind {
	switch {
	case c.mode == "-E":
		return actions.Preprocess
	case c.lang == "ir":
		return actions.Backend
	case c.cudaDevice:
		return actions.DeviceCompile
	}
	return actions.Compile
}

// setCUID puts into a compile the compile unit ID (-cuid=) clang's own
// build of the command line gives it, in place of the one in clang's -###
// output, which hashes "-###" too. Under -fuse-cuid=random the -### one is
// as good as any. A compile whose ID offcc cannot reproduce goes to clang,
// so that offcc's objects are clang's.
func (p *planner) setCUID(j *clangJob, c *cc1Job) error {
	for i, arg := range j.argv {
		if !strings.HasPrefix(arg, "-cuid=") {
			continue
		}
		id, keep := "", false
		if p.env.cuid != nil {
			id, keep = p.env.cuid(c.input)
		}
		switch {
		case keep:
		case id == "":
			return unrecognized(j, "offcc cannot tell the compile unit ID clang gives %s", c.input)
		default:
			j.argv[i] = "-cuid=" + id
		}
	}
	return nil
}

// bindDeviceLink adds an lld device link of clang's, its arguments read
// with lld's option table: the inputs, -o, and options whose values name
// no file (a file read or written besides those makes offcc refuse it).
func (p *planner) bindDeviceLink(j *clangJob) error {
	a := &actions.Action{
		Kind: actions.DeviceLink, Offload: p.offload, Device: true, Tool: "lld",
		Target:  target.Target{Triple: "amdgcn-amd-amdhsa"},
		Command: append([]string(nil), j.argv...), Cost: 0.05,
	}
	args, err := p.env.optionTables().LLD().Parse(j.argv[1:])
	if err != nil {
		return unrecognized(j, "%v", err)
	}
	var out string
	for _, arg := range args {
		opt := arg.Option
		switch {
		case arg.IsUnknown():
			return unrecognized(j, "unexpected device link argument %q", arg.Value())
		case arg.IsInput():
			in, err := p.input(j, arg.Value())
			if err != nil {
				return err
			}
			a.Inputs = append(a.Inputs, in)
		case opt.ID == "o":
			out = arg.Value()
		case opt.ID == "m":
			if arg.Value() != "elf64_amdgpu" {
				return unrecognized(j, "a device link for %s", arg.Value())
			}
		case opt.ID == "plugin_opt_mcpu_eq":
			a.Target.Arch = arg.Value()
		case opt.Value.IsPath():
			return unrecognized(j, "device link argument %q names a file offcc does not bind", strings.Join(arg.Words(j.argv[1:]), " "))
		}
	}
	if out == "" || len(a.Inputs) == 0 {
		return unrecognized(j, "a device link without -o or inputs")
	}
	o, err := p.output(j, out)
	if err != nil {
		return err
	}
	a.Outputs = []*actions.Artifact{o}
	return p.add(j, a)
}

// bindBundle adds clang's clang-offload-bundler job: a HIP fat binary
// (-input=/dev/null for the empty host entry) runs in-process in offcc's
// bundler with the same command line; a compressed one, or the object
// bundle of an -fgpu-rdc compile, runs LLVM's bundler, so that the bytes
// are clang's. Every file comes from its -input= or -output= option.
func (p *planner) bindBundle(j *clangJob) error {
	a := &actions.Action{
		Kind: actions.FatBinary, Offload: p.offload, Tool: "clang-offload-bundler",
		Target:  target.Target{Triple: p.hostTriple()},
		Command: append([]string{p.env.self, "offload-bundler"}, j.argv[1:]...), Cost: 0.05,
	}
	if slices.Contains(j.argv, "-unbundle") {
		return p.bindUnbundle(j)
	}
	var out string
	emptyHost, compress := false, false
	for _, arg := range j.argv[1:] {
		switch {
		case strings.HasPrefix(arg, "-input="):
			path := strings.TrimPrefix(arg, "-input=")
			if path == "/dev/null" {
				emptyHost = true
				continue
			}
			in, err := p.input(j, path)
			if err != nil {
				return err
			}
			a.Inputs = append(a.Inputs, in)
		case strings.HasPrefix(arg, "-output="):
			out = strings.TrimPrefix(arg, "-output=")
		case arg == "-compress" || arg == "--compress":
			compress = true
		case strings.HasPrefix(arg, "-type="), strings.HasPrefix(arg, "-targets="),
			strings.HasPrefix(arg, "-bundle-align="),
			strings.HasPrefix(arg, "-compression-level="), arg == "-verbose", arg == "--verbose":
		default:
			return unrecognized(j, "unexpected bundler argument %q", arg)
		}
	}
	if out == "" || len(a.Inputs) == 0 {
		return unrecognized(j, "a bundler job without -output= or inputs")
	}
	o, err := p.output(j, out)
	if err != nil {
		return err
	}
	a.Outputs = []*actions.Artifact{o}
	if !emptyHost || compress {
		// LLVM's bundler, as clang runs it: -fgpu-rdc bundles the host
		// object itself, which offcc's object bundles do not lay out
		// byte for byte as llvm-objcopy does, and offcc's zstd
		// (klauspost/compress) is not libzstd. The job still runs on
		// offcc's graph, after the compiles it reads.
		a.Command = append([]string(nil), j.argv...)
		return p.add(j, a)
	}
	steps, args := p.env.steps, append([]string(nil), j.argv[1:]...)
	a.Run = func(_ context.Context, sh *actions.Shell) error { return steps.bundle(sh, args) }
	return p.add(j, a)
}

// bindUnbundle adds the bundler's -unbundle of an -fgpu-rdc object, as an
// -fgpu-rdc link runs it: LLVM's clang-offload-bundler with clang's
// command line, writing the host object and one bitcode file per arch.
func (p *planner) bindUnbundle(j *clangJob) error {
	a := &actions.Action{
		Kind: actions.Extract, Offload: p.offload, Tool: "clang-offload-bundler",
		Target:  target.Target{Triple: p.hostTriple()},
		Command: append([]string(nil), j.argv...), Cost: 0.02,
	}
	for _, arg := range j.argv[1:] {
		switch {
		case strings.HasPrefix(arg, "-input="):
			in, err := p.input(j, strings.TrimPrefix(arg, "-input="))
			if err != nil {
				return err
			}
			a.Inputs = append(a.Inputs, in)
		case strings.HasPrefix(arg, "-output="):
			o, err := p.output(j, strings.TrimPrefix(arg, "-output="))
			if err != nil {
				return err
			}
			a.Outputs = append(a.Outputs, o)
		case strings.HasPrefix(arg, "-type="), strings.HasPrefix(arg, "-targets="),
			arg == "-unbundle", arg == "-allow-missing-bundles", arg == "-verbose", arg == "--verbose":
		default:
			return unrecognized(j, "unexpected bundler argument %q", arg)
		}
	}
	if len(a.Inputs) != 1 || len(a.Outputs) == 0 {
		return unrecognized(j, "an unbundle job without one -input= and -output=")
	}
	return p.add(j, a)
}

// bindObjectGenerator adds what clang's driver does for the fat binary of
// an -fgpu-rdc HIP link: it writes HIP's object generator (j.script, an
// assembly file that .incbin's the fat binary) and runs
// "clang -target T -o OBJ -x assembler FILE.mcin -c". offcc writes the
// file in an action of its own, naming the fat binary where it is built.
func (p *planner) bindObjectGenerator(j *clangJob) error {
	var mcin, out string
	for i := 1; i < len(j.argv); i++ {
		switch arg := j.argv[i]; {
		case arg == "-o" && i+1 < len(j.argv):
			out = j.argv[i+1]
			i++
		case strings.HasSuffix(arg, ".mcin"):
			mcin = arg
		}
	}
	if mcin == "" || out == "" || !slices.Contains(j.argv, "assembler") {
		return unrecognized(j, "an object generator job offcc cannot read")
	}
	// The fat binary it embeds; none when no input has HIP's -fgpu-rdc
	// symbols (__hip_fatbin_<CUID>), and the file is only a header.
	var reads []*actions.Artifact
	planned := ""
	if m := incbinLine().FindStringSubmatch(j.script); m != nil {
		fatbin, err := p.input(j, m[1])
		if err != nil {
			return err
		}
		reads, planned = []*actions.Artifact{fatbin}, m[1]
	}
	script, err := p.output(j, mcin)
	if err != nil {
		return err
	}
	host := target.Target{Triple: p.hostTriple()}
	write := &actions.Action{
		Kind: actions.Wrap, Offload: p.offload, Target: host, Cost: 0.01,
		Reads: reads, Outputs: []*actions.Artifact{script},
	}
	write.Run = func(_ context.Context, sh *actions.Shell) error {
		text := j.script
		if len(reads) > 0 {
			// The fat binary's path as the build names it (printing
			// renames temporaries).
			text = strings.Replace(text, `"`+planned+`"`, `"`+reads[0].Path+`"`, 1)
		}
		return sh.WriteFile(script.Path, []byte(text), 0o666)
	}
	if err := p.plan.Graph.Add(write); err != nil {
		return unrecognized(j, "%v", err)
	}
	o, err := p.output(j, out)
	if err != nil {
		return err
	}
	asm := &actions.Action{
		Kind: actions.Wrap, Offload: p.offload, Target: host, Tool: "clang", Cost: 0.05,
		Inputs: []*actions.Artifact{script}, Reads: reads, Outputs: []*actions.Artifact{o},
		Command: append([]string(nil), j.argv...),
	}
	return p.add(j, asm)
}

// incbinLine finds the fat binary an object generator embeds.
// (Compiled on first use: only HIP -fgpu-rdc links need it.)
var incbinLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^  \.incbin "([^"\\]*)"$`) })

// bindHostLink adds the host link clang's driver runs itself (ld), reading
// the temporaries earlier jobs write and writing the program.
func (p *planner) bindHostLink(j *clangJob) error {
	a := &actions.Action{
		Kind: actions.HostLink, Offload: p.offload, Tool: "ld",
		Target:  target.Target{Triple: p.hostTriple()},
		Command: append([]string(nil), j.argv...), Cost: 0.2,
	}
	var out string
	for i := 1; i < len(j.argv); i++ {
		switch arg := j.argv[i]; {
		case arg == "-o" && i+1 < len(j.argv):
			out = j.argv[i+1]
			i++
		case p.isTemp(arg):
			in, err := p.input(j, arg)
			if err != nil {
				return err
			}
			a.Inputs = append(a.Inputs, in)
		}
	}
	if out == "" {
		return unrecognized(j, "a host link without -o")
	}
	o, err := p.output(j, out)
	if err != nil {
		return err
	}
	a.Outputs = []*actions.Artifact{o}
	return p.add(j, a)
}

// bundleError is a failed in-process bundle; the bundler printed why.
type bundleError struct{ code int }

func (e *bundleError) Error() string {
	return fmt.Sprintf("clang-offload-bundler command failed with exit code %d", e.code)
}

// bindFatbinEmbed lets a HIP or CUDA host compile run beside the device
// compiles: it compiles with an empty fat binary (-fcuda-include-gpubinary
// /dev/null, which gives an empty .hip_fatbin or .nv_fatbin section), and
// an embed step puts the fat binary into that section once it exists,
// laying the object out as the compiler would have
// (objfile.ReplaceSection; the objects are byte-identical). Should an
// object not allow that, the embed step runs the original compile instead.
func (p *planner) bindFatbinEmbed(j *clangJob, c *cc1Job, host *actions.Action) error {
	fatbin := p.files[c.gpuBinary]
	var final *actions.Artifact
	for _, f := range host.Outputs {
		if f.Path == c.output {
			final = f
		}
	}
	if fatbin == nil || final == nil {
		return unrecognized(j, "a host compile whose fat binary or output offcc did not bind")
	}
	original := slices.Clone(host.Command)
	hostOnly := p.temp(c.output, ".o")
	for i := 0; i+1 < len(host.Command); i++ {
		switch host.Command[i] {
		case "-fcuda-include-gpubinary":
			host.Command[i+1] = os.DevNull
		case "-o":
			if host.Command[i+1] == c.output {
				host.Command[i+1] = hostOnly.Path
			}
		}
	}
	host.Reads = slices.DeleteFunc(host.Reads, func(f *actions.Artifact) bool { return f == fatbin })
	for i, f := range host.Outputs {
		if f == final {
			host.Outputs[i] = hostOnly
		}
	}
	embed := &actions.Action{
		Kind: actions.Embed, Offload: p.offload, Target: host.Target,
		Inputs:  []*actions.Artifact{hostOnly, fatbin},
		Outputs: []*actions.Artifact{final},
		Command: []string{p.env.self, "offload-embed", "--" + p.offload.String() + "-fatbin", "-o", final.Path, hostOnly.Path, fatbin.Path},
		Cost:    0.02,
	}
	// The original job names the files of both actions.
	if err := p.checkBound(j, host.Inputs, host.Reads, host.Outputs, embed.Inputs, embed.Outputs); err != nil {
		return err
	}
	if err := p.plan.Graph.Add(host); err != nil {
		return unrecognized(j, "%v", err)
	}
	steps, hip := p.env.steps, p.offload == actions.HIP
	embed.Expand = func(_ context.Context, sh *actions.Shell) ([]*actions.Action, error) {
		err := steps.embedFatbin(sh, final.Path, hostOnly.Path, fatbin.Path, hip)
		var re *objfile.ReplaceError
		if errors.As(err, &re) {
			// The host compile as clang runs it: it reads the fat binary
			// and writes -o (its dependency file, if any, again).
			return []*actions.Action{{
				Kind: host.Kind, Offload: host.Offload, Target: host.Target, Cost: host.Cost,
				Command: original, Inputs: host.Inputs,
				Reads:   append(slices.Clone(host.Reads), fatbin),
				Outputs: []*actions.Artifact{final},
			}}, nil
		}
		return nil, err
	}
	if err := p.plan.Graph.Add(embed); err != nil {
		return unrecognized(j, "%v", err)
	}
	return nil
}
