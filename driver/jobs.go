package driver

import (
	"fmt"
	"strings"

	"github.com/offcc/offcc/options"
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

// cc1ReadsElsewhere are the cc1 options whose value is a file the compile
// reads (options.ReadFile) that parseCC1 does not list among reads: the
// header search finds -include and -imacros files (the dependency file
// lists them), and the host IR and the offload objects have roles of
// their own.
var cc1ReadsElsewhere = map[string]bool{
	"include": true, "imacros": true, "fopenmp_host_ir_file_path": true, "fembed_offload_object_EQ": true,
}

// parseCC1 reads a cc1 job with the cc1 option table of the clang's
// release (tables). It fails for a
// job that does not end with "-x LANG INPUT" or that names no -triple:
// offcc then does not plan it.
func parseCC1(tables *options.Tables, argv []string) (*cc1Job, error) {
	c := &cc1Job{outputArg: -1}
	n := len(argv)
	if n < 5 || argv[n-3] != "-x" {
		return nil, fmt.Errorf("the compile does not end with -x <language> <input>")
	}
	c.lang, c.input = argv[n-2], argv[n-1]
	args, err := tables.ClangCC1().Parse(argv[2 : n-3])
	if err != nil {
		return nil, err
	}
	for _, a := range args {
		opt := a.Option
		switch {
		case a.IsUnknown():
			return nil, fmt.Errorf("clang -cc1 has no option %s", a.Value())
		case a.IsInput():
			return nil, fmt.Errorf("a second input %s before -x <language> <input>", a.Value())
		}
		switch opt.ID {
		case "triple":
			c.triple = a.Value()
		case "o":
			if a.Count != 2 {
				return nil, fmt.Errorf("-o joined to its value")
			}
			c.outputArg = 2 + a.Index + 1
			c.output = a.Value()
		case "target_cpu":
			c.targetCPU = a.Value()
		case "target_feature":
			c.features = append(c.features, a.Value())
		case "E", "emit_llvm_bc", "emit_llvm", "emit_obj", "S", "fsyntax_only":
			c.mode = a.Words(argv[2:])[0]
		case "fopenmp_is_target_device":
			c.openmpDevice = true
		case "fcuda_is_device":
			c.cudaDevice = true
		case "fsycl_is_device":
			c.syclDevice = true
		case "fopenmp_host_ir_file_path":
			c.hostIR = a.Value()
		case "fembed_offload_object_EQ":
			c.embed = append(c.embed, a.Value())
		case "dependency_file":
			c.depFile = a.Value()
		case "offload_targets_EQ", "fopenmp_targets_EQ":
			c.offloadTargets = true
		case "disable_llvm_passes":
			c.disablePasses = true
		}
		if opt.Value == options.ReadFile && !cc1ReadsElsewhere[opt.ID] {
			for _, v := range a.Values {
				switch opt.ID {
				case "remap_file": // <from>;<to>: the contents of <to> are read
					_, v, _ = strings.Cut(v, ";")
				case "fmodule_file": // [<name>=]<file>
					if i := strings.IndexByte(v, '='); i >= 0 {
						v = v[i+1:]
					}
				}
				c.reads = append(c.reads, v)
			}
			if opt.ID == "fcuda_include_gpubinary" {
				c.gpuBinary = a.Value()
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

// parseCC1as reads a cc1as job with the cc1as option table of the
// clang's release (tables).
func parseCC1as(tables *options.Tables, argv []string) (*cc1asJob, error) {
	c := &cc1asJob{}
	if len(argv) < 3 {
		return nil, fmt.Errorf("assembler job without -triple, -o or input")
	}
	args, err := tables.ClangCC1As().Parse(argv[2:])
	if err != nil {
		return nil, err
	}
	var inputs []string
	for _, a := range args {
		switch {
		case a.IsUnknown():
			return nil, fmt.Errorf("clang -cc1as has no option %s", a.Value())
		case a.IsInput():
			inputs = append(inputs, a.Value())
		case a.Option.ID == "triple":
			c.triple = a.Value()
		case a.Option.ID == "o":
			c.output = a.Value()
		}
	}
	if c.output == "" || c.triple == "" || len(inputs) != 1 {
		return nil, fmt.Errorf("assembler job without -triple, -o or one input")
	}
	c.input = inputs[0]
	return c, nil
}
