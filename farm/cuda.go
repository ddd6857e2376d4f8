package farm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/target"
)

// NVIDIA's CUDA tools on the farm.
//
// ptxas, fatbinary and nvlink jobs go to workers with the same CUDA
// toolkit, as clang and lld jobs go to workers with the same LLVM: the
// three executables of a toolkit (in one directory) are named by their
// identity (cache.ToolIdentity: their SHA-256, as they have no ELF build
// ID), and so is the toolkit they make (cudaToolchainOf), which names a
// job stream of its own, farm:q:cuda-<digest>. A worker with a CUDA
// toolkit reads both its streams; one without, or with another toolkit,
// never sees the jobs. The tools have no option tables: checkCUDA allows
// the options clang 22's driver and clang-linker-wrapper pass them, word
// by word, and nothing else (cudaAllowed).

// cudaTools are the tools of NVIDIA's CUDA toolkit a worker runs, by the
// name jobs give them, which is also their executable's.
var cudaTools = []string{"ptxas", "fatbinary", "nvlink"}

// isCUDATool reports whether tool is one of cudaTools.
func isCUDATool(tool string) bool {
	for _, t := range cudaTools {
		if t == tool {
			return true
		}
	}
	return false
}

// cudaPrefix starts every CUDA toolkit's identity (and so the name of its
// stream), so that it never names an LLVM toolchain's.
const cudaPrefix = "cuda-"

// cudaToolchainOf returns the identity of each of cudaTools in dir (the
// digest of its cache.ToolIdentity text, by tool name) and of the toolkit
// they make: "cuda-" and 16 hex digits of a digest of those. A tool that
// is not there is named so ("absent"): two toolkits lacking the same tool
// still match.
func cudaToolchainOf(dir string) (ids map[string]string, toolchain string) {
	ids, digest := identitiesOf(dir, cudaTools, "offcc CUDA toolkit\n")
	return ids, cudaPrefix + digest
}

// cudaDirOnPath returns the directory of the ptxas on PATH (Debian's
// nvidia-cuda-toolkit puts it in /usr/bin), "" when there is none: the
// CUDA toolkit a worker runs unless told another (WorkerOptions.CUDA).
func cudaDirOnPath() string {
	p, err := exec.LookPath("ptxas")
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return filepath.Dir(p)
}

// cudaToolPath returns tool (one of cudaTools) in dir, "" when dir is ""
// or has no such file.
func cudaToolPath(dir, tool string) string {
	if dir == "" {
		return ""
	}
	p := filepath.Join(dir, tool)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}

// cudaValue is what an option of cudaAllowed takes: nothing, or the next
// word, of a shape.
type cudaValue uint8

const (
	// cudaFlag takes no value.
	cudaFlag cudaValue = iota
	// cudaOutput takes the next word: an output of the job, which the
	// worker replaces by its own path.
	cudaOutput
	// cudaArch takes the next word: sm_N or compute_N (N digits, then
	// perhaps "a" or "f").
	cudaArch
	// cudaNumber takes the next word: 1 to 9 decimal digits.
	cudaNumber
	// cudaBool takes the next word: true or false.
	cudaBool
	// cudaLibDir (nvlink's -L) takes the next word: an absolute clean
	// directory, where nvlink looks for the libraries of -l only (which
	// no job may give): it opens nothing there.
	cudaLibDir
)

