// Package syclbinlink links object-state SYCLBIN files into one
// executable-state file: the SPIR-V modules of all inputs that share an IR
// type and target triple are linked with spirv-link into one module, after
// offcc itself has checked that every imported symbol is defined and that no
// kernel or symbol is defined twice. It implements "offcc syclbin link".
package syclbinlink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/spirv"
	"github.com/offcc/offcc/syclbin"
)

// Config configures Link.
type Config struct {
	// SPIRVLink is the path of spirv-link; "" looks "spirv-link" up in PATH.
	SPIRVLink string
	// TempDir is where Link makes its private temporary directory; "" is
	// the system default (os.TempDir).
	TempDir string
	// Stderr receives spirv-link's diagnostics and, with Verbose, its
	// command line; nil discards them (or, with Shell, is Shell's).
	Stderr io.Writer
	// Verbose prints each spirv-link command to Stderr, in clang's -v
	// quoting, before running it.
	Verbose bool
	// Shell, when not nil, runs spirv-link: the build's, so that the
	// command shows under its -v and dies with it. nil is a Shell of
	// Stderr and Verbose.
	Shell *actions.Shell
}

// member is one IR module of a link group.
type member struct {
	file    string // input file name, for messages
	data    []byte
	mod     *spirv.Module
	kernels []string // the abstract module's kernel names, or the module's kernels when it lists none
}

// groupKey identifies the IR modules that link together.
type groupKey struct {
	irType    uint32
	target    string
	hasTarget bool
}

type group struct {
	key     groupKey
	members []member
}

func (k groupKey) String() string {
	t := k.target
	if !k.hasTarget {
		t = "(no target)"
	}
	return irTypeName(k.irType) + " " + t
}

func irTypeName(t uint32) string {
	switch t {
	case syclbin.IRTypeSPIRV:
		return "SPIR-V"
	case syclbin.IRTypePTX:
		return "PTX"
	case syclbin.IRTypeAMDGCN:
		return "AMDGCN"
	}
	return fmt.Sprintf("IR type %d", t)
}

