// Package linkerwrapper is offcc's link stage: it extracts offload images
// from host objects and archives, links them per (triple, arch), wraps them
// with registration code and runs the host link, like clang-linker-wrapper.
//
// Main takes clang-linker-wrapper's (LLVM 22) command line unchanged. The
// device links run the same clang command lines clang-linker-wrapper runs.
// The OpenMP registration object is generated as LLVM IR text (the image
// bytes enter through an .incbin of the re-packed OffloadBinary) and
// compiled with clang. Only OpenMP images can be wrapped so far.
package linkerwrapper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/internal/tempname"
	"github.com/offcc/offcc/packager"
)

// Config is the environment Main runs in.
type Config struct {
	// Clang is the clang driver that links device code and compiles the
	// registration module (e.g. /usr/lib/llvm-22/bin/clang); empty means
	// "clang" is looked up in PATH.
	Clang string
	// Jobs is the number of device links run at once when the command line
	// has no --wrapper-jobs; values below 1 mean 1.
	Jobs int
	// Jobserver, when non-nil, further limits concurrency (make jobserver).
	Jobserver *actions.Jobserver
	// Stdout and Stderr receive the tools' output and offcc's messages; nil
	// means os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
}

// Main runs the link stage with clang-linker-wrapper's command line args
// (without the program name) and returns the exit status. Errors are
// reported on cfg.Stderr as one line "offcc: error: ...".
func Main(ctx context.Context, cfg Config, args []string) int {
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	l := &link{cfg: cfg, mu: new(sync.Mutex)}
	if err := l.run(ctx, args); err != nil {
		l.mu.Lock()
		fmt.Fprintf(cfg.Stderr, "%s: error: %v\n", prog, err)
		l.mu.Unlock()
		return 1
	}
	return 0
}

// prog is the program name used in messages.
const prog = "offcc"

// link is one run of Main.
type link struct {
	cfg     Config
	o       *options
	mu      *sync.Mutex // serialises messages
	tmpDir  string      // private temporary directory ("" with --save-temps)
	outBase string      // base name of the output, for temporary names
	used    map[string]bool
}

// deviceJob is the device link of one group.
type deviceJob struct {
	g      *group
	arch   string // arch for the command line: "" for generic
	output string
	job    *actions.Job
}

func (l *link) clang() string {
	if l.cfg.Clang == "" {
		return "clang"
	}
	return l.cfg.Clang
}

