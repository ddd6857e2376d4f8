package driver

import (
	"fmt"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/target"
)

// cudaBuilder plans CUDA compiles as clang 22 runs them: per sm arch a
// device compile to PTX and ptxas after it, all archs at once; NVIDIA's
// fatbinary over their cubins; and the host compile, which runs beside the
// device work with an empty fat binary (-fcuda-include-gpubinary
// /dev/null) and gets the real one in its .nv_fatbin section afterwards,
// laid out as the compiler would have. With --offload-new-driver
// -fgpu-rdc the device code is packaged (PTX and cubin, or bitcode under
// -foffload-lto) and embedded in .llvm.offloading instead. Links of CUDA
// images run LLVM's clang-linker-wrapper (nvlink, fatbinary).
type cudaBuilder struct{}

func (cudaBuilder) bind(p *planner, j *clangJob) error {
	switch {
	case j.isCC1():
		c, err := parseCC1(p.env.optionTables(), j.argv)
		if err != nil {
			return unrecognized(j, "%v", err)
		}
		if c.openmpDevice || c.syclDevice || (c.device() && !target.IsNVPTX(c.triple)) {
			return unrecognized(j, "a device compile other than CUDA's in a CUDA build")
		}
		if err := p.setCUID(j, c); err != nil {
			return err
		}
		return p.bindCC1(j, c, hipCompileKind(c))
	case j.isCC1as():
		return p.bindAssemble(j)
	case j.tool == "ptxas":
		return p.bindPtxas(j)
	case j.tool == "fatbinary":
		return p.bindFatbinary(j)
	case j.tool == "llvm-offload-binary" || j.tool == "clang-offload-packager":
		return p.bindPackage(j)
	case j.tool == "clang-linker-wrapper":
		return p.bindLink(j)
	}
	return unrecognized(j, "offcc's CUDA planner does not know the tool %s", j.tool)
}

// bindFatbinary adds NVIDIA's fatbinary job: --create OUT and one
// --image3=kind=...,sm=...,file=IN per cubin or PTX file.
func (p *planner) bindFatbinary(j *clangJob) error {
	a := &actions.Action{
		Kind: actions.FatBinary, Offload: p.offload, Tool: "fatbinary",
		Target:  target.Target{Triple: p.hostTriple()},
		Command: append([]string(nil), j.argv...), Cost: 0.1,
	}
	var out string
	for i := 1; i < len(j.argv); i++ {
		arg := j.argv[i]
		switch {
		case arg == "--create" && i+1 < len(j.argv):
			out = j.argv[i+1]
			i++
		case strings.HasPrefix(arg, "--image3=") || strings.HasPrefix(arg, "--image="):
			_, spec, _ := strings.Cut(arg, "=")
			file := ""
			for _, kv := range strings.Split(spec, ",") {
				if v, ok := strings.CutPrefix(kv, "file="); ok {
					file = v
				}
			}
			if file == "" {
				return unrecognized(j, "a fatbinary image without file=: %q", arg)
			}
			in, err := p.input(j, file)
			if err != nil {
				return err
			}
			a.Inputs = append(a.Inputs, in)
		case strings.HasPrefix(arg, "-"):
		default:
			return unrecognized(j, "unexpected fatbinary argument %q", arg)
		}
	}
	if out == "" || len(a.Inputs) == 0 {
		return unrecognized(j, "a fatbinary job without --create or images")
	}
	o, err := p.output(j, out)
	if err != nil {
		return err
	}
	a.Outputs = []*actions.Artifact{o}
	return p.add(j, a)
}

// vendorTools says, for NVIDIA's tools clang runs by bare name when it
// finds no CUDA installation, what they are for.
var vendorTools = map[string]string{
	"ptxas":     "NVIDIA's PTX assembler",
	"fatbinary": "NVIDIA's fat binary tool",
	"nvlink":    "NVIDIA's device linker",
}

// MissingToolError is a tool a planned job runs that is not installed.
type MissingToolError struct {
	Tool string
}

func (e *MissingToolError) Error() string {
	what := vendorTools[e.Tool]
	if what == "" {
		return fmt.Sprintf("cannot find '%s', which this build runs", e.Tool)
	}
	return fmt.Sprintf("cannot find '%s' (%s): install the CUDA toolkit and pass --cuda-path=DIR (or put its bin directory on PATH), or compile PTX only with --cuda-device-only -S", e.Tool, what)
}

// checkTools returns a *MissingToolError for the first external command of
// the plan that cannot be found: clang names NVIDIA's tools without a
// directory when it finds no CUDA installation, and the build would
// otherwise fail only after its compiles ran.
func checkTools(g *actions.Graph, lookPath func(string) (string, error)) error {
	for _, a := range g.Actions {
		if a.Run != nil || a.Expand != nil || len(a.Command) == 0 || strings.Contains(a.Command[0], "/") {
			continue
		}
		if _, err := lookPath(a.Command[0]); err != nil {
			return &MissingToolError{Tool: a.Command[0]}
		}
	}
	return nil
}
