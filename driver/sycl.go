package driver

import "github.com/offcc/offcc/actions"

// syclBuilder plans SYCL compiles with clang 22's offload driver: per
// SYCL target a device compile to bitcode (-fsycl-is-device), the packager
// (kind sycl), and the host compile (-fsycl-is-host), which does not read
// the device output: it runs beside the device compiles and the images are
// embedded after it. The link stage is offcc's: clang-sycl-linker per
// target and the SYCL registration module (__sycl_register_lib).
type syclBuilder struct{}

func (syclBuilder) bind(p *planner, j *clangJob) error {
	switch {
	case j.isCC1():
		c, err := parseCC1(p.env.optionTables(), j.argv)
		if err != nil {
			return unrecognized(j, "%v", err)
		}
		if c.openmpDevice || c.cudaDevice {
			return unrecognized(j, "an OpenMP, CUDA or HIP device compile in a SYCL build")
		}
		return p.bindCC1(j, c, syclCompileKind(c))
	case j.isCC1as():
		return p.bindAssemble(j)
	case j.tool == "llvm-offload-binary" || j.tool == "clang-offload-packager":
		return p.bindPackage(j)
	case j.tool == "clang-linker-wrapper":
		return p.bindLink(j)
	}
	return unrecognized(j, "offcc's SYCL planner does not know the tool %s", j.tool)
}

// syclCompileKind says what a cc1 job of a SYCL build does.
func syclCompileKind(c *cc1Job) actions.Kind {
	switch {
	case c.mode == "-E":
		return actions.Preprocess
	case c.lang == "ir":
		return actions.Backend
	case c.syclDevice:
		return actions.DeviceCompile
	}
	return actions.Compile
}
