package driver

import (
	"fmt"
	"strings"

	"github.com/offcc/offcc/toolchain"
)

// clangJob is one command of clang's -### output.
type clangJob struct {
	argv []string
	// tool is the executable's tool name without directory or version
	// suffix ("clang", "llvm-offload-binary", "ptxas", ...).
	tool string
	// script is the text clang's driver writes into the file this job
	// reads (HIP's object generator, a .mcin assembly file that embeds
	// the fat binary of an -fgpu-rdc link), as
	// -fhip-dump-offload-linker-script prints it; "" for other jobs.
	script string
}

func newClangJob(argv []string) *clangJob {
	return &clangJob{argv: argv, tool: toolchain.ToolName(argv[0])}
}

// isCC1 reports whether the job is a clang -cc1 compile.
func (j *clangJob) isCC1() bool { return len(j.argv) > 1 && j.argv[1] == "-cc1" }

// isCC1as reports whether the job is clang's integrated assembler.
func (j *clangJob) isCC1as() bool { return len(j.argv) > 1 && j.argv[1] == "-cc1as" }

// String returns the job as -### prints it, for messages.
func (j *clangJob) String() string {
	return strings.Join(j.argv, " ")
}

// cc1Job is what offcc reads from a clang -cc1 command line. Every field
// comes from a fixed option; nothing is inferred from file names.
type cc1Job struct {
	triple string
	// mode is the action option: -E, -emit-llvm-bc, -emit-llvm, -emit-obj,
	// -S or -fsyntax-only.
	mode string
	// lang and input are the "-x LANG INPUT" that end every cc1 job clang
	// writes.
	lang, input string
	// output is -o's value ("" for -fsyntax-only).
	output    string
	outputArg int // index of output in argv, or -1
	targetCPU string
	// features are the -target-feature values, in order.
	features []string
	// device flags
	openmpDevice, cudaDevice, syclDevice bool
	// hostIR is -fopenmp-host-ir-file-path's value.
	hostIR string
	// gpuBinary is -fcuda-include-gpubinary's value: the fat binary a CUDA
	// or HIP host compile embeds (it is among reads too).
	gpuBinary string
	// embed lists the -fembed-offload-object= values.
	embed []string
	// reads lists further files the compile reads (device libraries, PCH,
	// profiles), by the options that name them.
	reads []string
	// depFile is -dependency-file's value.
	depFile string
	// offloadTargets is set by --offload-targets= or -fopenmp-targets=.
	offloadTargets bool
	disablePasses  bool
}

// cc1Reads are the cc1 options whose value is a file the compile reads
// (separate value, or joined after '=' when the name ends with '=').
var cc1Reads = []string{
	"-mlink-builtin-bitcode", "-mlink-bitcode-file", "-include-pch",
	"-fprofile-instrument-use-path=", "-fprofile-sample-use=",
	"-fsanitize-ignorelist=", "-fxray-always-instrument=", "-fxray-never-instrument=",
	"-fcuda-include-gpubinary",
}

// cc1SeparateValues are cc1 options whose value is the next argument, so
// that the value is never mistaken for the input.
var cc1SeparateValues = map[string]bool{
	"-triple": true, "-aux-triple": true, "-o": true, "-x": true, "-target-cpu": true,
	"-tune-cpu": true, "-target-feature": true, "-target-abi": true, "-main-file-name": true,
	"-mrelocation-model": true, "-pic-level": true, "-resource-dir": true,
	"-dependency-file": true, "-MT": true, "-MQ": true, "-internal-isystem": true,
	"-internal-externc-isystem": true, "-isystem": true, "-I": true, "-D": true, "-U": true,
	"-include": true, "-ferror-limit": true, "-mllvm": true, "-aux-target-cpu": true,
	"-aux-target-feature": true, "-stack-protector": true, "-header-include-file": true,
	"-target-linker-version": true, "-isysroot": true, "-iquote": true, "-idirafter": true,
	"-imacros": true, "-mcode-model": true, "-Xclang": true,
}

