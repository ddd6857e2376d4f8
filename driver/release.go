package driver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/bundler"
	"github.com/offcc/offcc/linkerwrapper"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/target"
	"github.com/offcc/offcc/toolchain"
)

// hostDeviceTriple is the triple of OpenMP offload to the host device.
const hostDeviceTriple = "x86_64-pc-linux-gnu"

// nvptxTriple is the triple of NVIDIA GPUs, whose device compiles ptxas
// assembles.
const nvptxTriple = "nvptx64-nvidia-cuda"

// releaseShape returns the shape (toolchain.Shape) that a command line
// of a release offcc does not plan whole has among those its profile
// lists, or why it has none, which makes clang run the command line
// whole. The jobs are checked against the shape after clang prints them
// (releaseJobsFit).
func releaseShape(release *toolchain.Profile, kind actions.OffloadKind, opts *Options) (toolchain.Shape, string) {
	var shape toolchain.Shape
	rdc := opts.lastFlag("fgpu_rdc", "fno_gpu_rdc")
	plain := opts.SYCLBIN == "" && !opts.SaveTemps && !opts.PreprocessOnly &&
		!slices.ContainsFunc(opts.Args, func(a *options.Arg) bool { return otherOutputs[a.Option.ID] })
	object, link := plain && opts.CompileOnly, plain && !opts.CompileOnly
	switch {
	case kind == actions.None:
		shape = toolchain.ShapePlainCompile
	case kind == actions.OpenMP && object:
		shape = toolchain.ShapeOpenMPCompile
	case kind == actions.OpenMP && link:
		shape = toolchain.ShapeOpenMPHostLink
	case kind == actions.CUDA && object && !opts.NewDriver && !rdc:
		shape = toolchain.ShapeCUDACompile
	case kind == actions.HIP && object && !opts.NewDriver && !rdc:
		shape = toolchain.ShapeHIPCompile
	case kind == actions.CUDA && object && !opts.NewDriver && rdc:
		shape = toolchain.ShapeCUDARDCCompile
	case kind == actions.HIP && object && !opts.NewDriver && rdc:
		shape = toolchain.ShapeHIPRDCCompile
	}
	if shape == "" || !slices.Contains(release.Shapes, shape) {
		return "", fmt.Sprintf("offcc plans only LLVM %d's %s: clang %d runs the command line whole", release.Major, shapeList(release.Shapes), release.Major)
	}
	return shape, ""
}

// otherOutputs are the options that make an OpenMP compile write
// something other than a host object with its device image embedded.
var otherOutputs = map[string]bool{"S": true, "emit_llvm": true, "fsyntax_only": true, "offload_device_only": true, "offload_host_only": true}