// Link links inputs, SYCLBIN files in input or object state, into one file
// in executable state; names are the inputs' file names for messages (a
// missing name reads "input N").
//
// The IR modules of all inputs are grouped by IR type and target triple, in
// order of first appearance; each group becomes one abstract module of the
// output holding one IR module, linked by spirv-link from the group's
// modules in input order, and the union of their kernel names. Only SPIR-V
// can be linked; native images and other IR types are an error, as is an
// input already in executable state. Before running spirv-link, Link checks
// with package spirv that every symbol a module imports is exported by a
// module of its group and that no kernel or exported symbol is defined twice;
// after it, that the linked module's kernels are the union of the inputs'.
// Other metadata of the inputs' abstract and IR modules is not carried over.
//
// An error may have several lines, one per problem (such as one per
// undefined symbol).
func Link(ctx context.Context, cfg Config, inputs []*syclbin.File, names []string) (*syclbin.File, error) {
	if len(inputs) == 0 {
		return nil, errors.New("no input files")
	}
	nameOf := func(i int) string {
		if i < len(names) && names[i] != "" {
			return names[i]
		}
		return fmt.Sprintf("input %d", i+1)
	}
	var groups []*group
	byKey := map[groupKey]*group{}
	for i, f := range inputs {
		name := nameOf(i)
		if f == nil {
			return nil, fmt.Errorf("%s: no SYCLBIN file", name)
		}
		state, ok := f.State()
		switch {
		case !ok:
			return nil, fmt.Errorf("%s has no bundle state in its global metadata", name)
		case state == syclbin.StateExecutable:
			return nil, fmt.Errorf("%s is already in executable state; only input- and object-state files can be linked", name)
		case state != syclbin.StateInput && state != syclbin.StateObject:
			return nil, fmt.Errorf("%s has unknown state %s", name, syclbin.StateName(state))
		}
		for j := range f.Modules {
			am := &f.Modules[j]
			if len(am.Native) > 0 {
				nd := &am.Native[0]
				what := "arch unknown"
				if arch, ok := nd.Arch(); ok && arch != "" {
					what = "arch " + arch
				} else if target, ok := nd.Target(); ok && target != "" {
					what = "target " + target
				}
				return nil, fmt.Errorf("cannot link native device images (%s) in %s", what, name)
			}
			amKernels := am.KernelNames()
			for k := range am.IR {
				ir := &am.IR[k]
				typ, ok := ir.Type()
				if !ok {
					return nil, fmt.Errorf("%s: IR module %d of abstract module %d has no IR type", name, k, j)
				}
				target, hasTarget := ir.Target()
				key := groupKey{typ, target, hasTarget}
				if typ != syclbin.IRTypeSPIRV {
					return nil, fmt.Errorf("cannot link %s IR modules (%s) in %s: only SPIR-V can be linked", irTypeName(typ), key, name)
				}
				mod, err := spirv.Parse(ir.Data)
				if err != nil {
					return nil, fmt.Errorf("%s: IR module %d of abstract module %d: %v", name, k, j, err)
				}
				m := member{file: name, data: ir.Data, mod: mod, kernels: amKernels}
				if m.kernels == nil {
					m.kernels = mod.Kernels()
				}
				g := byKey[key]
				if g == nil {
					g = &group{key: key}
					byKey[key] = g
					groups = append(groups, g)
				}
				g.members = append(g.members, m)
			}
		}
	}

	// Check every group before linking any, so that all problems show.
	var problems []error
	for _, g := range groups {
		problems = append(problems, g.check(len(groups) > 1)...)
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}

	out := &syclbin.File{Version: syclbin.Version}
	out.SetState(syclbin.StateExecutable)
	if len(groups) == 0 {
		return out, nil
	}
	l, err := newLinker(cfg)
	if err != nil {
		return nil, err
	}
	defer l.close()
	for gi, g := range groups {
		linked, err := l.link(ctx, gi, g)
		if err != nil {
			return nil, err
		}
		am := syclbin.AbstractModule{}
		am.SetKernelNames(g.kernelNames())
		var ir syclbin.IRModule
		if g.key.hasTarget {
			ir = syclbin.NewIRModule(g.key.irType, g.key.target, linked)
		} else {
			ir = syclbin.IRModule{Data: linked}
			ir.Metadata.Add(syclbin.IRModuleMetadataSet, syclbin.TypeKey, syclbin.UInt32Value(g.key.irType))
		}
		am.IR = []syclbin.IRModule{ir}
		out.Modules = append(out.Modules, am)
	}
	return out, nil
}