func (l *link) run(ctx context.Context, args []string) (err error) {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	l.o = o
	switch {
	case o.relocatable:
		return errors.New("relocatable linking (-r) is not supported yet")
	case o.emitFatbinOnly:
		return errors.New("--emit-fatbin-only is not supported yet")
	case o.overrideImage:
		return errors.New("--override-image is not supported yet")
	case o.linkerPath == "":
		return errors.New("linker path missing, must pass 'linker-path'")
	}
	if o.output == "" {
		o.output = "a.out"
		o.hostArgs = append([]string{"-o", "a.out"}, o.hostArgs...)
		o.outIndex = 1
	}
	l.outBase = filepath.Base(o.output)
	l.used = map[string]bool{}

	res, err := scanInputs(o)
	if err != nil {
		return err
	}
	if o.verbose && len(res.skippedBitcode) > 0 {
		l.note("%s: note: LTO bitcode inputs are not scanned for offload images yet: %s", prog, strings.Join(res.skippedBitcode, ", "))
	}
	for _, im := range res.images {
		if im.image.Offload != packager.OffloadOpenMP {
			return fmt.Errorf("wrapping %s device images is not supported yet", im.image.Offload)
		}
	}
	groups := groupImages(res.images)

	if !o.saveTemps {
		l.tmpDir, err = os.MkdirTemp("", "offcc-link-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(l.tmpDir)
	}

	g := &actions.Graph{}
	var devs []*deviceJob
	for _, gr := range groups {
		d, err := l.deviceLink(gr)
		if err != nil {
			return err
		}
		g.Add(d.job)
		devs = append(devs, d)
	}

	hostArgs := append([]string(nil), o.hostArgs...)
	var hostDeps []*actions.Job
	var wrapperObj string
	if len(devs) > 0 {
		wrapJob, compileJob, obj, err := l.wrapJobs(devs)
		if err != nil {
			return err
		}
		g.Add(wrapJob)
		g.Add(compileJob)
		hostDeps = append(hostDeps, compileJob)
		wrapperObj = obj
	}

	// The output is written atomically: link to a temporary name next to
	// it, rename on success.
	tmpOut := o.output
	if !o.dryRun {
		tmpOut, err = atomicfile.TempName(o.output)
		if err != nil {
			return err
		}
		defer os.Remove(tmpOut) // a no-op after the rename
	}
	hostArgs[o.outIndex] = tmpOut
	if wrapperObj != "" {
		hostArgs = append(hostArgs[:o.outIndex+1], append([]string{wrapperObj}, hostArgs[o.outIndex+1:]...)...)
	}
	hostJob := g.Add(&actions.Job{
		Tool:    "Offload::Linker",
		Triple:  o.hostTriple,
		Args:    append([]string{o.linkerPath}, hostArgs...),
		Outputs: []string{tmpOut},
		Deps:    hostDeps,
	})

	if o.dryRun {
		hostJob.Args[o.outIndex+1] = o.output
		for _, j := range g.Jobs {
			if len(j.Args) > 0 {
				l.note("%s", actions.FormatVerbose(j.Args))
			}
		}
		return nil
	}

	jobs := o.wrapperJobs
	if jobs == 0 {
		jobs = l.cfg.Jobs
	}
	if o.wrapperJobserver {
		jobs = runtime.NumCPU()
	}
	err = actions.Execute(ctx, g, actions.Options{
		Jobs:      jobs,
		Jobserver: l.cfg.Jobserver,
		Stdout:    l.cfg.Stdout,
		Stderr:    l.cfg.Stderr,
		Verbose:   o.verbose,
	})
	if err != nil {
		return l.describe(err, devs, hostJob)
	}
	return os.Rename(tmpOut, o.output)
}

// describe turns an Execute error into offcc's one-line message.
func (l *link) describe(err error, devs []*deviceJob, hostJob *actions.Job) error {
	var ee *actions.ExitError
	if !errors.As(err, &ee) || ee.Job == nil {
		return err
	}
	if ee.Job.Run != nil {
		return ee.Err
	}
	what := "wrapping device images"
	for _, d := range devs {
		if d.job == ee.Job {
			target := d.g.id.arch
			if target == "" || target == "generic" {
				target = d.g.id.triple
			}
			what = "linking device code for " + target
		}
	}
	if ee.Job == hostJob {
		what = "host linking"
	}
	if ee.Code > 0 && !strings.Contains(ee.Error(), "unable to execute") {
		return fmt.Errorf("%s failed with exit code %d", what, ee.Code)
	}
	return fmt.Errorf("%s failed: %v", what, ee.Err)
}

// note prints one line on Stderr under the message lock.
func (l *link) note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.cfg.Stderr, format+"\n", args...)
}

// tempName returns a temporary file name like clang-linker-wrapper's
// createOutputFile: "<prefix>-<6 hex>.<ext>" in the private directory, or
// "<prefix>.<ext>" in the working directory with --save-temps.
func (l *link) tempName(prefix, ext string) (string, error) {
	if l.o.saveTemps {
		return prefix + "." + ext, nil
	}
	for {
		p := filepath.Join(l.tmpDir, prefix+"-"+tempname.Hex6()+"."+ext)
		if !l.used[p] {
			l.used[p] = true
			return p, nil
		}
	}
}

