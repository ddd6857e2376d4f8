package driver

import "github.com/offcc/offcc/actions"

// openmpBuilder plans OpenMP offload compilations with clang's new offload
// driver: one host front end per translation unit, whose IR every device
// compile reads (-fopenmp-host-ir-file-path); per (triple, arch) a device
// compile, and ptxas after it for NVPTX; the packager; the host backend,
// split from its embedding step; and the link stage.
type openmpBuilder struct{}

func (openmpBuilder) bind(p *planner, j *clangJob) error {
	switch {
	case j.isCC1():
		c, err := parseCC1(p.env.optionTables(), j.argv)
		if err != nil {
			return unrecognized(j, "%v", err)
		}
		if (c.cudaDevice && !c.openmpDevice) || c.syclDevice {
			return unrecognized(j, "a CUDA, HIP or SYCL device compile in an OpenMP build")
		}
		return p.bindCC1(j, c, openmpCompileKind(c))
	case j.isCC1as():
		return p.bindAssemble(j)
	case j.tool == "ptxas":
		return p.bindPtxas(j)
	case j.tool == "llvm-offload-binary" || j.tool == "clang-offload-packager":
		return p.bindPackage(j)
	case j.tool == "clang-linker-wrapper":
		return p.bindLink(j)
	}
	return unrecognized(j, "offcc's OpenMP planner does not know the tool %s", j.tool)
}

// openmpCompileKind says what a cc1 job of an OpenMP build does.
func openmpCompileKind(c *cc1Job) actions.Kind {
	switch {
	case c.mode == "-E":
		return actions.Preprocess
	case c.lang == "ir":
		return actions.Backend
	case c.openmpDevice:
		return actions.DeviceCompile
	case c.offloadTargets && (c.mode == "-emit-llvm-bc" && c.disablePasses || c.mode == "-fsyntax-only"):
		// The host IR the device compiles read (or its syntax check).
		return actions.HostFrontend
	}
	return actions.Compile
}

// plainBuilder plans compiles without offloading (offcc -c), so that the
// build cache serves them like any other job: one compile per source, and
// the integrated assembler where clang runs it. Anything else (a link, a
// device job) is clang's to run.
type plainBuilder struct{}

func (plainBuilder) bind(p *planner, j *clangJob) error {
	switch {
	case j.isCC1():
		c, err := parseCC1(p.env.optionTables(), j.argv)
		if err != nil {
			return unrecognized(j, "%v", err)
		}
		if c.device() || c.offloadTargets {
			return unrecognized(j, "a device compile in a build without offloading")
		}
		return p.bindCC1(j, c, openmpCompileKind(c))
	case j.isCC1as():
		return p.bindAssemble(j)
	}
	return unrecognized(j, "offcc plans only the compiles of a build without offloading, not %s", j.tool)
}
