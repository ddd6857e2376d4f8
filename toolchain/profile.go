package toolchain

import (
	"fmt"
	"strings"
)

// Profile is what offcc knows of one LLVM release: where Debian installs
// it, how to install it, the names of the tools that differ between
// releases, and the features that release has. offcc picks the profile of
// the clang it finds (see Find). Adding a release means adding its
// profile to profiles (and generating its option tables in package
// options); the driver reads the release's facts from here.
type Profile struct {
	// Major is the LLVM major version.
	Major int
	// Drives says whether offcc drives this release's clang: a release
	// whose profile is known but that offcc does not drive is refused by
	// Find in one line.
	Drives bool
	// Plans says whether offcc plans every build of this release it
	// plans with 22 (runs its device jobs in parallel and caches them).
	// A release it drives but does not plan whole has only the builds
	// Shapes lists planned; every other command line offcc would plan,
	// and every job of another shape in those, is run by its clang's
	// driver whole, which gives that clang's bytes.
	Plans bool
	// Shapes are the builds offcc plans with a release it does not plan
	// whole (Plans false), their jobs checked one by one against what it
	// recognises of the release.
	Shapes []Shape
	// OpenMPDevices are the offload device triples whose jobs offcc
	// recognises in the release's OpenMP compiles (ShapeOpenMPCompile):
	// a compile with a device of another triple is its clang's whole.
	// Read only where Plans is false.
	OpenMPDevices []string
	// DefaultDir is where Debian's packages of this release install
	// clang and the LLVM tools.
	DefaultDir string
	// InstallHint is the command that installs, on Debian, what offcc
	// needs of this release.
	InstallHint string
	// Packager is the tool clang's driver runs to put device images into
	// an offload binary (an OpenMP compile, the new offload driver's
	// CUDA and HIP compiles).
	Packager string
	// OffloadEntriesSection is the section of a host object that lists
	// its offload entries (kernels and globals), whose format changed
	// with its name.
	OffloadEntriesSection string
	// OffloadEntry is the LLVM IR type of one entry of that section, as
	// clang-linker-wrapper's OpenMP registration module declares it (19:
	// { ptr addr, ptr name, i64 size, i32 flags, i32 data }, 32 bytes;
	// 22: { i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }, 56 bytes).
	OffloadEntry string
	// Wrapper is the form of this release's clang-linker-wrapper: its
	// options and the device links it runs, which offcc's link stage
	// (package linkerwrapper) reads and writes as it does.
	Wrapper WrapperForm
	// StableNames says whether clang hashes the name of a source file it
	// cannot find into OpenMP kernel names (LLVM PR 131646, clang 21):
	// older ones stop with "Unable to get unique ID", so their OpenMP
	// objects keep names after the files' inodes.
	StableNames bool
	// SYCLBIN says whether offcc's -fsyclbin works with this release:
	// it needs clang's -fsycl-device-only, the sycl_kernel_entry_point
	// attribute and clang-sycl-linker.
	SYCLBIN bool
}

// A Shape is a kind of build whose jobs offcc recognises in a release
// it does not plan whole (Profile.Shapes).
type Shape string

