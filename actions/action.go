// Package actions is offcc's build plan and its executor: typed actions that
// read and write artifacts, a graph whose edges are the artifacts'
// producers, a Shell through which every side effect goes, and one
// executor that runs the graph under a concurrency limit and make's
// jobserver. An action may expand into more actions once its inputs exist
// (the link stage does), and those join the same running graph.
package actions

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/offcc/offcc/target"
)

// Kind says what an action does in an offload build.
type Kind uint8

// The kinds of action, in pipeline order.
const (
	KindUnknown    Kind = iota
	Preprocess          // the preprocessor alone (cc1 -E)
	Compile             // a host compile with no offloading: source to object, assembly or IR
	HostFrontend        // the host front end of an offload compile: source to host IR
	DeviceCompile       // one device compile: source to device IR, assembly or object
	Backend             // IR to object, assembly or bitcode
	Assemble            // the integrated assembler (cc1as)
	DeviceAssemble      // a device assembler (ptxas)
	Package             // pack device images into an offload binary
	Embed               // add offload binaries to a host object's .llvm.offloading section
	Link                // the link stage: expands into the kinds below once its inputs exist
	Extract             // write the device images of one device link to files
	DeviceLink          // link the images of one (triple, arch)
	FatBinary           // an NVIDIA fat binary or a clang-offload-bundler bundle
	Wrap                // the registration code that hands device images to the runtime
	HostLink            // the host linker
	SYCLBIN             // write a .syclbin file
	Fallback            // the whole command line run by clang's own driver or tool
)

var kindNames = [...]string{
	KindUnknown: "unknown", Preprocess: "preprocess", Compile: "compile",
	HostFrontend: "host-frontend", DeviceCompile: "device-compile", Backend: "backend",
	Assemble: "assemble", DeviceAssemble: "device-assemble", Package: "package",
	Embed: "embed", Link: "link", Extract: "extract", DeviceLink: "device-link",
	FatBinary: "fatbinary", Wrap: "wrap", HostLink: "host-link", SYCLBIN: "syclbin",
	Fallback: "fallback",
}

// String returns the kind's name as --print-job-graph and traces show it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// InLinkStage reports whether the kind belongs to the link step, whose
// failures clang reports as "linker command failed".
func (k Kind) InLinkStage() bool {
	switch k {
	case Link, Extract, DeviceLink, FatBinary, Wrap, HostLink:
		return true
	}
	return false
}

// IsClangCompile reports whether actions of kind k are clang compiles
// (preprocessor, front end, backend), which print their own diagnostics.
func (k Kind) IsClangCompile() bool {
	switch k {
	case Preprocess, Compile, HostFrontend, DeviceCompile, Backend:
		return true
	}
	return false
}

// OffloadKind is the programming model an action serves.
type OffloadKind uint8

// The offload kinds. None marks actions of a build without offloading.
const (
	None OffloadKind = iota
	OpenMP
	CUDA
	HIP
	SYCL
)

var offloadNames = [...]string{None: "none", OpenMP: "openmp", CUDA: "cuda", HIP: "hip", SYCL: "sycl"}

// String returns "openmp", "cuda", "hip", "sycl" or "none".
func (k OffloadKind) String() string {
	if int(k) < len(offloadNames) {
		return offloadNames[k]
	}
	return fmt.Sprintf("offload(%d)", k)
}

// Artifact is a file the build reads or writes. An artifact written by the
// build knows the action that writes it; that pointer is the only way one
// action depends on another, so an edge cannot be forgotten.
type Artifact struct {
	// Path names the file as commands see it; "-" is standard input.
	Path     string
	producer *Action
}

// NewArtifact returns an artifact for path with no producer yet.
func NewArtifact(path string) *Artifact { return &Artifact{Path: path} }

// Producer returns the action that writes the artifact, or nil for a file
// that exists before the build (a source, a library).
func (f *Artifact) Producer() *Action { return f.producer }

// IsStdin reports whether the artifact is standard input.
func (f *Artifact) IsStdin() bool { return f.Path == "-" }

