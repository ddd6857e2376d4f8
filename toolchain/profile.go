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
	// ShapeOpenMPHostCompile: an OpenMP compile (-c) offloading to the
	// host device (x86_64-pc-linux-gnu) only: the host front end, the
	// device compile and the host backend (clang -cc1 for that triple),
	// and the packager with OpenMP images of that triple. offcc packs and
	// embeds the device image itself, as clang's packager and backend do
	// (the offload binary and the .llvm.offloading section are the same
	// bytes in 19 and 22); the entries section is the backend's own.
	ShapeOpenMPHostCompile Shape = "OpenMP compiles (-c) offloading to the host device"
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
// offcc drives LLVM 19 but plans it only in part (Plans false): plain
// compiles, OpenMP compiles (-c) to the host device, and CUDA and HIP
// compiles (-c, without -fgpu-rdc or the new driver), whose jobs the
// driver checks one by one; everything else (OpenMP links and GPU
// targets, CUDA and HIP -fgpu-rdc and links) clang 19 runs whole. Its objects are clang 19's
// byte for byte either way (e2e TestLLVM19Drive). Its jobs go to the
// build farm's workers of LLVM 19, read with 19's option tables (e2e
// TestFarmLLVM19); they stay off the plan cache, and its OpenMP kernels
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
		StableNames:           true,
		SYCLBIN:               true,
	},
	{
		Major:                 19,
		Drives:                true,
		Plans:                 false,
		Shapes:                []Shape{ShapePlainCompile, ShapeOpenMPHostCompile, ShapeCUDACompile, ShapeHIPCompile},
		DefaultDir:            "/usr/lib/llvm-19/bin",
		InstallHint:           "apt-get install clang-19 clang-tools-19 lld-19 llvm-19",
		Packager:              "clang-offload-packager",
		OffloadEntriesSection: "omp_offloading_entries",
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