const (
	// ShapePlainCompile: a compile (-c, -S) without offloading: clang
	// -cc1 and -cc1as jobs.
	ShapePlainCompile Shape = "plain compiles"
	// ShapeOpenMPCompile: an OpenMP compile (-c) offloading to devices
	// of the triples Profile.OpenMPDevices lists (for 19 the host device
	// x86_64-pc-linux-gnu, amdgcn-amd-amdhsa and nvptx64-nvidia-cuda, in
	// any mix): the host front end and the host backend (clang -cc1 for
	// x86_64-pc-linux-gnu), one OpenMP device compile per (triple, arch)
	// (clang -cc1 -fopenmp-is-target-device; amdgcn's writes bitcode,
	// nvptx64's PTX), ptxas after each nvptx64 compile (NVIDIA's, run
	// with clang's arguments), and the packager with OpenMP images of
	// those triples. offcc packs and embeds the device images itself, as
	// clang's packager and backend do (the offload binary and the
	// .llvm.offloading section are the same bytes in 19 and 22); the
	// entries section is the backend's own.
	ShapeOpenMPCompile Shape = "OpenMP compiles (-c)"
	// ShapeOpenMPHostLink: an OpenMP link offloading to the host device
	// only, of objects or of sources compiled with it (whose jobs are
	// those of ShapeOpenMPCompile for the host device alone):
	// clang-linker-wrapper, its arguments read with the release's wrapper
	// options (Wrapper), none of whose effect offcc's link stage lacks.
	// The link stage (package linkerwrapper) links the host-device images
	// as the release's wrapper does, writes the registration module with
	// the release's offload entries (OffloadEntriesSection, OffloadEntry)
	// and runs the host link; a link whose inputs hold other images (LLVM
	// 19's GPU images are LLVM IR its wrapper links in-process) it hands
	// to the release's clang-linker-wrapper whole.
	ShapeOpenMPHostLink Shape = "OpenMP links offloading to the host device"
	// ShapeCUDACompile: a CUDA compile (-c) without -fgpu-rdc or
	// --offload-new-driver: clang -cc1 for the host (x86_64-pc-linux-gnu)
	// and nvptx64-nvidia-cuda, ptxas and fatbinary (NVIDIA's, run with
	// clang's arguments); offcc puts the fat binary into the host object
	// itself, as the host compile does. Each compile's CUID (-cuid=) must
	// be the one offcc's model of clang's gives the source, as the plan
	// is read fresh from clang's -### (no plan cache).
	ShapeCUDACompile Shape = "CUDA compiles (-c)"
	// ShapeHIPCompile: a HIP compile (-c) without -fgpu-rdc or
	// --offload-new-driver: clang -cc1 for the host (x86_64-pc-linux-gnu)
	// and amdgcn-amd-amdhsa, lld's device link per GPU as clang prints it,
	// and clang-offload-bundler writing the fat binary with the release's
	// bundle IDs (19: -targets=host-x86_64-unknown-linux,
	// hipv4-amdgcn-amd-amdhsa--<gfx>), which offcc's bundler writes as
	// that release's does; offcc puts the fat binary into the host object
	// itself, as the host compile does. Each compile's CUID is checked as
	// in ShapeCUDACompile.
	ShapeHIPCompile Shape = "HIP compiles (-c)"
	// ShapeCUDARDCCompile: a CUDA compile (-c) with -fgpu-rdc, without
	// --offload-new-driver: the jobs of ShapeCUDACompile, ptxas run with
	// -c (relocatable cubins) and the host compile with -fgpu-rdc, whose
	// fat binary goes into the host object's __nv_relfatbin section
	// (offcc puts it there itself, as the host compile does). 22 runs
	// the new driver's llvm-offload-binary instead.
	ShapeCUDARDCCompile Shape = "CUDA -fgpu-rdc compiles (-c)"
	// ShapeHIPRDCCompile: a HIP compile (-c) with -fgpu-rdc, without
	// --offload-new-driver: clang -cc1 for the host (x86_64-pc-linux-gnu,
	// an object) and amdgcn-amd-amdhsa (bitcode, one per GPU), and the
	// release's clang-offload-bundler, run as printed, bundling them into
	// the object (-type=o, the release's IDs: 19
	// -targets=hip-amdgcn-amd-amdhsa-<gfx>,...,host-x86_64-pc-linux-gnu;
	// 22: hip-amdgcn-amd-amdhsa-unknown-<gfx>). No device link: the
	// program's link does that. Each compile's CUID is checked as in
	// ShapeCUDACompile.
	ShapeHIPRDCCompile Shape = "HIP -fgpu-rdc compiles (-c)"
)