// shapeList names shapes as a sentence does: "a", "a and b", "a, b and c".
func shapeList(shapes []toolchain.Shape) string {
	names := make([]string, len(shapes))
	for i, s := range shapes {
		names[i] = string(s)
	}
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// releaseJobsFit returns why a job clang printed for a command line of
// shape is not one offcc recognises in the release, or "": strict, so
// that what offcc does not positively know is clang's to run whole. cuid
// gives the compile unit ID offcc's model of clang gives a CUDA source
// (see planEnv.cuid; nil: none).
func releaseJobsFit(release *toolchain.Profile, shape toolchain.Shape, opts *Options, jobs []*clangJob, cuid func(string) (string, bool)) string {
	cuda := shape == toolchain.ShapeCUDACompile || shape == toolchain.ShapeCUDARDCCompile
	hip := shape == toolchain.ShapeHIPCompile || shape == toolchain.ShapeHIPRDCCompile
	unknown := func(j *clangJob, why string) string {
		return fmt.Sprintf("offcc does not recognise LLVM %d's job %s in %s (%s): clang %d runs the command line whole", release.Major, j.tool, shape, why, release.Major)
	}
	for _, j := range jobs {
		switch {
		case j.isCC1() && (shape == toolchain.ShapeOpenMPCompile || shape == toolchain.ShapeOpenMPHostLink):
			// The host front end and backend, and one device compile per
			// (triple, arch) of a triple the release's profile lists (a
			// link: the host device only, see openMPDevices).
			c, err := parseCC1(opts.tables(), j.argv)
			if err != nil {
				return unknown(j, err.Error())
			}
			if c.openmpDevice && !slices.Contains(openMPDevices(release, shape), c.triple) || !c.openmpDevice && c.triple != hostDeviceTriple {
				return unknown(j, "a compile for "+c.triple)
			}
		case j.isCC1as() && shape == toolchain.ShapeOpenMPCompile:
			c, err := parseCC1as(opts.tables(), j.argv)
			if err != nil {
				return unknown(j, err.Error())
			}
			if c.triple != hostDeviceTriple {
				return unknown(j, "an assembler job for "+c.triple)
			}
		case shape == toolchain.ShapeOpenMPCompile && j.tool == "ptxas" && slices.Contains(release.OpenMPDevices, nvptxTriple):
			// NVIDIA's assembler after an nvptx64 device compile, run as
			// printed.
		case j.isCC1() && (cuda || hip):
			c, err := parseCC1(opts.tables(), j.argv)
			if err != nil {
				return unknown(j, err.Error())
			}
			device := nvptxTriple
			if hip {
				device = "amdgcn-amd-amdhsa"
			}
			if c.triple != hostDeviceTriple && c.triple != device {
				return unknown(j, "a compile for "+c.triple)
			}
			for _, a := range j.argv {
				printed, ok := strings.CutPrefix(a, "-cuid=")
				if !ok {
					continue
				}
				id, keep := "", false
				if cuid != nil {
					id, keep = cuid(c.input)
				}
				if !keep && id != printed {
					return unknown(j, "its compile unit ID is not the one offcc's model gives "+c.input)
				}
			}
		case j.isCC1as() && (cuda || hip):
			return unknown(j, "an assembler job")
		case cuda && (j.tool == "ptxas" || j.tool == "fatbinary"):
		case shape == toolchain.ShapeHIPCompile && j.tool == "lld":
			// The device link of one GPU, run as printed (bindDeviceLink
			// reads its arguments with the release's lld table).
		case shape == toolchain.ShapeHIPCompile && j.tool == "clang-offload-bundler":
			if why := hipBundleFit(release, j.argv[1:]); why != "" {
				return unknown(j, why)
			}
		case shape == toolchain.ShapeHIPRDCCompile && j.tool == "clang-offload-bundler":
			if why := hipObjectBundleFit(j.argv[1:]); why != "" {
				return unknown(j, why)
			}
		case j.isCC1() || j.isCC1as():
			// A plain compile's jobs are clang's own, run as printed.
		case shape == toolchain.ShapeOpenMPHostLink && j.tool == "clang-linker-wrapper":
			// Read with the release's wrapper options, as the link
			// stage reads it (bindLink).
			cl, err := linkerwrapper.ParseReleaseCommandLine(release, j.argv[1:])
			if err != nil {
				return unknown(j, err.Error())
			}
			if why := cl.Foreign(); why != "" {
				return unknown(j, why)
			}
		case (shape == toolchain.ShapeOpenMPCompile || shape == toolchain.ShapeOpenMPHostLink) && j.tool == release.Packager:
			for _, a := range j.argv[1:] {
				spec, ok := strings.CutPrefix(a, "--image=")
				if !ok {
					continue
				}
				_, kind, strs, err := packager.ParseImageSpec(spec)
				if err != nil {
					return unknown(j, err.Error())
				}
				devices := openMPDevices(release, shape)
				if kind != "openmp" || !slices.ContainsFunc(devices, func(t string) bool {
					return slices.Contains(strs, packager.KeyValue{Key: "triple", Value: t})
				}) {
					return unknown(j, "an image not of OpenMP for "+strings.Join(devices, ", "))
				}
			}
		default:
			return unknown(j, "a tool of another shape")
		}
	}
	return ""
}

// openMPDevices returns the OpenMP device triples whose jobs offcc plans
// in a command line of shape: those the release's profile lists for a
// compile, the host device alone for a link (the release's wrapper links
// other images itself, see linkerwrapper.Config.Release).
func openMPDevices(release *toolchain.Profile, shape toolchain.Shape) []string {
	if shape == toolchain.ShapeOpenMPHostLink {
		return []string{hostDeviceTriple}
	}
	return release.OpenMPDevices
}

// hipBundleFit returns why the arguments of a HIP compile's
// clang-offload-bundler job are not the fat binary offcc's bundler writes
// as the release's does, or "": -type=o, -bundle-align=4096, an empty
// host entry first (-input=/dev/null) and one GPU image per device target,
// each target the release's own form (LLVM 19: host-x86_64-unknown-linux
// and hipv4-amdgcn-amd-amdhsa--<processor>, see bundler.ParseID19).
func hipBundleFit(release *toolchain.Profile, args []string) string {
	var targets, inputs []string
	typ, align, outputs := "", "", 0
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "-type="):
			typ = strings.TrimPrefix(a, "-type=")
		case strings.HasPrefix(a, "-bundle-align="):
			align = strings.TrimPrefix(a, "-bundle-align=")
		case strings.HasPrefix(a, "-targets="):
			targets = append(targets, strings.Split(strings.TrimPrefix(a, "-targets="), ",")...)
		case strings.HasPrefix(a, "-input="):
			inputs = append(inputs, strings.TrimPrefix(a, "-input="))
		case strings.HasPrefix(a, "-output="):
			outputs++
		case a == "-verbose":
			// clang -v passes it on; the bundler prints nothing more
			// for an uncompressed bundle.
		default:
			return "the bundler argument " + a
		}
	}
	if typ != "o" || align != "4096" || outputs != 1 || len(targets) < 2 || len(inputs) != len(targets) {
		return "a bundle other than a HIP fat binary"
	}
	host := "host-x86_64-unknown-linux"
	if release.Major != 19 {
		host += "-gnu"
	}
	if targets[0] != host || inputs[0] != "/dev/null" {
		return "a fat binary whose first entry is not the empty " + host
	}
	for _, t := range targets[1:] {
		gpu, ok := strings.CutPrefix(t, "hipv4-amdgcn-amd-amdhsa--")
		if !ok || gpu == "" || strings.Contains(gpu, "-") {
			return "the bundle target " + t
		}
	}
	return ""
}