// Action is one step of a build: an external command or an in-process step,
// with its typed role, its target, and every file it reads and writes.
type Action struct {
	// Kind is what the action does; Offload the model it serves; Device is
	// set for device-side actions.
	Kind    Kind
	Offload OffloadKind
	Device  bool
	// Target is the triple and arch (target ID) the action compiles or
	// links for; host actions have the host triple and no arch.
	Target target.Target
	// Tool names the tool as clang's -ccc-print-bindings does ("clang",
	// "Offload::Packager", ...); empty means the kind's usual tool.
	Tool string

	// Inputs are the files the action works on, in the order clang lists
	// them (a compile's source, then the host IR it reads).
	Inputs []*Artifact
	// Reads are further files the action reads that planning knows of:
	// -include files, device libraries, embedded offload binaries.
	Reads []*Artifact
	// Outputs are the files the action writes.
	Outputs []*Artifact
	// DepFile names a Makefile-style dependency file the command writes;
	// when the action succeeds, the files it lists become Discovered.
	DepFile string
	// IncludeGraph, when set, names the header dependency graph the
	// command writes for offcc beside a DepFile that leaves out system
	// headers (the user's -MMD file): when the action succeeds, the files
	// it names become Discovered too (see ReadDiscovered).
	IncludeGraph *IncludeGraph
	// UnknownReads, when not empty, says why the action reads files that
	// neither planning nor DepFile lists (a dependency file on /dev is not
	// read back): its reads cannot all be known.
	UnknownReads string
	// FallbackReason, for a Fallback action that offcc could not plan,
	// says why the command line went to clang's driver whole.
	FallbackReason string
	// Discovered lists, after the action ran, the files it read that were
	// not known when it was planned (headers).
	Discovered []string

	// Command is the external command, Command[0] the executable. For an
	// in-process step it is the equivalent command line that -### and -v
	// print, and may be nil.
	Command []string
	// Argv0, when set, is the name an external command runs under
	// (argv[0]); Command[0] is still the file executed.
	Argv0 string
	// Env is extra KEY=VALUE environment for an external command.
	Env []string
	// Dir, when set, is the directory an external command runs in (it is
	// made if missing); its relative paths must then not depend on the
	// directory (OpenMP front ends for stable kernel names: see
	// -working-directory in their commands).
	Dir string
	// FileNames, when set, renames the files the command names in its
	// diagnostics, dependency files and include graph to the names the
	// user's command line gives them (the OpenMP front ends of stable
	// kernel names know them by other names).
	FileNames NameMap
	// KeyArgs, for an in-process step without a Command, are the
	// parameters that, with its inputs' contents, decide its outputs: the
	// build cache keys the step by them. A step with neither is not
	// cached.
	KeyArgs []string
	// Run, when non-nil, runs the action in-process.
	Run func(ctx context.Context, sh *Shell) error
	// Expand, when non-nil, plans the action's work once its inputs exist:
	// the actions it returns join the running graph, and this action
	// finishes when all of them have. It writes nothing.
	Expand func(ctx context.Context, sh *Shell) ([]*Action, error)
	// Cost is the estimated cost relative to a device compile; 0 means 1.
	// The executor starts the action on the longest remaining path first.
	Cost float64

	// parent is the action whose expansion added this one.
	parent *Action
}

// AllInputs returns Inputs followed by Reads.
func (a *Action) AllInputs() []*Artifact {
	return append(append([]*Artifact(nil), a.Inputs...), a.Reads...)
}

// Deps returns the distinct actions that write a file this action reads,
// in input order.
func (a *Action) Deps() []*Action {
	var deps []*Action
	seen := map[*Action]bool{}
	for _, lists := range [][]*Artifact{a.Inputs, a.Reads} {
		for _, f := range lists {
			if p := f.producer; p != nil && !seen[p] {
				seen[p] = true
				deps = append(deps, p)
			}
		}
	}
	return deps
}

// ToolName returns Tool, or the tool clang's -ccc-print-bindings names for
// the kind.
func (a *Action) ToolName() string {
	if a.Tool != "" {
		return a.Tool
	}
	switch a.Kind {
	case Preprocess, Compile, HostFrontend, DeviceCompile, Backend, DeviceLink:
		return "clang"
	case Assemble:
		return "clang::as"
	case DeviceAssemble:
		return "NVPTX::Assembler"
	case Package:
		return "Offload::Packager"
	case Embed:
		return "Offload::Embedder"
	case Link:
		return "Offload::Linker"
	case Extract:
		return "Offload::Extractor"
	case Wrap:
		return "Offload::Wrapper"
	case HostLink:
		return "GNU::Linker"
	}
	if len(a.Command) > 0 {
		return filepath.Base(a.Command[0])
	}
	return a.Kind.String()
}

// Label names the action in messages: its tool, target and first output.
func (a *Action) Label() string {
	s := a.Kind.String()
	if a.Target.Arch != "" {
		s += " " + a.Target.Arch
	} else if a.Device && a.Target.Triple != "" {
		s += " " + a.Target.Triple
	}
	if len(a.Outputs) > 0 {
		s += " (" + a.Outputs[0].Path + ")"
	}
	return s
}

// SideName is the kind prefix clang prints for offload actions:
// "host-openmp", "device-hip", or "" for actions without offloading.
func (a *Action) SideName() string {
	if a.Offload == None {
		return ""
	}
	if a.Device {
		return "device-" + a.Offload.String()
	}
	return "host-" + a.Offload.String()
}

func (a *Action) cost() float64 {
	if a.Cost == 0 {
		return 1
	}
	return a.Cost
}
