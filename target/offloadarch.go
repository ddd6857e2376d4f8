package target

import "strings"

// offloadArchs is clang 22's OffloadArch name table (clang/lib/Basic/
// OffloadArch.cpp in LLVM 22.1.8), in its order. The list is checked
// against the installed clang-offload-bundler (bundler's
// TestParseIDMatchesTool) and clang driver (TestTripleForArchMatchesClang).
var offloadArchs = []string{
	// NVIDIA
	"sm_20", "sm_21", "sm_30", "sm_32", "sm_35", "sm_37",
	"sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62",
	"sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89",
	"sm_90", "sm_90a", "sm_100", "sm_100a", "sm_101", "sm_101a",
	"sm_103", "sm_103a", "sm_110", "sm_110a", "sm_120", "sm_120a", "sm_121", "sm_121a",
	// AMD
	"gfx600", "gfx601", "gfx602", "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705",
	"gfx801", "gfx802", "gfx803", "gfx805", "gfx810",
	"gfx9-generic", "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c",
	"gfx9-4-generic", "gfx942", "gfx950",
	"gfx10-1-generic", "gfx1010", "gfx1011", "gfx1012", "gfx1013",
	"gfx10-3-generic", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
	"gfx11-generic", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
	"gfx12-generic", "gfx1200", "gfx1201", "gfx1250", "gfx1251",
	"amdgcnspirv",
	// Intel
	"graniterapids", "bmg_g21",
	"generic",
}

var offloadArchSet = func() map[string]bool {
	m := make(map[string]bool, len(offloadArchs))
	for _, a := range offloadArchs {
		m[a] = true
	}
	return m
}()

// IsOffloadArch reports whether clang 22 knows processor as an offload
// architecture (an OffloadArch: sm_*, gfx*, amdgcnspirv, the Intel names or
// "generic"). Names are case-sensitive and carry no target ID features.
func IsOffloadArch(processor string) bool { return offloadArchSet[processor] }

// OffloadArchs returns clang 22's offload architecture names, in the order
// of clang's OffloadArch enumeration. The slice is a fresh copy.
func OffloadArchs() []string { return append([]string(nil), offloadArchs...) }

// TripleForArch returns the device triple clang 22's driver deduces for
// --offload-arch=arch without an explicit triple: "nvptx64-nvidia-cuda" for
// an NVIDIA processor (sm_*), "amdgcn-amd-amdhsa" for an AMD processor
// (gfx*), also as a target ID with features ("gfx90a:xnack+"), and
// "spirv64-amd-amdhsa" for amdgcnspirv. ok is false for anything else:
// unknown names, the Intel names and "generic" (for which clang deduces no
// GPU triple), and NVIDIA names or amdgcnspirv followed by ':'. Whether the
// features of an AMD target ID suit its processor is not checked.
func TripleForArch(arch string) (triple string, ok bool) {
	proc, _, hasFeatures := strings.Cut(arch, ":")
	if !IsOffloadArch(proc) {
		return "", false
	}
	switch {
	case strings.HasPrefix(proc, "gfx"):
		return "amdgcn-amd-amdhsa", true
	case hasFeatures:
		return "", false
	case strings.HasPrefix(proc, "sm_"):
		return "nvptx64-nvidia-cuda", true
	case proc == "amdgcnspirv":
		return "spirv64-amd-amdhsa", true
	}
	return "", false
}