// ChecksCUID reports whether the jobs of a command line of shape carry a
// compile unit ID (-cuid=) that must be the one offcc's model of the
// release's clang gives the source (CUDA and HIP compiles): a plan printed
// for another source holds that source's.
func (s Shape) ChecksCUID() bool {
	switch s {
	case ShapeCUDACompile, ShapeHIPCompile, ShapeCUDARDCCompile, ShapeHIPRDCCompile:
		return true
	}
	return false
}

// A WrapperForm is the form of one release's clang-linker-wrapper
// (Profile.Wrapper): the options it takes and how it runs a device link.
type WrapperForm int

const (
	// Wrapper22 is LLVM 22's clang-linker-wrapper: --compiler-arg=,
	// --device-compiler=, --emit-fatbin-only and --should-extract=; a
	// device link names -dumpdir, -march= (AMD: -mcpu=) only for an image
	// with an arch, and passes --device-linker= values with -Xlinker.
	Wrapper22 WrapperForm = iota
	// Wrapper19 is LLVM 19's: it takes --opt-level=O<n> (clang's -O<n>
	// at the link), --device-debug (-g), --ptxas-arg=,
	// --bitcode-library=, --builtin-bitcode=, --clang-backend and
	// --pass-remarks*=; a device link is "clang --no-default-config -o
	// IMG --target=T -march=ARCH -O<n> -Wl,--no-undefined FILES..." with
	// ARCH native for an image without one (a CPU's: its temporary is
	// named OUT.x86_64.native.img), -O2 by default, no -dumpdir, and
	// -g, -save-temps and -v after the libraries for --device-debug,
	// --save-temps and --wrapper-verbose. Its GPU images are LLVM IR it
	// links in-process (its own LTO), and --device-linker= and
	// --linker-arg= values go to that clang bare.
	Wrapper19
)