// deviceLink writes the group's images to temporary files and plans the
// device link clang-linker-wrapper would run for it.
func (l *link) deviceLink(gr *group) (*deviceJob, error) {
	o := l.o
	arch := gr.id.arch
	if arch == "generic" {
		arch = ""
	}
	triple := gr.id.triple
	var inputs []string
	for _, im := range gr.images {
		name, err := l.tempName(fmt.Sprintf("%s-%s-%s", im.stem, im.triple, im.arch), "o")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(name, im.image.Data, 0o666); err != nil {
			return nil, err
		}
		inputs = append(inputs, name)
	}
	prefix := fmt.Sprintf("%s.%s.%s", l.outBase, tripleArch(triple), arch)
	out, err := l.tempName(prefix, "img")
	if err != nil {
		return nil, err
	}
	amd, nv := isAMDGPU(triple), isNVPTX(triple)
	// -dumpdir names the full output path, the temporary only its base name.
	dumpdir := fmt.Sprintf("%s.%s.%s.img.", o.output, tripleArch(triple), arch)
	a := []string{l.clang(), "--no-default-config", "-o", out, "-dumpdir", dumpdir, "--target=" + triple}
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
	if !nv {
		a = append(a, "-Wl,--no-undefined")
	}
	a = append(a, inputs...)
	if !amd && !nv {
		a = append(a, "-Wl,-Bsymbolic", "-shared")
		libs, err := hostLibraries(o)
		if err != nil {
			return nil, err
		}
		a = append(a, libs...)
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
	return &deviceJob{g: gr, arch: arch, output: out, job: &actions.Job{
		Tool:    "clang",
		Triple:  triple,
		Args:    a,
		Inputs:  inputs,
		Outputs: []string{out},
	}}, nil
}

// hostLibraries returns what a CPU device link copies from the host link, as
// clang-linker-wrapper does: inputs that are archives or shared objects,
// -l, -L, -rpath and the --whole-archive markers, in order.
func hostLibraries(o *options) ([]string, error) {
	var out []string
	for _, it := range o.items {
		switch it.kind {
		case itemInput:
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

// wrapJobs plans the OpenMP wrapping: an in-process job that re-packs the
// linked images and writes the registration module, and the clang job that
// compiles it into the wrapper object placed first in the host link.
func (l *link) wrapJobs(devs []*deviceJob) (wrap, compile *actions.Job, obj string, err error) {
	prefix := l.outBase + ".openmp.image.wrapper"
	irFile, err := l.tempName(prefix, "ll")
	if err != nil {
		return nil, nil, "", err
	}
	obj, err = l.tempName(prefix, "o")
	if err != nil {
		return nil, nil, "", err
	}
	var blobs []string
	var deps []*actions.Job
	var imgs []string
	for _, d := range devs {
		b, err := l.tempName(strings.TrimSuffix(filepath.Base(d.output), ".img")+".offload", "bin")
		if l.o.saveTemps {
			b, err = l.tempName(fmt.Sprintf("%s.%s.%s", l.outBase, tripleArch(d.g.id.triple), d.arch), "offload")
		}
		if err != nil {
			return nil, nil, "", err
		}
		blobs = append(blobs, b)
		deps = append(deps, d.job)
		imgs = append(imgs, d.output)
	}
	printIR := l.o.printWrapped
	triple := l.o.hostTriple
	wrap = &actions.Job{
		Tool:    "Offload::Wrapper",
		Triple:  l.o.hostTriple,
		Inputs:  imgs,
		Outputs: append([]string{irFile}, blobs...),
		Deps:    deps,
		Run: func(ctx context.Context, stdout, stderr io.Writer) error {
			var wimgs []wrappedImage
			for i, d := range devs {
				data, err := os.ReadFile(d.output)
				if err != nil {
					return err
				}
				blob, off := packImage(d.g.id.triple, d.arch, data)
				if err := os.WriteFile(blobs[i], blob, 0o666); err != nil {
					return err
				}
				abs, err := filepath.Abs(blobs[i])
				if err != nil {
					return err
				}
				wimgs = append(wimgs, wrappedImage{blobPath: abs, blobSize: uint64(len(blob)), imageOffset: off, imageSize: uint64(len(data))})
			}
			ir := openMPWrapperIR(triple, wimgs)
			if printIR {
				io.WriteString(stderr, ir)
			}
			return os.WriteFile(irFile, []byte(ir), 0o666)
		},
	}
	compile = &actions.Job{
		Tool:    "clang",
		Triple:  l.o.hostTriple,
		Args:    []string{l.clang(), "--no-default-config", "-c", "-x", "ir", "--target=" + l.o.hostTriple, "-O2", "-fPIC", "-o", obj, irFile},
		Inputs:  append([]string{irFile}, blobs...),
		Outputs: []string{obj},
		Deps:    []*actions.Job{wrap},
	}
	return wrap, compile, obj, nil
}