// cudaAllowed are the options a worker passes to each CUDA tool, by
// spelling, each as one word (and its value as the next one): those clang
// 22 passes (ptxas: NVPTX::Assembler; fatbinary: NVPTX::FatBinary and
// clang-linker-wrapper's CUDA links; nvlink: clang-nvlink-wrapper), and for
// ptxas a few that users pass with -Xcuda-ptxas, none of which reads or
// writes a file. Each spelling is one ptxas --help, fatbinary --help or
// nvlink --help (CUDA 11.8) lists. Inputs are words without a leading '-'
// (ptxas, nvlink), or fatbinary's --image3= and --image= specs (see
// parseImage), and must be files the job ships; outputs are only the value
// of ptxas's --output-file, fatbinary's --create and nvlink's -o, naming
// outputs of the job. Nothing else runs on a worker: no --options-file or
// -optf (options read from a file), no ptxas --input-as-string, no nvlink
// -l, --emit-ptx, --time or --register-link-binaries, no fatbinary
// --embedded-fatbin, --ident or --cmdline, no joined spelling
// (--gpu-name=sm_80).
var cudaAllowed = map[string]map[string]cudaValue{
	"ptxas": {
		// clang 22: -m64, -O0..-O3 (or -g --dont-merge-basicblocks
		// --return-at-end under --cuda-noopt-device-debug), -lineinfo
		// (-gline-directives-only), -v, --gpu-name ARCH, --output-file
		// OUT, the input, -c (relocatable: OpenMP, -fgpu-rdc).
		"-m64": cudaFlag, "-O0": cudaFlag, "-O1": cudaFlag, "-O2": cudaFlag, "-O3": cudaFlag,
		"-g": cudaFlag, "--dont-merge-basicblocks": cudaFlag, "--return-at-end": cudaFlag,
		"-lineinfo": cudaFlag, "-v": cudaFlag, "-c": cudaFlag,
		"--gpu-name": cudaArch, "--output-file": cudaOutput,
		// -Xcuda-ptxas tuning and warnings.
		"--maxrregcount": cudaNumber, "-maxrregcount": cudaNumber,
		"--verbose": cudaFlag, "--warn-on-spills": cudaFlag, "-warn-spills": cudaFlag,
		"--warn-on-local-memory-usage": cudaFlag, "-warn-lmem-usage": cudaFlag,
		"--warn-on-double-precision-use": cudaFlag, "-warn-double-usage": cudaFlag,
		"--disable-warnings": cudaFlag, "-w": cudaFlag, "--warning-as-error": cudaFlag, "-Werror": cudaFlag,
		"--fmad": cudaBool, "-fmad": cudaBool, "--allow-expensive-optimizations": cudaBool,
		"--generate-line-info": cudaFlag, "--device-debug": cudaFlag, "--compile-only": cudaFlag,
		"--suppress-stack-size-warning": cudaFlag,
	},
	"fatbinary": {
		// clang 22: -64 --create OUT [-g] --image3=kind=K,sm=N,file=F...;
		// clang-linker-wrapper 22: -64 --create OUT --image3=...
		"-64": cudaFlag, "--64": cudaFlag, "--create": cudaOutput, "-g": cudaFlag, "--debug": cudaFlag,
	},
	"nvlink": {
		// clang-nvlink-wrapper 22: [-g] [-v] -o OUT -arch ARCH [-L DIR] IN...
		"-o": cudaOutput, "-arch": cudaArch, "--arch": cudaArch, "-g": cudaFlag, "-v": cudaFlag,
		"-L": cudaLibDir,
	},
}

// cudaOutputs are the output options of each CUDA tool: a job must give
// one (ptxas without --output-file writes elf.o, nvlink without -o a.out).
var cudaOutputs = map[string]string{"ptxas": "--output-file", "fatbinary": "--create", "nvlink": "-o"}

// cudaRefusedWhy says why some options a worker never passes to a CUDA
// tool are refused (any option outside cudaAllowed is), for the messages.
var cudaRefusedWhy = map[string]string{
	"--options-file":           "it reads options from a file",
	"-optf":                    "it reads options from a file",
	"--input-as-string":        "its value is PTX, not a file the job ships",
	"-ias":                     "its value is PTX, not a file the job ships",
	"-l":                       "it reads a library from the worker's files",
	"--library":                "it reads a library from the worker's files",
	"--library-path":           "a directory of the worker's",
	"--nvvmpath":               "a directory of the worker's",
	"-nvvmpath":                "a directory of the worker's",
	"--emit-ptx":               "it writes a file",
	"-emit-ptx":                "it writes a file",
	"--time":                   "it writes a file",
	"-time":                    "it writes a file",
	"--register-link-binaries": "it writes a file",
	"--gen-host-linker-script": "it writes a linker script",
	"-ghls":                    "it writes a linker script",
	"--embedded-fatbin":        "it reads a file",
	"-fatbin":                  "it reads a file",
	"--ident":                  "it names the fat binary otherwise than clang does",
	"-ident":                   "it names the fat binary otherwise than clang does",
	"--cmdline":                "options for another tool",
	"-cmdline":                 "options for another tool",
	"--Xptxas":                 "options for another tool",
	"-Xptxas":                  "options for another tool",
}

// cudaOutputSpellings are the spellings of the CUDA tools' output options:
// a job gives its output with its tool's (cudaOutputs) only.
var cudaOutputSpellings = map[string]bool{"-o": true, "--output-file": true, "--create": true, "-create": true}

// archPattern matches the GPU names of cudaArch values.
var archPattern = regexp.MustCompile(`^(sm|compute)_[0-9]{1,4}[af]?$`)

// smPattern matches the sm= value of an --image3 spec: digits, perhaps
// followed by "a" or "f".
var smPattern = regexp.MustCompile(`^[0-9]{1,4}[af]?$`)

