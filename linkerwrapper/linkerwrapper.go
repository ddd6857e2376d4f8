// Package linkerwrapper is offcc's link stage: it extracts offload images
// from host objects and archives, links them per (triple, arch), wraps them
// with registration code and runs the host link, like clang-linker-wrapper.
//
// Plan reads clang-linker-wrapper's command line (LLVM 22's, or LLVM 19's
// for OpenMP to the host device: ParseReleaseCommandLine) and the inputs
// it names and returns the link as typed actions, which the driver adds to
// its running build graph; Main is the command-line tool ("offcc
// linker-wrapper") on top of it. The device links run the same clang
// command lines clang-linker-wrapper runs. The OpenMP registration object
// is generated as LLVM IR text (the image bytes enter through an .incbin of
// the re-packed OffloadBinary) and compiled with clang. Links offcc cannot
// read (LTO bitcode inputs) are handed to LLVM's clang-linker-wrapper.
package linkerwrapper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/tempname"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/target"
	"github.com/offcc/offcc/toolchain"
)

// Config is what the link stage needs besides its command line.
type Config struct {
	// Clang is the clang driver that links device code and compiles the
	// registration module (e.g. /usr/lib/llvm-22/bin/clang); empty means
	// "clang" is looked up in PATH.
	Clang string
	// LinkerWrapper is LLVM's clang-linker-wrapper, which runs links offcc
	// cannot read (LTO bitcode inputs); empty means the one beside Clang.
	LinkerWrapper string
	// LLC is LLVM's static compiler; empty means the one beside
	// LinkerWrapper, with its version suffix.
	LLC string
	// Release is the profile of the LLVM release of Clang (nil: the
	// newest offcc knows), whose clang-linker-wrapper Main reads the
	// command line as (Plan takes the release the CommandLine was parsed
	// for).
	Release *toolchain.Profile
	// TempDir is where temporary files are named: the build's private
	// directory. Empty means os.TempDir(). With --save-temps they are named
	// in the working directory instead.
	TempDir string
	// Verbose asks Plan for notes on its decisions.
	Verbose bool

	// Jobs is the number of actions Main runs at once when the command line
	// has no --wrapper-jobs; values below 1 mean 1.
	Jobs int
	// Jobserver, when non-nil, further limits Main's concurrency.
	Jobserver *actions.Jobserver
	// Stdout and Stderr receive Main's output and messages; nil means
	// os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
}

func (c *Config) clang() string {
	if c.Clang == "" {
		return "clang"
	}
	return c.Clang
}

func (c *Config) linkerWrapper() string {
	if c.LinkerWrapper != "" {
		return c.LinkerWrapper
	}
	return filepath.Join(filepath.Dir(c.clang()), "clang-linker-wrapper")
}

// llc is LLVM's static compiler beside clang-linker-wrapper, with the
// same version suffix (/usr/bin/clang-linker-wrapper-22: llc-22; a bare
// /usr/bin/llc may be another LLVM's).
func (c *Config) llc() string {
	if c.LLC != "" {
		return c.LLC
	}
	lw := c.linkerWrapper()
	suffix := strings.TrimPrefix(filepath.Base(lw), "clang-linker-wrapper")
	return filepath.Join(filepath.Dir(lw), "llc"+suffix)
}

// prog is the program name used in messages.
const prog = "offcc"

// CommandLine is a parsed clang-linker-wrapper command line, of one LLVM
// release's wrapper.
type CommandLine struct {
	o       *options
	args    []string
	release *toolchain.Profile
}

// ParseCommandLine parses the newest release's clang-linker-wrapper
// command line (without the program name).
func ParseCommandLine(args []string) (*CommandLine, error) {
	return ParseReleaseCommandLine(nil, args)
}

// ParseReleaseCommandLine parses the command line (without the program
// name) of the clang-linker-wrapper of release (nil: the newest offcc
// knows), with that release's options; Plan links as that release's
// wrapper does.
func ParseReleaseCommandLine(release *toolchain.Profile, args []string) (*CommandLine, error) {
	if release == nil {
		release = toolchain.Preferred()
	}
	o, err := parseArgs(release.Wrapper, args)
	if err != nil {
		return nil, err
	}
	return &CommandLine{o: o, args: args, release: release}, nil
}