// kernelNames returns the union of the members' kernel names in input
// order.
func (g *group) kernelNames() []string {
	names := []string{}
	seen := map[string]bool{}
	for _, m := range g.members {
		for _, k := range m.kernels {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	return names
}

// files returns the names of the group's input files, each once.
func (g *group) files() []string {
	var files []string
	for _, m := range g.members {
		if !slices.Contains(files, m.file) {
			files = append(files, m.file)
		}
	}
	return files
}

// check reports the group's duplicate kernels, duplicate exported symbols
// and undefined symbols, one error each; withTarget adds the group to the
// messages.
func (g *group) check(withTarget bool) []error {
	suffix := ""
	if withTarget {
		suffix = " (" + g.key.String() + ")"
	}
	var errs []error
	twice := func(what, name, a, b string) error {
		if a == b {
			return fmt.Errorf("%s %s is defined twice in %s%s", what, name, a, suffix)
		}
		return fmt.Errorf("%s %s is defined in both %s and %s%s", what, name, a, b, suffix)
	}

	kernelAt := map[string]string{}
	exportAt := map[string]string{}
	defined := map[string]bool{}
	for _, m := range g.members {
		// A kernel is defined by the module's entry point and listed in
		// its abstract module's metadata; either counts.
		own := map[string]bool{}
		for _, k := range append(slices.Clone(m.kernels), m.mod.Kernels()...) {
			if own[k] {
				continue
			}
			own[k] = true
			if at, ok := kernelAt[k]; ok {
				errs = append(errs, twice("kernel", k, at, m.file))
				continue
			}
			kernelAt[k] = m.file
		}
		for _, l := range m.mod.Linkage {
			switch l.Type {
			case spirv.LinkageExport:
				if at, ok := exportAt[l.Name]; ok {
					errs = append(errs, twice("symbol", l.Name, at, m.file))
					continue
				}
				exportAt[l.Name] = m.file
				defined[l.Name] = true
			case spirv.LinkageLinkOnceODR:
				defined[l.Name] = true
			}
		}
	}

	var undefined []string
	refs := map[string][]string{}
	for _, m := range g.members {
		for _, sym := range m.mod.Imports() {
			if defined[sym] {
				continue
			}
			if refs[sym] == nil {
				undefined = append(undefined, sym)
			}
			if !slices.Contains(refs[sym], m.file) {
				refs[sym] = append(refs[sym], m.file)
			}
		}
	}
	slices.Sort(undefined)
	for _, sym := range undefined {
		errs = append(errs, fmt.Errorf("undefined symbol %s, referenced by %s%s", sym, strings.Join(refs[sym], ", "), suffix))
	}
	return errs
}

// linker runs spirv-link in a private temporary directory.
type linker struct {
	cfg  Config
	sh   *actions.Shell
	tool string
	dir  string
}

func newLinker(cfg Config) (*linker, error) {
	if cfg.Stderr == nil && cfg.Shell != nil {
		cfg.Stderr = cfg.Shell.Stderr()
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	sh := cfg.Shell
	if sh == nil {
		sh = actions.NewShell(actions.ShellOptions{Stderr: cfg.Stderr, Verbose: cfg.Verbose})
	}
	tool := cfg.SPIRVLink
	if tool == "" {
		p, err := exec.LookPath("spirv-link")
		if err != nil {
			return nil, errors.New("spirv-link (SPIRV-Tools) is not in PATH; it is needed to link SPIR-V modules")
		}
		tool = p
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "offcc-syclbin-link-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a temporary directory: %v", err)
	}
	return &linker{cfg: cfg, sh: sh, tool: tool, dir: dir}, nil
}

func (l *linker) close() { os.RemoveAll(l.dir) }

// link links group g (the gi'th) and returns the linked module, checked
// with package spirv against the group's kernels.
func (l *linker) link(ctx context.Context, gi int, g *group) ([]byte, error) {
	args := []string{}
	for mi, m := range g.members {
		in := filepath.Join(l.dir, fmt.Sprintf("g%d-m%d.spv", gi, mi))
		if err := os.WriteFile(in, m.data, 0o600); err != nil {
			return nil, fmt.Errorf("cannot write temporary file: %v", err)
		}
		args = append(args, in)
	}
	outPath := filepath.Join(l.dir, fmt.Sprintf("g%d-linked.spv", gi))
	args = append(args, "-o", outPath)
	var diag bytes.Buffer
	err := l.sh.Run(ctx, &actions.Cmd{Argv: append([]string{l.tool}, args...), Stdout: &diag, Stderr: &diag})
	if diag.Len() > 0 {
		if !bytes.HasSuffix(diag.Bytes(), []byte("\n")) {
			diag.WriteByte('\n') // spirv-link ends its messages without one
		}
		l.cfg.Stderr.Write(diag.Bytes())
	}
	what := fmt.Sprintf("%s modules of %s", g.key, strings.Join(g.files(), ", "))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("linking %s: %v", what, ctxErr)
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("spirv-link failed linking %s (%v; use -v to see the command)", what, exit.ProcessState)
		}
		var start *actions.StartError
		if errors.As(err, &start) {
			err = start.Err
		}
		return nil, fmt.Errorf("cannot run spirv-link: %v", err)
	}
	linked, err := os.ReadFile(outPath)
	if err != nil {
		return nil, fmt.Errorf("spirv-link wrote no output linking %s: %v", what, err)
	}
	mod, err := spirv.Parse(linked)
	if err != nil {
		return nil, fmt.Errorf("spirv-link's output for %s: %v", what, err)
	}
	want := g.kernelNames()
	got := mod.Kernels()
	for _, k := range want {
		if !slices.Contains(got, k) {
			return nil, fmt.Errorf("kernel %s of %s is not an entry point of the linked module", k, what)
		}
	}
	for _, k := range got {
		if !slices.Contains(want, k) {
			return nil, fmt.Errorf("the linked module of %s has kernel %s, which no input's kernel names list", what, k)
		}
	}
	return linked, nil
}