// profiles holds one Profile per LLVM release offcc knows, newest first.
//
// LLVM 19 (Debian's 19.1.7, set beside 22.1 by comparing the -### job
// lists of OpenMP host+amdgcn+nvptx compiles and links, HIP compiles with
// and without -fgpu-rdc, the HIP -fgpu-rdc link, and CUDA compiles with
// and without -fgpu-rdc, with -nogpulib -nogpuinc and -nocudalib
// -nocudainc) differs from 22 in these jobs:
//
//   - the packager is clang-offload-packager, not llvm-offload-binary,
//     and the host image's entry says arch= (22: arch=generic);
//   - the host object's offload entries are in omp_offloading_entries,
//     32 bytes each (22: llvm_offload_entries, 56 bytes each, their names
//     in .llvm.rodata.offloading);
//   - an OpenMP link adds -lomptarget.devicertl to clang-linker-wrapper
//     (unless -nogpulib), and --cuda-path=DIR when a device is nvptx;
//     clang-linker-wrapper's own options and device links differ
//     (Wrapper19), and its registration module declares 19's entries
//     (OffloadEntry) in omp_offloading_entries; it is otherwise the
//     module of 22, the same object bytes from llc;
//   - OpenMP front ends get -fopenmp-targets= (22: --offload-targets=),
//     -nogpulib (22: --no-offloadlib) and -D__GCC_HAVE_DWARF2_CFI_ASM=1
//     (22: -fdwarf2-cfi-asm); 19's nvptx OpenMP front end lacks 22's
//     -fcuda-is-device -mllvm -enable-memcpyopt-without-libcalls
//     -fno-threadsafe-statics -fcuda-allow-variadic-functions, and its
//     device temporaries carry no -<arch> suffix;
//   - bundler IDs: the HIP fat binary's host is host-x86_64-unknown-linux
//     (22: host-x86_64-unknown-linux-gnu), and -fgpu-rdc objects bundle
//     hip-amdgcn-amd-amdhsa-gfx90a (22: hip-amdgcn-amd-amdhsa-unknown-gfx90a);
//   - CUDA's fatbinary takes --image=profile=sm_70,file=CUBIN and
//     --image=profile=compute_70,file=PTX, embedding the PTX (22:
//     --image3=kind=elf,sm=70,file=CUBIN, no PTX); CUDA -fgpu-rdc
//     compiles use fatbinary and the host linker (22: the new driver's
//     llvm-offload-binary and clang-linker-wrapper);
//   - the HIP -fgpu-rdc link assembles the fat binary's wrapper with
//     llvm-mc -triple T -o OBJ IN.mcin --filetype=obj (22: clang -target
//     T -o OBJ -x assembler IN.mcin -c), and its lld device links have no
//     --lto-partitions=8; HIP --offload-new-driver -c runs the old
//     driver's steps (22: llvm-offload-binary and clang-linker-wrapper
//     --emit-fatbin-only).
//
// Its CUDA and HIP -fgpu-rdc device compiles are not the same twice when
// two or more template kernels are launched from the host: their order in
// __clang_gpu_used_external changes from run to run.
//
// Its OpenMP front end, given a source by a name that names nothing from
// where it runs (offcc's stable names: -working-directory W and the
// source behind a prefix of "." and "/"), stops with "fatal error: error
// in backend: Unable to get unique ID for file, during
// getTargetEntryUniqueInfo" where 22's hashes the name.
//
// Its bin directory has clang-offload-packager but no
// llvm-offload-binary, llvm-offload-wrapper, offload-arch or
// clang-sycl-linker; its clang has no -fsycl-device-only and ignores
// sycl_kernel_entry_point.
//
// Its OpenMP compiles (-c) to GPUs print the same jobs as 22's but for
// the differences above: the host front end; per (triple, arch) a device
// front end (amdgcn: -emit-llvm-bc, temporary <base>-<gfx>-*.bc; nvptx64:
// -S, <base>-<sm>-*.s, then ptxas -m64 -O0 --gpu-name sm_NN
// --output-file <base>-<sm>-*.o IN -c); clang-offload-packager with one
// --image=file=F,triple=T,arch=A,kind=openmp per device, in the order of
// the compiles; and the host backend with -fembed-offload-object=.
// -fopenmp-targets=T1,T2 -Xopenmp-target=T -march=A gives the same jobs
// (the host device among them); with --offload-arch= beside it, clang 19
// compiles for the listed triples only, filing the arch under each.
// Without -nogpulib an amdgcn compile links ROCm's device libraries into
// its bitcode (-mlink-builtin-bitcode, Debian's rocm-device-libs with
// --rocm-device-lib-path) or stops with "cannot find ROCm device
// library", and an nvptx64 one stops with "no library
// 'libomptarget-nvptx-sm_70.bc'" (Debian's LLVM 19 ships none).
//
// offcc drives LLVM 19 but plans it only in part (Plans false): plain
// compiles, OpenMP compiles (-c) to the host device, amdgcn and nvptx64
// (OpenMPDevices), OpenMP links to the host device, and CUDA and HIP
// compiles (-c, with or without -fgpu-rdc, without the new driver), whose
// jobs the driver checks one by one; everything else (OpenMP links of GPU
// images and compiles for other devices, CUDA and HIP links) clang 19
// runs whole. Its objects and programs are clang 19's byte for byte
// either way (e2e TestLLVM19Drive). Its jobs go to the build farm's
// workers of LLVM 19, read with 19's option tables (e2e TestFarmLLVM19);
// its plans are cached and checked as fresh ones are (its CUDA and HIP
// ones read fresh: Shape.ChecksCUID); its OpenMP kernels
// keep inode names (StableNames false); -fsyclbin is refused (SYCLBIN
// false).
var profiles = []*Profile{
	{
		Major:                 22,
		Drives:                true,
		Plans:                 true,
		DefaultDir:            "/usr/lib/llvm-22/bin",
		InstallHint:           "apt-get install clang-22 clang-tools-22 lld-22 llvm-22 liboffload-22 liboffload-22-dev libomp-22-dev",
		Packager:              "llvm-offload-binary",
		OffloadEntriesSection: "llvm_offload_entries",
		OffloadEntry:          "{ i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }",
		Wrapper:               Wrapper22,
		StableNames:           true,
		SYCLBIN:               true,
	},
	{
		Major:                 19,
		Drives:                true,
		Plans:                 false,
		Shapes:                []Shape{ShapePlainCompile, ShapeOpenMPCompile, ShapeOpenMPHostLink, ShapeCUDACompile, ShapeHIPCompile, ShapeCUDARDCCompile, ShapeHIPRDCCompile},
		OpenMPDevices:         []string{"x86_64-pc-linux-gnu", "amdgcn-amd-amdhsa", "nvptx64-nvidia-cuda"},
		DefaultDir:            "/usr/lib/llvm-19/bin",
		InstallHint:           "apt-get install clang-19 clang-tools-19 lld-19 llvm-19",
		Packager:              "clang-offload-packager",
		OffloadEntriesSection: "omp_offloading_entries",
		OffloadEntry:          "{ ptr, ptr, i64, i32, i32 }",
		Wrapper:               Wrapper19,
		StableNames:           false,
		SYCLBIN:               false,
	},
}