// Foreign returns why offcc's link stage would not link as the release's
// clang-linker-wrapper does with this command line, naming the options,
// or "": LLVM 19's options offcc has no effect of (--ptxas-arg= and
// others), and those whose device link form offcc does not know in 19
// (--device-linker=, --linker-arg=, -mllvm, --offload-opt=,
// --embed-bitcode, --cuda-path=, --override-image=, -r). Plan hands such
// a link to the release's clang-linker-wrapper whole.
func (c *CommandLine) Foreign() string {
	o := c.o
	if c.release.Wrapper != toolchain.Wrapper19 {
		return ""
	}
	names := append([]string(nil), o.foreign...)
	for _, f := range []struct {
		name  string
		given bool
	}{
		{"--device-linker=", len(o.deviceLinker) > 0}, {"--linker-arg=", len(o.linkerArgs) > 0},
		{"-mllvm", len(o.mllvm) > 0}, {"--offload-opt=", len(o.pluginOpts) > len(o.mllvm)},
		{"--embed-bitcode", o.embedBitcode}, {"--cuda-path=", o.cudaPath != ""},
		{"--override-image=", o.overrideImage}, {"--relocatable", o.relocatable},
	} {
		if f.given {
			names = append(names, f.name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("offcc does not link as LLVM %d's clang-linker-wrapper does with %s", c.release.Major, strings.Join(names, ", "))
}

// Inputs returns the input files the command line names, in link order
// (libraries given with -l are found when the link is planned).
func (c *CommandLine) Inputs() []string {
	var in []string
	for _, it := range c.o.items {
		if it.kind == itemInput {
			in = append(in, it.value)
		}
	}
	return in
}

// Output returns the output file: -o's value, or a.out.
func (c *CommandLine) Output() string { return c.withOutput().output }

// HostTriple returns the host triple (--host-triple or the default).
func (c *CommandLine) HostTriple() string { return c.o.hostTriple }

// withOutput returns a copy of the options that always names the output
// (a.out by default, as the host linker would), leaving cl unchanged.
func (c *CommandLine) withOutput() *options {
	o := *c.o
	if o.output == "" {
		o.output = "a.out"
		o.hostArgs = append([]string{"-o", "a.out"}, o.hostArgs...)
		o.outIndex = 1
	}
	return &o
}

// linkPlan is one run of Plan.
type linkPlan struct {
	cfg     *Config
	release *toolchain.Profile
	o       *options
	tmpDir  string
	outBase string
	used    map[string]bool
	out     *actions.Artifact
	inputs  map[string]*actions.Artifact
}

// Plan scans the inputs of a link, given as clang-linker-wrapper's parsed
// command line, and returns the actions that perform it, in order: per (triple,
// arch) group an Extract action writing its images to files and the
// DeviceLink of those files; the Wrap actions that generate the
// registration module and compile it; and the HostLink. out is the
// artifact of the linked program (nil: a new one for -o), so that a
// driver's graph keeps its edge to the program. When an input is LLVM
// bitcode (LTO), whose offload images offcc cannot read, the plan is one
// action running LLVM's clang-linker-wrapper with the same command line.
// Notes on such decisions go to notes under cfg.Verbose. Plan writes no
// file.
func Plan(cfg Config, cl *CommandLine, out *actions.Artifact, notes io.Writer) ([]*actions.Action, error) {
	o := cl.withOutput()
	if out == nil {
		out = actions.NewArtifact(o.output)
	}
	l := &linkPlan{cfg: &cfg, release: cl.release, o: o, tmpDir: cfg.TempDir, outBase: filepath.Base(o.output),
		used: map[string]bool{}, out: out, inputs: map[string]*actions.Artifact{}}
	if l.tmpDir == "" {
		l.tmpDir = os.TempDir()
	}
	handOff := func(why string) []*actions.Action {
		if cfg.Verbose && notes != nil {
			fmt.Fprintf(notes, "%s: note: linking with %s: %s\n", prog, cfg.linkerWrapper(), why)
		}
		return []*actions.Action{l.handOff(cl.args)}
	}
	if why := cl.Foreign(); why != "" {
		return handOff(why), nil
	}
	switch {
	case o.relocatable:
		return nil, errors.New("relocatable linking (-r) is not supported yet")
	case o.overrideImage:
		return nil, errors.New("--override-image is not supported yet")
	case o.linkerPath == "" && o.syclbin == "":
		return nil, errors.New("linker path missing, must pass 'linker-path'")
	}

	if o.syclbin != "" {
		return l.planSYCLBIN()
	}
	res, err := scanInputs(o)
	if err != nil {
		return nil, err
	}
	if err := checkKernelNames(res.images, res.symbols); err != nil {
		return nil, err
	}
	if len(res.bitcode) > 0 {
		if cfg.Verbose && notes != nil {
			fmt.Fprintf(notes, "%s: note: linking with %s: offcc does not read offload images from LLVM bitcode (%s)\n",
				prog, cfg.linkerWrapper(), strings.Join(res.bitcode, ", "))
		}
		return []*actions.Action{l.handOff(cl.args)}, nil
	}
	if len(res.unreadable) > 0 {
		if cfg.Verbose && notes != nil {
			fmt.Fprintf(notes, "%s: note: linking with %s: offcc cannot read the symbols of archive device images %s\n",
				prog, cfg.linkerWrapper(), strings.Join(res.unreadable, ", "))
		}
		return []*actions.Action{l.handOff(cl.args)}, nil
	}
	if why := l.releaseImages(res.images); why != "" {
		return handOff(why), nil
	}
	for _, im := range res.images {
		switch k := im.image.Offload; {
		case k != packager.OffloadCUDA && k != packager.OffloadOpenMP && k != packager.OffloadSYCL && k != packager.OffloadHIP:
			return nil, fmt.Errorf("wrapping %s device images is not supported yet", k)
		case k == packager.OffloadHIP && o.compress:
			// offcc's zstd is not libzstd: LLVM's wrapper writes the
			// compressed fat binary clang's build has.
			if cfg.Verbose && notes != nil {
				fmt.Fprintf(notes, "%s: note: linking with %s: a compressed HIP fat binary (--compress)\n", prog, cfg.linkerWrapper())
			}
			return []*actions.Action{l.handOff(cl.args)}, nil
		case o.emitFatbinOnly && k != packager.OffloadHIP:
			return nil, fmt.Errorf("--emit-fatbin-only takes HIP device images, not %s", k)
		}
	}
	var acts []*actions.Action
	// Device links by offload kind, kinds in first-seen order, as
	// clang-linker-wrapper wraps them.
	var kinds []packager.OffloadKind
	devs := map[packager.OffloadKind][]*deviceLink{}
	for _, gr := range groupImages(res.images) {
		kind, err := gr.offloadKind()
		if err != nil {
			return nil, err
		}
		d, err := l.deviceLink(gr, kind)
		if err != nil {
			return nil, err
		}
		acts = append(acts, d.extract, d.link)
		if devs[kind] == nil {
			kinds = append(kinds, kind)
		}
		devs[kind] = append(devs[kind], d)
	}
	if o.emitFatbinOnly {
		// The compile-time link of HIP without -fgpu-rdc: the fat
		// binary is the output.
		if len(devs[packager.OffloadHIP]) == 0 {
			return nil, errors.New("--emit-fatbin-only: no HIP device images in the inputs")
		}
		return append(acts, l.hipFatbin(devs[packager.OffloadHIP], l.out)), nil
	}
	var wrapperObjs []*actions.Artifact
	for _, kind := range kinds {
		var wrap, compile *actions.Action
		var err error
		switch kind {
		case packager.OffloadSYCL:
			wrap, compile, err = l.syclWrapActions(devs[kind])
		case packager.OffloadHIP:
			fb := l.hipFatbin(devs[kind], nil)
			acts = append(acts, fb)
			wrap, compile = l.fatbinWrapActions(fb.Outputs[0], hipRuntime)
		case packager.OffloadCUDA:
			var fb *actions.Action
			if fb, err = l.cudaFatbin(devs[kind]); err == nil {
				acts = append(acts, fb)
				wrap, compile = l.fatbinWrapActions(fb.Outputs[0], cudaRuntime)
			}
		default:
			wrap, compile = l.wrapActions(devs[kind])
		}
		if err != nil {
			return nil, err
		}
		acts = append(acts, wrap, compile)
		wrapperObjs = append(wrapperObjs, compile.Outputs[0])
	}
	acts = append(acts, l.hostLink(wrapperObjs))
	return acts, nil
}

// releaseImages returns why offcc's link stage does not link the images
// as the release's clang-linker-wrapper does, or "": LLVM 19's links its
// GPU images (LLVM IR) in-process, with its own LTO, so offcc links only
// OpenMP objects for a CPU (the host device) as 19's does.
func (l *linkPlan) releaseImages(images []deviceImage) string {
	if l.release.Wrapper != toolchain.Wrapper19 {
		return ""
	}
	for _, im := range images {
		if im.image.Offload != packager.OffloadOpenMP || im.image.Kind != packager.ImageObject || target.IsGPU(im.triple) {
			return fmt.Sprintf("offcc links only LLVM %d's OpenMP objects for the host device, not %s's %s image for %s",
				l.release.Major, im.source, im.image.Kind, im.triple)
		}
	}
	return ""
}

// actionOffload is the offload model of the actions that handle images of
// the given kind.
func actionOffload(kind packager.OffloadKind) actions.OffloadKind {
	switch kind {
	case packager.OffloadSYCL:
		return actions.SYCL
	case packager.OffloadHIP:
		return actions.HIP
	case packager.OffloadCUDA:
		return actions.CUDA
	}
	return actions.OpenMP
}

// input returns the artifact for an input file of the link, once per path.
func (l *linkPlan) input(path string) *actions.Artifact {
	f := l.inputs[path]
	if f == nil {
		f = actions.NewArtifact(path)
		l.inputs[path] = f
	}
	return f
}

func (l *linkPlan) hostInputs() []*actions.Artifact {
	var in []*actions.Artifact
	for _, it := range l.o.items {
		if it.kind == itemInput && it.value != "-" {
			in = append(in, l.input(it.value))
		}
	}
	return in
}

// handOff is the whole link run by LLVM's clang-linker-wrapper.
func (l *linkPlan) handOff(args []string) *actions.Action {
	return &actions.Action{
		Kind: actions.Link, Offload: actions.OpenMP,
		Target:  target.Target{Triple: l.o.hostTriple},
		Tool:    "clang-linker-wrapper",
		Inputs:  l.hostInputs(),
		Outputs: []*actions.Artifact{l.out},
		Command: append([]string{l.cfg.linkerWrapper()}, args...),
		Cost:    2,
	}
}

// hostLink runs the host linker with the registration objects placed right
// after the output option, as clang-linker-wrapper does.
func (l *linkPlan) hostLink(wrapperObjs []*actions.Artifact) *actions.Action {
	o := l.o
	hostArgs := append([]string(nil), o.hostArgs...)
	inputs := l.hostInputs()
	if len(wrapperObjs) > 0 {
		var paths []string
		for _, w := range wrapperObjs {
			paths = append(paths, w.Path)
		}
		hostArgs = append(hostArgs[:o.outIndex+1], append(paths, hostArgs[o.outIndex+1:]...)...)
		inputs = append(inputs, wrapperObjs...)
	}
	return &actions.Action{
		Kind: actions.HostLink, Offload: actions.OpenMP,
		Target:  target.Target{Triple: o.hostTriple},
		Inputs:  inputs,
		Outputs: []*actions.Artifact{l.out},
		Command: append([]string{o.linkerPath}, hostArgs...),
		Cost:    1,
	}
}

// tempName returns a temporary file name like clang-linker-wrapper's
// createOutputFile: "<prefix>-<6 hex>.<ext>" in the temporary directory,
// or "<prefix>.<ext>" in the working directory with --save-temps.
func (l *linkPlan) tempName(prefix, ext string) string {
	if l.o.saveTemps {
		return prefix + "." + ext
	}
	for {
		p := filepath.Join(l.tmpDir, prefix+"-"+tempname.Hex6()+"."+ext)
		if !l.used[p] {
			l.used[p] = true
			return p
		}
	}
}

// deviceLink is the link of one group: the action that writes its images
// to files and the clang command that links them.
type deviceLink struct {
	g       *group
	arch    string // arch for the command line: "" for generic
	extract *actions.Action
	link    *actions.Action
}

// deviceLink plans the device link clang-linker-wrapper would run for a
// group, and the extraction of its images.
func (l *linkPlan) deviceLink(gr *group, kind packager.OffloadKind) (*deviceLink, error) {
	arch := gr.id.Arch
	if arch == "generic" {
		arch = ""
	}
	triple := gr.id.Triple
	if !linkable(triple) {
		return nil, fmt.Errorf("%s linking is not supported", target.ArchName(triple))
	}
	offload := actionOffload(kind)
	ex := &actions.Action{
		Kind: actions.Extract, Offload: offload, Device: true, Target: gr.id, Cost: 0.02,
	}
	var files []string
	var data [][]byte
	seen := map[*actions.Artifact]bool{}
	for _, im := range gr.images {
		name := l.tempName(fmt.Sprintf("%s-%s-%s", im.stem, im.triple, im.arch), "o")
		files = append(files, name)
		data = append(data, im.image.Data)
		ex.Outputs = append(ex.Outputs, actions.NewArtifact(name))
		if src := l.input(im.source); !seen[src] {
			seen[src] = true
			ex.Inputs = append(ex.Inputs, src)
		}
	}
	ex.Run = func(_ context.Context, sh *actions.Shell) error {
		for i, f := range files {
			if err := sh.WriteFile(f, data[i], 0o666); err != nil {
				return err
			}
		}
		return nil
	}
	deviceLinkArgs := l.deviceLinkArgs22
	if l.release.Wrapper == toolchain.Wrapper19 {
		deviceLinkArgs = l.deviceLinkArgs19
	}
	a, out, err := deviceLinkArgs(triple, arch, kind, files)
	if err != nil {
		return nil, err
	}
	link := &actions.Action{
		Kind: actions.DeviceLink, Offload: offload, Device: true, Target: gr.id,
		Inputs:  ex.Outputs,
		Outputs: []*actions.Artifact{actions.NewArtifact(out)},
		Command: a,
		Cost:    1,
	}
	if kind == packager.OffloadSYCL && filepath.IsAbs(l.cfg.clang()) {
		// clang 22 runs clang-sycl-linker by its bare name, found on
		// PATH only: the one in clang's own directory (the real one,
		// /usr/lib/llvm-22/bin for Debian's /usr/bin/clang-22) comes
		// first.
		dir := filepath.Dir(l.cfg.clang())
		if real, err := filepath.EvalSymlinks(l.cfg.clang()); err == nil {
			dir = filepath.Dir(real)
		}
		link.Env = []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
	}
	return &deviceLink{g: gr, arch: arch, extract: ex, link: link}, nil
}

// deviceLinkArgs22 returns the device link LLVM 22's clang-linker-wrapper
// runs for a group of images of kind (files, extracted), and the image it
// writes.
func (l *linkPlan) deviceLinkArgs22(triple, arch string, kind packager.OffloadKind, files []string) ([]string, string, error) {
	o := l.o
	out := l.tempName(fmt.Sprintf("%s.%s.%s", l.outBase, target.ArchName(triple), arch), "img")
	amd, nv, spirv := target.IsAMDGPU(triple), target.IsNVPTX(triple), target.IsSPIRV(triple)
	// -dumpdir names the full output path, the temporary only its base name.
	dumpdir := fmt.Sprintf("%s.%s.%s.img.", o.output, target.ArchName(triple), arch)
	a := []string{l.cfg.clang(), "--no-default-config", "-o", out, "-dumpdir", dumpdir, "--target=" + triple}
	if arch != "" {
		if amd {
			a = append(a, "-mcpu="+arch)
		} else {
			a = append(a, "-march="+arch)
		}
	}
	if amd {
		a = append(a, "-flto")
	}
	for _, v := range o.pluginOpts {
		a = append(a, "-Xlinker", "--plugin-opt="+v)
	}
	if !nv && !spirv {
		a = append(a, "-Wl,--no-undefined")
	}
	a = append(a, files...)
	if !target.IsGPU(triple) {
		libs, err := hostLibraries(o)
		if err != nil {
			return nil, "", err
		}
		a = append(append(a, "-Wl,-Bsymbolic", "-shared"), libs...)
	}
	for _, v := range o.mllvm {
		a = append(a, "-Xlinker", "-mllvm="+v)
	}
	if o.saveTemps && (amd || nv || strings.HasSuffix(o.linkerPath, "ld.lld")) {
		a = append(a, "-Wl,--save-temps")
	}
	if o.embedBitcode {
		a = append(a, "-Wl,--lto-emit-llvm")
	}
	if o.cudaPath != "" {
		a = append(a, "--cuda-path="+o.cudaPath)
	}
	if kind == packager.OffloadSYCL {
		// clang runs clang-sycl-linker for --sycl-link.
		a = append(a, "--sycl-link", "-Xlinker", "-triple="+triple, "-Xlinker", "-arch="+arch)
	}
	for _, v := range o.linkerArgs {
		a = append(a, "-Xlinker", v)
	}
	for _, tv := range o.deviceLinker {
		if tv.triple == "" || tv.triple == triple {
			a = append(a, "-Xlinker", tv.value)
		}
	}
	a = append(a, o.compilerArgs...)
	for _, tv := range o.deviceCompiler {
		if tv.triple == "" || tv.triple == triple {
			a = append(a, tv.value)
		}
	}
	return a, out, nil
}

// deviceLinkArgs19 returns the device link LLVM 19's clang-linker-wrapper
// runs for a group of object files (Plan hands it every other kind of
// image), and the image it writes: "clang --no-default-config -o IMG
// --target=T -march=ARCH -O<n> -Wl,--no-undefined FILES", ARCH native for
// an image without an arch (IMG is then OUT.x86_64.native.img), the host
// link's libraries for a CPU, then -g, -save-temps and -v for
// --device-debug, --save-temps and --wrapper-verbose (toolchain.Wrapper19).
func (l *linkPlan) deviceLinkArgs19(triple, arch string, _ packager.OffloadKind, files []string) ([]string, string, error) {
	o := l.o
	if arch == "" {
		arch = "native"
	}
	out := l.tempName(fmt.Sprintf("%s.%s.%s", l.outBase, target.ArchName(triple), arch), "img")
	level := o.optLevel
	if level == "" {
		level = "O2"
	}
	march := "-march=" + arch
	if target.IsAMDGPU(triple) {
		march = "-mcpu=" + arch
	}
	a := []string{l.cfg.clang(), "--no-default-config", "-o", out, "--target=" + triple, march, "-" + level}
	if !target.IsNVPTX(triple) {
		a = append(a, "-Wl,--no-undefined")
	}
	a = append(a, files...)
	if !target.IsGPU(triple) {
		libs, err := hostLibraries(o)
		if err != nil {
			return nil, "", err
		}
		a = append(append(a, "-Wl,-Bsymbolic", "-shared"), libs...)
	}
	for _, f := range []struct {
		arg   string
		given bool
	}{{"-g", o.deviceDebug}, {"-save-temps", o.saveTemps}, {"-v", o.verbose}} {
		if f.given {
			a = append(a, f.arg)
		}
	}
	return a, out, nil
}

// hostLibraries returns what a CPU device link copies from the host link, as
// clang-linker-wrapper does: inputs that are archives or shared objects,
// -l, -L, -rpath and the --whole-archive markers, in order.
func hostLibraries(o *options) ([]string, error) {
	var out []string
	for _, it := range o.items {
		switch it.kind {
		case itemInput, itemOptionValue:
			st, err := os.Stat(it.value)
			if err != nil || st.IsDir() {
				continue
			}
			head, err := readHead(it.value, 20)
			if err != nil {
				return nil, fmt.Errorf("failed to open %s", it.value)
			}
			isShared := strings.HasPrefix(string(head), "\x7fELF") && len(head) >= 18 && head[16] == elfTypeDyn
			if !isShared && !strings.HasPrefix(string(head), "!<arch>\n") && !strings.HasPrefix(string(head), "!<thin>\n") {
				continue
			}
			out = append(out, it.value)
		case itemLibrary:
			out = append(out, "-l", it.value)
		case itemLibraryPath:
			out = append(out, "-L", it.value)
		case itemRpath:
			out = append(out, "-rpath", it.value)
		case itemWholeArchive:
			out = append(out, "-Wl,--whole-archive")
		case itemNoWholeArchive:
			out = append(out, "-Wl,--no-whole-archive")
		}
	}
	return out, nil
}

// wrapActions plans the OpenMP wrapping: an in-process action that
// re-packs the linked images and writes the registration module (the
// packed images are constants in it, as in clang-linker-wrapper, which
// writes no file for them either), and the llc command that compiles it
// into the wrapper object placed first in the host link.
func (l *linkPlan) wrapActions(devs []*deviceLink) (wrap, compile *actions.Action) {
	wrap, compile = l.wrapperActions(actions.OpenMP)
	type linked struct{ triple, arch, img string }
	var ls []linked
	for _, d := range devs {
		wrap.Inputs = append(wrap.Inputs, d.link.Outputs[0])
		ls = append(ls, linked{d.g.id.Triple, d.arch, d.link.Outputs[0].Path})
	}
	printIR, triple, irFile := l.o.printWrapped, l.o.hostTriple, wrap.Outputs[0].Path
	release := l.release
	wrap.Run = func(_ context.Context, sh *actions.Shell) error {
		var wimgs []wrappedImage
		for _, d := range ls {
			data, err := os.ReadFile(d.img)
			if err != nil {
				return err
			}
			blob, off := packImage(d.triple, d.arch, data)
			wimgs = append(wimgs, wrappedImage{blob: blob, imageOffset: off, imageSize: uint64(len(data))})
		}
		return writeModule(sh, irFile, openMPWrapperIR(triple, release, wimgs), printIR)
	}
	return wrap, compile
}

// wrapperActions returns the two actions of a registration module for
// offload: wrap, in-process, writes the module as LLVM IR text (its
// output; the caller adds its inputs and Run), and compile compiles it with
// llc into the object placed first in the host link. The files are named
// <output>.<kind>.image.wrapper, as clang-linker-wrapper names them.
func (l *linkPlan) wrapperActions(offload actions.OffloadKind) (wrap, compile *actions.Action) {
	prefix := l.outBase + "." + offload.String() + ".image.wrapper"
	irFile := actions.NewArtifact(l.tempName(prefix, "ll"))
	obj := actions.NewArtifact(l.tempName(prefix, "o"))
	host := target.Target{Triple: l.o.hostTriple}
	wrap = &actions.Action{
		Kind: actions.Wrap, Offload: offload, Target: host, Cost: 0.05,
		Outputs: []*actions.Artifact{irFile},
	}
	// clang-linker-wrapper runs only the code generator over the module
	// (no IR passes, -O2 codegen, PIC, no CPU or features): llc does the
	// same, so the object is byte for byte the one clang's link embeds.
	compile = &actions.Action{
		Kind: actions.Wrap, Offload: offload, Target: host, Tool: "llc",
		Inputs:  []*actions.Artifact{irFile},
		Outputs: []*actions.Artifact{obj},
		Command: []string{l.cfg.llc(), "-O2", "-relocation-model=pic", "-filetype=obj", "-mtriple=" + l.o.hostTriple, "-o", obj.Path, irFile.Path},
		Cost:    0.3,
	}
	return wrap, compile
}

// writeModule writes a registration module's IR text to path, printing it
// on stderr too under --print-wrapped-module.
func writeModule(sh *actions.Shell, path, ir string, print bool) error {
	if print {
		io.WriteString(sh.Stderr(), ir)
	}
	return sh.WriteFile(path, []byte(ir), 0o666)
}