// parseCC1 reads a cc1 job. It fails for a job that does not end with
// "-x LANG INPUT" or that names no -triple: offcc then does not plan it.
func parseCC1(argv []string) (*cc1Job, error) {
	c := &cc1Job{outputArg: -1}
	n := len(argv)
	if n < 5 || argv[n-3] != "-x" {
		return nil, fmt.Errorf("the compile does not end with -x <language> <input>")
	}
	c.lang, c.input = argv[n-2], argv[n-1]
	for i := 2; i < n-3; i++ {
		a := argv[i]
		next := func() string {
			if i+1 < n-3 {
				i++
				return argv[i]
			}
			return ""
		}
		switch {
		case a == "-triple":
			c.triple = next()
		case a == "-o":
			c.outputArg = i + 1
			c.output = next()
		case a == "-target-cpu":
			c.targetCPU = next()
		case a == "-target-feature":
			c.features = append(c.features, next())
		case a == "-E" || a == "-emit-llvm-bc" || a == "-emit-llvm" || a == "-emit-obj" || a == "-S" || a == "-fsyntax-only":
			c.mode = a
		case a == "-fopenmp-is-target-device":
			c.openmpDevice = true
		case a == "-fcuda-is-device":
			c.cudaDevice = true
		case a == "-fsycl-is-device":
			c.syclDevice = true
		case a == "-fopenmp-host-ir-file-path":
			c.hostIR = next()
		case strings.HasPrefix(a, "-fembed-offload-object="):
			c.embed = append(c.embed, strings.TrimPrefix(a, "-fembed-offload-object="))
		case a == "-dependency-file":
			c.depFile = next()
		case strings.HasPrefix(a, "--offload-targets=") || strings.HasPrefix(a, "-fopenmp-targets="):
			c.offloadTargets = true
		case a == "-disable-llvm-passes":
			c.disablePasses = true
		default:
			if r, ok := readsFile(a); ok {
				if r == "" {
					r = next()
				}
				c.reads = append(c.reads, r)
				if a == "-fcuda-include-gpubinary" {
					c.gpuBinary = r
				}
			} else if cc1SeparateValues[a] {
				next()
			}
		}
	}
	if c.triple == "" {
		return nil, fmt.Errorf("the compile has no -triple")
	}
	if c.mode == "" {
		return nil, fmt.Errorf("the compile has no action option (-emit-obj, -emit-llvm-bc, -S, ...)")
	}
	if c.output == "" && c.mode != "-fsyntax-only" {
		return nil, fmt.Errorf("the compile has no -o")
	}
	return c, nil
}

// readsFile reports whether a names an option of cc1Reads; value is the
// joined value, or "" when the value is the next argument.
func readsFile(a string) (value string, ok bool) {
	for _, o := range cc1Reads {
		if strings.HasSuffix(o, "=") {
			if v, found := strings.CutPrefix(a, o); found {
				return v, true
			}
		} else if a == o {
			return "", true
		}
	}
	return "", false
}

// device reports whether the compile is for an offload device.
func (c *cc1Job) device() bool { return c.openmpDevice || c.cudaDevice || c.syclDevice }

// preprocesses reports whether the compile runs the preprocessor (reads a
// source that includes headers), as opposed to IR or preprocessed input.
func (c *cc1Job) preprocesses() bool {
	return c.lang != "ir" && !strings.HasSuffix(c.lang, "cpp-output") && c.lang != "assembler"
}

// targetID returns the device target ID clang compiles for: the processor
// with its xnack and sramecc features ("gfx90a:xnack+"), as clang's bound
// arch spells it.
func (c *cc1Job) targetID() string {
	id := c.targetCPU
	for _, name := range []string{"sramecc", "xnack"} {
		for _, f := range c.features {
			if f == "+"+name || f == "-"+name {
				id += ":" + name + f[:1]
			}
		}
	}
	return id
}

// ptxasJob is a ptxas command as clang's NVPTX::Assembler writes it:
// "--output-file OUT" followed directly by the input.
type ptxasJob struct {
	gpu, output, input string
}

func parsePtxas(argv []string) (*ptxasJob, error) {
	p := &ptxasJob{}
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "--gpu-name":
			if i+1 < len(argv) {
				p.gpu = argv[i+1]
			}
		case "--output-file":
			if i+2 < len(argv) {
				p.output, p.input = argv[i+1], argv[i+2]
			}
		}
	}
	if p.output == "" || p.input == "" || strings.HasPrefix(p.input, "-") {
		return nil, fmt.Errorf("ptxas job without --output-file OUT INPUT")
	}
	return p, nil
}

// cc1asJob is clang's integrated assembler: "-o OUT" and the input last.
type cc1asJob struct {
	triple, output, input string
}

func parseCC1as(argv []string) (*cc1asJob, error) {
	c := &cc1asJob{}
	n := len(argv)
	for i := 2; i < n-1; i++ {
		switch argv[i] {
		case "-triple":
			c.triple = argv[i+1]
			i++
		case "-o":
			c.output = argv[i+1]
			i++
		}
	}
	c.input = argv[n-1]
	if c.output == "" || c.triple == "" || strings.HasPrefix(c.input, "-") && c.input != "-" {
		return nil, fmt.Errorf("assembler job without -triple, -o or input")
	}
	return c, nil
}