// ProfileOf returns the profile of LLVM major, or nil when offcc knows no
// such release.
func ProfileOf(major int) *Profile {
	for _, p := range profiles {
		if p.Major == major {
			return p
		}
	}
	return nil
}

// Profiles returns the profiles of the releases offcc knows, newest
// first.
func Profiles() []*Profile { return append([]*Profile(nil), profiles...) }

// Preferred returns the profile offcc looks for first and asks to
// install: the newest release it drives.
func Preferred() *Profile {
	for _, p := range profiles {
		if p.Drives {
			return p
		}
	}
	panic("toolchain: no profile drives")
}

// searchOrder returns the profiles in the order Find looks for their
// clangs: the releases offcc drives first, newest first, then the ones
// it only knows (found only to be refused by name).
func searchOrder() []*Profile {
	var driven, known []*Profile
	for _, p := range profiles {
		if p.Drives {
			driven = append(driven, p)
		} else {
			known = append(known, p)
		}
	}
	return append(driven, known...)
}

// releases names the majors of the profiles for which keep is true,
// oldest first: "22", "19 and 22", "18, 19 and 22".
func releases(keep func(*Profile) bool) string {
	var names []string
	for i := len(profiles) - 1; i >= 0; i-- {
		if keep(profiles[i]) {
			names = append(names, fmt.Sprint(profiles[i].Major))
		}
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// check refuses an LLVM release found in dir that offcc has no profile
// for, or does not drive yet, in one line naming the releases it knows
// or drives and how to install the preferred one.
func check(major int, dir string) (*Profile, error) {
	pref := Preferred()
	p := ProfileOf(major)
	drives := releases(func(p *Profile) bool { return p.Drives })
	switch known := releases(func(*Profile) bool { return true }); {
	case p == nil && known == drives:
		return nil, fmt.Errorf("found LLVM %d in %s; offcc drives LLVM %s; install LLVM %d with: %s",
			major, dir, drives, pref.Major, pref.InstallHint)
	case p == nil:
		return nil, fmt.Errorf("found LLVM %d in %s; offcc knows LLVM %s and drives LLVM %s; install LLVM %d with: %s",
			major, dir, known, drives, pref.Major, pref.InstallHint)
	case !p.Drives:
		return nil, fmt.Errorf("found LLVM %d in %s; offcc does not drive LLVM %d yet (it knows the release, not its job shapes) and drives LLVM %s; install LLVM %d with: %s",
			major, dir, major, drives, pref.Major, pref.InstallHint)
	}
	return p, nil
}