// cudaEdit is a word of a CUDA job's command line that the worker
// rewrites: an output, an input, or an image spec with an input.
type cudaEdit struct {
	// value is the client's name of the file: an output of the job, or
	// a shipped file (by its argument).
	value  string
	output bool
	// prefix and suffix surround value in the word (an image spec's
	// "--image3=kind=elf,sm=80,file=" and the keys after file=).
	prefix, suffix string
}

// checkCUDA returns the plan of the CUDA tool job j, whose files and
// outputs c holds, or why a worker must not run it: every word must be an
// option of cudaAllowed for its tool (its value, where it takes one, the
// next word, of the shape it allows), an input the job ships (fatbinary:
// in an image spec), or an output option naming an output of the job,
// given once.
func checkCUDA(j *Job, c *checker) (*plan, string) {
	allowed := cudaAllowed[j.Tool]
	argv := j.Args
	p := &plan{tool: j.Tool, argv: argv, edits: map[int]cudaEdit{}}
	outputSeen := false
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if j.Tool == "fatbinary" && (strings.HasPrefix(a, "--image3=") || strings.HasPrefix(a, "--image=")) {
			e, why := c.image(a)
			if why != "" {
				return nil, why
			}
			p.edits[i] = e
			continue
		}
		if !strings.HasPrefix(a, "-") {
			if j.Tool == "fatbinary" {
				return nil, fmt.Sprintf("argument %s is not run on workers (fatbinary's inputs go in --image3= specs)", a)
			}
			if why := c.cudaInput(a); why != "" {
				return nil, why
			}
			p.edits[i] = cudaEdit{value: a}
			continue
		}
		kind, ok := allowed[a]
		if !ok {
			name, _, _ := strings.Cut(a, "=")
			if why := cudaRefusedWhy[name]; why != "" {
				return nil, fmt.Sprintf("option %s is not run on workers (%s)", a, why)
			}
			if cudaOutputSpellings[name] {
				return nil, fmt.Sprintf("option %s is not run on workers (outputs go as %s OUT)", a, cudaOutputs[j.Tool])
			}
			if _, ok := allowed[name]; ok && name != a {
				return nil, fmt.Sprintf("option %s is not run on workers (only as %s VALUE)", a, name)
			}
			return nil, fmt.Sprintf("option %s is not run on workers (not one clang passes %s)", a, j.Tool)
		}
		if kind == cudaFlag {
			continue
		}
		if i+1 >= len(argv) {
			return nil, fmt.Sprintf("option %s lacks its value", a)
		}
		i++
		v := argv[i]
		switch kind {
		case cudaOutput:
			if outputSeen {
				return nil, fmt.Sprintf("option %s is given twice (one output)", a)
			}
			outputSeen = true
			if !c.outputs[v] {
				return nil, fmt.Sprintf("%s %s names no output of the job", a, v)
			}
			p.edits[i] = cudaEdit{value: v, output: true}
		case cudaArch:
			if !archPattern.MatchString(v) {
				return nil, fmt.Sprintf("option %s %s is not run on workers (not a GPU name such as sm_80)", a, v)
			}
		case cudaNumber:
			if !isNumber(v) {
				return nil, fmt.Sprintf("option %s %s is not run on workers (not a number)", a, v)
			}
		case cudaBool:
			if v != "true" && v != "false" {
				return nil, fmt.Sprintf("option %s %s is not run on workers (not true or false)", a, v)
			}
		case cudaLibDir:
			if !filepath.IsAbs(v) || filepath.Clean(v) != v || strings.ContainsAny(v, ",=") {
				return nil, fmt.Sprintf("option %s %s is not run on workers (not an absolute clean directory)", a, v)
			}
		}
	}
	if !outputSeen {
		return nil, fmt.Sprintf("%s without %s OUT is not run on workers (it would write a file the job does not name)", j.Tool, cudaOutputs[j.Tool])
	}
	return p, ""
}

// cudaInput returns why the argument v, an input of a CUDA tool, is
// refused, or "": it must be a file the job ships, by the argument the
// job gives it, that does not climb out of the directory.
func (c *checker) cudaInput(v string) string {
	if climbs(v) {
		return fmt.Sprintf("argument %s leaves the job's directory", v)
	}
	if strings.ContainsAny(v, ",=") || !c.files[v] {
		return fmt.Sprintf("input %s is not a file the job ships", v)
	}
	return ""
}