// hipObjectBundleFit returns why the arguments of a HIP -fgpu-rdc
// compile's clang-offload-bundler job are not the object bundle
// ShapeHIPRDCCompile describes, or "": -type=o, one -output=, one -input=
// per target, the targets one hip-amdgcn-amd-amdhsa-<processor> per GPU
// (LLVM 19's form, see bundler.ParseID19; 22 writes
// hip-amdgcn-amd-amdhsa-unknown-<processor>) and the host object last
// (host-x86_64-pc-linux-gnu); -v adds -verbose. The job runs the
// release's own bundler as printed, which gives its bytes.
func hipObjectBundleFit(args []string) string {
	var targets []string
	typ, inputs, outputs := "", 0, 0
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "-type="):
			typ = strings.TrimPrefix(a, "-type=")
		case strings.HasPrefix(a, "-targets="):
			targets = append(targets, strings.Split(strings.TrimPrefix(a, "-targets="), ",")...)
		case strings.HasPrefix(a, "-input="):
			inputs++
		case strings.HasPrefix(a, "-output="):
			outputs++
		case a == "-verbose":
			// -v's: the bundler prints what it runs.
		default:
			return "the bundler argument " + a
		}
	}
	if typ != "o" || outputs != 1 || len(targets) < 2 || inputs != len(targets) {
		return "a bundle other than a HIP -fgpu-rdc object"
	}
	host := "host-" + hostDeviceTriple
	if targets[len(targets)-1] != host {
		return "an object bundle whose last entry is not " + host
	}
	for _, t := range targets[:len(targets)-1] {
		gpu, ok := strings.CutPrefix(t, "hip-amdgcn-amd-amdhsa-")
		processor, _, _ := strings.Cut(gpu, ":")
		if id, err := bundler.ParseID19(t); !ok || err != nil || id.Kind != "hip" || id.TargetID != gpu || !target.IsOffloadArch(processor) {
			return "the bundle target " + t
		}
	}
	return ""
}
