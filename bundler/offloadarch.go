package bundler

// offloadArchs is clang 22's OffloadArch name table (clang/lib/Basic/
// OffloadArch.cpp in LLVM 22.1.8): a bundle ID's sixth field is kept only if
// the part before the first ':' is one of these. The list was checked
// against the installed clang-offload-bundler (TestOffloadArchTable).
var offloadArchs = map[string]bool{}

func init() {
	for _, a := range []string{
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
	} {
		offloadArchs[a] = true
	}
}

// IsOffloadArch reports whether clang 22 knows the processor name p (an
// sm_*, gfx* or other OffloadArch), so that a bundle ID keeps it.
func IsOffloadArch(p string) bool { return offloadArchs[p] }