// image checks a fatbinary image spec, the word a: --image3=kind=K,sm=N,
// file=F (K elf or ptx) as clang 22 writes it, or the older
// --image=profile=P,file=F (P sm_N or compute_N); each key once, no
// other. F must be a file the job ships. It returns the edit that puts
// the worker's copy of F in place, or why a is refused.
func (c *checker) image(a string) (cudaEdit, string) {
	opt, spec, _ := strings.Cut(a, "=")
	keys := map[string]bool{"kind": true, "sm": true, "file": true}
	if opt == "--image" {
		keys = map[string]bool{"profile": true, "file": true}
	}
	seen := map[string]string{}
	parts := strings.Split(spec, ",")
	fileAt := -1
	for i, kv := range parts {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !keys[k] || seen[k] != "" || v == "" {
			return cudaEdit{}, fmt.Sprintf("image spec %s is not run on workers (%q: not one key of %s once with a value)", a, kv, keyList(keys))
		}
		seen[k] = v
		if k == "file" {
			fileAt = i
		}
	}
	switch {
	case fileAt < 0:
		return cudaEdit{}, fmt.Sprintf("image spec %s has no file=", a)
	case opt == "--image3" && (seen["kind"] != "elf" && seen["kind"] != "ptx"):
		return cudaEdit{}, fmt.Sprintf("image spec %s is not run on workers (kind= is elf or ptx)", a)
	case opt == "--image3" && !smPattern.MatchString(seen["sm"]):
		return cudaEdit{}, fmt.Sprintf("image spec %s is not run on workers (sm= is a number such as 80)", a)
	case opt == "--image" && !archPattern.MatchString(seen["profile"]):
		return cudaEdit{}, fmt.Sprintf("image spec %s is not run on workers (profile= is a GPU name such as sm_80)", a)
	}
	if why := c.cudaInput(seen["file"]); why != "" {
		return cudaEdit{}, fmt.Sprintf("image spec %s: %s", a, why)
	}
	prefix := opt + "=" + strings.Join(append(parts[:fileAt:fileAt], "file="), ",")
	suffix := ""
	if fileAt+1 < len(parts) {
		suffix = "," + strings.Join(parts[fileAt+1:], ",")
	}
	return cudaEdit{value: seen["file"], prefix: prefix, suffix: suffix}, ""
}

// keyList names the keys of an image spec, for messages.
func keyList(keys map[string]bool) string {
	if keys["profile"] {
		return "profile, file"
	}
	return "kind, sm, file"
}

// cudaKit is the identity of a client's CUDA toolkit, computed in the
// background (hashing its tools takes some 30 ms): ids and toolchain are
// set once done is closed.
type cudaKit struct {
	done      chan struct{}
	ids       map[string]string
	toolchain string
}

// ready reports whether the identity is known.
func (k *cudaKit) ready() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// cudaKit returns the identity of the CUDA toolkit in dir, which it starts
// computing in the background on the first call for dir.
func (c *Client) cudaKit(dir string) *cudaKit {
	if v, ok := c.kits.Load(dir); ok {
		return v.(*cudaKit)
	}
	k := &cudaKit{done: make(chan struct{})}
	if v, loaded := c.kits.LoadOrStore(dir, k); loaded {
		return v.(*cudaKit)
	}
	go func() {
		k.ids, k.toolchain = cudaToolchainOf(dir)
		close(k.done)
	}()
	return k
}

// nvptx reports whether a belongs to a build that runs ptxas: a CUDA
// action, or one for an NVPTX target (OpenMP offload to sm_*).
func (c *Client) nvptx(a *actions.Action) bool {
	return a.Offload == actions.CUDA || target.IsNVPTX(a.Target.Triple)
}

// cudaKinds are the kinds of action each CUDA tool runs as.
var cudaKinds = map[string]actions.Kind{
	"ptxas": actions.DeviceAssemble, "fatbinary": actions.FatBinary, "nvlink": actions.DeviceLink,
}

// acceptsCUDA reports whether a, which runs a CUDA tool, can run on a
// worker: the tool is named by an absolute path, in a toolkit whose
// identity is known (it is computed in the background the first time; the
// jobs before run here) and that a live worker has; its action is the
// tool's (ptxas a device assembly, fatbinary a fat binary, nvlink a device
// link); and its inputs are files. Where it does, the client counts the
// slots of the workers with that toolkit (see refresh).
func (c *Client) acceptsCUDA(a *actions.Action) bool {
	tool := filepath.Base(a.Command[0])
	if !filepath.IsAbs(a.Command[0]) || cudaKinds[tool] != a.Kind || a.DepFile != "" || a.Dir != "" {
		return false
	}
	for _, f := range a.AllInputs() {
		if f.IsStdin() {
			return false
		}
	}
	k := c.cudaKit(filepath.Dir(a.Command[0]))
	if !k.ready() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kitsUsed[k.toolchain] = true
	return c.kitsLive[k.toolchain] && !c.failed
}
